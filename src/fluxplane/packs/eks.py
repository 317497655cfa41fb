"""The EKS composite API: its XRD, its Compositions, and the composite resource of a cluster.

One namespaced ``EKSCluster`` per workload cluster, in the cluster's hub namespace (see
fluxplane.config.hub), composes namespaced managed resources of the Upbound AWS family
(``*.aws.m.upbound.io``) through function-patch-and-transform:

- network: VPC, internet gateway, a public and a private subnet per zone, an EIP and NAT gateway
  per zone (or one), public and private route tables, their default routes and associations;
- identity: the cluster role and the node role with their AWS managed policies, the IAM OIDC
  provider for IRSA;
- EKS: the cluster (API authentication mode, the creator as admin), its managed node groups, the
  EKS Pod Identity Agent add-on (apps' roles), and a ClusterAuth whose kubeconfig the composition
  publishes as the Secret the hub's Flux reads.

Patch-and-transform cannot loop, so one Composition serves one shape (zone count, node group count,
NAT mode) and each composite resource names its Composition. fluxplane writes the Compositions of
the shapes the fleet uses. Resource names inside the Compositions are stable across shapes
(``subnet-private-0`` is the same subnet in every shape), so a cluster that changes shape keeps
its resources and only gains or loses the difference. Subnet CIDRs are computed by fluxplane (P&T
has no CIDR arithmetic) and written into the composite resource, where reviewers see them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fluxplane.config.awsdata import AwsFacts, shipped
from fluxplane.config.hub import (
    EXTERNAL_SECRETS_ROLE_ARN_KEY,
    EXTERNAL_SECRETS_SERVICE_ACCOUNT,
    bootstrap_values,
    hub_access_config_map,
    kubeconfig_secret,
)
from fluxplane.config.models import HUB_PROVIDER_CONFIG, SealingKey, WorkloadCluster
from fluxplane.config.network import subnet_plan
from fluxplane.constructs import eks_cluster as xr

PROVIDER_CONFIG = {"kind": "ClusterProviderConfig", "name": HUB_PROVIDER_CONFIG}
#: The composite field naming the ClusterProviderConfig of the account its AWS resources are made in.
PROVIDER_CONFIG_FIELD = "providerConfigName"


def provider_config_property() -> dict[str, Any]:
    """The XRD property of PROVIDER_CONFIG_FIELD: the hub's own account unless a cluster names another."""
    return _string(
        "The ClusterProviderConfig of the AWS account the resources are made in (an account's name); changing it "
        "makes them anew in the other account.",
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        maxLength=63,
        default=HUB_PROVIDER_CONFIG,
    )


#: Label keys composed resources are selected by, within one composite resource.
LABEL = "platform.fluxplane.io"
PATCH_AND_TRANSFORM = "function-patch-and-transform"
AUTO_READY = "function-auto-ready"
#: Key of the cluster's kubeconfig in ClusterAuth's connection secret.
CLUSTER_AUTH_KEY = "kubeconfig"

CLUSTER_POLICIES = ("AmazonEKSClusterPolicy",)
NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly")
#: Tag on the private subnets, valued with the cluster's name, by which Karpenter's EC2NodeClass finds them.
KARPENTER_DISCOVERY = "karpenter.sh/discovery"
#: The node role's IAM name over the cluster's: fixed (not generated) because Karpenter's EC2NodeClass names it.
NODE_ROLE_NAME = "%s-node"


@dataclass(frozen=True, order=True)
class Shape:
    """What a Composition fixes: zone count, node group count and NAT mode."""

    zones: int
    node_groups: int
    nat_gateways: str = "OnePerZone"
    keyless: bool = False

    @property
    def name(self) -> str:
        groups = "node-group" if self.node_groups == 1 else "node-groups"
        suffix = "-single-nat" if self.nat_gateways == "Single" else ""
        keyless = "-keyless" if self.keyless else ""
        return f"eks-{self.zones}-zones-{self.node_groups}-{groups}{suffix}{keyless}"

    @property
    def labels(self) -> dict[str, str]:
        return {
            f"{LABEL}/availability-zones": str(self.zones),
            f"{LABEL}/hub-access": "keyless" if self.keyless else "kubeconfig",
            f"{LABEL}/nat-gateways": self.nat_gateways,
            f"{LABEL}/node-groups": str(self.node_groups),
        }


