"""The clusters: the management (hub) cluster, the workload clusters with their VPC, API endpoint and AWS tags,
and the pool their VPC ranges come from."""

from __future__ import annotations

import json
import re
import unicodedata
from ipaddress import IPv4Network
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, field_validator, model_validator

from fluxplane.config.hub import SHARED_STEPS, platform_namespace, platform_namespaces_text
from fluxplane.config.merge import quoted
from fluxplane.config.models.auto_mode import AutoMode
from fluxplane.config.models.fields import (
    AwsRegion,
    DnsLabel,
    KubernetesVersion,
    Model,
    located,
    quoted_version,
    repeated,
)
from fluxplane.config.models.nodes import NodeGroup

ROLE_ARN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$"
#: An EKS cluster's ARN: its partition, region, account and name.
EKS_CLUSTER_ARN = r"^arn:aws[a-z-]*:eks:([a-z0-9-]+):([0-9]{12}):cluster/([A-Za-z0-9][A-Za-z0-9_-]*)$"
VPC_ID = r"^vpc-([0-9a-f]{8}|[0-9a-f]{17})$"
SUBNET_ID = r"^subnet-([0-9a-f]{8}|[0-9a-f]{17})$"
#: Who owns a cluster's Flux sync objects (``clusters/<cluster>/flux-system/``): fluxplane, ``flux bootstrap`` or the
#: user's FluxInstance (the Flux Operator).
Bootstrap = Literal["fluxplane", "flux", "flux-operator"]
#: How an existing workload cluster joins the fleet (ExistingCluster.mode).
ExistingMode = Literal["registered", "observed", "managed"]
#: The modes in which the hub's Crossplane imports the cluster's AWS resources by their ids (an EKSCluster composed
#: by an existing cluster's Composition, fluxplane.kinds.eks_api).
IMPORTED_MODES = ("observed", "managed")
#: How many private subnets an imported cluster names: at least two (an app's database needs two zones), at most as
#: many zones as a cluster fluxplane makes has.
MIN_SUBNETS, MAX_SUBNETS = 2, 6
#: The AWS provider family members a cluster with ``appResources: spoke`` runs: those of the app kinds its tenants ask.
SPOKE_APP_SERVICES = ("dynamodb", "s3", "sqs")
#: The packs a workload cluster with ``appResources: spoke`` runs, under the definition's own sections for it:
#: Crossplane, the providers of the app kinds (their IAM roles made by the hub, allowed the cluster's own resources
#: only), their provider config in the cluster's own account, and the app kinds for its tenants.
SPOKE_APP_PACKS: dict[str, dict[str, Any]] = {
    "crossplane": {},
    "crossplane-providers": {
        "identity": "pod-identity",
        "hubRoles": True,
        "services": list(SPOKE_APP_SERVICES),
        "kubernetes": False,
    },
    "crossplane-provider-configs": {"identity": "pod-identity", "accounts": False},
    "app-compositions": {"mode": "spoke"},
}

#: The Kubernetes version of a new cluster whose definition names none, as loaded: the newest EKS offers (the release
#: calendar in config/data; a test keeps the two equal). Planning then holds it back to the newest version every
#: controller on the cluster supports (fluxplane.synth.plan), and synth records that one.
DEFAULT_KUBERNETES_VERSION = "1.37"
#: The default of the fluxplane releases that did not record each cluster's version: a cluster of an
#: allocations file from then was built with it, and keeps it.
LEGACY_KUBERNETES_VERSION = "1.33"


class ClusterBase(Model):
    name: DnsLabel = Field(description="Cluster name: a DNS-1123 label, unique across the fleet.")
    region: AwsRegion = Field(description="AWS region, e.g. us-west-2; one AWS has (see AWS data).")
    kubernetes_version: KubernetesVersion = Field(
        DEFAULT_KUBERNETES_VERSION,
        alias="kubernetesVersion",
        description='EKS Kubernetes minor version, e.g. "1.37" (quoted); one whose EKS extended support has not '
        "ended (see AWS data). Unset: the version recorded for the cluster in environments/allocations.yaml, so a "
        "newer default never upgrades it; a new cluster gets the newest EKS version that every controller on it "
        "supports (see `fluxplane versions`). An upgrade moves one minor version at a time.",
    )
    packs: dict[str, Any] = Field(
        default_factory=dict,
        description="Packs for this cluster, merged over its environment's (see Packs).",
    )

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _quoted_version(cls, value: Any) -> Any:
        return quoted_version(value)


