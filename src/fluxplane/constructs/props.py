"""Pieces shared by construct props: the base model and the Flux reference types.

Field names are Python snake_case with the upstream camelCase name as alias, so props accept both
``depends_on=`` in Python and ``dependsOn`` from data, and render with the upstream names.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError
from pydantic.alias_generators import to_camel

from fluxplane.config.hub import FLUX_NAMESPACE as FLUX_NAMESPACE  # its home; the constructs and packs import it here
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

#: The accounts the platform's own Kustomizations and HelmReleases name (``serviceAccountName``) so they
#: keep cluster-wide rights where Flux runs locked down and impersonates a namespace's default account.
KUSTOMIZE_CONTROLLER = "kustomize-controller"
HELM_CONTROLLER = "helm-controller"
#: The label on a tenant's namespace and objects, whose value is the app (fluxplane.charts.tenants).
TENANT_LABEL = "fluxplane.io/tenant"


class Props(BaseModel):
    """Base of every props model: frozen, strict about unknown fields, upstream names as aliases.

    Each field is documented by the docstring under it (its meaning and default), which IDEs show. A props model
    builds its validator when it first validates (``defer_build``): a synth that takes every cluster from its cache
    builds few constructs.
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        validate_by_name=True,
        validate_by_alias=True,
        alias_generator=to_camel,
        validate_default=False,
        defer_build=True,
    )

    def dump(self) -> dict[str, Any]:
        """The props as upstream-named plain data, unset (None) fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class LocalObjectReference(Props):
    """A reference to an object by name alone (``secretRef``, ``functionRef``, ...)."""

    name: Name
    """Name of the referenced object."""


class SecretKeyReference(Props):
    """A reference to a Secret, and optionally one of its keys (Flux ``kubeConfig.secretRef``)."""

    name: Name
    """Name of the Secret, in the referring object's namespace."""
    key: str | None = None
    """Key in the Secret that holds the value. Default: not set (the reader's default key; ``value`` for Flux's
    kubeConfig)."""


class CrossNamespaceSourceReference(Props):
    """A Flux Kustomization's ``sourceRef``."""

    kind: Literal["GitRepository", "OCIRepository", "Bucket", "ExternalArtifact"]
    """Kind of the source: ``GitRepository``, ``OCIRepository``, ``Bucket`` or ``ExternalArtifact``."""
    name: Name
    """Name of the source."""
    namespace: Label | None = None
    """Namespace of the source. Default: not set (the Kustomization's own namespace)."""
    api_version: str | None = None
    """API version of the source. Default: not set (Flux finds the source by kind and name)."""


class DependsOn(Props):
    """A Flux ``dependsOn`` entry: the named object must be Ready first (or satisfy readyExpr)."""

    name: Name
    """Name of the object that must be ready first."""
    namespace: Label | None = None
    """Namespace of that object. Default: not set (the dependent object's own namespace)."""
    ready_expr: str | None = None
    """CEL expression that decides the dependency's readiness, in place of Flux's built-in Ready check (in addition
    to it with the ``AdditiveCELDependencyCheck`` feature gate). Default: not set (the built-in check)."""


class NamespacedObjectKindReference(Props):
    """A Flux ``healthChecks`` entry."""

    api_version: str | None = None
    """API version of the object. Default: not set (the kind's preferred version in the cluster)."""
    kind: str
    """Kind of the object."""
    name: Name
    """Name of the object."""
    namespace: Label | None = None
    """Namespace of the object; leave it unset for a cluster-scoped object. Default: not set."""


class CustomHealthCheck(Props):
    """A Flux ``healthCheckExprs`` entry: CEL expressions over objects of one kind."""

    api_version: str
    """API version of the custom resources the expressions evaluate."""
    kind: str
    """Kind of those custom resources."""
    current: str
    """CEL expression that is true once a resource has reached its desired state (healthy)."""
    in_progress: str | None = None
    """CEL expression that is true while a resource has not yet reached its desired state; evaluated first. Default:
    not set (in progress until ``failed`` or ``current`` holds)."""
    failed: str | None = None
    """CEL expression that is true when a resource has failed to reach its desired state, so Flux reports the failure
    at once. Default: not set (Flux waits for ``current`` until its timeout)."""


class KubeConfigReference(Props):
    """Flux ``kubeConfig``: apply to a remote cluster through a kubeconfig Secret or a ConfigMap."""

    secret_ref: SecretKeyReference | None = None
    """Secret holding a kubeconfig for the remote cluster, under the key ``value`` by default; excludes
    ``configMapRef``. Default: not set."""
    config_map_ref: LocalObjectReference | None = None
    """ConfigMap that describes the remote cluster (``provider``, ``cluster``, ``address``, ...) for secret-less
    access through workload identity; excludes ``secretRef``. Default: not set."""


class SubstituteReference(Props):
    """A Flux ``postBuild.substituteFrom`` entry: a ConfigMap or Secret whose keys are variables."""

    kind: Literal["ConfigMap", "Secret"]
    """Kind of the object holding the variables: ``ConfigMap`` or ``Secret``."""
    name: Name
    """Name of that object, in the Kustomization's namespace."""
    optional: bool | None = None
    """Whether a missing object is tolerated, as if it were present but empty. Default: not set (Flux's default,
    ``false``: the object must exist)."""


class PatchSelector(Props):
    """The objects a ``patches`` entry applies to: those that match every field set."""

    group: str | None = None
    """API group of the objects. Default: not set (any group)."""
    version: str | None = None
    """API version of the objects. Default: not set (any version)."""
    kind: str | None = None
    """Kind of the objects. Default: not set (any kind)."""
    name: str | None = None
    """Name of the objects. Default: not set (any name)."""
    namespace: str | None = None
    """Namespace of the objects. Default: not set (any namespace)."""
    label_selector: str | None = None
    """Label selector the objects' labels must match. Default: not set (any labels)."""
    annotation_selector: str | None = None
    """Selector, in label-selector syntax, the objects' annotations must match. Default: not set (any annotations)."""


class Patch(Props):
    """A kustomize/Flux ``patches`` entry: a strategic-merge or JSON6902 patch and its target."""

    patch: str
    """The patch, as YAML text: a strategic-merge patch, or a JSON6902 patch (a list of operations)."""
    target: PatchSelector | None = None
    """The objects to patch. Default: not set (a strategic-merge patch applies to the object its own header names)."""


def plain_copy(value: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, scalars): several times faster than copy.deepcopy."""
    if isinstance(value, dict):
        return {key: plain_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_copy(item) for item in value]
    return value


def ordered(spec: dict[str, Any], model: type[Props]) -> dict[str, Any]:
    """Put keys in the props' declared (upstream) order, whatever order they were added in."""
    return {key: spec[key] for key in _key_order(model) if key in spec}


@functools.cache
def _key_order(model: type[Props]) -> tuple[str, ...]:
    """The upstream names of ``model``'s fields, in declared order (a class's fields do not change)."""
    return tuple(field.alias or name for name, field in model.model_fields.items())


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
