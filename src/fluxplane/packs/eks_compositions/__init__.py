"""eks-compositions: the EKSCluster API on the hub, its XRD and a Composition per cluster shape.

It sits between the provider configs and the workload clusters in the hub's chain. Its Flux
Kustomization is healthy when the XRD is ``Established`` (the EKSCluster CRD is served), so the
composite resources that need the CRD are applied only after it exists. (A namespaced XRD has no
claims, so Crossplane never sets ``Offered`` on it.)
"""

from __future__ import annotations

from fluxplane.constructs.composite_resource_definition import CompositeResourceDefinition
from fluxplane.constructs.composition import Composition
from fluxplane.constructs.health import definition_health
from fluxplane.constructs.rbac import ClusterRole, ClusterRoleProps, PolicyRule
from fluxplane.errors import PackError
from fluxplane.kinds import eks_api as eks
from fluxplane.packs.api import Pack, PackConfig, PackContext


class EksCompositionsConfig(PackConfig):
    pass


def bind(ctx: PackContext, config: EksCompositionsConfig) -> None:
    if ctx.fleet is None:
        raise PackError(
            "eks-compositions: the pack writes the Compositions the fleet's clusters use; bind it with a fleet"
        )
    xrd = CompositeResourceDefinition(ctx.scope, "xrd", eks.xrd_props())
    ctx.add_health_check(xrd)
    ctx.add_health_check_expr(definition_health(xrd.api_version, xrd.kind))
    # Crossplane manages the kinds its providers define; the ConfigMap a Composition writes for the
    # spoke bootstrap needs this grant, aggregated into Crossplane's own ClusterRole.
    ClusterRole(
        ctx.scope,
        "compose-config-maps",
        ClusterRoleProps(
            name="crossplane-compose-config-maps",
            labels={"rbac.crossplane.io/aggregate-to-crossplane": "true"},
            rules=(
                PolicyRule(
                    api_groups=("",),
                    resources=("configmaps",),
                    verbs=("get", "list", "watch", "create", "update", "patch", "delete"),
                ),
            ),
        ),
    )
    # A registered cluster has no composite resource, so no Composition; an imported one's come after the others.
    found = {eks.composition_of(cluster) for env in ctx.fleet.environments for cluster in env.clusters}
    created = sorted(shape for shape in found if isinstance(shape, eks.Shape))
    existing = sorted(shape for shape in found if isinstance(shape, eks.ExistingShape))
    shapes: list[eks.Shape | eks.ExistingShape] = [*created, *existing]
    for shape in shapes:
        Composition(ctx.scope, shape.name, eks.composition_props(shape))


PACK = Pack(
    name="eks-compositions",
    version="1.1.0",
    description="EKSCluster composite API (XRD) and its Pipeline Compositions for the hub",
    config=EksCompositionsConfig,
    layer="configs",
    bind=bind,
    requires=("crossplane-provider-configs",),
    # Cluster-scoped kinds only; the composites live in the workload clusters' hub namespaces.
    namespaces=(),
    runs_on="management",
)