class ManagementCluster(ClusterBase):
    """The hub: runs Flux and manages the workload clusters; its packs merge over the base's."""

    name: DnsLabel = Field("hub", description="Management cluster name.")
    flux_role_arn: Annotated[str, StringConstraints(pattern=ROLE_ARN)] | None = Field(
        None,
        alias="fluxRoleArn",
        description="IAM role of the hub's kustomize-controller and helm-controller (IRSA or Pod Identity); "
        "required when a workload cluster uses `hubAccess: keyless`.",
    )
    bootstrap: Bootstrap = Field(
        "fluxplane",
        description="Who owns the hub's Flux sync objects (`clusters/<hub>/flux-system/`): `fluxplane` writes "
        "them (`gotk-sync.yaml`, applied once with `kubectl apply -k`); `flux` leaves the folder to `flux "
        "bootstrap --path <platform path>/clusters/<hub>`, `flux-operator` to your FluxInstance (its `sync`), "
        "and synth keeps the folder's files as they are.",
    )
    egress_cidrs: list[IPv4Network] = Field(
        default_factory=list,
        alias="egressCidrs",
        description="Ranges the hub's traffic to the internet leaves from (its NAT gateways' public addresses, "
        "as /32s); required when a workload cluster's public endpoint admits only some `publicAccessCidrs`.",
    )


class Network(Model):
    """The cluster's VPC: its address range and how it spreads over availability zones."""

    cidr: IPv4Network | None = Field(
        None,
        description="VPC CIDR, /16 to /22; when unset, the range recorded in environments/allocations.yaml, "
        "else one allocated from the fleet's pool (`clusterNetwork` in base.yaml) and recorded there.",
    )
    availability_zones: int = Field(
        3,
        ge=2,
        le=6,
        alias="availabilityZones",
        description="Availability zones to spread subnets over (2 to 6, at most as many as the region has): the "
        "region's first zones, e.g. ca-central-1a, 1b and 1d (see AWS data).",
    )
    nat_gateways: Literal["OnePerZone", "Single"] = Field(
        "OnePerZone", alias="natGateways", description="A NAT gateway per zone (resilient) or a single one (cheaper)."
    )

    @field_validator("cidr")
    @classmethod
    def _vpc_sized(cls, value: IPv4Network | None) -> IPv4Network | None:
        if value is not None and not 16 <= value.prefixlen <= 22:
            raise ValueError(f"a VPC CIDR must be /16 to /22 (room for 2 subnets per zone), got {value}")
        return value


#: Every IPv4 address: the public endpoint's default source range (one object: a network is immutable).
EVERYWHERE = IPv4Network("0.0.0.0/0")


class Endpoint(Model):
    """Who can reach the EKS API server."""

    public_access: bool = Field(True, alias="publicAccess", description="Reachable from the internet.")
    private_access: bool = Field(True, alias="privateAccess", description="Reachable from inside the VPC.")
    public_access_cidrs: list[IPv4Network] = Field(
        default_factory=lambda: [EVERYWHERE],
        alias="publicAccessCidrs",
        description="Source ranges allowed on the public endpoint; unless 0.0.0.0/0, they must hold "
        "`management.egressCidrs` when the hub comes from the public side.",
    )
    from_hub: Literal["public", "private"] = Field(
        "public",
        alias="fromHub",
        description="How the hub's Flux and provider-kubernetes reach this API server: `public` (needs "
        "`publicAccess`) or `private` (needs `privateAccess`, and a network path you provide from the hub's VPC: "
        "peering or Transit Gateway).",
    )

    @model_validator(mode="after")
    def _reachable(self) -> Endpoint:
        if not (self.public_access or self.private_access):
            raise ValueError("the API endpoint needs publicAccess or privateAccess")
        return self


