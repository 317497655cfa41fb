"""The EKS composite API: its XRD, its Compositions, and the composite resource of a cluster.

One namespaced ``EKSCluster`` per workload cluster, in the cluster's hub namespace (see
fluxplane.config.hub), composes namespaced managed resources of the Upbound AWS family
(``*.aws.m.upbound.io``) through function-patch-and-transform: the cluster's network, its IAM roles,
the EKS cluster with its node groups, and what the hub needs to reach and bootstrap it
(fluxplane.kinds.eks_composed, per group).

Patch-and-transform cannot loop, so one Composition serves one shape (zone count, node group count or EKS
Auto Mode, NAT mode, keyless hub access) and each composite resource names its Composition. fluxplane writes the
Compositions of the shapes the fleet uses. Subnet CIDRs are computed by fluxplane (P&T has no CIDR arithmetic) and
written into the composite resource, where reviewers see them.

An existing cluster (``existing`` in the definition) that the hub imports is an EKSCluster too, composed by an
existing cluster's Composition (``eks-observed-...`` or ``eks-managed-...``) from the AWS ids in its
``spec.existing``, without zones: nothing is planned for it. A registered one has no composite resource at all.
"""

from __future__ import annotations

from typing import Any, Literal

from fluxplane.config.awsdata import AwsFacts, shipped
from fluxplane.config.hub import bootstrap_values, hub_access_config_map, kubeconfig_secret
from fluxplane.config.models import BUILT_IN_NODE_POOLS, SealingKey, WorkloadCluster
from fluxplane.config.models.clusters import MAX_SUBNETS, MIN_SUBNETS, SUBNET_ID, VPC_ID, LogType
from fluxplane.config.network import subnet_plan
from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.composite_resource_definition import (
    CompositeResourceDefinitionProps,
    CompositeResourceDefinitionVersion,
    CompositeResourceNames,
    CompositeResourceValidation,
    CompositionReference,
    PrinterColumn,
)
from fluxplane.constructs.composition import CompositionProps, PipelineStep, TypeReference
from fluxplane.constructs.patch_and_transform import PATCH_SETS
from fluxplane.constructs.props import LocalObjectReference
from fluxplane.kinds import eks_cluster as xr
from fluxplane.kinds.eks_composed import (
    CREATED,
    KARPENTER_DISCOVERY,
    MANAGED,
    NODE_ROLE_NAME,
    OBSERVED,
    ExistingShape,
    Shape,
    composed_resources,
    existing_resources,
    management_of,
)

# The composed resources' names stay importable from here, where the packs and their tests take them.
__all__ = [
    "CREATED",
    "KARPENTER_DISCOVERY",
    "MANAGED",
    "NODE_ROLE_NAME",
    "OBSERVED",
    "PATCH_SETS",
    "ExistingShape",
    "Shape",
    "composed_resources",
    "composite_props",
    "composition_of",
    "composition_props",
    "existing_resources",
    "management_of",
    "shape_of",
    "xrd_props",
    "xrd_schema",
]


def composition_of(cluster: WorkloadCluster) -> Shape | ExistingShape | None:
    """The shape of the Composition that composes ``cluster``: a created cluster's, an imported one's, or None for a
    registered cluster, which has no composite resource."""
    existing = cluster.existing
    if existing is None:
        return shape_of(cluster)
    if not existing.imported:
        return None
    return ExistingShape(
        mode=existing.mode,
        subnets=len(existing.subnet_ids),
        node_groups=len(cluster.node_groups),
        keyless=cluster.hub_access == "keyless",
    )


def shape_of(cluster: WorkloadCluster) -> Shape:
    return Shape(
        zones=cluster.network.availability_zones,
        node_groups=len(cluster.node_groups),
        nat_gateways=cluster.network.nat_gateways,
        keyless=cluster.hub_access == "keyless",
        auto_mode=cluster.auto,
    )


# -- the composite resource of a cluster -------------------------------------------------------


