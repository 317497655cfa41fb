"""karpenter: node autoscaling for the workload clusters, with a default EC2NodeClass and NodePool.

Karpenter launches EC2 instances for pods that do not fit, and consolidates nodes once they are
empty or underused. It runs in ``kube-system``, as Karpenter's documentation recommends since
v0.33: Kubernetes' built-in FlowSchemas then give its API requests the priority of the cluster's
other critical controllers. Its pods stay off the nodes they manage (the chart requires nodes
without a ``karpenter.sh/nodepool`` label), so they run on the managed node groups of the
cluster's composition (fluxplane.kinds.eks_api).

The EC2NodeClass launches nodes like those node groups: with the node role the composition names
``<cluster>-node``, in the private subnets it tags ``karpenter.sh/discovery: <cluster>``, with the
cluster security group EKS tags ``aws:eks:cluster-name: <cluster>`` (the group managed node groups
use). Managed node groups give that role an EKS access entry, so Karpenter's nodes may join.
The hub is not built by that composition: switch the pack off there (``management.packs``) unless
its node role, subnets and security group follow the same names and tags. Spot interruption
handling is off: it needs an SQS queue and EventBridge rules per cluster, which the composition
does not make.

The chart is an OCI artifact, read through an OCIRepository; its ``crds/`` carry the NodePool,
NodeClaim and EC2NodeClass CRDs, which helm-controller installs and upgrades, so the NodePool and the
EC2NodeClass are applied in ``karpenter-configs`` once the release is Ready.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, field_validator

from fluxplane.config.models.nodes import (
    Architectures,
    CapacityTypes,
    InstanceCategories,
    InstanceFamilies,
    KarpenterDuration,
)
from fluxplane.config.problems import show
from fluxplane.kinds.eks_api import KARPENTER_DISCOVERY, NODE_ROLE_NAME
from fluxplane.packs import versions
from fluxplane.sdk import (
    FLUXPLANE_NETWORK,
    DnsLabel,
    Pack,
    PackContext,
    RawObject,
    ReleaseConfig,
    keep_service_account,
    load_policy,
    oci_chart_release,
)

#: Where the controller runs, and the fixed name of its service account: the Pod Identity association
#: binds the controller's IAM role to exactly this pair.
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "karpenter"
NODE_POOL_API = "karpenter.sh/v1"
NODE_CLASS_API = "karpenter.k8s.aws/v1"
#: The IAM name of the cluster's node role (made by the EKS composition), as Flux substitutes it.
NODE_ROLE = NODE_ROLE_NAME % "${cluster_name}"
#: The tag EKS puts on the cluster security group it makes.
CLUSTER_SECURITY_GROUP_TAG = "aws:eks:cluster-name"

#: An EKS-optimized AMI family Karpenter selects by alias, at the newest or a pinned release.
AMI_ALIAS = r"^(al2023|bottlerocket)@(latest|v[0-9][0-9A-Za-z.-]*)$"


def _ami_alias(value: str) -> str:
    if not re.fullmatch(AMI_ALIAS, value) or len(value) > 30:
        raise ValueError(
            "expected an EKS-optimized AMI alias: al2023 or bottlerocket, @latest or @ a release "
            f"(al2023@latest, al2023@v20251023, bottlerocket@v1.50.0), got {show(value)}"
        )
    return value


class KarpenterConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    name: DnsLabel = Field("default", description="Name of the default NodePool and of its EC2NodeClass.")
    instance_categories: InstanceCategories = Field(
        ["c", "m", "r"],
        alias="instanceCategories",
        description="EC2 instance categories nodes may be (karpenter.k8s.aws/instance-category).",
    )
    instance_families: InstanceFamilies | None = Field(
        None,
        alias="instanceFamilies",
        description="EC2 instance families nodes may be, e.g. [m7i, c7i] (karpenter.k8s.aws/instance-family); "
        "unset: any family of the categories.",
    )
    min_instance_generation: int = Field(
        3,
        ge=1,
        le=20,
        alias="minInstanceGeneration",
        description="Oldest EC2 instance generation nodes may be (3 leaves out m1, c1, m2 and the like).",
    )
    capacity_types: CapacityTypes = Field(
        ["on-demand"],
        alias="capacityTypes",
        description="Capacity nodes may run on: on-demand, spot, or both (Karpenter then prefers spot).",
    )
    architectures: Architectures = Field(
        ["amd64"], description="CPU architectures nodes may have: amd64, arm64 (images must support them)."
    )
    cpu_limit: int = Field(
        1000, ge=1, alias="cpuLimit", description="Most vCPUs the NodePool's nodes may have in total."
    )
    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized"] = Field(
        "WhenEmptyOrUnderutilized",
        alias="consolidationPolicy",
        description="Nodes Karpenter removes or replaces: only empty ones, or underused ones as well.",
    )
    consolidate_after: KarpenterDuration = Field(
        "1m",
        alias="consolidateAfter",
        description="How long a node stays empty or underused before it is consolidated (e.g. 30s, 5m, Never).",
    )
    expire_after: KarpenterDuration = Field(
        "720h",
        alias="expireAfter",
        description="Age at which a node is replaced, picking up new AMIs (e.g. 720h, Never).",
    )
    ami_alias: Annotated[str, AfterValidator(_ami_alias)] = Field(
        "al2023@latest",
        alias="amiAlias",
        description="EKS-optimized AMI of the nodes; pin a release (al2023@v20251023) to roll AMIs out deliberately.",
    )
    version: str = Field(versions.KARPENTER.version, description="Chart version (OCI tag).")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")

    @field_validator("values")
    @classmethod
    def _keep_service_account(cls, values: dict[str, Any]) -> dict[str, Any]:
        return keep_service_account(values, NAMESPACE, SERVICE_ACCOUNT)


def controller_policy() -> dict[str, Any]:
    """The controller's inline policy: Karpenter's getting-started CloudFormation (v1), for one cluster
    (this pack's controller.json).

    Its NodeLifecycle, IAMIntegration, EKSIntegration and ResourceDiscovery policies in one document,
    scoped where upstream scopes them (the cluster's tags, its region, its node role NODE_ROLE, which it
    may pass to EC2); the account is ``*``. The Interruption policy is left out with the queue it reads.
    """
    return load_policy("controller", __name__)


def node_class(config: KarpenterConfig) -> dict[str, Any]:
    """The EC2NodeClass: the composition's node role, private subnets and cluster security group."""
    return {
        "apiVersion": NODE_CLASS_API,
        "kind": "EC2NodeClass",
        "metadata": {"name": config.name},
        "spec": {
            "role": NODE_ROLE,
            "amiSelectorTerms": [{"alias": config.ami_alias}],
            "subnetSelectorTerms": [{"tags": {KARPENTER_DISCOVERY: "${cluster_name}"}}],
            "securityGroupSelectorTerms": [{"tags": {CLUSTER_SECURITY_GROUP_TAG: "${cluster_name}"}}],
        },
    }


def _requirement(key: str, operator: str, values: list[str]) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": values}


def node_pool(config: KarpenterConfig) -> dict[str, Any]:
    """The NodePool: Linux nodes of the configured kinds, up to the CPU limit, consolidated as configured."""
    requirements = [
        _requirement("kubernetes.io/arch", "In", list(config.architectures)),
        _requirement("kubernetes.io/os", "In", ["linux"]),
        _requirement("karpenter.sh/capacity-type", "In", list(config.capacity_types)),
        _requirement("karpenter.k8s.aws/instance-category", "In", list(config.instance_categories)),
        _requirement("karpenter.k8s.aws/instance-generation", "Gt", [str(config.min_instance_generation - 1)]),
    ]
    if config.instance_families is not None:
        requirements.append(_requirement("karpenter.k8s.aws/instance-family", "In", list(config.instance_families)))
    return {
        "apiVersion": NODE_POOL_API,
        "kind": "NodePool",
        "metadata": {"name": config.name},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {
                        "group": NODE_CLASS_API.split("/")[0],
                        "kind": "EC2NodeClass",
                        "name": config.name,
                    },
                    "requirements": requirements,
                    "expireAfter": config.expire_after,
                }
            },
            "limits": {"cpu": config.cpu_limit},
            "disruption": {
                "consolidationPolicy": config.consolidation_policy,
                "consolidateAfter": config.consolidate_after,
            },
        },
    }


