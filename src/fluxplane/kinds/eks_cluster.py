"""EKSCluster (``platform.fluxplane.io/v1alpha1``): the composite resource of one workload cluster.

The kind is fluxplane's own, defined by the XRD the ``eks-compositions`` pack writes
(fluxplane.kinds.eks_api); these props mirror that XRD's schema, so an object that passes them passes
the API server's validation too (a test checks every emitted XR against the XRD schema). LIVE says what a change
to it does to the cluster in AWS (fluxplane.kinds.live).
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator

from fluxplane.config.models.clusters import MAX_SUBNETS, MIN_SUBNETS, SUBNET_ID, VPC_ID
from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.composite_resource_definition import CompositionReference
from fluxplane.constructs.health import composite_health
from fluxplane.constructs.props import DNS_LABEL, CustomHealthCheck, Label, Name, Props
from fluxplane.kinds.live import (
    AUTO_MODE_FLAG,
    AUTO_MODE_OFF,
    AUTO_MODE_ON,
    COMPOSITE_GROUP,
    PROVIDER_CONFIG_NAME,
    CloudKind,
    Switch,
    spec,
)

GROUP = "platform.fluxplane.io"
VERSION = "v1alpha1"
KIND = "EKSCluster"
PLURAL = "eksclusters"

REGION = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$"
ZONE = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9][a-z]$"
KUBERNETES_VERSION = r"^1\.[0-9]{2}$"
MIN_ZONES = 2
MAX_ZONES = 6

LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
TAINT_EFFECTS = ("NO_SCHEDULE", "NO_EXECUTE", "PREFER_NO_SCHEDULE")


class CrossplaneSpec(Props):
    """The composite's ``crossplane`` section: the fields Crossplane itself reads."""

    composition_ref: CompositionReference
    """The Composition that composes the cluster (one per cluster shape)."""


class Zone(Props):
    """An availability zone of the VPC and its two subnets."""

    name: str = Field(pattern=ZONE)
    """Availability zone, e.g. ``us-west-2a``."""
    public_subnet_cidr: IPv4Network
    """CIDR of the zone's public subnet (load balancers, NAT gateways)."""
    private_subnet_cidr: IPv4Network
    """CIDR of the zone's private subnet (nodes and pods)."""


class NetworkSpec(Props):
    """The cluster's VPC and subnets."""

    vpc_cidr: IPv4Network
    """CIDR of the VPC; every subnet lies inside it."""
    nat_gateways: Literal["OnePerZone", "Single"] | None = None
    """A NAT gateway per zone (``OnePerZone``) or a single one (``Single``). Default: ``"OnePerZone"`` for a cluster
    the hub creates; not set for an existing one, whose gateways are its own."""
    zones: Annotated[tuple[Zone, ...], Field(min_length=MIN_ZONES, max_length=MAX_ZONES)] | None = None
    """Availability zones and their subnets; the Composition fixes their count. Default: none, for an existing
    cluster (``existing``), whose subnets are imported."""

    @model_validator(mode="after")
    def _subnets_inside(self) -> NetworkSpec:
        for zone in self.zones or ():
            for subnet in (zone.public_subnet_cidr, zone.private_subnet_cidr):
                if not subnet.subnet_of(self.vpc_cidr):
                    raise ValueError(f"subnet {subnet} of zone {zone.name} lies outside the VPC {self.vpc_cidr}")
        return self


class EndpointSpec(Props):
    """Who can reach the cluster's Kubernetes API endpoint."""

    private_access: bool = True
    """Whether the endpoint is reachable from inside the VPC. Default: ``True``."""
    public_access: bool = True
    """Whether the endpoint is reachable from the internet. Default: ``True``."""
    public_access_cidrs: tuple[IPv4Network, ...] = ()
    """Source ranges allowed to reach the public endpoint. Default: none (EKS allows ``0.0.0.0/0``)."""

    @model_validator(mode="after")
    def _reachable(self) -> EndpointSpec:
        if not (self.private_access or self.public_access):
            raise ValueError("enable privateAccess or publicAccess (the XRD's rule)")
        return self