def composite_props(
    cluster: WorkloadCluster, sealing_key: SealingKey, hub_flux_role: str | None = None, aws: AwsFacts | None = None
) -> xr.EKSClusterProps:
    """EKSCluster props of ``cluster`` (its VPC CIDR allocated by the loader).

    ``hub_flux_role`` is the IAM role of the hub's Flux controllers, which a keyless cluster admits.
    ``aws`` names the region's zones: the fleet's (with its ``awsData``), else fluxplane's data.
    """
    if cluster.network.cidr is None:
        raise ValueError(f"cluster {cluster.name!r} has no VPC CIDR; load the fleet with fluxplane.config.loader")
    shape = composition_of(cluster)
    if shape is None:
        raise ValueError(
            f"cluster {cluster.name!r} is registered: the hub imports nothing of it, so it has no composite"
        )
    secret = kubeconfig_secret(cluster.name)
    existing = cluster.existing
    endpoint: xr.EndpointSpec | None = None
    logging: tuple[LogType, ...] | None = None
    auto_mode: xr.AutoModeSpec | None = None
    imported: xr.ExistingSpec | None = None
    if existing is None:
        names = (aws or shipped()).zone_names(cluster.region, cluster.network.availability_zones)
        zones = subnet_plan(cluster.network.cidr, names)
        network = xr.NetworkSpec(
            vpc_cidr=cluster.network.cidr,
            nat_gateways=cluster.network.nat_gateways,
            zones=tuple(
                xr.Zone(name=zone.zone, public_subnet_cidr=zone.public, private_subnet_cidr=zone.private)
                for zone in zones
            ),
        )
        endpoint = xr.EndpointSpec(
            private_access=cluster.endpoint.private_access,
            public_access=cluster.endpoint.public_access,
            public_access_cidrs=tuple(cluster.endpoint.public_access_cidrs) if cluster.endpoint.public_access else (),
        )
        logging = tuple(cluster.logging)
        if cluster.auto_mode is not None:
            # Written when the definition names it: false switches Auto Mode off (fluxplane.kinds.eks_composed).
            auto_mode = (
                xr.AutoModeSpec(enabled=True, node_pools=tuple(cluster.auto_mode.node_pools))
                if cluster.auto
                else xr.AutoModeSpec(enabled=False)
            )
    else:
        # What the cluster has is imported, not planned: its range as the definition records it, and no zones.
        network = xr.NetworkSpec(vpc_cidr=cluster.network.cidr)
        # An imported cluster names its VPC (ExistingCluster's checks); a registered one has no composite (above).
        assert existing.vpc_id is not None
        imported = xr.ExistingSpec(
            vpc_id=existing.vpc_id,
            subnet_ids=tuple(existing.subnet_ids),
            external_secrets_role_arn=existing.external_secrets_role_arn,
        )
    return xr.EKSClusterProps(
        name=cluster.name,
        namespace=secret.namespace,
        crossplane=xr.CrossplaneSpec(composition_ref=CompositionReference(name=shape.name)),
        region=cluster.region,
        kubernetes_version=cluster.kubernetes_version,
        network=network,
        endpoint=endpoint,
        logging=logging,
        auto_mode=auto_mode,
        node_groups=tuple(
            xr.NodeGroupSpec(
                name=group.name,
                instance_types=tuple(group.instance_types),
                capacity_type=group.capacity_type,
                min_size=group.min_size,
                max_size=group.max_size,
                desired_size=group.desired_size,
                disk_size=group.disk_size,
                labels=group.labels,
                taints=tuple(
                    xr.TaintSpec(key=taint.key, value=taint.value, effect=_EKS_TAINT_EFFECTS[taint.effect])
                    for taint in group.taints
                ),
            )
            for group in cluster.node_groups
        ),
        tags=cluster.tags,
        sealing_key_secret=sealing_key.secret_name,
        provider_config_name=cluster.account,
        kubeconfig_secret_name=secret.name,
        bootstrap_config_map_name=bootstrap_values(cluster.name).name,
        hub_access=_hub_access(cluster, hub_flux_role),
        existing=imported,
    )


def _hub_access(cluster: WorkloadCluster, hub_flux_role: str | None) -> xr.HubAccessSpec | None:
    if cluster.hub_access != "keyless":
        return None
    if hub_flux_role is None:
        raise ValueError(f"cluster {cluster.name!r} uses keyless hub access; give the hub's Flux role")
    return xr.HubAccessSpec(principal_arn=hub_flux_role, config_map_name=hub_access_config_map(cluster.name))


_EKS_TAINT_EFFECTS: dict[str, Literal["NO_SCHEDULE", "NO_EXECUTE", "PREFER_NO_SCHEDULE"]] = {
    "NoSchedule": "NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
}


# -- the XRD ---------------------------------------------------------------------------------------


