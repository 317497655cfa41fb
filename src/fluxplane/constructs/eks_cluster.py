"""EKSCluster (``platform.fluxplane.io/v1alpha1``): the composite resource of one workload cluster.

The kind is fluxplane's own, defined by the XRD the ``eks-compositions`` pack writes
(fluxplane.packs.eks); these props mirror that XRD's schema, so an object that passes them passes
the API server's validation too (a test checks every emitted XR against the XRD schema).
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import DNS_LABEL, Label, Name, Props

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


class CompositionReference(Props):
    name: Name


class CrossplaneSpec(Props):
    composition_ref: CompositionReference


class Zone(Props):
    name: str = Field(pattern=ZONE)
    public_subnet_cidr: IPv4Network
    private_subnet_cidr: IPv4Network


class NetworkSpec(Props):
    vpc_cidr: IPv4Network
    nat_gateways: Literal["OnePerZone", "Single"] = "OnePerZone"
    zones: tuple[Zone, ...] = Field(min_length=MIN_ZONES, max_length=MAX_ZONES)

    @model_validator(mode="after")
    def _subnets_inside(self) -> NetworkSpec:
        for zone in self.zones:
            for subnet in (zone.public_subnet_cidr, zone.private_subnet_cidr):
                if not subnet.subnet_of(self.vpc_cidr):
                    raise ValueError(f"subnet {subnet} of zone {zone.name} lies outside the VPC {self.vpc_cidr}")
        return self


class EndpointSpec(Props):
    private_access: bool = True
    public_access: bool = True
    public_access_cidrs: tuple[IPv4Network, ...] = ()

    @model_validator(mode="after")
    def _reachable(self) -> EndpointSpec:
        if not (self.private_access or self.public_access):
            raise ValueError("enable privateAccess or publicAccess (the XRD's rule)")
        return self


class TaintSpec(Props):
    key: str
    value: str = ""
    effect: Literal["NO_SCHEDULE", "NO_EXECUTE", "PREFER_NO_SCHEDULE"]


class NodeGroupSpec(Props):
    name: Label
    instance_types: tuple[Annotated[str, StringConstraints(min_length=1)], ...] = Field(min_length=1)
    capacity_type: Literal["ON_DEMAND", "SPOT"] = "ON_DEMAND"
    min_size: int = Field(ge=0, le=1000)
    max_size: int = Field(ge=1, le=1000)
    desired_size: int = Field(ge=0, le=1000)
    disk_size: int = Field(ge=20, le=16384)
    labels: dict[str, str] = Field(default_factory=dict)
    taints: tuple[TaintSpec, ...] = ()

    @model_validator(mode="after")
    def _sizes_in_order(self) -> NodeGroupSpec:
        if not self.min_size <= self.desired_size <= self.max_size:
            raise ValueError("sizes must satisfy minSize <= desiredSize <= maxSize (the XRD's rule)")
        return self


class HubAccessSpec(Props):
    principal_arn: str = Field(pattern=r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$")
    config_map_name: Name


class EKSClusterProps(Props):
    name: Name = Field(pattern=DNS_LABEL)
    namespace: Label
    labels: dict[str, str] | None = None
    crossplane: CrossplaneSpec
    region: str = Field(pattern=REGION)
    kubernetes_version: str = Field(pattern=KUBERNETES_VERSION)
    network: NetworkSpec
    endpoint: EndpointSpec
    logging: tuple[Literal["api", "audit", "authenticator", "controllerManager", "scheduler"], ...] = ()
    node_groups: tuple[NodeGroupSpec, ...] = Field(min_length=1)
    tags: dict[str, str] = Field(default_factory=dict)
    sealing_key_secret: str = Field(pattern=r"^[A-Za-z0-9/_+=.@-]{1,512}$")
    kubeconfig_secret_name: Name
    bootstrap_config_map_name: Name
    hub_access: HubAccessSpec | None = None


class EKSCluster(TypedResource[EKSClusterProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = KIND
    props_class = EKSClusterProps
