"""Flux Kustomization (``kustomize.toolkit.fluxcd.io/v1``): applies a path of a source to a cluster."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import StringConstraints

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


class PostBuild(Props):
    substitute: dict[str, str] | None = None
    substitute_from: tuple[SubstituteReference, ...] | None = None


class KustomizationProps(Props):
    name: Name
    namespace: Label = FLUX_NAMESPACE
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    interval: Duration = "10m"
    retry_interval: Duration | None = None
    timeout: Duration | None = None
    path: Annotated[str, StringConstraints(pattern=r"^\./[^\s]*$")]
    source_ref: CrossNamespaceSourceReference
    prune: bool = True
    wait: bool | None = None
    force: bool | None = None
    depends_on: tuple[DependsOn, ...] | None = None
    health_checks: tuple[NamespacedObjectKindReference, ...] | None = None
    health_check_exprs: tuple[CustomHealthCheck, ...] | None = None
    post_build: PostBuild | None = None
    patches: tuple[Patch, ...] | None = None
    components: tuple[str, ...] | None = None
    kube_config: KubeConfigReference | None = None
    #: A ServiceAccount's name: a DNS-1123 subdomain, as Kubernetes has it (longer than a label may be).
    service_account_name: Name | None = None
    target_namespace: Label | None = None
    deletion_policy: Literal["MirrorPrune", "Delete", "WaitForTermination", "Orphan"] | None = None


class Kustomization(TypedResource[KustomizationProps]):
    """A Flux Kustomization. ``depends_on`` and ``add_health_check`` add to what props set."""

    api_version = "kustomize.toolkit.fluxcd.io/v1"
    kind = "Kustomization"
    props_class = KustomizationProps

    def __init__(self, scope: Any, construct_id: str, props: KustomizationProps | dict[str, Any]) -> None:
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
