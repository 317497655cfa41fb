"""Pieces shared by construct props: the base model and the Flux reference types.

Field names are Python snake_case with the upstream camelCase name as alias, so props accept both
``depends_on=`` in Python and ``dependsOn`` from data, and render with the upstream names.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError
from pydantic.alias_generators import to_camel

from fluxplane.errors import ConstructError

DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DURATION = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
#: Source timeouts: the source CRDs accept no hours.
SOURCE_TIMEOUT = r"^([0-9]+(\.[0-9]+)?(ms|s|m))+$"

Name = Annotated[str, StringConstraints(pattern=DNS_SUBDOMAIN, max_length=253)]
Label = Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)]
Duration = Annotated[str, StringConstraints(pattern=DURATION)]
SourceTimeout = Annotated[str, StringConstraints(pattern=SOURCE_TIMEOUT)]

#: The namespace Flux's controllers and their objects live in.
FLUX_NAMESPACE = "flux-system"
#: The accounts the platform's own Kustomizations and HelmReleases name (``serviceAccountName``) so they
#: keep cluster-wide rights where Flux runs locked down and impersonates a namespace's default account.
KUSTOMIZE_CONTROLLER = "kustomize-controller"
HELM_CONTROLLER = "helm-controller"
#: The label on a tenant's namespace and objects, whose value is the app (fluxplane.charts.tenants).
TENANT_LABEL = "fluxplane.io/tenant"


class Props(BaseModel):
    """Base of every props model: frozen, strict about unknown fields, upstream names as aliases."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, alias_generator=to_camel, validate_default=False
    )

    def dump(self) -> dict[str, Any]:
        """The props as upstream-named plain data, unset (None) fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class LocalObjectReference(Props):
    name: Name


class SecretKeyReference(Props):
    name: Name
    key: str | None = None


class CrossNamespaceSourceReference(Props):
    """A Flux Kustomization's ``sourceRef``."""

    kind: Literal["GitRepository", "OCIRepository", "Bucket", "ExternalArtifact"]
    name: Name
    namespace: Label | None = None
    api_version: str | None = None


class DependsOn(Props):
    """A Flux ``dependsOn`` entry: the named object must be Ready first (or satisfy readyExpr)."""

    name: Name
    namespace: Label | None = None
    ready_expr: str | None = None


class NamespacedObjectKindReference(Props):
    """A Flux ``healthChecks`` entry."""

    api_version: str | None = None
    kind: str
    name: Name
    namespace: Label | None = None


class CustomHealthCheck(Props):
    """A Flux ``healthCheckExprs`` entry: CEL expressions over objects of one kind."""

    api_version: str
    kind: str
    current: str
    in_progress: str | None = None
    failed: str | None = None


class KubeConfigReference(Props):
    """Flux ``kubeConfig``: apply to a remote cluster through a kubeconfig Secret or a ConfigMap."""

    secret_ref: SecretKeyReference | None = None
    config_map_ref: LocalObjectReference | None = None


class SubstituteReference(Props):
    kind: Literal["ConfigMap", "Secret"]
    name: Name
    optional: bool | None = None


class PatchSelector(Props):
    group: str | None = None
    version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    label_selector: str | None = None
    annotation_selector: str | None = None


class Patch(Props):
    """A kustomize/Flux ``patches`` entry: a strategic-merge or JSON6902 patch and its target."""

    patch: str
    target: PatchSelector | None = None


def plain_copy(value: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, scalars): several times faster than copy.deepcopy."""
    if isinstance(value, dict):
        return {key: plain_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_copy(item) for item in value]
    return value


def ordered(spec: dict[str, Any], model: type[Props]) -> dict[str, Any]:
    """Put keys in the props' declared (upstream) order, whatever order they were added in."""
    order = [field.alias or name for name, field in model.model_fields.items()]
    return {key: spec[key] for key in order if key in spec}


@functools.lru_cache(maxsize=8192)
def dependency(name: str, namespace: str | None = None, ready_expr: str | None = None) -> DependsOn:
    """A DependsOn entry; the same entry is one shared, immutable object."""
    return DependsOn(name=name, namespace=namespace, ready_expr=ready_expr)


def dependency_entry(construct_path: str, name: str, namespace: str | None, ready_expr: str | None) -> DependsOn:
    """A DependsOn entry for a verb call; a bad name is a ConstructError naming the construct."""
    try:
        return dependency(name, namespace, ready_expr)
    except ValidationError as exc:
        problems = [
            f"{construct_path}: dependsOn {name!r}: {error['msg'][:1].lower()}{error['msg'][1:]}"
            for error in exc.errors()
        ]
        raise ConstructError(problems) from None


@functools.lru_cache(maxsize=16384)
def _dumped(props: Props) -> dict[str, Any]:
    return props.dump()


def dumped(props: Props) -> dict[str, Any]:
    """``props.dump()`` of a flat reference (dependsOn, healthChecks entries), computed once per value.

    Props are frozen, so the dump is cached; the caller gets its own copy of the (flat) mapping.
    """
    return dict(_dumped(props))