class ExistingCluster(Model):
    """A workload cluster that exists already (built by Terraform, eksctl or the console), which the hub does not
    create: registered, or its AWS resources imported by their ids (see Existing clusters)."""

    mode: ExistingMode = Field(
        description="`registered`: the hub never touches its AWS resources, it only reaches and bootstraps the "
        "cluster; `observed`: the hub's Crossplane imports its VPC, subnets, EKS cluster and node groups by their ids, "
        "read only (`managementPolicies: [Observe]`); `managed`: the same resources, which Crossplane then manages "
        "in full (synth asks for `--manage` to move a cluster there)."
    )
    external_secrets_role_arn: Annotated[str, StringConstraints(pattern=ROLE_ARN)] = Field(
        alias="externalSecretsRoleArn",
        description="The IAM role External Secrets on the cluster runs as (IRSA for "
        "`external-secrets:external-secrets`), which may read the sealing key: made with the cluster, since the hub "
        "creates nothing in AWS for it.",
    )
    cluster_arn: Annotated[str, StringConstraints(pattern=EKS_CLUSTER_ARN)] | None = Field(
        None,
        alias="clusterArn",
        description="`registered` only: the EKS cluster's ARN, which keyless hub access reads (required with "
        "`hubAccess: keyless`). The EKS cluster is named like the fleet's cluster.",
    )
    vpc_id: Annotated[str, StringConstraints(pattern=VPC_ID)] | None = Field(
        None, alias="vpcId", description="`observed` and `managed` (required): the id of the cluster's VPC."
    )
    subnet_ids: list[Annotated[str, StringConstraints(pattern=SUBNET_ID)]] = Field(
        default_factory=list,
        alias="subnetIds",
        description=f"`observed` and `managed` (required): the private subnets its nodes run in, "
        f"{MIN_SUBNETS} to {MAX_SUBNETS}, where the apps' databases go too. Its node groups are those `nodeGroups` "
        "names.",
    )

    @property
    def imported(self) -> bool:
        """Whether the hub's Crossplane imports the cluster's AWS resources (an EKSCluster of its own)."""
        return self.mode in IMPORTED_MODES

    @model_validator(mode="after")
    def _what_the_mode_needs(self) -> ExistingCluster:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        if not self.imported:
            if self.vpc_id is not None:
                problems.append(
                    (("vpcId",), f"mode {self.mode} imports nothing of the cluster's; remove it, or set mode: observed")
                )
            if self.subnet_ids:
                problems.append(
                    (
                        ("subnetIds",),
                        f"mode {self.mode} imports nothing of the cluster's; remove them, or set mode: observed",
                    )
                )
        else:
            if self.vpc_id is None:
                problems.append(
                    (("vpcId",), f"mode {self.mode} imports the cluster's VPC by its id: give it (vpc-...)")
                )
            if not MIN_SUBNETS <= len(self.subnet_ids) <= MAX_SUBNETS:
                problems.append(
                    (
                        ("subnetIds",),
                        f"mode {self.mode} imports the private subnets the cluster's nodes run in: give "
                        f"{MIN_SUBNETS} to {MAX_SUBNETS} subnet ids, got {len(self.subnet_ids)}",
                    )
                )
            twice = repeated(self.subnet_ids)
            if twice:
                problems.append((("subnetIds",), f"each subnet once, {', '.join(map(repr, twice))} repeated"))
            if self.cluster_arn is not None:
                problems.append(
                    (
                        ("clusterArn",),
                        f"mode {self.mode} reads the EKS cluster's ARN from AWS; remove it",
                    )
                )
        if problems:
            raise located(type(self).__name__, problems)
        return self


LogType = Literal["api", "audit", "authenticator", "controllerManager", "scheduler"]


