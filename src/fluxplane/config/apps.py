"""Applications: ``environments/apps/<app>.yaml``, one file per app, the file name is the app's name.

An app names its Git repository (URL, a tag, a semver range or a branch, sealed credentials), the
folder of its kustomize overlays, the clusters or environments it runs on, its namespace, and the AWS
resources it needs. Onboarding an app is a pull request that adds one such file; the governance team
reviews it (CODEOWNERS), and synth turns it into a tenant on every cluster it names.
"""

from __future__ import annotations

import bisect
import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, ValidationInfo, field_validator, model_validator

from fluxplane.config.hub import platform_namespace, platform_namespaces_text
from fluxplane.config.merge import Layer, Loc, Origins
from fluxplane.config.models import DNS_LABEL, GIT_REF, GIT_URL, OWNER, RELATIVE_PATH, DnsLabel, Model, repeated
from fluxplane.config.problems import ProblemList, read_mapping, show

APPS_DIR = "apps"
#: A semver range as Flux reads it (Masterminds constraints): comparisons, ~, ^, x-ranges, hyphens, ||.
_VERSION = r"v?(\d+|[xX*])(\.(\d+|[xX*])){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?"
_CONSTRAINT = rf"(=|!=|>=|<=|>|<|~>?|\^)?\s*{_VERSION}"
_RANGE = rf"({_VERSION}\s+-\s+{_VERSION}|{_CONSTRAINT}(\s*,?\s*{_CONSTRAINT})*)"
SEMVER_RANGE = rf"^\s*{_RANGE}(\s*\|\|\s*{_RANGE})*\s*$"

#: A DynamoDB attribute name.
ATTRIBUTE = r"^[A-Za-z0-9_.-]{1,255}$"

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


class Table(Model):
    """A DynamoDB table the app reads and writes."""

    name: Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)] = Field(
        description="Name within the app; the AWS name is <cluster>-<app>-<name>."
    )
    hash_key: Annotated[str, StringConstraints(pattern=ATTRIBUTE)] = Field(
        alias="hashKey", description="Partition key attribute."
    )
    hash_key_type: Literal["S", "N", "B"] = Field("S", alias="hashKeyType", description="Its type: S, N or B.")
    range_key: Annotated[str, StringConstraints(pattern=ATTRIBUTE)] | None = Field(
        None, alias="rangeKey", description="Sort key attribute, if any."
    )
    range_key_type: Literal["S", "N", "B"] = Field("S", alias="rangeKeyType", description="Its type: S, N or B.")

    @model_validator(mode="after")
    def _keys_differ(self) -> Table:
        if self.range_key is not None and self.range_key == self.hash_key:
            raise ValueError(f"rangeKey must differ from hashKey, both are {show(self.hash_key)}")
        return self


class Queue(Model):
    """An SQS queue the app sends to and receives from."""

    name: Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)] = Field(
        description="Name within the app; the AWS name is <cluster>-<app>-<name> (plus .fifo)."
    )
    fifo: bool = Field(False, description="A FIFO queue (exactly-once, ordered).")
    visibility_timeout_seconds: int = Field(
        30, ge=0, le=43200, alias="visibilityTimeoutSeconds", description="Visibility timeout, 0 to 43200."
    )
    message_retention_seconds: int = Field(
        345600, ge=60, le=1209600, alias="messageRetentionSeconds", description="Retention, 60 to 1209600 (14 days)."
    )


class Bucket(Model):
    """An S3 bucket the app reads and writes."""

    name: Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)] = Field(
        description="Name within the app; the AWS name is <cluster>-<app>-<name>, unique in all of AWS."
    )
    versioning: bool = Field(False, description="Keep every version of every object.")


