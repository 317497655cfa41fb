"""workload-clusters: the hub builds each workload cluster, one EKSCluster composite resource each.

The pack builds clusters (Pack.builds_clusters): it is bound once per workload cluster, and what it
emits goes to that cluster's own chain on the hub (fluxplane.charts.spokes), in the cluster's hub
namespace (fluxplane.config.hub): its composite resource, from which Crossplane composes the managed
resources and the kubeconfig Secret, and a provider-kubernetes ProviderConfig that reaches the spoke
through that Secret. The chain's ``cluster`` Kustomization waits for that one composite resource to be
``Ready`` (failing at once on a composition error); creating an EKS cluster and its node groups takes a
quarter of an hour, hence the long timeout. A cluster that never gets Ready holds up only its own chain.

Removing a cluster from the definition removes its chain from dist/; Flux prunes it and Crossplane
deletes the cluster, its node groups and its VPC in AWS.

An existing cluster (``existing``) is built by no one: an imported one is an EKSCluster of an existing cluster's
Composition (fluxplane.kinds.eks_api), which reads (or manages) what AWS has; a registered one gets no composite
resource and no Crossplane object at all, only the ConfigMaps the rest of its chain reads, written from the
definition: External Secrets' role and, for keyless access, the EKS cluster's ARN. Its ``cluster`` step then
waits for nothing but them.
"""

from __future__ import annotations

from pydantic import Field

from fluxplane.config.awsdata import facts
from fluxplane.config.hub import SPOKE_PROVIDER_CONFIG, bootstrap_values, hub_access_config_map, kubeconfig_secret
from fluxplane.config.models import WorkloadCluster
from fluxplane.constructs.config_map import ConfigMap, ConfigMapProps
from fluxplane.constructs.kubernetes_provider_config import (
    KubernetesProviderConfig,
    KubernetesProviderConfigProps,
    ProviderCredentials,
    SecretKeySelector,
)
from fluxplane.errors import PackError
from fluxplane.kinds import eks_api as eks
from fluxplane.kinds import eks_cluster
from fluxplane.kinds.eks_cluster import EKSCluster
from fluxplane.packs.api import Pack, PackConfig, PackContext


class WorkloadClustersConfig(PackConfig):
    timeout: str = Field(
        "45m",
        pattern=r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$",
        description="How long Flux waits for a new cluster to become Ready.",
    )


def bind(ctx: PackContext, config: WorkloadClustersConfig) -> None:
    if ctx.fleet is None or ctx.cluster is None:
        raise PackError("workload-clusters: the pack builds one workload cluster at a time; bind it with one")
    cluster = ctx.cluster
    existing = cluster.existing
    if existing is not None and not existing.imported:
        _registered(ctx, cluster)
        return
    composite = EKSCluster(
        ctx.scope,
        cluster.name,
        eks.composite_props(
            cluster, ctx.fleet.sealing_key, ctx.fleet.management.flux_role_arn, facts(ctx.fleet.aws_data)
        ),
    )
    ctx.add_health_check(composite)
    secret = kubeconfig_secret(cluster.name)
    KubernetesProviderConfig(
        ctx.scope,
        f"{cluster.name}-provider-config",
        KubernetesProviderConfigProps(
            name=SPOKE_PROVIDER_CONFIG,
            namespace=secret.namespace,
            credentials=ProviderCredentials(
                source="Secret",
                secret_ref=SecretKeySelector(name=secret.name, namespace=secret.namespace, key=secret.key),
            ),
        ),
    )
    ctx.add_health_check_expr(eks_cluster.health_check())
    ctx.timeout = config.timeout


PACK = Pack(
    name="workload-clusters",
    version="2.1.0",
    description="Each workload cluster as an EKSCluster composite resource, applied by the cluster's own hub chain",
    config=WorkloadClustersConfig,
    layer="configs",
    bind=bind,
    requires=("eks-compositions",),
    builds_clusters=True,
    # The namespaces it makes are the workload clusters' own (their names), which the definition holds to.
    namespaces=(),
    runs_on="management",
)


def _registered(ctx: PackContext, cluster: WorkloadCluster) -> None:
    """What the hub knows of a registered cluster, from the definition: the ConfigMaps its chain reads."""
    assert cluster.existing is not None
    values = bootstrap_values(cluster.name)
    ConfigMap(
        ctx.scope,
        f"{cluster.name}-bootstrap-values",
        ConfigMapProps(
            name=values.name,
            namespace=values.namespace,
            data={values.external_secrets_role_arn_key: cluster.existing.external_secrets_role_arn},
        ),
    )
    if cluster.hub_access == "keyless" and cluster.existing.cluster_arn is not None:
        ConfigMap(
            ctx.scope,
            f"{cluster.name}-hub-access",
            ConfigMapProps(
                name=hub_access_config_map(cluster.name),
                namespace=values.namespace,
                data={"provider": "aws", "cluster": cluster.existing.cluster_arn},
            ),
        )
