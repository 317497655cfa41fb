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
from fluxplane.config.models import SealingKey, WorkloadCluster
from fluxplane.config.network import subnet_plan
from fluxplane.constructs import eks_cluster as xr
from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.patch_and_transform import PATCH_SETS

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
            f"{pt.LABEL}/availability-zones": str(self.zones),
            f"{pt.LABEL}/hub-access": "keyless" if self.keyless else "kubeconfig",
            f"{pt.LABEL}/nat-gateways": self.nat_gateways,
            f"{pt.LABEL}/node-groups": str(self.node_groups),
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
                "required": ["vpcCidr", "zones"],
                "properties": {
                    "vpcCidr": pt.cidr_property("VPC CIDR."),
                    "natGateways": pt.string_property(
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
            "nodeGroups": {"type": "array", "minItems": 1, "items": node_group},
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


def _trust_policy(service: str, actions: tuple[str, ...]) -> str:
    statement = {"Effect": "Allow", "Principal": {"Service": service}, "Action": list(actions)}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]}, indent=2) + "\n"


def _network(shape: Shape) -> list[dict[str, Any]]:
    regional = [pt.use("region")]
    resources = [
        pt.resource(
            "vpc",
            pt.managed("ec2", "VPC", {"enableDnsHostnames": True, "enableDnsSupport": True}),
            [
                *regional,
                pt.patch("spec.network.vpcCidr", "spec.forProvider.cidrBlock", required=True),
                pt.name_tag("%s"),
                pt.use("tags"),
                pt.status("status.atProvider.id", "status.vpcId"),
            ],
        ),
        pt.resource(
            "internet-gateway",
            pt.managed("ec2", "InternetGateway", {"vpcIdSelector": pt.selector()}),
            [*regional, pt.name_tag("%s"), pt.use("tags")],
        ),
    ]
    for index in range(shape.zones):
        zone = f"spec.network.zones[{index}]"
        for tier, public in (("public", True), ("private", False)):
            role_tag = "kubernetes.io/role/elb" if public else "kubernetes.io/role/internal-elb"
            resources.append(
                pt.resource(
                    f"subnet-{tier}-{index}",
                    pt.managed(
                        "ec2",
                        "Subnet",
                        {"mapPublicIpOnLaunch": public, "tags": {role_tag: "1"}, "vpcIdSelector": pt.selector()},
                        labels={"tier": tier, "zone": str(index)},
                    ),
                    [
                        *regional,
                        pt.patch(f"{zone}.name", "spec.forProvider.availabilityZone", required=True),
                        pt.patch(f"{zone}.{tier}SubnetCidr", "spec.forProvider.cidrBlock", required=True),
                        pt.name_tag(f"%s-{tier}-%s", f"{zone}.name"),
                        *(
                            []
                            if public
                            else [pt.patch("metadata.name", f"spec.forProvider.tags[{KARPENTER_DISCOVERY}]")]
                        ),
                        pt.use("tags"),
                    ],
                )
            )
    nat_zones = shape.zones if shape.nat_gateways == "OnePerZone" else 1
    for index in range(nat_zones):
        resources += [
            pt.resource(
                f"eip-{index}",
                pt.managed("ec2", "EIP", {"domain": "vpc"}, labels={"zone": str(index)}),
                [*regional, pt.name_tag(f"%s-nat-{index}"), pt.use("tags")],
            ),
            pt.resource(
                f"nat-gateway-{index}",
                pt.managed(
                    "ec2",
                    "NATGateway",
                    {
                        "allocationIdSelector": pt.selector(zone=str(index)),
                        "subnetIdSelector": pt.selector(tier="public", zone=str(index)),
                    },
                    labels={"zone": str(index)},
                ),
                [*regional, pt.name_tag(f"%s-{index}"), pt.use("tags")],
            ),
        ]
    resources += [
        pt.resource(
            "route-table-public",
            pt.managed("ec2", "RouteTable", {"vpcIdSelector": pt.selector()}, labels={"route-table": "public"}),
            [*regional, pt.name_tag("%s-public"), pt.use("tags")],
        ),
        pt.resource(
            "route-public-internet",
            pt.managed(
                "ec2",
                "Route",
                {
                    "destinationCidrBlock": "0.0.0.0/0",
                    "gatewayIdSelector": pt.selector(),
                    "routeTableIdSelector": pt.selector(route_table="public"),
                },
            ),
            list(regional),
        ),
    ]
    for index in range(shape.zones):
        private_table = f"private-{index}"
        nat = str(index if shape.nat_gateways == "OnePerZone" else 0)
        resources += [
            pt.resource(
                f"route-table-association-public-{index}",
                pt.managed(
                    "ec2",
                    "RouteTableAssociation",
                    {
                        "routeTableIdSelector": pt.selector(route_table="public"),
                        "subnetIdSelector": pt.selector(tier="public", zone=str(index)),
                    },
                ),
                list(regional),
            ),
            pt.resource(
                f"route-table-{private_table}",
                pt.managed(
                    "ec2", "RouteTable", {"vpcIdSelector": pt.selector()}, labels={"route-table": private_table}
                ),
                [*regional, pt.name_tag(f"%s-{private_table}"), pt.use("tags")],
            ),
            pt.resource(
                f"route-{private_table}-nat",
                pt.managed(
                    "ec2",
                    "Route",
                    {
                        "destinationCidrBlock": "0.0.0.0/0",
                        "natGatewayIdSelector": pt.selector(zone=nat),
                        "routeTableIdSelector": pt.selector(route_table=private_table),
                    },
                ),
                list(regional),
            ),
            pt.resource(
                f"route-table-association-{private_table}",
                pt.managed(
                    "ec2",
                    "RouteTableAssociation",
                    {
                        "routeTableIdSelector": pt.selector(route_table=private_table),
                        "subnetIdSelector": pt.selector(tier="private", zone=str(index)),
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
        patches = [pt.name_tag(f"%s-{role}"), pt.use("tags")]
        if role == "node":
            patches.insert(
                0, pt.patch("metadata.name", "metadata.annotations[crossplane.io/external-name]", fmt=NODE_ROLE_NAME)
            )
        resources.append(
            pt.resource(
                f"role-{role}",
                pt.managed("iam", "Role", {"assumeRolePolicy": _trust_policy(service, actions)}, labels={"role": role}),
                patches,
            )
        )
        for policy in policies:
            resources.append(
                pt.resource(
                    f"role-{role}-{_policy_name(policy)}",
                    pt.managed(
                        "iam",
                        "RolePolicyAttachment",
                        {"policyArn": f"arn:aws:iam::aws:policy/{policy}", "roleSelector": pt.selector(role=role)},
                    ),
                    [],
                )
            )
    return resources


def _cluster(shape: Shape) -> list[dict[str, Any]]:
    regional = [pt.use("region")]
    resources = [
        pt.resource(
            "cluster",
            pt.managed(
                "eks",
                "Cluster",
                {
                    "accessConfig": {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": True},
                    "roleArnSelector": pt.selector(role="cluster"),
                    "vpcConfig": {"subnetIdSelector": pt.selector(tier="private")},
                },
            ),
            [
                *regional,
                # The EKS cluster is called like the fleet's cluster, in the console and in kubeconfigs.
                pt.patch("metadata.name", "metadata.annotations[crossplane.io/external-name]"),
                pt.patch("spec.kubernetesVersion", "spec.forProvider.version"),
                pt.patch("spec.endpoint.privateAccess", "spec.forProvider.vpcConfig.endpointPrivateAccess"),
                pt.patch("spec.endpoint.publicAccess", "spec.forProvider.vpcConfig.endpointPublicAccess"),
                pt.patch("spec.endpoint.publicAccessCidrs", "spec.forProvider.vpcConfig.publicAccessCidrs"),
                pt.patch("spec.logging", "spec.forProvider.enabledClusterLogTypes"),
                pt.use("tags"),
                pt.status("status.atProvider.arn", "status.clusterArn"),
                pt.status("status.atProvider.endpoint", "status.endpoint"),
                pt.status("status.atProvider.identity[0].oidc[0].issuer", "status.oidcIssuer"),
                {
                    **pt.status("status.atProvider.identity[0].oidc[0].issuer", "status.oidcIssuerHost"),
                    "transforms": [{"type": "string", "string": {"type": "TrimPrefix", "trim": "https://"}}],
                },
            ],
        )
    ]
    for index in range(shape.node_groups):
        group = f"spec.nodeGroups[{index}]"
        resources.append(
            pt.resource(
                f"node-group-{index}",
                pt.managed(
                    "eks",
                    "NodeGroup",
                    {
                        "clusterNameSelector": pt.selector(),
                        "nodeRoleArnSelector": pt.selector(role="node"),
                        "subnetIdSelector": pt.selector(tier="private"),
                        "updateConfig": {"maxUnavailable": 1},
                    },
                ),
                [
                    *regional,
                    pt.patch(f"{group}.name", "metadata.annotations[crossplane.io/external-name]", required=True),
                    pt.patch("spec.kubernetesVersion", "spec.forProvider.version"),
                    pt.patch(f"{group}.instanceTypes", "spec.forProvider.instanceTypes"),
                    pt.patch(f"{group}.capacityType", "spec.forProvider.capacityType"),
                    pt.patch(f"{group}.diskSize", "spec.forProvider.diskSize"),
                    pt.patch(f"{group}.minSize", "spec.forProvider.scalingConfig.minSize"),
                    pt.patch(f"{group}.maxSize", "spec.forProvider.scalingConfig.maxSize"),
                    # Set at creation only: cluster autoscalers and Karpenter own the size afterwards.
                    pt.patch(f"{group}.desiredSize", "spec.initProvider.scalingConfig.desiredSize"),
                    pt.patch(f"{group}.labels", "spec.forProvider.labels"),
                    pt.patch(f"{group}.taints", "spec.forProvider.taint"),
                    pt.use("tags"),
                ],
            )
        )
    resources += [
        # Apps' IAM roles are assumed through EKS Pod Identity (fluxplane.packs.app_compositions).
        pt.resource(
            "pod-identity-agent",
            pt.managed("eks", "Addon", {"addonName": "eks-pod-identity-agent", "clusterNameSelector": pt.selector()}),
            [*regional, pt.use("tags")],
        ),
        pt.resource(
            "oidc-provider",
            pt.managed("iam", "OpenIDConnectProvider", {"clientIdList": ["sts.amazonaws.com"]}),
            [
                pt.patch("status.oidcIssuer", "spec.forProvider.url", required=True),
                pt.name_tag("%s"),
                pt.use("tags"),
                pt.status("status.atProvider.arn", "status.oidcProviderArn"),
            ],
        ),
        pt.resource(
            "cluster-auth",
            pt.managed(
                "eks",
                "ClusterAuth",
                {"clusterNameSelector": pt.selector()},
                writeConnectionSecretToRef={"name": "cluster-auth"},
            ),
            [*regional, pt.patch("metadata.name", "spec.writeConnectionSecretToRef.name", fmt="%s-cluster-auth")],
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
        pt.resource(
            "role-external-secrets",
            pt.managed("iam", "Role", {}, labels={"role": "external-secrets"}),
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
                pt.name_tag("%s-external-secrets"),
                pt.use("tags"),
                pt.status("status.atProvider.arn", "status.externalSecretsRoleArn"),
            ],
        ),
        pt.resource(
            "role-external-secrets-sealing-key",
            pt.managed("iam", "RolePolicy", {"roleSelector": pt.selector(role="external-secrets")}),
            [
                pt.patch(
                    "spec.sealingKeySecret",
                    "spec.forProvider.policy",
                    fmt=json.dumps(read_sealing_key, indent=2) + "\n",
                    required=True,
                )
            ],
        ),
        pt.resource(
            "bootstrap-values",
            {"apiVersion": "v1", "kind": "ConfigMap"},
            [
                pt.patch("spec.bootstrapConfigMapName", "metadata.name", required=True),
                pt.patch(
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
    regional = [pt.use("region")]
    principal = pt.patch("spec.hubAccess.principalArn", "spec.forProvider.principalArn", required=True)
    return [
        pt.resource(
            "hub-access-entry",
            pt.managed("eks", "AccessEntry", {"clusterNameSelector": pt.selector(), "type": "STANDARD"}),
            [*regional, principal, pt.use("tags")],
        ),
        pt.resource(
            "hub-access-policy",
            pt.managed(
                "eks",
                "AccessPolicyAssociation",
                {
                    "accessScope": {"type": "cluster"},
                    "clusterNameSelector": pt.selector(),
                    "policyArn": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
                },
            ),
            [*regional, principal],
        ),
        pt.resource(
            "hub-access",
            {"apiVersion": "v1", "kind": "ConfigMap", "data": {"provider": "aws"}},
            [
                pt.patch("spec.hubAccess.configMapName", "metadata.name", required=True),
                pt.patch("status.clusterArn", "data.cluster", required=True),
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
                    "resources": composed_resources(shape),
                },
            },
            {"step": "detect-readiness", "functionRef": {"name": pt.AUTO_READY}},
        ],
    }
