"""Flux Kustomization (``kustomize.toolkit.fluxcd.io/v1``): applies a path of a source to a cluster.

A Kustomization with ``postBuild`` runs Flux's variable substitution over the text of everything it
applies: ``${var}`` becomes the variable's value and ``$$`` one ``$``, so ``$${var}`` is a literal
``${var}``. Text from the definition that is not meant to be substituted reaches the cluster as written
only escaped (:func:`escaped`); a field meant to be substituted is marked :data:`SUBSTITUTED`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, StringConstraints

from fluxplane.constructs.base import Resource, TypedResource
from fluxplane.constructs.props import (
    FLUX_NAMESPACE,
    CrossNamespaceSourceReference,
    CustomHealthCheck,
    DependsOn,
    Duration,
    KubeConfigReference,
    Label,
    Name,
    NamespacedObjectKindReference,
    Patch,
    Props,
    SubstituteReference,
    dependency_entry,
    dumped,
    ordered,
)


@dataclass(frozen=True)
class Substituted:
    """Type of :data:`SUBSTITUTED`."""


#: Marks a model field whose text Flux's post-build substitution expands: ``Annotated[str, SUBSTITUTED]``.
#: :func:`escaped` leaves such a field as written, so ``${cluster_name}`` in it becomes the cluster's name.
SUBSTITUTED = Substituted()

#: A ``$`` that Flux's substitution would read as the start of ``${var}`` or of the escape ``$$``.
_SUBSTITUTION_DOLLAR = re.compile(r"\$(?=[${])")

_T = TypeVar("_T")


def escape_variables(text: str) -> str:
    """``text`` as written to have Flux's post-build substitution give back ``text``: each ``$`` it would
    read as the start of ``${var}`` or of ``$$`` is doubled (``${var}`` to ``$${var}``, ``$$`` to ``$$$``)."""
    return _SUBSTITUTION_DOLLAR.sub("$$", text) if "$" in text else text


def escaped(value: _T) -> _T:
    """``value`` with every string in it escaped (:func:`escape_variables`): strings, the keys and values of
    mappings, lists, tuples and the fields of pydantic models, except fields marked :data:`SUBSTITUTED`.

    What is unchanged is returned as is, so escaping a definition without ``$`` costs one walk of it.
    """
    return _escaped(value)[0]  # type: ignore[no-any-return]


def _escaped(value: Any) -> tuple[Any, bool]:
    if isinstance(value, str):
        text = escape_variables(value)
        return text, text != value
    if isinstance(value, BaseModel):
        changes = {}
        for name in _escaped_fields(type(value)):
            item, changed = _escaped(getattr(value, name))
            if changed:
                changes[name] = item
        return (value.model_copy(update=changes), True) if changes else (value, False)
    if isinstance(value, dict):
        pairs = [(_escaped(key), _escaped(item)) for key, item in value.items()]
        if any(key[1] or item[1] for key, item in pairs):
            return {key[0]: item[0] for key, item in pairs}, True
        return value, False
    if isinstance(value, (list, tuple)):
        items = [_escaped(item) for item in value]
        if any(changed for _, changed in items):
            return type(value)(item for item, _ in items), True
    return value, False


@functools.cache
def _escaped_fields(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(
        name
        for name, info in model.model_fields.items()
        if not any(isinstance(mark, Substituted) for mark in info.metadata)
    )


class PostBuild(Props):
    """A Kustomization's ``postBuild``: the variables Flux substitutes in what it applies."""

    substitute: dict[str, str] | None = None
    """Variables and their values, substituted for ``${var}`` in the built manifests. Default: not set."""
    substitute_from: tuple[SubstituteReference, ...] | None = None
    """ConfigMaps and Secrets whose data are more variables: each key a name, each value its value. Default: not set."""