#: The longest workload cluster name: its node role is ``<name>-node``, and IAM role names have at most 64.
MAX_CLUSTER_NAME = 59
#: Tag keys the composition or AWS own (fluxplane.kinds.eks_api): a cluster's ``tags`` may not set them.
RESERVED_TAG_PREFIXES = ("aws:", "karpenter.sh/", "kubernetes.io/")
#: AWS's tagging rules (the Tagging API's pattern ``[\p{L}\p{Z}\p{N}_.:/=+\-@]*``): a key has 1 to 128
#: characters, a value 0 to 256, all of them Unicode letters, digits, spaces and these symbols.
TAG_SYMBOLS = "_.:/=+-@"
MAX_TAG_KEY, MAX_TAG_VALUE = 128, 256
_TAG_CHARACTERS = f"Unicode letters, digits, spaces and {' '.join(TAG_SYMBOLS)}"


def _tag_character(char: str) -> bool:
    # Spaces are the space separators (Zs): a line or paragraph separator breaks lines as a newline does.
    return unicodedata.category(char)[0] in "LN" or unicodedata.category(char) == "Zs" or char in TAG_SYMBOLS


def _tag_text(value: str, what: str, low: int, high: int) -> str:
    if low <= len(value) <= high and all(_tag_character(char) for char in value):
        return value
    others = sorted({char for char in value if not _tag_character(char)})
    found = f", which has {', '.join(quoted(char) for char in others[:5])}" if others else f" ({len(value)} characters)"
    raise ValueError(f"expected an AWS tag {what} of {low} to {high} {_TAG_CHARACTERS}, got {quoted(value, 80)}{found}")


def _tag_key(value: str) -> str:
    return _tag_text(value, "key", 1, MAX_TAG_KEY)


def _tag_value(value: str) -> str:
    return _tag_text(value, "value", 0, MAX_TAG_VALUE)


TagKey = Annotated[str, AfterValidator(_tag_key)]
TagValue = Annotated[str, AfterValidator(_tag_value)]