def bind(ctx: PackContext, config: KarpenterConfig) -> None:
    chart = versions.KARPENTER
    release = oci_chart_release(
        ctx.scope,
        name="karpenter",
        url=chart.url,
        version=config.version,
        target_namespace=NAMESPACE,
        identity=config,
    )
    release.add_values(
        {
            "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
            "settings": {"clusterName": "${cluster_name}"},
            # The region, rather than from instance metadata, which nodes may not let pods reach.
            "controller": {"env": [{"name": "AWS_REGION", "value": "${cluster_region}"}]},
        }
    )
    release.add_values(config.values)
    ctx.add_pod_identity("controller", namespace=NAMESPACE, service_account=SERVICE_ACCOUNT, policy=controller_policy())
    ctx.add_health_check(release)

    RawObject(ctx.scope, "node-class", node_class(config))
    RawObject(ctx.scope, "node-pool", node_pool(config))


PACK = Pack(
    name="karpenter",
    version="1.0.0",
    description="Karpenter node autoscaling, with a default EC2NodeClass and NodePool",
    config=KarpenterConfig,
    layer="controllers",
    bind=bind,
    crd_groups=("karpenter.sh", "karpenter.k8s.aws"),
    # the chart's crds/: NodePool, NodeClaim, NodeOverlay; EC2NodeClass
    crds=("karpenter.sh", "karpenter.k8s.aws"),
    replaced_by_auto_mode="node autoscaling (nodes for pending pods, consolidated when underused)",
    namespaces=(NAMESPACE,),
    needs=(FLUXPLANE_NETWORK,),
)