class KustomizationProps(Props):
    """Props of a Flux Kustomization: which path of which source to apply, and how."""

    name: Name
    """``metadata.name`` of the Kustomization."""
    namespace: Label = FLUX_NAMESPACE
    """Namespace of the Kustomization. Default: ``"flux-system"``."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    annotations: dict[str, str] | None = None
    """``metadata.annotations``. Default: none."""
    interval: Duration = "10m"
    """How often Flux applies the path again, correcting drift. Default: ``"10m"``."""
    retry_interval: Duration | None = None
    """How soon Flux retries after a failed reconciliation. Default: ``interval``."""
    timeout: Duration | None = None
    """How long Flux waits for apply and health checks before it reports failure. Default: ``interval``."""
    path: Annotated[str, StringConstraints(pattern=r"^\./[^\s]*$")]
    """Path in the source of the directory to apply, with or without a ``kustomization.yaml``; starts with ``./``."""
    source_ref: CrossNamespaceSourceReference
    """The source (GitRepository, OCIRepository, ...) whose artifact holds ``path``."""
    prune: bool = True
    """Whether Flux deletes the objects it applied earlier that are no longer in ``path``. Default: ``True``."""
    wait: bool | None = None
    """Whether Flux waits for every object it applied to become ready (``healthChecks`` is then ignored). Default:
    not set (Flux's default, ``false``)."""
    force: bool | None = None
    """Whether Flux recreates an object when patching fails on a change to an immutable field. Default: not set
    (``false``)."""
    depends_on: tuple[DependsOn, ...] | None = None
    """Kustomizations that must be ready before this one is applied; ``depends_on()`` adds more. Default: not set
    (none)."""
    health_checks: tuple[NamespacedObjectKindReference, ...] | None = None
    """Objects that must become ready for the Kustomization to be ready; ``add_health_check()`` adds more. Default:
    not set (none)."""
    health_check_exprs: tuple[CustomHealthCheck, ...] | None = None
    """CEL health checks for custom resource kinds, used with ``wait`` or ``healthChecks``;
    ``add_health_check_expr()`` adds more. Default: not set (kstatus alone)."""
    post_build: PostBuild | None = None
    """Variable substitution over the built manifests. Default: not set (no substitution)."""
    patches: tuple[Patch, ...] | None = None
    """Strategic-merge and JSON6902 patches applied to the built manifests. Default: not set (none)."""
    components: tuple[str, ...] | None = None
    """Relative paths of kustomize Components to include in the build. Default: not set (none)."""
    kube_config: KubeConfigReference | None = None
    """Kubeconfig of a remote cluster to apply to. Default: not set (the cluster kustomize-controller runs in)."""
    service_account_name: Name | None = None
    """The ServiceAccount kustomize-controller impersonates to apply; a ServiceAccount's name is a DNS-1123
    subdomain, as Kubernetes has it (longer than a label may be). Default: not set (the controller's own account, or
    its ``--default-service-account``)."""
    target_namespace: Label | None = None
    """Namespace set on every namespaced object applied, overriding the manifests'. Default: not set (the manifests'
    namespaces)."""
    deletion_policy: Literal["MirrorPrune", "Delete", "WaitForTermination", "Orphan"] | None = None
    """What happens to the applied objects when the Kustomization is deleted: ``MirrorPrune`` (deleted if ``prune``),
    ``Delete``, ``WaitForTermination`` or ``Orphan``. Default: not set (Flux's default, ``MirrorPrune``)."""


class Kustomization(TypedResource[KustomizationProps]):
    """A Flux Kustomization. ``depends_on`` and ``add_health_check`` add to what props set."""

    api_version = "kustomize.toolkit.fluxcd.io/v1"
    kind = "Kustomization"
    props_class = KustomizationProps

    def __init__(self, scope: Any, construct_id: str, props: KustomizationProps) -> None:
        super().__init__(scope, construct_id, props)
        # Ordered sets (dict keys): relationship verbs are called many times per fleet, so
        # membership must not compare models one by one.
        self._depends_on: dict[tuple[str, str | None], DependsOn] = {
            (entry.name, entry.namespace): entry for entry in self.props.depends_on or ()
        }
        self._health_checks: dict[NamespacedObjectKindReference, None] = dict.fromkeys(self.props.health_checks or ())
        self._health_check_exprs: dict[CustomHealthCheck, None] = dict.fromkeys(self.props.health_check_exprs or ())

    @property
    def dependencies(self) -> tuple[DependsOn, ...]:
        return tuple(self._depends_on.values())

    @property
    def health_checks(self) -> tuple[NamespacedObjectKindReference, ...]:
        return tuple(self._health_checks)

    @property
    def health_check_exprs(self) -> tuple[CustomHealthCheck, ...]:
        return tuple(self._health_check_exprs)

    def depends_on(
        self, other: Kustomization | str, ready_expr: str | None = None, *, namespace: str | None = None
    ) -> DependsOn:
        """Apply this Kustomization only after ``other`` is Ready; returns the dependsOn entry.

        ``other`` is a Kustomization, or a name in this one's namespace or in ``namespace``.
        """
        if isinstance(other, Kustomization):
            namespace = other.namespace
            other = other.name
        if namespace == self.namespace:
            namespace = None
        entry = dependency_entry(self.node.path, other, namespace, ready_expr)
        # One entry per dependency: a later call (say, with a readyExpr) replaces the earlier one.
        self._depends_on[(entry.name, entry.namespace)] = entry
        return entry

    def add_health_check(self, target: Resource | NamespacedObjectKindReference) -> NamespacedObjectKindReference:
        """Gate readiness on a kstatus-compatible object (Deployment, HelmRelease, ...)."""
        if isinstance(target, Resource):
            target = NamespacedObjectKindReference(
                api_version=target.api_version, kind=target.kind, name=target.name, namespace=target.namespace
            )
        self._health_checks[target] = None
        return target

    def add_health_check_expr(self, check: CustomHealthCheck) -> CustomHealthCheck:
        """Gate readiness on CEL expressions for a custom resource kind (see fluxplane.constructs.health)."""
        self._health_check_exprs[check] = None
        return check

    def spec_dict(self) -> dict[str, Any]:
        spec = super().spec_dict() or {}
        for key, values in (
            ("dependsOn", self._depends_on.values()),
            ("healthChecks", self._health_checks),
            ("healthCheckExprs", self._health_check_exprs),
        ):
            if values:
                spec[key] = [dumped(value) for value in values]
            else:
                spec.pop(key, None)
        return ordered(spec, KustomizationProps)