class WorkloadCluster(ClusterBase):
    """A workload (spoke) cluster of one environment."""

    name: DnsLabel = Field(
        description="Cluster name: a DNS-1123 label, unique across the fleet. It is also the cluster's namespace "
        "on the hub, so not a platform namespace or one an add-on installs into."
    )
    network: Network = Field(default_factory=Network, description="VPC address range and zones.")
    endpoint: Endpoint = Field(default_factory=Endpoint, description="API server endpoint access.")
    logging: list[LogType] = Field(
        ["api", "audit", "authenticator"], description="Control plane log types sent to CloudWatch."
    )
    tags: dict[TagKey, TagValue] = Field(default_factory=dict, description="AWS tags on every resource of the cluster.")
    hub_access: Literal["kubeconfig", "keyless"] = Field(
        "kubeconfig",
        alias="hubAccess",
        description="How the hub's Flux reaches the cluster: the composed kubeconfig Secret, or keyless "
        "(Flux `kubeConfig.configMapRef` with `provider: aws`, an EKS access entry for `management.fluxRoleArn`).",
    )

    node_groups: list[NodeGroup] = Field(
        default_factory=lambda: [NodeGroup(name="default")],
        alias="nodeGroups",
        description="Managed node groups, at least one; names unique within the cluster. An Auto Mode cluster has "
        "none: the ones it inherits from `clusterDefaults` are left off it, with a note.",
    )
    auto_mode: AutoMode | None = Field(
        None,
        alias="autoMode",
        description="EKS Auto Mode: EKS launches the cluster's nodes and runs its block storage and load balancing, "
        "instead of managed node groups and the karpenter, aws-ebs-csi-driver and aws-load-balancer-controller packs "
        "(see EKS Auto Mode).",
    )
    flux_installer: Literal["flux2-chart", "flux-operator"] = Field(
        "flux2-chart",
        alias="fluxInstaller",
        description="How the hub installs Flux on the cluster: the flux2 Helm chart, or the Flux Operator's chart "
        "and a FluxInstance (see Spoke bootstrap). Changing it on an existing cluster replaces its Flux: synth "
        "refuses unless `--replace` names the HelmRelease.",
    )
    account: DnsLabel | None = Field(
        None,
        description="The AWS account the cluster, its add-ons' identities and its apps' resources are made in: a name "
        "under `accounts` in base.yaml. Default: the hub's account (see Accounts).",
    )
    app_resources: Literal["hub", "spoke"] = Field(
        "hub",
        alias="appResources",
        description="Where its apps' DynamoDB tables, SQS queues and S3 buckets are made: by the hub's Crossplane "
        "(`hub`), or by a Crossplane of the cluster's own, which its tenants ask in their namespaces (`spoke`; the "
        "hub still makes the apps' IAM roles). See App resources on the cluster itself.",
    )
    existing: ExistingCluster | None = Field(
        None,
        description="A cluster that exists already, which the hub does not create: registered, observed or managed "
        "(see Existing clusters). Its `network.cidr`, `region`, `kubernetesVersion` and `account` are recorded "
        "from the definition, never allocated.",
    )
    bootstrap: Bootstrap = Field(
        "fluxplane",
        description="Who installs Flux on the cluster and owns its sync objects (`clusters/<cluster>/flux-system/`): "
        "`fluxplane` (the hub's chain installs it, `fluxInstaller`); `flux` for a cluster that runs Flux from `flux "
        "bootstrap --path <platform path>/clusters/<cluster>`, or `flux-operator` from your FluxInstance: the hub "
        "installs no Flux there and synth keeps that folder's files as they are.",
    )
    cdk8s_charts: list[DnsLabel] = Field(
        default_factory=list,
        alias="cdk8sCharts",
        description="The project's own cdk8s charts (charts/<name>.py, '_' in the file name as '-') synthesized "
        "for this cluster, each in the layer it names (see Your own cdk8s charts).",
    )

    @field_validator("name")
    @classmethod
    def _usable_as_namespace(cls, value: str) -> str:
        if platform_namespace(value):
            raise ValueError(
                f"{value!r} names the cluster's namespace on the hub, a platform namespace; it must not be "
                f"{platform_namespaces_text()}"
            )
        return value

    @field_validator("name")
    @classmethod
    def _not_a_shared_step(cls, value: str) -> str:
        if value in SHARED_STEPS:
            raise ValueError(
                f"{value!r} is taken: the hub's bootstrap chains share a step of that name (spokes/steps/{value}), "
                "which fluxplane names like the chain of this cluster; choose another name"
            )
        return value

    @field_validator("name")
    @classmethod
    def _fits_the_node_role(cls, value: str) -> str:
        if len(value) > MAX_CLUSTER_NAME:
            raise ValueError(
                f"at most {MAX_CLUSTER_NAME} characters: the cluster's node role is named <name>-node and IAM "
                f"allows 64, got {json.dumps(value)} ({len(value)})"
            )
        return value

    @field_validator("tags")
    @classmethod
    def _not_the_compositions_tags(cls, value: dict[str, str]) -> dict[str, str]:
        taken = sorted(key for key in value if key == "Name" or key.startswith(RESERVED_TAG_PREFIXES))
        if taken:
            raise ValueError(
                f"{', '.join(map(repr, taken))}: the composition sets Name and the karpenter.sh/, kubernetes.io/ "
                "tags that controllers find the cluster's resources by, and AWS reserves aws:"
            )
        return value

    @field_validator("cdk8s_charts")
    @classmethod
    def _unique_charts(cls, value: list[str]) -> list[str]:
        twice = repeated(value)
        if twice:
            raise ValueError(f"each chart once, {', '.join(map(repr, twice))} repeated")
        return value

    @property
    def auto(self) -> bool:
        """Whether the cluster runs in EKS Auto Mode."""
        return self.auto_mode is not None and self.auto_mode.enabled

    @model_validator(mode="before")
    @classmethod
    def _auto_mode_has_no_node_groups(cls, data: Any) -> Any:
        """An Auto Mode cluster that names no node groups has none (not the default one)."""
        if isinstance(data, dict) and "nodeGroups" not in data:
            auto_mode = data.get("autoMode")
            if isinstance(auto_mode, dict) and auto_mode.get("enabled") is True:
                return {**data, "nodeGroups": []}
        return data

    @model_validator(mode="after")
    def _node_groups_or_auto_mode(self) -> WorkloadCluster:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        if self.auto and self.node_groups:
            problems.append(
                (
                    ("nodeGroups",),
                    "an Auto Mode cluster has no managed node groups: EKS launches its nodes (autoMode.nodePools and "
                    "autoMode.customNodePools); remove nodeGroups, or set autoMode.enabled: false",
                )
            )
        elif not self.auto and not self.node_groups:
            problems.append((("nodeGroups",), "give at least one node group, or set autoMode.enabled: true"))
        if self.auto and self.existing is not None:
            problems.append(
                (
                    ("autoMode", "enabled"),
                    "an existing cluster's Auto Mode is its own: the hub does not make its nodes; remove autoMode",
                )
            )
        if problems:
            raise located(type(self).__name__, problems)
        return self

    @property
    def provided_kubeconfig(self) -> bool:
        """Whether the hub reaches the cluster with a kubeconfig Secret the user seals for it: a registered cluster
        without keyless access, whose kubeconfig no composition writes."""
        return self.existing is not None and not self.existing.imported and self.hub_access == "kubeconfig"

    @model_validator(mode="after")
    def _existing_recorded(self) -> WorkloadCluster:
        """An existing cluster's facts come from the definition: its range is given, never allocated; keyless access
        to a registered one reads its ARN, which must name this cluster in its region."""
        existing = self.existing
        if existing is None:
            return self
        problems: list[tuple[tuple[str | int, ...], str]] = []
        if self.network.cidr is None:
            problems.append(
                (
                    ("network", "cidr"),
                    "an existing cluster's VPC range is recorded from the definition, never allocated: give its VPC's "
                    "CIDR",
                )
            )
        arn = re.fullmatch(EKS_CLUSTER_ARN, existing.cluster_arn or "")
        if existing.mode == "registered" and self.hub_access == "keyless" and arn is None:
            problems.append(
                (
                    ("existing", "clusterArn"),
                    "keyless hub access reaches a registered cluster by its EKS ARN: give it (aws eks describe-cluster "
                    f"--name {self.name} --query cluster.arn)",
                )
            )
        if arn is not None and (arn[1], arn[3]) != (self.region, self.name):
            problems.append(
                (
                    ("existing", "clusterArn"),
                    f"names EKS cluster {arn[3]!r} in {arn[1]}; the cluster is {self.name!r} in {self.region} (the EKS "
                    "cluster is named like the fleet's cluster)",
                )
            )
        if problems:
            raise located(type(self).__name__, problems)
        return self

    @field_validator("node_groups")
    @classmethod
    def _unique_node_groups(cls, value: list[NodeGroup]) -> list[NodeGroup]:
        names = [group.name for group in value]
        duplicates = repeated(names)
        if duplicates:
            raise ValueError(f"node group names must be unique, {', '.join(map(repr, duplicates))} repeated")
        return value


class ClusterNetwork(Model):
    """Where workload clusters' VPC ranges come from when a cluster does not give one."""

    pool: IPv4Network = Field(IPv4Network("10.0.0.0/8"), description="Range VPC CIDRs are allocated from.")
    prefix_length: int = Field(16, ge=16, le=22, alias="prefixLength", description="Size of each VPC (/16 to /22).")
    reserved: list[IPv4Network] = Field(
        default_factory=list, description="Ranges no cluster may use (the hub's VPC, peered networks)."
    )

    @model_validator(mode="after")
    def _pool_fits(self) -> ClusterNetwork:
        if self.pool.prefixlen > self.prefix_length:
            raise ValueError(f"pool {self.pool} is smaller than one /{self.prefix_length}")
        return self