class TaintSpec(Props):
    """A Kubernetes taint on the nodes of a node group."""

    key: str
    """Key of the taint."""
    value: str = ""
    """Value of the taint. Default: ``""``."""
    effect: Literal["NO_SCHEDULE", "NO_EXECUTE", "PREFER_NO_SCHEDULE"]
    """Effect of the taint, as the EKS API spells it: ``NO_SCHEDULE``, ``NO_EXECUTE`` or ``PREFER_NO_SCHEDULE``."""


class NodeGroupSpec(Props):
    """An EKS managed node group."""

    name: Label
    """Name of the node group, unique within the cluster."""
    instance_types: tuple[Annotated[str, StringConstraints(min_length=1)], ...] = Field(min_length=1)
    """EC2 instance types of the nodes."""
    capacity_type: Literal["ON_DEMAND", "SPOT"] = "ON_DEMAND"
    """On-demand (``ON_DEMAND``) or Spot (``SPOT``) capacity. Default: ``"ON_DEMAND"``."""
    min_size: int = Field(ge=0, le=1000)
    """Fewest nodes."""
    max_size: int = Field(ge=1, le=1000)
    """Most nodes."""
    desired_size: int = Field(ge=0, le=1000)
    """Nodes at creation; autoscalers own the size afterwards."""
    disk_size: int = Field(ge=20, le=16384)
    """Size of each node's disk, in GiB."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Kubernetes labels on the nodes. Default: none."""
    taints: tuple[TaintSpec, ...] = ()
    """Kubernetes taints on the nodes. Default: none."""

    @model_validator(mode="after")
    def _sizes_in_order(self) -> NodeGroupSpec:
        if not self.min_size <= self.desired_size <= self.max_size:
            raise ValueError("sizes must satisfy minSize <= desiredSize <= maxSize (the XRD's rule)")
        return self


class AutoModeSpec(Props):
    """EKS Auto Mode of the cluster: EKS launches its nodes and runs its block storage and load balancing."""

    enabled: bool
    """Whether the cluster runs in EKS Auto Mode; false switches it off."""
    node_pools: tuple[Literal["general-purpose", "system"], ...] | None = None
    """EKS's built-in node pools to run. Default: not set (with Auto Mode off)."""