def xrd_schema() -> dict[str, Any]:
    """openAPIV3Schema of EKSCluster: the small typed surface; the rest is fixed in the Composition."""
    size = {"type": "integer", "minimum": 0, "maximum": 1000}
    node_group = {
        "type": "object",
        "required": ["name", "instanceTypes", "minSize", "maxSize", "desiredSize"],
        "properties": {
            "name": pt.string_property(
                "Node group name, unique within the cluster.", pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
            ),
            "instanceTypes": {"type": "array", "minItems": 1, "items": {"type": "string"}},
            "capacityType": pt.string_property(
                "On-demand or Spot capacity.", enum=["ON_DEMAND", "SPOT"], default="ON_DEMAND"
            ),
            "minSize": {**size, "description": "Fewest nodes."},
            "maxSize": {**size, "minimum": 1, "description": "Most nodes."},
            "desiredSize": {**size, "description": "Nodes at creation (autoscalers own it afterwards)."},
            "diskSize": {"type": "integer", "minimum": 20, "maximum": 16384, "default": 50},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "taints": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["key", "effect"],
                    "properties": {
                        "key": {"type": "string"},
                        "value": {"type": "string"},
                        "effect": {"type": "string", "enum": list(xr.TAINT_EFFECTS)},
                    },
                },
            },
        },
        "x-kubernetes-validations": [
            {"rule": "self.minSize <= self.maxSize", "message": "minSize must not exceed maxSize"},
            {
                "rule": "self.minSize <= self.desiredSize && self.desiredSize <= self.maxSize",
                "message": "desiredSize must lie between minSize and maxSize",
            },
        ],
    }
    existing = {
        "type": "object",
        "description": "An existing cluster's AWS ids, which its Composition imports (observed or managed).",
        "required": ["vpcId", "subnetIds", "externalSecretsRoleArn"],
        "properties": {
            "vpcId": pt.string_property("The cluster's VPC.", pattern=VPC_ID),
            "subnetIds": {
                "type": "array",
                "description": "The private subnets the cluster's nodes run in; the Composition fixes their count.",
                "minItems": MIN_SUBNETS,
                "maxItems": MAX_SUBNETS,
                "items": pt.string_property("A private subnet.", pattern=SUBNET_ID),
            },
            "externalSecretsRoleArn": pt.string_property(
                "The IAM role External Secrets on the cluster runs as (IRSA), which may read the sealing key.",
                pattern=r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$",
            ),
        },
    }
    spec = {
        "type": "object",
        "required": [
            "region",
            "kubernetesVersion",
            "network",
            "nodeGroups",
            "sealingKeySecret",
            "kubeconfigSecretName",
            "bootstrapConfigMapName",
        ],
        "properties": {
            "region": pt.string_property("AWS region.", pattern=xr.REGION),
            "kubernetesVersion": pt.string_property(
                'EKS Kubernetes minor version, e.g. "1.33".', pattern=xr.KUBERNETES_VERSION
            ),
            "network": {
                "type": "object",
                "required": ["vpcCidr"],
                "properties": {
                    "vpcCidr": pt.cidr_property("VPC CIDR."),
                    "natGateways": pt.string_property(
                        "A NAT gateway per zone, or a single one.", enum=["OnePerZone", "Single"], default="OnePerZone"
                    ),
                    "zones": {
                        "type": "array",
                        "description": "Availability zones and their subnets; the Composition fixes their count. "
                        "An existing cluster has none.",
                        "minItems": xr.MIN_ZONES,
                        "maxItems": xr.MAX_ZONES,
                        "items": {
                            "type": "object",
                            "required": ["name", "publicSubnetCidr", "privateSubnetCidr"],
                            "properties": {
                                "name": pt.string_property("Availability zone, e.g. us-west-2a.", pattern=xr.ZONE),
                                "publicSubnetCidr": pt.cidr_property("Public subnet (load balancers, NAT)."),
                                "privateSubnetCidr": pt.cidr_property("Private subnet (nodes and pods)."),
                            },
                        },
                    },
                },
            },
            "endpoint": {
                "type": "object",
                "properties": {
                    "privateAccess": {"type": "boolean", "default": True},
                    "publicAccess": {"type": "boolean", "default": True},
                    "publicAccessCidrs": {"type": "array", "items": pt.cidr_property("Allowed source range.")},
                },
                "x-kubernetes-validations": [
                    {"rule": "self.privateAccess || self.publicAccess", "message": "enable private or public access"}
                ],
            },
            "logging": {
                "type": "array",
                "description": "Control plane log types sent to CloudWatch.",
                "items": {"type": "string", "enum": list(xr.LOG_TYPES)},
            },
            "nodeGroups": {
                "type": "array",
                "description": "Managed node groups: at least one, or none in EKS Auto Mode.",
                "items": node_group,
            },
            "autoMode": {
                "type": "object",
                "description": "EKS Auto Mode: EKS launches the nodes and runs block storage and load balancing. "
                "false switches it off; unset leaves the cluster as it is.",
                "required": ["enabled"],
                "properties": {
                    "enabled": {"type": "boolean"},
                    "nodePools": {
                        "type": "array",
                        "description": "EKS's built-in node pools to run.",
                        "items": {"type": "string", "enum": list(BUILT_IN_NODE_POOLS)},
                        "x-kubernetes-list-type": "set",
                    },
                },
            },
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
            pt.PROVIDER_CONFIG_FIELD: pt.provider_config_property(),
            "sealingKeySecret": pt.string_property(
                "Secrets Manager secret with the Sealed Secrets key pair, readable by the cluster's External Secrets.",
                pattern=r"^[A-Za-z0-9/_+=.@-]{1,512}$",
            ),
            "kubeconfigSecretName": pt.string_property(
                "Secret in this namespace that receives the kubeconfig, under the key `value`."
            ),
            "bootstrapConfigMapName": pt.string_property(
                "ConfigMap in this namespace that receives what the spoke bootstrap needs (role ARNs)."
            ),
            "hubAccess": {
                "type": "object",
                "description": "Keyless access for the hub's Flux: an EKS access entry, a kubeConfig ConfigMap.",
                "required": ["principalArn", "configMapName"],
                "properties": {
                    "principalArn": pt.string_property(
                        "IAM role of the hub's Flux controllers.", pattern=r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$"
                    ),
                    "configMapName": pt.string_property(
                        "ConfigMap in this namespace for Flux's kubeConfig.configMapRef."
                    ),
                },
            },
            "existing": existing,
        },
        "x-kubernetes-validations": [
            {
                "rule": "has(self.existing) || has(self.network.zones)",
                "message": "network.zones is required for a cluster the hub creates",
            },
            {
                "rule": "has(self.autoMode) && self.autoMode.enabled ? size(self.nodeGroups) == 0 : "
                "size(self.nodeGroups) >= 1",
                "message": "a cluster has node groups (at least one) or EKS Auto Mode, one of the two",
            },
        ],
    }
    status = {
        "type": "object",
        "properties": {
            "vpcId": {"type": "string"},
            "clusterArn": {"type": "string"},
            "endpoint": {"type": "string"},
            "oidcIssuer": {"type": "string"},
            "oidcIssuerHost": {"type": "string"},
            "oidcProviderArn": {"type": "string"},
            "externalSecretsRoleArn": {"type": "string"},
            "certificateAuthority": {"type": "string"},
            "nodeRoleArn": {"type": "string"},
        },
    }
    return {"type": "object", "required": ["spec"], "properties": {"spec": spec, "status": status}}