#: What RDS and both engines accept (fluxplane.constructs.app_resources holds the same rules for the kind).
DB_ENGINE_VERSION = r"^[0-9]+(\.[0-9]+){0,2}$"
DB_INSTANCE_CLASS = r"^db\.[a-z0-9]+\.[a-z0-9]+$"
DATABASE_NAME = r"^[a-z][a-z0-9_]{0,62}$"
DB_USERNAME = r"^[a-z][a-z0-9_]{0,15}$"
DB_IDENTIFIER = r"^[a-z](-?[a-z0-9])*$"
DB_IDENTIFIER_MAX_LENGTH = 63
#: Master user names RDS keeps for itself.
RESERVED_DB_USERS = ("rdsadmin", "rdsrepladmin", "rds_superuser", "rdsproxyadmin")


class Database(Model):
    """An RDS database in the cluster's VPC; the app's namespace gets its credentials as a Secret."""

    name: Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)] = Field(
        description="Name within the app; the RDS identifier is <cluster>-<app>-<name>, the Secret in the app's "
        "namespace <app>-database-<name>."
    )
    engine: Literal["postgres", "mysql"] = Field(description="postgres (port 5432) or mysql (port 3306).")
    engine_version: Annotated[str, StringConstraints(pattern=DB_ENGINE_VERSION)] = Field(
        alias="engineVersion",
        description='Engine version, quoted: best a major version ("17", "8.4"), whose minor versions RDS then '
        "applies in the maintenance window.",
    )
    instance_class: Annotated[str, StringConstraints(pattern=DB_INSTANCE_CLASS)] = Field(
        "db.t4g.micro", alias="instanceClass", description="DB instance class."
    )
    allocated_storage: int = Field(
        20, ge=20, le=65536, alias="allocatedStorage", description="Storage in GiB (gp3, encrypted), 20 to 65536."
    )
    max_allocated_storage: int | None = Field(
        None,
        ge=22,
        le=65536,
        alias="maxAllocatedStorage",
        description="Storage autoscaling up to this many GiB, at least 10% above allocatedStorage; null for none.",
    )
    multi_az: bool = Field(False, alias="multiAz", description="A standby in a second availability zone.")
    database_name: Annotated[str, StringConstraints(pattern=DATABASE_NAME)] | None = Field(
        None,
        alias="databaseName",
        description="The database made with the instance; default the name with '-' as '_'.",
    )
    username: Annotated[str, StringConstraints(pattern=DB_USERNAME)] = Field(
        "dbadmin", description="Master user; RDS keeps its password in Secrets Manager and rotates it."
    )
    backup_retention_days: int = Field(
        7, ge=0, le=35, alias="backupRetentionDays", description="Days of automated backups, 0 to 35."
    )
    deletion_protection: bool = Field(
        True,
        alias="deletionProtection",
        description="RDS refuses to delete the instance; set false (and let it reach AWS) before removing it.",
    )

    @field_validator("engine_version", mode="before")
    @classmethod
    def _quoted(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            raise ValueError(f'expected the version as a quoted string such as "17" or "8.4", got the number {value}')
        return value

    @field_validator("username")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if value in RESERVED_DB_USERS:
            raise ValueError(f"{value!r} is a user RDS keeps for itself ({', '.join(RESERVED_DB_USERS)})")
        return value

    @model_validator(mode="after")
    def _fits(self) -> Database:
        if self.max_allocated_storage is not None and self.max_allocated_storage * 10 < self.allocated_storage * 11:
            raise ValueError(
                f"maxAllocatedStorage must be at least 10% above allocatedStorage ({self.allocated_storage}), got "
                f"{self.max_allocated_storage}: RDS refuses less"
            )
        if self.database_name is None and not re.fullmatch(DATABASE_NAME, self.db_name):
            raise ValueError(
                f"the database would be named {self.db_name!r} after the entry, which the engines refuse (a letter, "
                "then letters, digits or '_'); set databaseName"
            )
        return self

    @property
    def db_name(self) -> str:
        """The database made with the instance."""
        return self.database_name or self.name.replace("-", "_")


def _unique_names(kind: str, items: list[Any]) -> list[Any]:
    twice = repeated([item.name for item in items])
    if twice:
        raise ValueError(f"{kind} names must be unique within the app, {', '.join(map(repr, twice))} repeated")
    return items


class AwsNeeds(Model):
    """AWS resources the app needs; its pods get an IAM role (EKS Pod Identity) with access to exactly these."""

    tables: list[Table] = Field(default_factory=list, description="DynamoDB tables.")
    queues: list[Queue] = Field(default_factory=list, description="SQS queues.")
    buckets: list[Bucket] = Field(default_factory=list, description="S3 buckets.")
    databases: list[Database] = Field(
        default_factory=list, description="RDS databases, made by the hub in the cluster's VPC (see AWS needs)."
    )
    path: Annotated[str, StringConstraints(pattern=RELATIVE_PATH)] | None = Field(
        None,
        description="A folder of the app's repository with more AppTable, AppQueue and AppBucket objects, which the "
        "hub applies for each of the app's clusters as the app (see Apps and tenants).",
    )

    @field_validator("tables", "queues", "buckets", "databases")
    @classmethod
    def _unique(cls, value: list[Any]) -> list[Any]:
        return _unique_names("resource", value)

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        if value is not None and ".." in value.split("/"):
            raise ValueError(f"must stay inside the repository (no '..' segments), got {show(value)}")
        return value

    @property
    def empty(self) -> bool:
        """True when the app needs nothing from AWS (and gets no IAM role)."""
        return not (self.tables or self.queues or self.buckets or self.databases or self.path)


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


# -- AWS physical names ---------------------------------------------------------------------------

#: S3 bucket names: 3 to 63 lower-case letters, digits, '-' and '.', not an IP, no reserved affixes.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def physical_name(cluster: str, app: str, name: str) -> str:
    """The AWS name of an app's resource: unique per cluster and app, readable in the console."""
    return f"{cluster}-{app}-{name}"


def _aws_name_problems(kind: str, aws_name: str) -> str | None:
    """What AWS refuses in ``aws_name``, a resource of ``kind`` (a field of ``aws``), and what to do."""
    rule = _aws_name_rule(kind, aws_name)
    if rule is None:
        return None
    return rule if ":" in rule else f"{rule}: shorten the name"


def _aws_name_rule(kind: str, aws_name: str) -> str | None:
    if kind == "tables":
        if not 3 <= len(aws_name) <= 255 or not re.fullmatch(r"[A-Za-z0-9_.-]+", aws_name):
            return "a DynamoDB table name has 3 to 255 letters, digits, '_', '-' and '.'"
    elif kind == "queues":
        if len(aws_name) > 80 or not re.fullmatch(r"[A-Za-z0-9_-]+(\.fifo)?", aws_name):
            return "an SQS queue name has at most 80 letters, digits, '-' and '_' (with .fifo counted)"
    elif kind == "buckets":
        if not _BUCKET.fullmatch(aws_name) or ".." in aws_name:
            return "an S3 bucket name has 3 to 63 lower-case letters, digits, '-' and '.'"
        try:
            ipaddress.IPv4Address(aws_name)
        except ValueError:
            pass
        else:
            return "an S3 bucket name must not look like an IP address"
        if aws_name.startswith(("xn--", "sthree-")) or aws_name.endswith(("-s3alias", "--ol-s3", ".mrap", "--x-s3")):
            return "an S3 bucket name must not use AWS's reserved prefixes and suffixes"
    elif kind == "databases":
        if len(aws_name) > DB_IDENTIFIER_MAX_LENGTH:
            return f"an RDS DB instance identifier has at most {DB_IDENTIFIER_MAX_LENGTH} characters"
        if not re.fullmatch(DB_IDENTIFIER, aws_name):
            return (
                "an RDS DB instance identifier starts with a letter and has no two hyphens in a row: rename the "
                "database, or the app"
            )
    return None


def queue_name(cluster: str, app: str, queue: Queue) -> str:
    return physical_name(cluster, app, queue.name) + (".fifo" if queue.fifo else "")


def aws_names(cluster: str, app: App) -> list[tuple[str, int, str]]:
    """(kind, index, AWS name) of every resource ``app`` has on ``cluster``."""
    names = [
        ("tables", index, physical_name(cluster, app.name, table.name)) for index, table in enumerate(app.aws.tables)
    ]
    names += [("queues", index, queue_name(cluster, app.name, queue)) for index, queue in enumerate(app.aws.queues)]
    names += [
        ("buckets", index, physical_name(cluster, app.name, bucket.name))
        for index, bucket in enumerate(app.aws.buckets)
    ]
    names += [
        ("databases", index, physical_name(cluster, app.name, database.name))
        for index, database in enumerate(app.aws.databases)
    ]
    return names


# -- the names the hub gives an app's objects ----------------------------------------------------

#: An app's AWS resources: its ``aws`` field, the kind of their composites, the word their names hold.
RESOURCE_KINDS = (
    ("tables", "AppTable", "table"),
    ("queues", "AppQueue", "queue"),
    ("buckets", "AppBucket", "bucket"),
    ("databases", "AppDatabase", "database"),
)
#: Label values hold at most 63 characters, and some names end up in one: Crossplane labels a composite and
#: what it composes with the composite's name (crossplane.io/composite), and Flux labels what a Kustomization
#: applies with the Kustomization's name (kustomize.toolkit.fluxcd.io/name).
MAX_LABELLED_NAME = 63
#: Suffix of the hub objects that apply an app's own requests (``aws.path``): its account and Kustomization
#: ``<app>-cloud`` (fluxplane.constructs.app_resources.REQUEST_ACCOUNT_SUFFIX).
REQUESTS_SUFFIX = "-cloud"
#: App names fluxplane's own files take: every folder that holds an app's folder or file (the cluster's tenants in
#: the workloads repository, its AWS resources in the platform one) has a kustomization.yaml.
RESERVED_APP_NAMES = ("kustomization",)


def composite_name(app: str, word: str, name: str) -> str:
    """The name of an app's AppTable, AppQueue or AppBucket (``word`` table, queue or bucket) in the hub
    namespace of each cluster it runs on (fluxplane.charts.cloud)."""
    return f"{app}-{word}-{name}"


def requests_name(app: str) -> str:
    """The hub's account and Kustomization that apply an app's own requests (``aws.path``)."""
    return f"{app}{REQUESTS_SUFFIX}"


def _name_length_problems(app: App) -> list[tuple[Loc, str]]:
    """The names derived from the app's that would not fit the label Crossplane or Flux puts them in."""
    found: list[tuple[Loc, str]] = []
    for field, kind, word in RESOURCE_KINDS:
        for index, item in enumerate(getattr(app.aws, field)):
            name = composite_name(app.name, word, item.name)
            if len(name) > MAX_LABELLED_NAME:
                found.append(
                    (
                        ("aws", field, index, "name"),
                        f"the hub names this {word}'s {kind} {show(name)} ({len(name)} characters), and Crossplane "
                        f"labels a composite with its name, which allows {MAX_LABELLED_NAME}: shorten the "
                        f"{word}'s name or the app's",
                    )
                )
    if app.aws.path is not None and len(requests_name(app.name)) > MAX_LABELLED_NAME:
        name = requests_name(app.name)
        found.append(
            (
                ("aws", "path"),
                f"the hub applies the app's requests as Flux Kustomization {show(name)} ({len(name)} characters), "
                f"and Flux labels what it applies with that name, which allows {MAX_LABELLED_NAME}: with aws.path an "
                f"app's name has at most {MAX_LABELLED_NAME - len(REQUESTS_SUFFIX)} characters; rename the file",
            )
        )
    return found


@dataclass(frozen=True)
class _Claim:
    """A generated name taken by one app's field on one cluster."""

    where: str
    app: str
    cluster: str


#: Per field of ``aws``: what AWS calls the resource, and how far its names must be unique.
_AWS_SCOPES = {
    "tables": ("DynamoDB table", "DynamoDB table names are unique per account and region"),
    "queues": ("SQS queue", "SQS queue names are unique per account and region"),
    "buckets": ("S3 bucket", "S3 bucket names are unique across AWS"),
    "databases": ("RDS DB instance", "RDS DB instance identifiers are unique per account and region"),
}


def name_collisions(files: list[AppFile], placements: tuple[Placement, ...]) -> list[str]:
    """Generated names that two apps' fields (or two fields of one app) would both take, each reported once, at
    the later field, naming the earlier one.

    Names are made by joining parts with '-', and the parts may hold '-' themselves: app ``a`` with table
    ``b-table-c`` and app ``a-table-b`` with table ``c`` both make AppTable ``a-table-b-table-c`` in the
    cluster's hub namespace (the second object would replace the first), and app ``a`` with table ``b-c``
    and app ``a-b`` with table ``c`` both make DynamoDB table ``<cluster>-a-b-c`` (both apps would use one table).
    """
    located = {item.app.name: item for item in files}
    #: The first claim on each name.
    taken: dict[tuple[str, ...], _Claim] = {}
    #: A clash of two composites, by its line without the clusters: the clusters it happens on.
    composites: dict[tuple[str, str], list[str]] = {}
    physical: list[str] = []
    for placement in sorted(placements, key=lambda p: (p.app.name, p.cluster)):
        app, cluster, item = placement.app, placement.cluster, located[placement.app.name]
        aws = {(field, index): aws_name for field, index, aws_name in aws_names(cluster, app)}
        for field, kind, word in RESOURCE_KINDS:
            service, unique = _AWS_SCOPES[field]
            for index, resource in enumerate(getattr(app.aws, field)):
                claim = _Claim(item.origins.describe(("aws", field, index, "name")), app.name, cluster)
                name = composite_name(app.name, word, resource.name)
                first = taken.setdefault((cluster, kind, name), claim)
                if first.where != claim.where:
                    head = (
                        f"{claim.where}: the hub would name this {word}'s {kind} {show(name)}, and so would "
                        f"{first.where} (app {first.app!r}), in the hub namespace of"
                    )
                    composites.setdefault((head, f"rename one of the two {word}s"), []).append(cluster)
                aws_name = aws[(field, index)]
                first = taken.setdefault((field, "" if field == "buckets" else placement.region, aws_name), claim)
                if first.where != claim.where:
                    physical.append(
                        f"{claim.where}: on cluster {cluster!r} ({placement.region}) this {word} would be {service} "
                        f"{show(aws_name)}, and so would {first.where} (app {first.app!r} on cluster "
                        f"{first.cluster!r}): {unique}; rename one of the two {word}s"
                    )
    # The same two fields clash on every cluster both apps run on: one line names them all.
    lines = [
        f"{head} {'cluster' if len(clusters) == 1 else 'clusters'} {', '.join(map(repr, clusters))}; {advice}"
        for (head, advice), clusters in composites.items()
    ]
    return lines + physical + _cloud_file_collisions(located, placements)


def _cloud_file_collisions(located: dict[str, AppFile], placements: tuple[Placement, ...]) -> list[str]:
    """The hub's folder of a cluster's app resources holds ``<app>.yaml`` for each app that needs AWS and, for an
    app with ``aws.path`` and Git credentials, the hub's copy of them as ``<secretRef>.yaml`` (apps that name the
    same secret share it), next to its ``kustomization.yaml``."""
    files: dict[str, set[str]] = {placement.cluster: set() for placement in placements}
    for placement in placements:
        if not placement.app.aws.empty:
            files[placement.cluster].add(placement.app.name)
    problems: dict[tuple[str, str], list[str]] = {}
    for placement in sorted(placements, key=lambda p: (p.app.name, p.cluster)):
        app, cluster = placement.app, placement.cluster
        secret = app.repository.secret_ref
        if app.aws.path is None or secret is None:
            continue
        if secret == "kustomization":
            holder = "the folder's own list of files"
        elif secret == app.name:
            holder = "the file of this app's own AWS resources"
        elif secret in files[cluster]:
            holder = f"the file of the AWS resources of {located[secret].display} (app {secret!r})"
        else:
            continue
        head = (
            f"{located[app.name].origins.describe(('repository', 'secretRef'))}: with aws.path the hub keeps its copy "
            f"of these credentials as {secret}.yaml in its folder of the app resources of"
        )
        problems.setdefault((head, holder), []).append(cluster)
    return [
        f"{head} {'cluster' if len(clusters) == 1 else 'clusters'} {', '.join(map(repr, clusters))}, which is "
        f"{holder}; seal the credentials under another name"
        for (head, holder), clusters in problems.items()
    ]


# -- loading --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AppFile:
    """An app as read from its file, with the file it came from (for messages)."""

    app: App
    display: str
    origins: Origins


def apps_dir(root: Path) -> Path:
    return root / "environments" / APPS_DIR


def app_path(root: Path, name: str) -> Path:
    return apps_dir(root) / f"{name}.yaml"


def read_app_files(root: Path, display: Any) -> tuple[list[AppFile], list[str]]:
    """Validate every ``environments/apps/*.yaml`` on its own (no fleet needed); return apps and problems.

    ``display`` turns a path into the name messages use.
    """
    folder = apps_dir(root)
    if not folder.is_dir():
        return [], []
    problems = ProblemList()
    found: list[AppFile] = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        shown = display(path)
        if path.is_dir() or path.suffix not in (".yaml", ".yml"):
            problems.lines.append(f"{shown}: not an app file; environments/apps/ holds one <app>.yaml per app")
            continue
        if path.suffix == ".yml":
            problems.lines.append(f"{shown}: use the .yaml extension")
            continue
        if not re.fullmatch(DNS_LABEL, path.stem) or len(path.stem) > 63:
            length = f" of at most 63 characters (it has {len(path.stem)})" if len(path.stem) > 63 else ""
            problems.lines.append(
                f"{shown}: app name {show(path.stem)} must be a DNS-1123 label{length} "
                "(lower-case letters, digits and '-'); rename the file"
            )
            continue
        if path.stem in RESERVED_APP_NAMES:
            problems.lines.append(
                f"{shown}: app name {show(path.stem)} is taken: the folders that hold each app's tenant folder "
                "(workloads repository) and its AWS resources (platform repository) have a kustomization.yaml of "
                "their own; rename the file"
            )
            continue
        raw = read_mapping(path, shown, problems)
        if raw is None:
            continue
        if "name" in raw:
            problems.lines.append(f"{shown}: name: not allowed here; the file name is the app's name")
            continue
        origins = Origins([Layer(shown, raw)])
        app = problems.validate(App, {**raw, "name": path.stem}, origins)
        if app is not None:
            problems.lines.extend(f"{origins.describe(loc)}: {problem}" for loc, problem in _name_length_problems(app))
            found.append(AppFile(app=app, display=shown, origins=origins))
    return found, problems.lines


#: The folder of a workloads repository's cluster folder with the resources its apps' files name, on a cluster
#: that makes them itself (``appResources: spoke``), next to the tenants' folders: no app there may take its name.
SPOKE_RESOURCES_DIR = "app-resources"


def prefix_overlaps(
    files: list[AppFile], placements: tuple[Placement, ...], spokes: frozenset[str] = frozenset()
) -> list[str]:
    """Apps whose resources are theirs by name alone, and whose names would take in another's.

    An app that asks for resources from its own repository (``aws.path``), or runs on a cluster that makes its
    apps' resources (``appResources: spoke``, where its role may use every resource named after it), owns the
    AWS names that begin ``<cluster>-<app>-``. Names join parts with '-', which the parts may hold: app ``a`` on
    ``c`` owns ``c-a-b-...``, the names of app ``a-b`` on ``c`` (and of app ``b`` on a cluster ``c-a``). So no
    other app's names may begin with an owner's prefix. A cluster that makes its apps' resources owns every name
    ``<cluster>-...`` through its Crossplane's roles, so no other cluster's name may begin ``<cluster>-``.
    """
    located = {item.app.name: item for item in files}
    problems: list[str] = []
    clusters = sorted({placement.cluster for placement in placements} | spokes)
    for spoke in sorted(spokes):
        for cluster in clusters:
            if cluster.startswith(f"{spoke}-"):
                problems.append(
                    f"cluster {cluster!r}: its AWS names begin {spoke + '-'!r}, which cluster {spoke!r} owns "
                    f"(appResources: spoke: its Crossplane may manage every resource named {spoke}-...); rename "
                    f"cluster {cluster!r}"
                )
    named = sorted(
        ((f"{p.cluster}-{p.app.name}-", p) for p in placements if not p.app.aws.empty),
        key=lambda pair: (pair[0], pair[1].app.name),
    )
    prefixes = [prefix for prefix, _ in named]
    for prefix, owner in named:
        if owner.app.aws.path is None and owner.cluster not in spokes:
            continue
        # The prefixes that begin with this one sit right after it in sorted order.
        start = bisect.bisect_right(prefixes, prefix)
        for other_prefix, other in named[start : bisect.bisect_left(prefixes, prefix + "\U0010ffff", start)]:
            if other_prefix != prefix:
                problems.append(
                    f"{located[other.app.name].display}: on cluster {other.cluster!r} the AWS names of app "
                    f"{other.app.name!r} begin {other_prefix!r}, inside those app {owner.app.name!r} owns on cluster "
                    f"{owner.cluster!r} ({prefix}..., {located[owner.app.name].display}), which could then take or "
                    f"use them; rename one of the two apps"
                )
    return problems


def place_apps(
    files: list[AppFile], environments: dict[str, list[tuple[str, str]]], spokes: frozenset[str] = frozenset()
) -> tuple[tuple[Placement, ...], list[str]]:
    """Resolve each app's clusters and environments against the fleet; report what does not resolve.

    ``environments`` maps each environment to its clusters as (name, region), in definition order; ``spokes`` are
    the clusters that make their apps' resources themselves.
    """
    problems: list[str] = []
    region_of = {name: (env, region) for env, clusters in environments.items() for name, region in clusters}
    placements: list[Placement] = []
    #: (cluster, namespace) -> the app that claimed it first.
    claimed: dict[tuple[str, str], str] = {}
    for item in sorted(files, key=lambda item: item.app.name):
        app, shown = item.app, item.display
        targets: dict[str, None] = {}
        for index, cluster in enumerate(app.clusters):
            if cluster not in region_of:
                known = ", ".join(sorted(region_of)) or "none"
                problems.append(f"{shown}: clusters[{index}]: unknown workload cluster {cluster!r} (clusters: {known})")
                continue
            targets[cluster] = None
        for index, environment in enumerate(app.environments):
            if environment not in environments:
                known = ", ".join(sorted(environments)) or "none"
                problems.append(
                    f"{shown}: environments[{index}]: unknown environment {environment!r} (environments: {known})"
                )
                continue
            for cluster, _ in environments[environment]:
                targets[cluster] = None
        for cluster in targets:
            environment, region = region_of[cluster]
            key = (cluster, app.target_namespace)
            if key in claimed:
                problems.append(
                    f"{shown}: namespace: app {app.name!r} and app {claimed[key]!r} both claim namespace "
                    f"{app.target_namespace!r} on cluster {cluster!r}; give one of them its own namespace"
                )
                continue
            claimed[key] = app.name
            if cluster in spokes and app.name == SPOKE_RESOURCES_DIR:
                problems.append(
                    f"{shown}: app {app.name!r} on cluster {cluster!r}: its tenant folder would be the folder of the "
                    f"cluster's own app resources (appResources: spoke, clusters/{cluster}/{SPOKE_RESOURCES_DIR}/); "
                    "rename the app"
                )
                continue
            for kind, index, aws_name in aws_names(cluster, app):
                rule = _aws_name_problems(kind, aws_name)
                if rule is not None:
                    problems.append(
                        f"{shown}: aws.{kind}[{index}].name: on cluster {cluster!r} the AWS name would be "
                        f"{show(aws_name)}; {rule}"
                    )
            placements.append(Placement(app=app, cluster=cluster, environment=environment, region=region))
    problems.extend(name_collisions(files, tuple(placements)))
    problems.extend(prefix_overlaps(files, tuple(placements), spokes))
    return tuple(placements), list(dict.fromkeys(problems))
