"""workload-clusters: one EKSCluster composite resource per workload cluster, on the hub.

Each cluster gets a hub namespace named after it (fluxplane.config.hub) holding its composite
resource, the managed resources Crossplane composes from it, the kubeconfig Secret the composition
writes, and a provider-kubernetes ProviderConfig that reaches the spoke through that Secret. The Flux
Kustomization waits for every composite resource to be ``Ready``; creating an EKS cluster and its
node groups takes a quarter of an hour, hence the long timeout.

Removing a cluster from the definition removes its namespace and composite resource from dist/;
Flux prunes them and Crossplane deletes the cluster, its node groups and its VPC in AWS.
"""

from __future__ import annotations

from pydantic import Field

from fluxplane.config.awsdata import facts
from fluxplane.config.hub import cluster_namespace, kubeconfig_secret
from fluxplane.constructs.eks_cluster import EKSCluster
from fluxplane.constructs.health import conditions_health
from fluxplane.constructs.kubernetes_provider_config import KubernetesProviderConfig
from fluxplane.constructs.namespace import Namespace
from fluxplane.errors import PackError
from fluxplane.packs import eks
from fluxplane.packs.api import Pack, PackConfig, PackContext

#: Name of the provider-kubernetes ProviderConfig in each cluster's hub namespace.
SPOKE_PROVIDER_CONFIG = "spoke"


class WorkloadClustersConfig(PackConfig):
    timeout: str = Field(
        "45m",
        pattern=r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$",
        description="How long Flux waits for new clusters to become Ready.",
    )


def bind(ctx: PackContext, config: WorkloadClustersConfig) -> None:
    if ctx.fleet is None:
        raise PackError("workload-clusters: the pack writes one composite resource per cluster; bind it with a fleet")
    aws = facts(ctx.fleet.aws_data)
    clusters = sorted(
        ((env.name, cluster) for env in ctx.fleet.environments for cluster in env.clusters),
        key=lambda item: item[1].name,
    )
    for environment, cluster in clusters:
        namespace = cluster_namespace(cluster.name)
        Namespace(
            ctx.scope,
            f"{cluster.name}-namespace",
            {
                "name": namespace,
                "labels": {"fluxplane.io/cluster": cluster.name, "fluxplane.io/environment": environment},
            },
        )
        composite = EKSCluster(
            ctx.scope,
            cluster.name,
            eks.composite_props(cluster, ctx.fleet.sealing_key, ctx.fleet.management.flux_role_arn, aws),
        )
        ctx.add_health_check(composite)
        secret = kubeconfig_secret(cluster.name)
        KubernetesProviderConfig(
            ctx.scope,
            f"{cluster.name}-provider-config",
            {
                "name": SPOKE_PROVIDER_CONFIG,
                "namespace": namespace,
                "credentials": {
                    "source": "Secret",
                    "secretRef": {"name": secret.name, "namespace": secret.namespace, "key": secret.key},
                },
            },
        )
    ctx.add_health_check_expr(conditions_health(EKSCluster.api_version, EKSCluster.kind, ("Ready",)))
    ctx.timeout = config.timeout


PACK = Pack(
    name="workload-clusters",
    version="1.0.0",
    description="One EKSCluster composite resource per workload cluster, with its hub namespace",
    config=WorkloadClustersConfig,
    layer="configs",
    bind=bind,
    requires=("eks-compositions",),
)
