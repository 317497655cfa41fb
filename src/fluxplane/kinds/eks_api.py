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

from typing import Any

from fluxplane.config.awsdata import AwsFacts, shipped
from fluxplane.config.hub import bootstrap_values, hub_access_config_map, kubeconfig_secret
from fluxplane.config.models import BUILT_IN_NODE_POOLS, SealingKey, WorkloadCluster
from fluxplane.config.models.clusters import MAX_SUBNETS, MIN_SUBNETS, SUBNET_ID, VPC_ID
from fluxplane.config.network import subnet_plan
from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.patch_and_transform import PATCH_SETS
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
) -> dict[str, Any]:
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
    built: dict[str, Any] = {
        "name": cluster.name,
        "namespace": secret.namespace,
        "crossplane": {"compositionRef": {"name": shape.name}},
        "region": cluster.region,
        "kubernetesVersion": cluster.kubernetes_version,
    }
    if existing is None:
        names = (aws or shipped()).zone_names(cluster.region, cluster.network.availability_zones)
        zones = subnet_plan(cluster.network.cidr, names)
        built["network"] = {
            "vpcCidr": cluster.network.cidr,
            "natGateways": cluster.network.nat_gateways,
            "zones": [
                {"name": zone.zone, "publicSubnetCidr": zone.public, "privateSubnetCidr": zone.private}
                for zone in zones
            ],
        }
        built["endpoint"] = {
            "privateAccess": cluster.endpoint.private_access,
            "publicAccess": cluster.endpoint.public_access,
            "publicAccessCidrs": cluster.endpoint.public_access_cidrs if cluster.endpoint.public_access else [],
        }
        built["logging"] = cluster.logging
        if cluster.auto_mode is not None:
            # Written when the definition names it: false switches Auto Mode off (fluxplane.kinds.eks_composed).
            built["autoMode"] = (
                {"enabled": True, "nodePools": cluster.auto_mode.node_pools} if cluster.auto else {"enabled": False}
            )
    else:
        # What the cluster has is imported, not planned: its range as the definition records it, and no zones.
        built["network"] = {"vpcCidr": cluster.network.cidr}
    return {
        **built,
        "nodeGroups": [
            {
                "name": group.name,
                "instanceTypes": group.instance_types,
                "capacityType": group.capacity_type,
                "minSize": group.min_size,
                "maxSize": group.max_size,
                "desiredSize": group.desired_size,
                "diskSize": group.disk_size,
                "labels": group.labels,
                "taints": [
                    {"key": taint.key, "value": taint.value, "effect": _EKS_TAINT_EFFECTS[taint.effect]}
                    for taint in group.taints
                ],
            }
            for group in cluster.node_groups
        ],
        "tags": cluster.tags,
        "sealingKeySecret": sealing_key.secret_name,
        **({"providerConfigName": cluster.account} if cluster.account else {}),
        "kubeconfigSecretName": secret.name,
        "bootstrapConfigMapName": bootstrap_values(cluster.name).name,
        "hubAccess": _hub_access(cluster, hub_flux_role),
        **(
            {}
            if existing is None
            else {
                "existing": {
                    "vpcId": existing.vpc_id,
                    "subnetIds": existing.subnet_ids,
                    "externalSecretsRoleArn": existing.external_secrets_role_arn,
                }
            }
        ),
    }


def _hub_access(cluster: WorkloadCluster, hub_flux_role: str | None) -> dict[str, str] | None:
    if cluster.hub_access != "keyless":
        return None
    if hub_flux_role is None:
        raise ValueError(f"cluster {cluster.name!r} uses keyless hub access; give the hub's Flux role")
    return {"principalArn": hub_flux_role, "configMapName": hub_access_config_map(cluster.name)}


_EKS_TAINT_EFFECTS = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}


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


def xrd_props() -> dict[str, Any]:
    return {
        "name": f"{xr.PLURAL}.{xr.GROUP}",
        "group": xr.GROUP,
        "names": {"kind": xr.KIND, "plural": xr.PLURAL, "categories": ["crossplane", "composite"]},
        "scope": "Namespaced",
        "versions": [
            {
                "name": xr.VERSION,
                "served": True,
                "referenceable": True,
                "additionalPrinterColumns": [
                    {"name": "Region", "type": "string", "jsonPath": ".spec.region"},
                    {"name": "Version", "type": "string", "jsonPath": ".spec.kubernetesVersion"},
                    {"name": "Endpoint", "type": "string", "jsonPath": ".status.endpoint", "priority": 1},
                ],
                "schema": {"openAPIV3Schema": xrd_schema()},
            }
        ],
    }


# -- the Composition of a shape --------------------------------------------------------------------


def composition_props(shape: Shape | ExistingShape) -> dict[str, Any]:
    resources = composed_resources(shape) if isinstance(shape, Shape) else existing_resources(shape)
    return {
        "name": shape.name,
        "labels": shape.labels,
        "compositeTypeRef": {"apiVersion": f"{xr.GROUP}/{xr.VERSION}", "kind": xr.KIND},
        "mode": "Pipeline",
        "pipeline": [
            {
                "step": "compose",
                "functionRef": {"name": pt.PATCH_AND_TRANSFORM},
                "input": {
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
            },
            {"step": "detect-readiness", "functionRef": {"name": pt.AUTO_READY}},
        ],
    }
