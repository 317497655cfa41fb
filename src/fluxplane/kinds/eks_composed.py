"""The resources an EKSCluster's Composition composes, per group, for one shape (fluxplane.kinds.eks_api).

- network: VPC, internet gateway, a public and a private subnet per zone, an EIP and NAT gateway
  per zone (or one), public and private route tables, their default routes and associations;
- identity: the cluster role and the node role with their AWS managed policies;
- cluster: the EKS cluster (API authentication mode, the creator as admin), its managed node groups,
  the EKS Pod Identity Agent add-on (apps' roles), the IAM OIDC provider for IRSA, and a ClusterAuth
  whose kubeconfig the composition publishes as the Secret the hub's Flux reads;
- EKS Auto Mode (Auto Mode shapes): the EKS cluster's compute, block storage and load balancing, switched on
  together as EKS asks, with the built-in node pools the composite names launched as the node role; the cluster
  role gets the policies of those capabilities, the node role Auto Mode's smaller set; no managed node groups,
  and no Pod Identity Agent add-on (Auto Mode's nodes run the agent). Without self-managed add-ons (VPC CNI,
  kube-proxy, CoreDNS: Auto Mode's nodes run their own), set at creation only, so that a cluster switched into
  Auto Mode is updated in place, not replaced. A shape without Auto Mode writes the composite's
  ``autoMode.enabled`` into the same three switches when the composite names it (false: switched off), and
  nothing otherwise;
- bootstrap: External Secrets' role (IRSA), which may read the sealing key, and the ConfigMap of its
  ARN that the hub's bootstrap of the spoke reads;
- keyless (keyless shapes only): the hub's Flux role admitted as cluster admin, and the ConfigMap Flux reads.

Resource names are stable across shapes (``subnet-private-0`` is the same subnet in every shape), so a
cluster that changes shape keeps its resources and only gains or loses the difference.

An existing cluster's Composition (:class:`ExistingShape`, ``existing.mode: observed`` or ``managed``) composes
none of that anew: it imports the cluster's VPC, its private subnets, the EKS cluster and its node groups by their
AWS ids (``crossplane.io/external-name``), under the same names and labels (an app's database finds the subnets as
in a cluster fluxplane made), with ``managementPolicies: [Observe]`` when observed, so their live state (ARN,
endpoint, certificate authority, OIDC issuer) flows into the composite without a write; managed, Crossplane may
update and delete them, and keeps their Kubernetes version and node group sizes to the definition. The ClusterAuth
(a token, no AWS resource) and the ConfigMaps the hub reads are composed as for any cluster; External Secrets' role
is the one the definition names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fluxplane.config.hub import EXTERNAL_SECRETS_ROLE_ARN_KEY, EXTERNAL_SECRETS_SERVICE_ACCOUNT
from fluxplane.constructs import patch_and_transform as pt

#: Key of the cluster's kubeconfig in ClusterAuth's connection secret.
CLUSTER_AUTH_KEY = "kubeconfig"

CLUSTER_POLICIES = ("AmazonEKSClusterPolicy",)
NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly")
#: What the cluster role needs besides CLUSTER_POLICIES in EKS Auto Mode: EKS launches nodes, makes volumes and load
#: balancers, and runs the nodes' networking as that role (its trust policy allows sts:TagSession, as Auto Mode asks).
AUTO_MODE_CLUSTER_POLICIES = (
    "AmazonEKSComputePolicy",
    "AmazonEKSBlockStoragePolicy",
    "AmazonEKSLoadBalancingPolicy",
    "AmazonEKSNetworkingPolicy",
)
#: The node role's policies in EKS Auto Mode, instead of NODE_POLICIES: its nodes only pull images and hand pods
#: their Pod Identity credentials.
AUTO_MODE_NODE_POLICIES = ("AmazonEKSWorkerNodeMinimalPolicy", "AmazonEC2ContainerRegistryPullOnly")
#: The EKS cluster's switches of its Auto Mode capabilities (compute, block storage, load balancing), below
#: ``spec.forProvider``: EKS switches them on or off together, in one request.
AUTO_MODE_SWITCHES = (
    "computeConfig.enabled",
    "storageConfig.blockStorage.enabled",
    "kubernetesNetworkConfig.elasticLoadBalancing.enabled",
)
#: Tag on the private subnets, valued with the cluster's name, by which Karpenter's EC2NodeClass finds them.
KARPENTER_DISCOVERY = "karpenter.sh/discovery"
#: The node role's IAM name over the cluster's: fixed (not generated) because Karpenter's EC2NodeClass names it.
NODE_ROLE_NAME = "%s-node"


#: Who owns the AWS resources behind an EKSCluster, by its Composition: the hub made them (``created``), it reads
#: them (``observed``), or it manages resources it imported (``managed``). See :func:`management_of`.
CREATED, OBSERVED, MANAGED = "created", "observed", "managed"
#: The management policies of an existing cluster's imported resources, by mode.
MANAGEMENT_POLICIES = {OBSERVED: ["Observe"], MANAGED: ["*"]}
_EXISTING_PREFIX = {OBSERVED: "eks-observed-", MANAGED: "eks-managed-"}


def management_of(composition: str | None) -> str:
    """Who owns the AWS resources of an EKSCluster composed by the Composition named ``composition`` (CREATED,
    OBSERVED or MANAGED)."""
    for mode, prefix in _EXISTING_PREFIX.items():
        if composition is not None and composition.startswith(prefix):
            return mode
    return CREATED


def _groups(count: int) -> str:
    return "node-group" if count == 1 else "node-groups"


@dataclass(frozen=True, order=True)
class Shape:
    """What a Composition fixes: zone count, node group count, NAT mode, keyless hub access, and EKS Auto Mode (which
    has no node groups)."""

    zones: int
    node_groups: int
    nat_gateways: str = "OnePerZone"
    keyless: bool = False
    auto_mode: bool = False

    def __post_init__(self) -> None:
        if self.auto_mode == (self.node_groups > 0):
            raise ValueError(
                f"a shape has node groups or EKS Auto Mode, one of the two: got {self.node_groups} node groups "
                f"{'with' if self.auto_mode else 'without'} Auto Mode"
            )

    @property
    def name(self) -> str:
        suffix = "-single-nat" if self.nat_gateways == "Single" else ""
        keyless = "-keyless" if self.keyless else ""
        compute = "auto-mode" if self.auto_mode else f"{self.node_groups}-{_groups(self.node_groups)}"
        return f"eks-{self.zones}-zones-{compute}{suffix}{keyless}"

    @property
    def labels(self) -> dict[str, str]:
        compute = (
            {f"{pt.LABEL}/compute": "auto-mode"}
            if self.auto_mode
            else {f"{pt.LABEL}/node-groups": str(self.node_groups)}
        )
        return {
            f"{pt.LABEL}/availability-zones": str(self.zones),
            f"{pt.LABEL}/hub-access": "keyless" if self.keyless else "kubeconfig",
            f"{pt.LABEL}/nat-gateways": self.nat_gateways,
            **compute,
        }


@dataclass(frozen=True, order=True)
class ExistingShape:
    """What an existing cluster's Composition fixes: how the hub holds its resources (OBSERVED or MANAGED), the
    private subnet count, the node group count, and keyless hub access."""

    mode: str
    subnets: int
    node_groups: int
    keyless: bool = False

    @property
    def name(self) -> str:
        keyless = "-keyless" if self.keyless else ""
        groups = f"{self.node_groups}-{_groups(self.node_groups)}"
        return f"{_EXISTING_PREFIX[self.mode]}{self.subnets}-subnets-{groups}{keyless}"

    @property
    def labels(self) -> dict[str, str]:
        return {
            f"{pt.LABEL}/existing": self.mode,
            f"{pt.LABEL}/hub-access": "keyless" if self.keyless else "kubeconfig",
            f"{pt.LABEL}/node-groups": str(self.node_groups),
            f"{pt.LABEL}/subnets": str(self.subnets),
        }


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


def _identity(auto_mode: bool = False) -> list[dict[str, Any]]:
    resources = []
    roles = (
        (
            "cluster",
            "eks.amazonaws.com",
            ("sts:AssumeRole", "sts:TagSession"),
            (*CLUSTER_POLICIES, *(AUTO_MODE_CLUSTER_POLICIES if auto_mode else ())),
        ),
        ("node", "ec2.amazonaws.com", ("sts:AssumeRole",), AUTO_MODE_NODE_POLICIES if auto_mode else NODE_POLICIES),
    )
    for role, service, actions, policies in roles:
        patches = [pt.name_tag(f"%s-{role}"), pt.use("tags")]
        if role == "node":
            patches.insert(
                0, pt.patch("metadata.name", "metadata.annotations[crossplane.io/external-name]", fmt=NODE_ROLE_NAME)
            )
            if auto_mode:
                # EKS Auto Mode launches its nodes as this role: the cluster names it by ARN.
                patches.append(pt.status("status.atProvider.arn", "status.nodeRoleArn"))
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


def _auto_mode(shape: Shape) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """What the EKS cluster of ``shape`` sets of EKS Auto Mode: its ``forProvider`` fields, its ``initProvider``
    fields, and its patches (module docstring)."""
    if not shape.auto_mode:
        return {}, {}, [pt.patch("spec.autoMode.enabled", f"spec.forProvider.{path}") for path in AUTO_MODE_SWITCHES]
    switched_on: dict[str, Any] = {}
    for path in AUTO_MODE_SWITCHES:
        *parents, last = path.split(".")
        node = switched_on
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = True
    patches = [
        pt.patch("spec.autoMode.nodePools", "spec.forProvider.computeConfig.nodePools", required=True),
        pt.patch("status.nodeRoleArn", "spec.forProvider.computeConfig.nodeRoleArn", required=True),
    ]
    return switched_on, {"bootstrapSelfManagedAddons": False}, patches


def _cluster(shape: Shape) -> list[dict[str, Any]]:
    regional = [pt.use("region")]
    auto_mode, at_creation, auto_mode_patches = _auto_mode(shape)
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
                    **auto_mode,
                },
                **({"initProvider": at_creation} if at_creation else {}),
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
                *auto_mode_patches,
                pt.use("tags"),
                *_cluster_status(),
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
    if not shape.auto_mode:
        # Apps' IAM roles are assumed through EKS Pod Identity (fluxplane.packs.app_compositions); Auto Mode's nodes
        # run its agent themselves.
        resources.append(
            pt.resource(
                "pod-identity-agent",
                pt.managed(
                    "eks", "Addon", {"addonName": "eks-pod-identity-agent", "clusterNameSelector": pt.selector()}
                ),
                [*regional, pt.use("tags")],
            )
        )
    resources += [
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
        _cluster_auth(),
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
        _hub_access_config_map(),
    ]


def _hub_access_config_map() -> dict[str, Any]:
    """The ConfigMap Flux's keyless ``kubeConfig.configMapRef`` reads: ``provider: aws`` and the cluster's ARN."""
    return pt.resource(
        "hub-access",
        {"apiVersion": "v1", "kind": "ConfigMap", "data": {"provider": "aws"}},
        [
            pt.patch("spec.hubAccess.configMapName", "metadata.name", required=True),
            pt.patch("status.clusterArn", "data.cluster", required=True),
        ],
        readinessChecks=[{"type": "None"}],
    )


def _cluster_auth() -> dict[str, Any]:
    """A short-lived token kubeconfig of the cluster (no AWS resource), which the composition publishes."""
    return pt.resource(
        "cluster-auth",
        pt.managed(
            "eks",
            "ClusterAuth",
            {"clusterNameSelector": pt.selector()},
            writeConnectionSecretToRef={"name": "cluster-auth"},
        ),
        [pt.use("region"), pt.patch("metadata.name", "spec.writeConnectionSecretToRef.name", fmt="%s-cluster-auth")],
        connectionDetails=[
            {"name": "value", "type": "FromConnectionSecretKey", "fromConnectionSecretKey": CLUSTER_AUTH_KEY}
        ],
    )


def _cluster_status() -> list[dict[str, Any]]:
    """What the EKS cluster tells the composite: its ARN, endpoint and OIDC issuer."""
    return [
        pt.status("status.atProvider.arn", "status.clusterArn"),
        pt.status("status.atProvider.endpoint", "status.endpoint"),
        pt.status("status.atProvider.identity[0].oidc[0].issuer", "status.oidcIssuer"),
        {
            **pt.status("status.atProvider.identity[0].oidc[0].issuer", "status.oidcIssuerHost"),
            "transforms": [{"type": "string", "string": {"type": "TrimPrefix", "trim": "https://"}}],
        },
    ]


def composed_resources(shape: Shape) -> list[dict[str, Any]]:
    """The P&T resource templates of ``shape``, in dependency order (network, identity, EKS, bootstrap)."""
    keyless = _keyless() if shape.keyless else []
    return [*_network(shape), *_identity(shape.auto_mode), *_cluster(shape), *_bootstrap(), *keyless]


def _imported(shape: ExistingShape, name: str, base: dict[str, Any], patches: list[dict[str, Any]]) -> dict[str, Any]:
    """An AWS resource of an existing cluster, imported by the id ``patches`` give its external name."""
    base["spec"]["managementPolicies"] = list(MANAGEMENT_POLICIES[shape.mode])
    return pt.resource(name, base, [pt.use("region"), *patches])


def existing_resources(shape: ExistingShape) -> list[dict[str, Any]]:
    """The P&T resource templates of an existing cluster's ``shape``: its imported VPC, private subnets, EKS cluster
    and node groups (under the names and labels of a created cluster's), the ClusterAuth, and the ConfigMaps the
    hub's bootstrap of the cluster reads."""
    external_name = "metadata.annotations[crossplane.io/external-name]"
    managed = shape.mode == MANAGED
    resources = [
        _imported(
            shape,
            "vpc",
            pt.managed("ec2", "VPC", {}),
            [
                pt.patch("spec.existing.vpcId", external_name, required=True),
                pt.status("status.atProvider.id", "status.vpcId"),
            ],
        )
    ]
    for index in range(shape.subnets):
        resources.append(
            _imported(
                shape,
                f"subnet-private-{index}",
                pt.managed("ec2", "Subnet", {}, labels={"tier": "private", "zone": str(index)}),
                [pt.patch(f"spec.existing.subnetIds[{index}]", external_name, required=True)],
            )
        )
    # Managed, the cluster's version follows the definition; the subnets are those it was made with (initProvider,
    # read at creation only, which never comes: the CRD asks for them once Crossplane may create or update it).
    cluster_base = pt.managed(
        "eks",
        "Cluster",
        {},
        **({"initProvider": {"vpcConfig": {"subnetIdSelector": pt.selector(tier="private")}}} if managed else {}),
    )
    resources.append(
        _imported(
            shape,
            "cluster",
            cluster_base,
            [
                pt.patch("metadata.name", external_name),
                *([pt.patch("spec.kubernetesVersion", "spec.forProvider.version")] if managed else []),
                *_cluster_status(),
                pt.status("status.atProvider.certificateAuthority[0].data", "status.certificateAuthority"),
            ],
        )
    )
    for index in range(shape.node_groups):
        group = f"spec.nodeGroups[{index}]"
        sizes = (
            [
                pt.patch("spec.kubernetesVersion", "spec.forProvider.version"),
                pt.patch(f"{group}.minSize", "spec.forProvider.scalingConfig.minSize"),
                pt.patch(f"{group}.maxSize", "spec.forProvider.scalingConfig.maxSize"),
                pt.patch(f"{group}.desiredSize", "spec.initProvider.scalingConfig.desiredSize"),
            ]
            if managed
            else []
        )
        resources.append(
            _imported(
                shape,
                f"node-group-{index}",
                pt.managed("eks", "NodeGroup", {"clusterNameSelector": pt.selector()}),
                [pt.patch(f"{group}.name", external_name, required=True), *sizes],
            )
        )
    resources += [
        _cluster_auth(),
        pt.resource(
            "bootstrap-values",
            {"apiVersion": "v1", "kind": "ConfigMap"},
            [
                pt.patch("spec.bootstrapConfigMapName", "metadata.name", required=True),
                pt.patch(
                    "spec.existing.externalSecretsRoleArn", f"data[{EXTERNAL_SECRETS_ROLE_ARN_KEY}]", required=True
                ),
            ],
            readinessChecks=[{"type": "None"}],
        ),
    ]
    if shape.keyless:
        resources.append(_hub_access_config_map())
    return resources