def xrd_props() -> CompositeResourceDefinitionProps:
    return CompositeResourceDefinitionProps(
        name=f"{xr.PLURAL}.{xr.GROUP}",
        group=xr.GROUP,
        names=CompositeResourceNames(kind=xr.KIND, plural=xr.PLURAL, categories=("crossplane", "composite")),
        scope="Namespaced",
        versions=(
            CompositeResourceDefinitionVersion(
                name=xr.VERSION,
                served=True,
                referenceable=True,
                additional_printer_columns=(
                    PrinterColumn(name="Region", type="string", json_path=".spec.region"),
                    PrinterColumn(name="Version", type="string", json_path=".spec.kubernetesVersion"),
                    PrinterColumn(name="Endpoint", type="string", json_path=".status.endpoint", priority=1),
                ),
                schema_=CompositeResourceValidation(open_api_v3_schema=xrd_schema()),
            ),
        ),
    )


# -- the Composition of a shape --------------------------------------------------------------------


def composition_props(shape: Shape | ExistingShape) -> CompositionProps:
    resources = composed_resources(shape) if isinstance(shape, Shape) else existing_resources(shape)
    return CompositionProps(
        name=shape.name,
        labels=shape.labels,
        composite_type_ref=TypeReference(api_version=f"{xr.GROUP}/{xr.VERSION}", kind=xr.KIND),
        mode="Pipeline",
        pipeline=(
            PipelineStep(
                step="compose",
                function_ref=LocalObjectReference(name=pt.PATCH_AND_TRANSFORM),
                input={
                    "apiVersion": "pt.fn.crossplane.io/v1beta1",
                    "kind": "Resources",
                    # Crossplane v2 does not write composite connection secrets: P&T composes it,
                    # with ClusterAuth's kubeconfig under the key Flux's kubeConfig.secretRef reads.
                    "writeConnectionSecretToRef": {
                        "patches": [pt.patch("spec.kubeconfigSecretName", "name")],
                    },
                    "patchSets": PATCH_SETS,
                    "resources": resources,
                },
            ),
            PipelineStep(step="detect-readiness", function_ref=LocalObjectReference(name=pt.AUTO_READY)),
        ),
    )
