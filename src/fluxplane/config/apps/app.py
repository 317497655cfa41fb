"""An app's definition: its repository and ref, the folder and overlay it deploys, where it runs; and
what an app becomes once read and placed (``AppFile``, ``Placement``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints, ValidationInfo, field_validator, model_validator

from fluxplane.config.apps.resources import AwsNeeds
from fluxplane.config.hub import platform_namespace, platform_namespaces_text
from fluxplane.config.merge import Origins
from fluxplane.config.models import GIT_REF, GIT_URL, OWNER, RELATIVE_PATH, DnsLabel, Model
from fluxplane.config.problems import show

#: A semver range as Flux reads it (Masterminds constraints): comparisons, ~, ^, x-ranges, hyphens, ||.
_VERSION = r"v?(\d+|[xX*])(\.(\d+|[xX*])){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?"
_CONSTRAINT = rf"(=|!=|>=|<=|>|<|~>?|\^)?\s*{_VERSION}"
_RANGE = rf"({_VERSION}\s+-\s+{_VERSION}|{_CONSTRAINT}(\s*,?\s*{_CONSTRAINT})*)"
SEMVER_RANGE = rf"^\s*{_RANGE}(\s*\|\|\s*{_RANGE})*\s*$"

Owner = Annotated[str, StringConstraints(pattern=OWNER)]


def _git_ref(value: str) -> str:
    """The rules of git check-ref-format that a pattern cannot say without look-arounds."""
    bad = [
        rule
        for rule, broken in (
            ("start with '-' or '/'", value.startswith(("-", "/"))),
            ("end with '/', '.' or '.lock'", value.endswith(("/", ".", ".lock"))),
            ("hold '..', '//' or '@{'", any(part in value for part in ("..", "//", "@{"))),
        )
        if broken
    ]
    if bad:
        raise ValueError(f"a Git ref name must not {' or '.join(bad)}, got {show(value)}")
    return value


GitRef = Annotated[str, StringConstraints(pattern=GIT_REF, min_length=1, max_length=255), AfterValidator(_git_ref)]


class GitRefSpec(Model):
    """Which commit of the app's repository Flux deploys: exactly one of ``tag``, ``semver``, ``branch``."""

    tag: GitRef | None = Field(None, description="A Git tag, e.g. v1.4.2 (Flux GitRepository ref.tag).")
    semver: str | None = Field(
        None, description='The newest tag in a semver range, e.g. ">=1.4.0 <2.0.0" (Flux GitRepository ref.semver).'
    )
    branch: GitRef | None = Field(None, description="A branch, e.g. main (Flux GitRepository ref.branch).")

    @field_validator("semver")
    @classmethod
    def _semver_range(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(SEMVER_RANGE, value):
            raise ValueError(f'expected a semver range such as ">=1.4.0 <2.0.0" or "~1.4", got {show(value)}')
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> GitRefSpec:
        given = [key for key in ("tag", "semver", "branch") if getattr(self, key) is not None]
        if len(given) != 1:
            found = ", ".join(given) if given else "none"
            raise ValueError(f"set exactly one of tag, semver or branch, got {found}")
        return self

    def flux(self) -> dict[str, str]:
        """The Flux GitRepository ``spec.ref``."""
        return {key: value for key in ("tag", "semver", "branch") if (value := getattr(self, key)) is not None}


class AppRepository(Model):
    """The app's Git repository, read by Flux on every cluster the app runs on."""

    url: Annotated[str, StringConstraints(pattern=GIT_URL)] = Field(
        description="Clone URL, ssh:// or https:// (Flux GitRepository spec.url)."
    )
    ref: GitRefSpec = Field(description="The tag, semver range or branch to deploy.")
    secret_ref: DnsLabel | None = Field(
        None,
        alias="secretRef",
        description="Secret in the app's namespace with the Git credentials, sealed with "
        "`fluxplane seal --namespace <namespace> --name <secretRef>` per cluster; null for a public repository.",
    )


class App(Model):
    """An application of one team, deployed as a tenant on the clusters it names."""

    name: DnsLabel = Field(description="The app's name: its file name.")
    team: Owner | None = Field(
        None,
        description="Owner in CODEOWNERS of the app's tenant folders (not their tenant.yaml) and sealed secrets, "
        "e.g. @example-org/orders.",
    )
    repository: AppRepository = Field(description="Where the app's manifests live.")
    path: Annotated[str, StringConstraints(pattern=RELATIVE_PATH)] = Field(
        "deploy", description="Folder of the app's kustomize overlays in its repository."
    )
    overlay: Literal["environment", "cluster", "none"] = Field(
        "environment",
        description="Which folder below `path` a cluster deploys: `<path>/<environment>`, `<path>/<cluster>`, "
        "or `path` itself.",
    )
    namespace: DnsLabel | None = Field(
        None,
        # Checked when absent too: the app's name is then its namespace.
        validate_default=True,
        description="Namespace on the cluster; default the app's name. Whichever it is, not a platform namespace "
        "or one an add-on installs into (see Apps and tenants).",
    )
    clusters: list[DnsLabel] = Field(default_factory=list, description="Workload clusters the app runs on.")
    environments: list[DnsLabel] = Field(
        default_factory=list, description="Environments on whose every cluster the app runs."
    )
    aws: AwsNeeds = Field(default_factory=AwsNeeds, description="AWS resources the app needs (see AWS needs).")

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str) -> str:
        if ".." in value.split("/"):
            raise ValueError(f"must stay inside the repository (no '..' segments), got {show(value)}")
        return value

    @field_validator("namespace")
    @classmethod
    def _not_platform(cls, value: str | None, info: ValidationInfo) -> str | None:
        """The tenant's Role grants write access to its namespace, whether ``namespace`` names it or the
        app's name does: in a platform namespace that would hand the app the platform (kube-system holds
        the fleet's sealing key)."""
        name = info.data.get("name")
        if name is None:  # the name is invalid, and reported on its own
            return value
        target = value or name
        if platform_namespace(target):
            raise ValueError(
                f"app {name!r} would run in namespace {target!r}, a platform namespace "
                f"({platform_namespaces_text()}); set namespace: to another name"
            )
        return value

    @model_validator(mode="after")
    def _placed(self) -> App:
        if not self.clusters and not self.environments:
            raise ValueError(
                "name the clusters or environments the app runs on (clusters: [...] or environments: [...])"
            )
        return self

    @property
    def target_namespace(self) -> str:
        return self.namespace or self.name

    def manifests_path(self, cluster: str, environment: str) -> str:
        """The folder Flux deploys on ``cluster``, relative to the repository root."""
        sub = {"environment": environment, "cluster": cluster, "none": None}[self.overlay]
        folder = self.path if sub is None else f"{self.path.rstrip('/')}/{sub}" if self.path != "." else sub
        return "./" + folder if folder != "." else "./"


@dataclass(frozen=True)
class Placement:
    """One app on one cluster."""

    app: App
    cluster: str
    environment: str
    region: str


@dataclass(frozen=True)
class AppFile:
    """An app as read from its file, with the file it came from (for messages)."""

    app: App
    display: str
    origins: Origins