class HubAccessSpec(Props):
    """Keyless access to the cluster for the hub's Flux."""

    principal_arn: str = Field(pattern=r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$")
    """ARN of the IAM role of the hub's Flux controllers, which gets an EKS access entry."""
    config_map_name: Name
    """ConfigMap in the composite's namespace that receives the data of Flux's ``kubeConfig.configMapRef``."""


class ExistingSpec(Props):
    """The AWS ids of an existing cluster, which its Composition imports."""

    vpc_id: str = Field(pattern=VPC_ID)
    """The cluster's VPC."""
    subnet_ids: tuple[Annotated[str, StringConstraints(pattern=SUBNET_ID)], ...] = Field(
        min_length=MIN_SUBNETS, max_length=MAX_SUBNETS
    )
    """The private subnets the cluster's nodes run in."""
    external_secrets_role_arn: str = Field(pattern=r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$")
    """The IAM role External Secrets on the cluster runs as (IRSA), which may read the sealing key."""


class EKSClusterProps(Props):
    """Props of an EKSCluster composite: one workload cluster on AWS."""

    name: Name = Field(pattern=DNS_LABEL)
    """``metadata.name`` of the composite, a DNS-1123 label; the EKS cluster has the same name."""
    namespace: Label
    """Namespace of the composite on the hub."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    crossplane: CrossplaneSpec
    """Crossplane's fields: the Composition that composes the cluster."""
    region: str = Field(pattern=REGION)
    """AWS region of the cluster."""
    kubernetes_version: str = Field(pattern=KUBERNETES_VERSION)
    """EKS Kubernetes minor version, e.g. ``"1.33"``."""
    network: NetworkSpec
    """The VPC and its subnets."""
    endpoint: EndpointSpec | None = None
    """Who can reach the Kubernetes API endpoint. Default: not set (an existing cluster's is its own)."""
    logging: tuple[Literal["api", "audit", "authenticator", "controllerManager", "scheduler"], ...] | None = None
    """Control plane log types sent to CloudWatch. Default: none for a cluster the hub creates; not set for an existing
    one, whose log types are its own."""
    node_groups: tuple[NodeGroupSpec, ...]
    """The managed node groups: at least one, or none in EKS Auto Mode."""
    auto_mode: AutoModeSpec | None = None
    """EKS Auto Mode. Default: not set (the cluster is left as it is: without Auto Mode, unless switched on before)."""
    tags: dict[str, str] = Field(default_factory=dict)
    """AWS tags on the AWS resources the composite creates. Default: none."""
    provider_config_name: Name | None = None
    """The ClusterProviderConfig of the AWS account the cluster is made in. Default: not set (the hub's own account,
    ``default``)."""
    sealing_key_secret: str = Field(pattern=r"^[A-Za-z0-9/_+=.@-]{1,512}$")
    """Secrets Manager secret with the Sealed Secrets key pair, readable by the cluster's External Secrets."""
    kubeconfig_secret_name: Name
    """Secret in the composite's namespace that receives the kubeconfig, under the key ``value``."""
    bootstrap_config_map_name: Name
    """ConfigMap in the composite's namespace that receives what the spoke bootstrap needs (role ARNs)."""
    hub_access: HubAccessSpec | None = None
    """Keyless access for the hub's Flux: an EKS access entry and a kubeConfig ConfigMap. Default: not set (no access
    entry)."""
    existing: ExistingSpec | None = None
    """The AWS ids of an existing cluster, which its Composition imports instead of making the cluster. Default: not
    set (the hub makes the cluster)."""

    @model_validator(mode="before")
    @classmethod
    def _created_defaults(cls, data: Any) -> Any:
        """A cluster the hub creates has its NAT mode and log types written out, defaults included, for review; an
        existing cluster's are its own, and not written."""
        if not isinstance(data, dict) or data.get("existing") is not None:
            return data
        filled = dict(data)
        if "logging" not in filled:
            filled["logging"] = ()
        network = filled.get("network")
        if isinstance(network, NetworkSpec) and network.nat_gateways is None:
            filled["network"] = network.model_copy(update={"nat_gateways": "OnePerZone"})
        elif isinstance(network, dict) and not {"natGateways", "nat_gateways"} & network.keys():
            filled["network"] = {**network, "natGateways": "OnePerZone"}
        return filled

    @model_validator(mode="after")
    def _zones_or_existing(self) -> EKSClusterProps:
        if self.existing is None and not self.network.zones:
            raise ValueError("network.zones is required for a cluster the hub creates (the XRD's rule)")
        return self

    @model_validator(mode="after")
    def _node_groups_or_auto_mode(self) -> EKSClusterProps:
        auto = self.auto_mode is not None and self.auto_mode.enabled
        if auto == bool(self.node_groups):
            raise ValueError(
                "a cluster has node groups (at least one) or EKS Auto Mode, one of the two (the XRD's rule): got "
                f"{len(self.node_groups)} node groups {'with' if auto else 'without'} Auto Mode"
            )
        return self


class EKSCluster(TypedResource[EKSClusterProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = KIND
    props_class = EKSClusterProps


def health_check() -> CustomHealthCheck:
    """How Flux tells that a cluster's EKSCluster is ready: Crossplane's conditions (fluxplane.constructs.health)."""
    return composite_health(EKSCluster.api_version, KIND)


LIVE = CloudKind(
    COMPOSITE_GROUP,
    KIND,
    "workload cluster",
    (*spec("region"), PROVIDER_CONFIG_NAME, *spec("network.vpcCidr", "network.zones")),
    deletes="the EKS cluster, its node groups and its VPC",
    data=True,
    switches=(Switch(spec("autoMode.enabled")[0], "EKS Auto Mode", AUTO_MODE_ON, AUTO_MODE_OFF, AUTO_MODE_FLAG),),
)
