"""EKS Auto Mode on a workload cluster: EKS launches its nodes and runs its block storage and load balancing.

The cluster then has no managed node groups. EKS's built-in node pools (``general-purpose``, ``system``) are switched
on or off here; NodeClasses and NodePools of the cluster's own come with it, applied by the cluster's Flux
(fluxplane.packs.auto_mode).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from fluxplane.config.models.fields import DnsLabel, Model, duration_ns, located, repeated
from fluxplane.config.models.nodes import (
    MAX_TAINTS,
    Architectures,
    CapacityTypes,
    InstanceCategories,
    InstanceFamilies,
    KarpenterDuration,
    LabelKey,
    NodeLabelValue,
    Taint,
)

#: EKS's built-in node pools, as computeConfig.nodePools names them.
BuiltInNodePool = Literal["general-purpose", "system"]
GENERAL_PURPOSE: BuiltInNodePool = "general-purpose"
SYSTEM: BuiltInNodePool = "system"
BUILT_IN_NODE_POOLS: tuple[BuiltInNodePool, ...] = (GENERAL_PURPOSE, SYSTEM)
#: The NodeClass EKS makes with the built-in node pools, which a custom NodePool may name too.
DEFAULT_NODE_CLASS = "default"
#: An ephemeral storage size as EKS reads it: 1-59000Gi, 1-64000G, 1-58Ti or 1-64T.
STORAGE_SIZE = r"^[1-9][0-9]{0,4}(Gi|G|Ti|T)$"
_STORAGE_LIMITS = {"Gi": 59000, "G": 64000, "Ti": 58, "T": 64}
#: How long EKS Auto Mode lets a node live, whatever its NodePool's expireAfter: 21 days.
MAX_NODE_LIFETIME_NS = 21 * 24 * 3600 * 10**9


class EphemeralStorage(Model):
    """The root volume of each node a NodeClass launches."""

    size: Annotated[str, Field(pattern=STORAGE_SIZE)] = Field(
        "80Gi", description="Volume size: 1 to 59000Gi (or 64000G, 58Ti, 64T)."
    )
    iops: int | None = Field(None, ge=3000, le=16000, description="Provisioned IOPS, 3000 to 16000; unset: EKS's.")
    throughput: int | None = Field(None, ge=125, le=1000, description="Throughput in MiB/s, 125 to 1000; unset: EKS's.")
    kms_key_id: str | None = Field(
        None,
        alias="kmsKeyID",
        min_length=1,
        max_length=2048,
        description="KMS key (ID, ARN, alias or alias ARN) the volume is encrypted with; unset: the account's "
        "default EBS key.",
    )

    @field_validator("size")
    @classmethod
    def _in_range(cls, value: str) -> str:
        number = int(value.rstrip("GiT"))
        unit = value[len(str(number)) :]
        if number > _STORAGE_LIMITS[unit]:
            raise ValueError(f"EKS allows 1 to {_STORAGE_LIMITS[unit]}{unit}, got {value!r}")
        return value


class AutoModeNodeClass(Model):
    """A NodeClass (`eks.amazonaws.com/v1`) of the cluster's own: how EKS Auto Mode launches the nodes of the custom
    node pools that name it. Its node role, subnets and security group are the cluster's: the composition's node role
    (`<cluster>-node`), its private subnets and the cluster security group."""

    name: DnsLabel = Field(description="NodeClass name, unique within the cluster; not `default` (EKS's).")
    ephemeral_storage: EphemeralStorage | None = Field(
        None, alias="ephemeralStorage", description="Each node's root volume; unset: EKS's (80Gi)."
    )
    network_policy: Literal["DefaultAllow", "DefaultDeny"] | None = Field(
        None,
        alias="networkPolicy",
        description="What Kubernetes network policies leave unsaid: allowed or denied; unset: EKS's (allowed).",
    )
    network_policy_event_logs: Literal["Enabled", "Disabled"] | None = Field(
        None,
        alias="networkPolicyEventLogs",
        description="Log the network policies' decisions; unset: EKS's (off).",
    )
    snat_policy: Literal["Random", "Disabled"] | None = Field(
        None,
        alias="snatPolicy",
        description="Translate pods' traffic leaving the VPC to the node's address (`Random`), or not (`Disabled`, "
        "for a network that routes pod addresses); unset: EKS's (`Random`).",
    )

    @field_validator("name")
    @classmethod
    def _not_eks_own(cls, value: str) -> str:
        if value == DEFAULT_NODE_CLASS:
            raise ValueError(f"{value!r} is the NodeClass EKS makes with the built-in node pools; choose another name")
        return value


class AutoModeNodePool(Model):
    """A NodePool (`karpenter.sh/v1`) of the cluster's own, whose nodes EKS Auto Mode launches for pending pods and
    consolidates once they are empty or underused."""

    name: DnsLabel = Field(description="NodePool name, unique within the cluster; not a built-in pool's name.")
    node_class: DnsLabel = Field(
        DEFAULT_NODE_CLASS,
        alias="nodeClass",
        description="The NodeClass its nodes are launched with: one of `nodeClasses`, or `default`, the one EKS "
        "makes with the built-in node pools.",
    )
    instance_categories: InstanceCategories = Field(
        ["c", "m", "r"],
        alias="instanceCategories",
        description="EC2 instance categories nodes may be (eks.amazonaws.com/instance-category).",
    )
    instance_families: InstanceFamilies | None = Field(
        None,
        alias="instanceFamilies",
        description="EC2 instance families nodes may be, e.g. [m7i, c7i] (eks.amazonaws.com/instance-family); "
        "unset: any family of the categories.",
    )
    capacity_types: CapacityTypes = Field(
        ["on-demand"],
        alias="capacityTypes",
        description="Capacity nodes may run on: on-demand, spot, or both (spot is then preferred).",
    )
    architectures: Architectures = Field(
        ["amd64"], description="CPU architectures nodes may have: amd64, arm64 (images must support them)."
    )
    cpu_limit: int = Field(1000, ge=1, alias="cpuLimit", description="Most vCPUs the pool's nodes may have in total.")
    labels: dict[LabelKey, NodeLabelValue] = Field(
        default_factory=dict, description="Kubernetes labels on every node of the pool."
    )
    taints: Annotated[list[Taint], Field(max_length=MAX_TAINTS)] = Field(
        default_factory=list, description="Taints on every node of the pool (only pods that tolerate them run there)."
    )
    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized"] = Field(
        "WhenEmptyOrUnderutilized",
        alias="consolidationPolicy",
        description="Nodes EKS removes or replaces: only empty ones, or underused ones as well.",
    )
    consolidate_after: KarpenterDuration = Field(
        "1m",
        alias="consolidateAfter",
        description="How long a node stays empty or underused before it is consolidated (e.g. 30s, 5m, Never).",
    )
    expire_after: KarpenterDuration = Field(
        "336h",
        alias="expireAfter",
        description="Age at which a node is replaced, picking up new Auto Mode AMIs (e.g. 168h); at most 504h, the "
        "21 days after which EKS Auto Mode replaces a node whatever its pool says.",
    )

    @field_validator("expire_after")
    @classmethod
    def _within_node_lifetime(cls, value: str) -> str:
        if value == "Never" or duration_ns(value) > MAX_NODE_LIFETIME_NS:
            raise ValueError(
                f"at most 504h: EKS Auto Mode replaces a node after 21 days whatever its pool says, got {value!r}"
            )
        return value

    @field_validator("name")
    @classmethod
    def _not_built_in(cls, value: str) -> str:
        if value in BUILT_IN_NODE_POOLS:
            raise ValueError(
                f"{value!r} is a built-in node pool of EKS Auto Mode, switched on in `nodePools`; choose another name"
            )
        return value


class AutoMode(Model):
    """EKS Auto Mode: EKS launches the cluster's nodes (its built-in node pools and the cluster's own) and runs its
    block storage and load balancing, so the cluster has no managed node groups, and the packs whose work Auto Mode
    does (Karpenter, the EBS CSI driver, the AWS Load Balancer Controller) are not installed. The cluster's Flux
    applies its NodeClasses and NodePools, a default StorageClass (`gp3`) and an IngressClass (`alb`) of Auto Mode's.
    Switching an existing cluster in or out of Auto Mode replaces its nodes: synth asks for `--auto-mode`."""

    enabled: bool = Field(
        description="Run the cluster in EKS Auto Mode. To switch a cluster out of it, set false (removing `autoMode` "
        "leaves Auto Mode on in AWS); the other fields count only when true."
    )
    node_pools: list[BuiltInNodePool] = Field(
        [GENERAL_PURPOSE, SYSTEM],
        alias="nodePools",
        description="EKS's built-in node pools to run: `general-purpose` (required: the hub's bootstrap of the "
        "cluster runs there before its Flux applies `customNodePools`) and `system` (tainted for critical add-ons).",
    )
    node_classes: list[AutoModeNodeClass] = Field(
        default_factory=list,
        alias="nodeClasses",
        description="NodeClasses of the cluster's own (eks.amazonaws.com/v1), for `customNodePools` to name.",
    )
    custom_node_pools: list[AutoModeNodePool] = Field(
        default_factory=list,
        alias="customNodePools",
        description="NodePools of the cluster's own (karpenter.sh/v1), besides the built-in ones.",
    )

    @model_validator(mode="after")
    def _pools_and_classes(self) -> AutoMode:
        if not self.enabled:
            return self
        problems: list[tuple[tuple[str | int, ...], str]] = []
        if GENERAL_PURPOSE not in self.node_pools:
            problems.append(
                (
                    ("nodePools",),
                    f"needs {GENERAL_PURPOSE!r}: the hub's bootstrap of the cluster (External Secrets, Sealed Secrets, "
                    "Flux) runs on it before the cluster's Flux applies customNodePools",
                )
            )
        if twice := repeated(self.node_pools):
            problems.append((("nodePools",), f"each pool once, {', '.join(map(repr, twice))} repeated"))
        if twice := repeated([node_class.name for node_class in self.node_classes]):
            problems.append(
                (("nodeClasses",), f"NodeClass names must be unique, {', '.join(map(repr, twice))} repeated")
            )
        if twice := repeated([pool.name for pool in self.custom_node_pools]):
            problems.append(
                (("customNodePools",), f"NodePool names must be unique, {', '.join(map(repr, twice))} repeated")
            )
        known = [DEFAULT_NODE_CLASS, *(node_class.name for node_class in self.node_classes)]
        for index, pool in enumerate(self.custom_node_pools):
            if pool.node_class not in known:
                problems.append(
                    (
                        ("customNodePools", index, "nodeClass"),
                        f"{pool.node_class!r} is not a NodeClass of the cluster (known: {', '.join(known)}); add it "
                        "to nodeClasses",
                    )
                )
        if problems:
            raise located(type(self).__name__, problems)
        return self