def shape_of(cluster: WorkloadCluster) -> Shape:
    return Shape(
        zones=cluster.network.availability_zones,
        node_groups=len(cluster.node_groups),
        nat_gateways=cluster.network.nat_gateways,
        keyless=cluster.hub_access == "keyless",
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
    secret = kubeconfig_secret(cluster.name)
    names = (aws or shipped()).zone_names(cluster.region, cluster.network.availability_zones)
    zones = subnet_plan(cluster.network.cidr, names)
    return {
        "name": cluster.name,
        "namespace": secret.namespace,
        "crossplane": {"compositionRef": {"name": shape_of(cluster).name}},
        "region": cluster.region,
        "kubernetesVersion": cluster.kubernetes_version,
        "network": {
            "vpcCidr": cluster.network.cidr,
            "natGateways": cluster.network.nat_gateways,
            "zones": [
                {"name": zone.zone, "publicSubnetCidr": zone.public, "privateSubnetCidr": zone.private}
                for zone in zones
            ],
        },
        "endpoint": {
            "privateAccess": cluster.endpoint.private_access,
            "publicAccess": cluster.endpoint.public_access,
            "publicAccessCidrs": cluster.endpoint.public_access_cidrs if cluster.endpoint.public_access else [],
        },
        "logging": cluster.logging,
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
    }


def _hub_access(cluster: WorkloadCluster, hub_flux_role: str | None) -> dict[str, str] | None:
    if cluster.hub_access != "keyless":
        return None
    if hub_flux_role is None:
        raise ValueError(f"cluster {cluster.name!r} uses keyless hub access; give the hub's Flux role")
    return {"principalArn": hub_flux_role, "configMapName": hub_access_config_map(cluster.name)}


_EKS_TAINT_EFFECTS = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}


# -- the XRD ---------------------------------------------------------------------------------------


def _string(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _cidr(description: str) -> dict[str, Any]:
    return _string(description, pattern=r"^([0-9]{1,3}\.){3}[0-9]{1,3}/[0-9]{1,2}$")


def xrd_schema() -> dict[str, Any]:
    """openAPIV3Schema of EKSCluster: the small typed surface; the rest is fixed in the Composition."""
    size = {"type": "integer", "minimum": 0, "maximum": 1000}
    node_group = {
        "type": "object",
        "required": ["name", "instanceTypes", "minSize", "maxSize", "desiredSize"],
        "properties": {
            "name": _string("Node group name, unique within the cluster.", pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
            "instanceTypes": {"type": "array", "minItems": 1, "items": {"type": "string"}},
            "capacityType": _string("On-demand or Spot capacity.", enum=["ON_DEMAND", "SPOT"], default="ON_DEMAND"),
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
            "region": _string("AWS region.", pattern=xr.REGION),
            "kubernetesVersion": _string('EKS Kubernetes minor version, e.g. "1.33".', pattern=xr.KUBERNETES_VERSION),
            "network": {
                "type": "object",
                "required": ["vpcCidr", "zones"],
                "properties": {
                    "vpcCidr": _cidr("VPC CIDR."),
                    "natGateways": _string(
                        "A NAT gateway per zone, or a single one.", enum=["OnePerZone", "Single"], default="OnePerZone"
                    ),
                    "zones": {
                        "type": "array",
                        "description": "Availability zones and their subnets; the Composition fixes their count.",
                        "minItems": xr.MIN_ZONES,
                        "maxItems": xr.MAX_ZONES,
                        "items": {
                            "type": "object",
                            "required": ["name", "publicSubnetCidr", "privateSubnetCidr"],
                            "properties": {
                                "name": _string("Availability zone, e.g. us-west-2a.", pattern=xr.ZONE),
                                "publicSubnetCidr": _cidr("Public subnet (load balancers, NAT)."),
                                "privateSubnetCidr": _cidr("Private subnet (nodes and pods)."),
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
                    "publicAccessCidrs": {"type": "array", "items": _cidr("Allowed source range.")},
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
            "nodeGroups": {"type": "array", "minItems": 1, "items": node_group},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
            PROVIDER_CONFIG_FIELD: provider_config_property(),
            "sealingKeySecret": _string(
                "Secrets Manager secret with the Sealed Secrets key pair, readable by the cluster's External Secrets.",
                pattern=r"^[A-Za-z0-9/_+=.@-]{1,512}$",
            ),
            "kubeconfigSecretName": _string(
                "Secret in this namespace that receives the kubeconfig, under the key `value`."
            ),
            "bootstrapConfigMapName": _string(
                "ConfigMap in this namespace that receives what the spoke bootstrap needs (role ARNs)."
            ),
            "hubAccess": {
                "type": "object",
                "description": "Keyless access for the hub's Flux: an EKS access entry, a kubeConfig ConfigMap.",
                "required": ["principalArn", "configMapName"],
                "properties": {
                    "principalArn": _string(
                        "IAM role of the hub's Flux controllers.", pattern=r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$"
                    ),
                    "configMapName": _string("ConfigMap in this namespace for Flux's kubeConfig.configMapRef."),
                },
            },
        },
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


# -- the Compositions ------------------------------------------------------------------------------


def _fmt(fmt: str) -> dict[str, Any]:
    return {"type": "string", "string": {"type": "Format", "fmt": fmt}}


def _patch(source: str, target: str, *, fmt: str | None = None, required: bool = False) -> dict[str, Any]:
    patch: dict[str, Any] = {"type": "FromCompositeFieldPath", "fromFieldPath": source, "toFieldPath": target}
    if fmt is not None:
        patch["transforms"] = [_fmt(fmt)]
    if required:
        patch["policy"] = {"fromFieldPath": "Required"}
    return patch


def _status(source: str, target: str) -> dict[str, Any]:
    return {"type": "ToCompositeFieldPath", "fromFieldPath": source, "toFieldPath": target}


def _combine(paths: tuple[str, ...], fmt: str, target: str) -> dict[str, Any]:
    """``fmt`` over the composite's ``paths``, all required."""
    return {
        "type": "CombineFromComposite",
        "combine": {
            "variables": [{"fromFieldPath": path} for path in paths],
            "strategy": "string",
            "string": {"fmt": fmt},
        },
        "toFieldPath": target,
        "policy": {"fromFieldPath": "Required"},
    }


def _name_tag(fmt: str, *variables: str) -> dict[str, Any]:
    """The AWS console's Name tag: ``fmt`` over the composite's name and ``variables``."""
    if not variables:
        return _patch("metadata.name", "spec.forProvider.tags.Name", fmt=fmt)
    return {
        "type": "CombineFromComposite",
        "combine": {
            "variables": [{"fromFieldPath": "metadata.name"}, *({"fromFieldPath": path} for path in variables)],
            "strategy": "string",
            "string": {"fmt": fmt},
        },
        "toFieldPath": "spec.forProvider.tags.Name",
    }


def _use(patch_set: str) -> dict[str, Any]:
    return {"type": "PatchSet", "patchSetName": patch_set}


PATCH_SETS = [
    {"name": "region", "patches": [_patch("spec.region", "spec.forProvider.region")]},
    {"name": "account", "patches": [_patch(f"spec.{PROVIDER_CONFIG_FIELD}", "spec.providerConfigRef.name")]},
    {
        "name": "tags",
        "patches": [
            {
                "type": "FromCompositeFieldPath",
                "fromFieldPath": "spec.tags",
                "toFieldPath": "spec.forProvider.tags",
                "policy": {"toFieldPath": "MergeObjects"},
            }
        ],
    },
]


def _managed(api_group: str, kind: str, for_provider: dict[str, Any], **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"apiVersion": f"{api_group}.aws.m.upbound.io/v1beta1", "kind": kind}
    labels = extra.pop("labels", None)
    if labels:
        base["metadata"] = {"labels": {f"{LABEL}/{key}": value for key, value in labels.items()}}
    base["spec"] = {"forProvider": for_provider, **extra, "providerConfigRef": dict(PROVIDER_CONFIG)}
    return base


def _selector(**labels: str) -> dict[str, Any]:
    """Select a composed resource of the same composite resource, by fluxplane labels."""
    selector: dict[str, Any] = {"matchControllerRef": True}
    if labels:
        selector["matchLabels"] = {f"{LABEL}/{key.replace('_', '-')}": value for key, value in labels.items()}
    return selector


def _resource(name: str, base: dict[str, Any], patches: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A composed resource; an AWS managed resource is made in the composite's account (PROVIDER_CONFIG_FIELD)."""
    if str(base.get("apiVersion", "")).endswith(".aws.m.upbound.io/v1beta1"):
        patches = [*patches, _use("account")]
    return {"name": name, "base": base, "patches": patches, **extra}


def _trust_policy(service: str, actions: tuple[str, ...]) -> str:
    statement = {"Effect": "Allow", "Principal": {"Service": service}, "Action": list(actions)}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]}, indent=2) + "\n"


def _network(shape: Shape) -> list[dict[str, Any]]:
    regional = [_use("region")]
    resources = [
        _resource(
            "vpc",
            _managed("ec2", "VPC", {"enableDnsHostnames": True, "enableDnsSupport": True}),
            [
                *regional,
                _patch("spec.network.vpcCidr", "spec.forProvider.cidrBlock", required=True),
                _name_tag("%s"),
                _use("tags"),
                _status("status.atProvider.id", "status.vpcId"),
            ],
        ),
        _resource(
            "internet-gateway",
            _managed("ec2", "InternetGateway", {"vpcIdSelector": _selector()}),
            [*regional, _name_tag("%s"), _use("tags")],
        ),
    ]
    for index in range(shape.zones):
        zone = f"spec.network.zones[{index}]"
        for tier, public in (("public", True), ("private", False)):
            role_tag = "kubernetes.io/role/elb" if public else "kubernetes.io/role/internal-elb"
            resources.append(
                _resource(
                    f"subnet-{tier}-{index}",
                    _managed(
                        "ec2",
                        "Subnet",
                        {"mapPublicIpOnLaunch": public, "tags": {role_tag: "1"}, "vpcIdSelector": _selector()},
                        labels={"tier": tier, "zone": str(index)},
                    ),
                    [
                        *regional,
                        _patch(f"{zone}.name", "spec.forProvider.availabilityZone", required=True),
                        _patch(f"{zone}.{tier}SubnetCidr", "spec.forProvider.cidrBlock", required=True),
                        _name_tag(f"%s-{tier}-%s", f"{zone}.name"),
                        *([] if public else [_patch("metadata.name", f"spec.forProvider.tags[{KARPENTER_DISCOVERY}]")]),
                        _use("tags"),
                    ],
                )
            )
    nat_zones = shape.zones if shape.nat_gateways == "OnePerZone" else 1
    for index in range(nat_zones):
        resources += [
            _resource(
                f"eip-{index}",
                _managed("ec2", "EIP", {"domain": "vpc"}, labels={"zone": str(index)}),
                [*regional, _name_tag(f"%s-nat-{index}"), _use("tags")],
            ),
            _resource(
                f"nat-gateway-{index}",
                _managed(
                    "ec2",
                    "NATGateway",
                    {
                        "allocationIdSelector": _selector(zone=str(index)),
                        "subnetIdSelector": _selector(tier="public", zone=str(index)),
                    },
                    labels={"zone": str(index)},
                ),
                [*regional, _name_tag(f"%s-{index}"), _use("tags")],
            ),
        ]
    resources += [
        _resource(
            "route-table-public",
            _managed("ec2", "RouteTable", {"vpcIdSelector": _selector()}, labels={"route-table": "public"}),
            [*regional, _name_tag("%s-public"), _use("tags")],
        ),
        _resource(
            "route-public-internet",
            _managed(
                "ec2",
                "Route",
                {
                    "destinationCidrBlock": "0.0.0.0/0",
                    "gatewayIdSelector": _selector(),
                    "routeTableIdSelector": _selector(route_table="public"),
                },
            ),
            list(regional),
        ),
    ]
    for index in range(shape.zones):
        private_table = f"private-{index}"
        nat = str(index if shape.nat_gateways == "OnePerZone" else 0)
        resources += [
            _resource(
                f"route-table-association-public-{index}",
                _managed(
                    "ec2",
                    "RouteTableAssociation",
                    {
                        "routeTableIdSelector": _selector(route_table="public"),
                        "subnetIdSelector": _selector(tier="public", zone=str(index)),
                    },
                ),
                list(regional),
            ),
            _resource(
                f"route-table-{private_table}",
                _managed("ec2", "RouteTable", {"vpcIdSelector": _selector()}, labels={"route-table": private_table}),
                [*regional, _name_tag(f"%s-{private_table}"), _use("tags")],
            ),
            _resource(
                f"route-{private_table}-nat",
                _managed(
                    "ec2",
                    "Route",
                    {
                        "destinationCidrBlock": "0.0.0.0/0",
                        "natGatewayIdSelector": _selector(zone=nat),
                        "routeTableIdSelector": _selector(route_table=private_table),
                    },
                ),
                list(regional),
            ),
            _resource(
                f"route-table-association-{private_table}",
                _managed(
                    "ec2",
                    "RouteTableAssociation",
                    {
                        "routeTableIdSelector": _selector(route_table=private_table),
                        "subnetIdSelector": _selector(tier="private", zone=str(index)),
                    },
                ),
                list(regional),
            ),
        ]
    return resources


def _policy_name(policy: str) -> str:
    return policy.removeprefix("Amazon").replace("_", "-").lower()


def _identity() -> list[dict[str, Any]]:
    resources = []
    roles = (
        ("cluster", "eks.amazonaws.com", ("sts:AssumeRole", "sts:TagSession"), CLUSTER_POLICIES),
        ("node", "ec2.amazonaws.com", ("sts:AssumeRole",), NODE_POLICIES),
    )
    for role, service, actions, policies in roles:
        patches = [_name_tag(f"%s-{role}"), _use("tags")]
        if role == "node":
            patches.insert(
                0, _patch("metadata.name", "metadata.annotations[crossplane.io/external-name]", fmt=NODE_ROLE_NAME)
            )
        resources.append(
            _resource(
                f"role-{role}",
                _managed("iam", "Role", {"assumeRolePolicy": _trust_policy(service, actions)}, labels={"role": role}),
                patches,
            )
        )
        for policy in policies:
            resources.append(
                _resource(
                    f"role-{role}-{_policy_name(policy)}",
                    _managed(
                        "iam",
                        "RolePolicyAttachment",
                        {"policyArn": f"arn:aws:iam::aws:policy/{policy}", "roleSelector": _selector(role=role)},
                    ),
                    [],
                )
            )
    return resources


def _cluster(shape: Shape) -> list[dict[str, Any]]:
    regional = [_use("region")]
    resources = [
        _resource(
            "cluster",
            _managed(
                "eks",
                "Cluster",
                {
                    "accessConfig": {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": True},
                    "roleArnSelector": _selector(role="cluster"),
                    "vpcConfig": {"subnetIdSelector": _selector(tier="private")},
                },
            ),
            [
                *regional,
                # The EKS cluster is called like the fleet's cluster, in the console and in kubeconfigs.
                _patch("metadata.name", "metadata.annotations[crossplane.io/external-name]"),
                _patch("spec.kubernetesVersion", "spec.forProvider.version"),
                _patch("spec.endpoint.privateAccess", "spec.forProvider.vpcConfig.endpointPrivateAccess"),
                _patch("spec.endpoint.publicAccess", "spec.forProvider.vpcConfig.endpointPublicAccess"),
                _patch("spec.endpoint.publicAccessCidrs", "spec.forProvider.vpcConfig.publicAccessCidrs"),
                _patch("spec.logging", "spec.forProvider.enabledClusterLogTypes"),
                _use("tags"),
                _status("status.atProvider.arn", "status.clusterArn"),
                _status("status.atProvider.endpoint", "status.endpoint"),
                _status("status.atProvider.identity[0].oidc[0].issuer", "status.oidcIssuer"),
                {
                    **_status("status.atProvider.identity[0].oidc[0].issuer", "status.oidcIssuerHost"),
                    "transforms": [{"type": "string", "string": {"type": "TrimPrefix", "trim": "https://"}}],
                },
            ],
        )
    ]
    for index in range(shape.node_groups):
        group = f"spec.nodeGroups[{index}]"
        resources.append(
            _resource(
                f"node-group-{index}",
                _managed(
                    "eks",
                    "NodeGroup",
                    {
                        "clusterNameSelector": _selector(),
                        "nodeRoleArnSelector": _selector(role="node"),
                        "subnetIdSelector": _selector(tier="private"),
                        "updateConfig": {"maxUnavailable": 1},
                    },
                ),
                [
                    *regional,
                    _patch(f"{group}.name", "metadata.annotations[crossplane.io/external-name]", required=True),
                    _patch("spec.kubernetesVersion", "spec.forProvider.version"),
                    _patch(f"{group}.instanceTypes", "spec.forProvider.instanceTypes"),
                    _patch(f"{group}.capacityType", "spec.forProvider.capacityType"),
                    _patch(f"{group}.diskSize", "spec.forProvider.diskSize"),
                    _patch(f"{group}.minSize", "spec.forProvider.scalingConfig.minSize"),
                    _patch(f"{group}.maxSize", "spec.forProvider.scalingConfig.maxSize"),
                    # Set at creation only: cluster autoscalers and Karpenter own the size afterwards.
                    _patch(f"{group}.desiredSize", "spec.initProvider.scalingConfig.desiredSize"),
                    _patch(f"{group}.labels", "spec.forProvider.labels"),
                    _patch(f"{group}.taints", "spec.forProvider.taint"),
                    _use("tags"),
                ],
            )
        )
    resources += [
        # Apps' IAM roles are assumed through EKS Pod Identity (fluxplane.packs.app_compositions).
        _resource(
            "pod-identity-agent",
            _managed("eks", "Addon", {"addonName": "eks-pod-identity-agent", "clusterNameSelector": _selector()}),
            [*regional, _use("tags")],
        ),
        _resource(
            "oidc-provider",
            _managed("iam", "OpenIDConnectProvider", {"clientIdList": ["sts.amazonaws.com"]}),
            [
                _patch("status.oidcIssuer", "spec.forProvider.url", required=True),
                _name_tag("%s"),
                _use("tags"),
                _status("status.atProvider.arn", "status.oidcProviderArn"),
            ],
        ),
        _resource(
            "cluster-auth",
            _managed(
                "eks",
                "ClusterAuth",
                {"clusterNameSelector": _selector()},
                writeConnectionSecretToRef={"name": "cluster-auth"},
            ),
            [*regional, _patch("metadata.name", "spec.writeConnectionSecretToRef.name", fmt="%s-cluster-auth")],
            connectionDetails=[
                {"name": "value", "type": "FromConnectionSecretKey", "fromConnectionSecretKey": CLUSTER_AUTH_KEY}
            ],
        ),
    ]
    return resources


def _irsa_trust_policy(service_account: str) -> str:
    """Trust policy of a role for one service account of the cluster, over the OIDC provider (IRSA).

    A Go format string for CombineFromComposite over the provider ARN and the issuer host (twice).
    """
    statement = {
        "Effect": "Allow",
        "Principal": {"Federated": "%s"},
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {
            "StringEquals": {"%s:sub": f"system:serviceaccount:{service_account}", "%s:aud": "sts.amazonaws.com"}
        },
    }
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]}, indent=2) + "\n"


def _bootstrap() -> list[dict[str, Any]]:
    """What the hub's bootstrap of the spoke needs from AWS: External Secrets' role (IRSA) and its ARN."""
    read_sealing_key = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
                "Resource": "arn:aws:secretsmanager:*:*:secret:%s-*",
            }
        ],
    }
    return [
        _resource(
            "role-external-secrets",
            _managed("iam", "Role", {}, labels={"role": "external-secrets"}),
            [
                {
                    "type": "CombineFromComposite",
                    "combine": {
                        "variables": [
                            {"fromFieldPath": "status.oidcProviderArn"},
                            {"fromFieldPath": "status.oidcIssuerHost"},
                            {"fromFieldPath": "status.oidcIssuerHost"},
                        ],
                        "strategy": "string",
                        "string": {"fmt": _irsa_trust_policy(EXTERNAL_SECRETS_SERVICE_ACCOUNT)},
                    },
                    "toFieldPath": "spec.forProvider.assumeRolePolicy",
                    "policy": {"fromFieldPath": "Required"},
                },
                _name_tag("%s-external-secrets"),
                _use("tags"),
                _status("status.atProvider.arn", "status.externalSecretsRoleArn"),
            ],
        ),
        _resource(
            "role-external-secrets-sealing-key",
            _managed("iam", "RolePolicy", {"roleSelector": _selector(role="external-secrets")}),
            [
                _patch(
                    "spec.sealingKeySecret",
                    "spec.forProvider.policy",
                    fmt=json.dumps(read_sealing_key, indent=2) + "\n",
                    required=True,
                )
            ],
        ),
        _resource(
            "bootstrap-values",
            {"apiVersion": "v1", "kind": "ConfigMap"},
            [
                _patch("spec.bootstrapConfigMapName", "metadata.name", required=True),
                _patch(
                    "status.externalSecretsRoleArn",
                    f"data[{EXTERNAL_SECRETS_ROLE_ARN_KEY}]",
                    required=True,
                ),
            ],
            # A ConfigMap has no conditions: it is ready once it exists.
            readinessChecks=[{"type": "None"}],
        ),
    ]


def _keyless() -> list[dict[str, Any]]:
    """Keyless access for the hub's Flux: its role admitted as cluster admin, and the ConfigMap Flux reads."""
    regional = [_use("region")]
    principal = _patch("spec.hubAccess.principalArn", "spec.forProvider.principalArn", required=True)
    return [
        _resource(
            "hub-access-entry",
            _managed("eks", "AccessEntry", {"clusterNameSelector": _selector(), "type": "STANDARD"}),
            [*regional, principal, _use("tags")],
        ),
        _resource(
            "hub-access-policy",
            _managed(
                "eks",
                "AccessPolicyAssociation",
                {
                    "accessScope": {"type": "cluster"},
                    "clusterNameSelector": _selector(),
                    "policyArn": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
                },
            ),
            [*regional, principal],
        ),
        _resource(
            "hub-access",
            {"apiVersion": "v1", "kind": "ConfigMap", "data": {"provider": "aws"}},
            [
                _patch("spec.hubAccess.configMapName", "metadata.name", required=True),
                _patch("status.clusterArn", "data.cluster", required=True),
            ],
            readinessChecks=[{"type": "None"}],
        ),
    ]


def composed_resources(shape: Shape) -> list[dict[str, Any]]:
    """The P&T resource templates of ``shape``, in dependency order (network, identity, EKS, bootstrap)."""
    keyless = _keyless() if shape.keyless else []
    return [*_network(shape), *_identity(), *_cluster(shape), *_bootstrap(), *keyless]


def composition_props(shape: Shape) -> dict[str, Any]:
    return {
        "name": shape.name,
        "labels": shape.labels,
        "compositeTypeRef": {"apiVersion": f"{xr.GROUP}/{xr.VERSION}", "kind": xr.KIND},
        "mode": "Pipeline",
        "pipeline": [
            {
                "step": "compose",
                "functionRef": {"name": PATCH_AND_TRANSFORM},
                "input": {
                    "apiVersion": "pt.fn.crossplane.io/v1beta1",
                    "kind": "Resources",
                    # Crossplane v2 does not write composite connection secrets: P&T composes it,
                    # with ClusterAuth's kubeconfig under the key Flux's kubeConfig.secretRef reads.
                    "writeConnectionSecretToRef": {
                        "patches": [_patch("spec.kubeconfigSecretName", "name")],
                    },
                    "patchSets": PATCH_SETS,
                    "resources": composed_resources(shape),
                },
            },
            {"step": "detect-readiness", "functionRef": {"name": AUTO_READY}},
        ],
    }
