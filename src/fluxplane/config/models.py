"""Typed models of the fleet definition.

Field names are the camelCase keys users write in ``environments/*.yaml``. Every model forbids
unknown keys and is frozen: a definition is data, read once, then only looked at.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from ipaddress import IPv4Network
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from fluxplane.config.hub import SHARED_STEPS, platform_namespace, platform_namespaces_text
from fluxplane.config.merge import quoted

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DURATION = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
GIT_URL = r"^(ssh|https)://[^\s]+$"
AWS_REGION = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$"
KUBERNETES_VERSION = r"^1\.[0-9]{2}$"
GIT_BRANCH = r"^[A-Za-z0-9._/-]+$"
RELATIVE_PATH = r"^(\.|[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*)$"
INSTANCE_TYPE = r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$"
#: An availability zone's name: its region's name and a letter.
AVAILABILITY_ZONE = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9][a-z]$"
ROLE_ARN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$"
ACCOUNT_ID = r"^[0-9]{12}$"
ROLE_NAME = r"^[A-Za-z0-9+=,.@_-]{1,64}$"
#: The ClusterProviderConfig of the hub's own account: every AWS resource's unless its cluster names an account.
HUB_PROVIDER_CONFIG = "default"
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
#: A CODEOWNERS owner: a GitHub or GitLab @user or @org/team, or an e-mail address.
OWNER = r"^(@[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?|[^@\s]+@[^@\s]+\.[A-Za-z]{2,})$"
#: Characters a Git ref name may hold (git check-ref-format); the rules on sequences are in config.apps.
GIT_REF = r"^[^\s~^:?*\[\\]+$"

#: The longest duration Go's time.Duration holds (int64 nanoseconds): Flux cannot read a longer one.
MAX_DURATION_NS = 2**63 - 1
_DURATION_PART = re.compile(r"([0-9]+)(?:\.([0-9]+))?(ms|s|m|h)")
_UNIT_NS = {"ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}


def duration_ns(value: str) -> int:
    """The nanoseconds of a duration that matches DURATION, as Go's time.ParseDuration counts them."""
    total = 0
    for whole, fraction, unit in _DURATION_PART.findall(value):
        scale = _UNIT_NS[unit]
        total += int(whole) * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)
    return total


def _flux_duration(value: str) -> str:
    """Flux reads its intervals and timeouts as Go durations, and needs them above zero: at ``0s`` a
    controller requeues its object at once, again and again (a hot loop), and a timeout is over before it
    starts."""
    nanoseconds = duration_ns(value)
    if nanoseconds <= 0:
        raise ValueError(
            f"expected a duration above zero such as 30s, 5m or 1h30m, got {quoted(value, 80)}: at zero Flux "
            "reconciles without pause"
        )
    if nanoseconds > MAX_DURATION_NS:
        raise ValueError(f"expected a duration Go can hold (at most 2562047h47m16s), got {quoted(value, 80)}")
    return value


DnsLabel = Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)]
Duration = Annotated[str, StringConstraints(pattern=DURATION), AfterValidator(_flux_duration)]
AwsRegion = Annotated[str, StringConstraints(pattern=AWS_REGION)]
InstanceType = Annotated[str, StringConstraints(pattern=INSTANCE_TYPE)]
AvailabilityZone = Annotated[str, StringConstraints(pattern=AVAILABILITY_ZONE)]
KubernetesVersion = Annotated[str, StringConstraints(pattern=KUBERNETES_VERSION)]

#: Keys a base file may set, and the keys an environment file may set over it.


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)


class Repository(Model):
    """A Git repository Flux reads. dist/<key>/ is its content, found in the repository at ``path``."""

    url: Annotated[str, StringConstraints(pattern=GIT_URL)] = Field(
        description="Clone URL, ssh:// or https:// (Flux GitRepository spec.url)."
    )
    branch: Annotated[str, StringConstraints(pattern=GIT_BRANCH, max_length=255)] = Field(
        "main", description="Branch Flux follows."
    )
    secret_ref: DnsLabel | None = Field(
        "flux-system",
        alias="secretRef",
        description="Secret in flux-system holding the Git credentials (created at bootstrap); "
        "null for a public repository.",
    )
    path: Annotated[str, StringConstraints(pattern=RELATIVE_PATH)] | None = Field(
        None,
        description="Folder inside the repository that holds this dist/ folder; "
        "default `dist/<key>` (the fleet repository itself).",
    )

    @field_validator("path")
    @classmethod
    def _no_parent_segments(cls, value: str | None) -> str | None:
        if value is not None and ".." in value.split("/"):
            raise ValueError(f"must stay inside the repository (no '..' segments), got {json.dumps(value)}")
        return value


class Repositories(Model):
    """The Git repositories of the fleet."""

    platform: Repository = Field(
        description="The platform repository (the seeds' gitops-system): cluster entry points and the add-on catalogue."
    )
    workloads: Repository | None = Field(
        None,
        description="The workloads repository (the seeds' gitops-workloads): one tenant per app and cluster; "
        "default the platform repository, with its content at `dist/workloads`.",
    )


class FluxSettings(Model):
    """Defaults for every Flux object fluxplane writes."""

    interval: Duration = Field("10m", description="How often Flux reconciles sources and Kustomizations.")
    retry_interval: Duration = Field("2m", alias="retryInterval", description="Retry interval after a failure.")
    timeout: Duration = Field("5m", description="How long a Kustomization waits for its health checks.")
    version: Annotated[str, StringConstraints(pattern=r"^2\.[0-9]+$")] = Field(
        "2.9",
        description='Flux minor version on the hub, e.g. "2.9" (quoted); keyless `hubAccess` needs 2.7 or newer.',
    )
    sparse_checkout: bool = Field(
        True,
        alias="sparseCheckout",
        description="Each workload cluster's GitRepository checks out only the folders its Kustomizations read "
        "(its own cluster folder and the shared catalogue), not every other cluster's.",
    )


# -- node labels and taints: Kubernetes' syntax, and EKS's stricter rules for managed node groups -----

#: The name part of a Kubernetes qualified name (a label key, a taint key), and a label value.
_QUALIFIED_NAME_PART = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
#: EKS's managed node group API: label and taint keys have at most 63 characters, prefix included.
EKS_KEY_LENGTH = 63
#: Key prefixes the EKS API refuses on a managed node group's labels and taints ("Label cannot contain reserved
#: prefixes [kubernetes.io/, k8s.io/, eks.amazonaws.com/]"), subdomains included (node-role.kubernetes.io/).
EKS_RESERVED_DOMAINS = ("kubernetes.io", "k8s.io", "eks.amazonaws.com")
#: EKS's limit on taints per managed node group.
MAX_TAINTS = 50
_KEY_SYNTAX = (
    "an optional DNS subdomain prefix and '/', then a name of at most 63 letters, digits, '-', '_' and '.' "
    "that starts and ends with a letter or digit"
)
_VALUE_SYNTAX = "letters, digits, '-', '_' and '.', starting and ending with a letter or digit"


def _qualified_name(value: str, what: str, example: str) -> str:
    """A Kubernetes qualified name (k8s.io/apimachinery IsQualifiedName) that EKS also accepts."""
    prefix, slash, name = value.rpartition("/")
    valid = (
        len(name) <= 63
        and _QUALIFIED_NAME_PART.fullmatch(name) is not None
        and (not slash or (len(prefix) <= 253 and _DNS_SUBDOMAIN.fullmatch(prefix) is not None))
    )
    if not valid:
        raise ValueError(f"expected a {what} such as {example} ({_KEY_SYNTAX}), got {quoted(value, 80)}")
    if len(value) > EKS_KEY_LENGTH:
        raise ValueError(
            f"EKS allows a node group {what} of at most {EKS_KEY_LENGTH} characters, prefix included, got "
            f"{len(value)}: {quoted(value, 80)}"
        )
    if slash and any(prefix == domain or prefix.endswith("." + domain) for domain in EKS_RESERVED_DOMAINS):
        raise ValueError(
            f"EKS refuses node group {what}s under {', '.join(d + '/' for d in EKS_RESERVED_DOMAINS)} and their "
            f"subdomains (Kubernetes and EKS set those themselves), got {quoted(value, 80)}"
        )
    return value


def _label_key(value: str) -> str:
    return _qualified_name(value, "label key", "team or example.com/team")


def _taint_key(value: str) -> str:
    return _qualified_name(value, "taint key", "dedicated or example.com/gpu")


def _label_value(value: str, *, empty: bool) -> str:
    if (value == "" and empty) or (len(value) <= 63 and _QUALIFIED_NAME_PART.fullmatch(value) is not None):
        return value
    allowed = (
        f"a taint value that is empty or has at most 63 {_VALUE_SYNTAX}"
        if empty
        else f"a label value of 1 to 63 {_VALUE_SYNTAX} (EKS refuses an empty one)"
    )
    length = f" ({len(value)} characters)" if len(value) > 63 else ""
    raise ValueError(f"expected {allowed}, got {quoted(value, 80)}{length}")


def _node_label_value(value: str) -> str:
    return _label_value(value, empty=False)


def _taint_value(value: str) -> str:
    return _label_value(value, empty=True)


LabelKey = Annotated[str, AfterValidator(_label_key)]
NodeLabelValue = Annotated[str, AfterValidator(_node_label_value)]
TaintKey = Annotated[str, AfterValidator(_taint_key)]
TaintValue = Annotated[str, AfterValidator(_taint_value)]


class Taint(Model):
    """A Kubernetes taint on every node of a node group."""

    key: TaintKey = Field(description="Taint key.")
    value: TaintValue = Field("", description="Taint value.")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(description="Taint effect.")


class NodeGroup(Model):
    """An EKS managed node group."""

    name: DnsLabel = Field(description="Node group name, unique within the cluster.")
    instance_types: Annotated[list[InstanceType], Field(min_length=1)] = Field(
        ["m7i.large"],
        alias="instanceTypes",
        description="EC2 instance types, e.g. m7i.large; each one EC2 offers (see AWS data).",
    )
    capacity_type: Literal["ON_DEMAND", "SPOT"] = Field(
        "ON_DEMAND", alias="capacityType", description="On-demand or Spot capacity."
    )
    min_size: int = Field(2, ge=0, le=1000, alias="minSize", description="Fewest nodes.")
    max_size: int = Field(4, ge=1, le=1000, alias="maxSize", description="Most nodes; at least minSize.")
    desired_size: int = Field(
        2, ge=1, le=1000, alias="desiredSize", description="Nodes at creation; between minSize and maxSize."
    )
    disk_size: int = Field(50, ge=20, le=16384, alias="diskSize", description="Root volume size in GiB.")
    labels: dict[LabelKey, NodeLabelValue] = Field(default_factory=dict, description="Kubernetes node labels.")
    taints: Annotated[list[Taint], Field(max_length=MAX_TAINTS)] = Field(
        default_factory=list, description="Taints on every node of the group."
    )

    @field_validator("taints")
    @classmethod
    def _one_taint_per_key_and_effect(cls, value: list[Taint]) -> list[Taint]:
        """Kubernetes refuses a node whose taints repeat a key and effect (validateNodeTaints)."""
        pairs = [(taint.key, taint.effect) for taint in value]
        repeated = sorted({pair for pair in pairs if pairs.count(pair) > 1})
        if repeated:
            shown = ", ".join(f"{quoted(key, 80)} with {effect}" for key, effect in repeated)
            raise ValueError(f"each key and effect once (Kubernetes refuses repeats), {shown} repeated")
        return value

    @model_validator(mode="after")
    def _sizes_in_order(self) -> NodeGroup:
        if self.min_size > self.max_size:
            raise ValueError(f"minSize ({self.min_size}) must not exceed maxSize ({self.max_size})")
        if not self.min_size <= self.desired_size <= self.max_size:
            raise ValueError(
                f"desiredSize ({self.desired_size}) must lie between minSize ({self.min_size}) "
                f"and maxSize ({self.max_size})"
            )
        return self


def quoted_version(value: Any) -> Any:
    """``value`` unless YAML read an unquoted version as a number, which loses digits (1.30 becomes 1.3)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(
            f'expected a Kubernetes minor version such as "1.33" (quoted), got {value}: YAML reads an unquoted '
            "version as a number (1.30 becomes 1.3), so quote it"
        )
    return value


#: The Kubernetes version of a new cluster whose definition names none: the newest EKS offers (the release
#: calendar in config/data; a test keeps the two equal).
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
        "newer default never upgrades it; a new cluster gets the newest EKS version. An upgrade moves one minor "
        "version at a time.",
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
    bootstrap: Literal["fluxplane", "flux", "flux-operator"] = Field(
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


class Endpoint(Model):
    """Who can reach the EKS API server."""

    public_access: bool = Field(True, alias="publicAccess", description="Reachable from the internet.")
    private_access: bool = Field(True, alias="privateAccess", description="Reachable from inside the VPC.")
    public_access_cidrs: list[IPv4Network] = Field(
        default_factory=lambda: [IPv4Network("0.0.0.0/0")],
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


LogType = Literal["api", "audit", "authenticator", "controllerManager", "scheduler"]


#: The longest workload cluster name: its node role is ``<name>-node``, and IAM role names have at most 64.
MAX_CLUSTER_NAME = 59
#: Tag keys the composition or AWS own (fluxplane.packs.eks): a cluster's ``tags`` may not set them.
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

    node_groups: Annotated[list[NodeGroup], Field(min_length=1)] = Field(
        default_factory=lambda: [NodeGroup(name="default")],
        alias="nodeGroups",
        description="Managed node groups; names unique within the cluster.",
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


class SealingKey(Model):
    """Where workload clusters fetch the fleet's Sealed Secrets key pair from (AWS Secrets Manager)."""

    secret_name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9/_+=.@-]{1,512}$")] = Field(
        "fluxplane/sealing-key",
        alias="secretName",
        description="Secrets Manager secret holding the key pair as JSON properties `tls.crt` and `tls.key`.",
    )
    region: AwsRegion | None = Field(
        None, description="Region of that secret; default the management cluster's region."
    )


class Account(Model):
    """An AWS account workload clusters live in, which the hub's Crossplane reaches by assuming a role there."""

    id: Annotated[str, StringConstraints(pattern=ACCOUNT_ID)] = Field(
        description='The 12-digit account id, quoted ("012345678912"): unquoted, YAML reads a number.'
    )
    role_name: Annotated[str, StringConstraints(pattern=ROLE_NAME)] = Field(
        "fluxplane-crossplane",
        alias="roleName",
        description="The IAM role in that account the hub's AWS providers assume; it trusts the providers' role "
        "(see Accounts).",
    )
    external_id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9+=,.@:/_-]{2,1224}$")] | None = Field(
        None, alias="externalId", description="The external ID the role's trust policy asks for, if any."
    )

    @field_validator("id", mode="before")
    @classmethod
    def _quoted_id(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            raise ValueError(
                f"an account id is a string of 12 digits in quotes; unquoted, YAML reads the number {value} (an id "
                "starting with 0 loses it, or is even read as an octal number)"
            )
        return value


class Teams(Model):
    """Who reviews what: the owners CODEOWNERS (dist/CODEOWNERS) names for the fleet's folders."""

    platform: Annotated[str, StringConstraints(pattern=OWNER)] | None = Field(
        None, description="Owns the platform: the definition, the catalogue, dist/platform/ (e.g. @org/platform)."
    )
    governance: Annotated[str, StringConstraints(pattern=OWNER)] | None = Field(
        None,
        description="Approves onboarding (dist/workloads/) and, alone, privilege: environments/apps/, every "
        "tenant's tenant.yaml and dist/platform/cloud/ (e.g. @org/governance); default the platform team.",
    )


class AwsData(Model):
    """AWS facts newer than fluxplane's data (instance types, regions, Kubernetes versions), accepted as given."""

    instance_types: list[InstanceType] = Field(
        default_factory=list,
        alias="instanceTypes",
        description="EC2 instance types to accept besides fluxplane's list, e.g. a type launched since.",
    )
    regions: dict[AwsRegion, Annotated[list[AvailabilityZone], Field(min_length=2)]] = Field(
        default_factory=dict,
        description="Availability zone names by region, in the order clusters use them: a new region, or your "
        "account's zones where they differ from fluxplane's list for that region (which they replace).",
    )
    kubernetes_versions: list[KubernetesVersion] = Field(
        default_factory=list,
        alias="kubernetesVersions",
        description='EKS Kubernetes minor versions to accept besides fluxplane\'s calendar, e.g. "1.38" (quoted).',
    )

    @field_validator("kubernetes_versions", mode="before")
    @classmethod
    def _quoted_versions(cls, value: Any) -> Any:
        if isinstance(value, list):
            for item in value:
                quoted_version(item)
        return value

    @field_validator("instance_types", "kubernetes_versions")
    @classmethod
    def _no_repeats(cls, value: list[str]) -> list[str]:
        repeated = sorted({item for item in value if value.count(item) > 1})
        if repeated:
            raise ValueError(f"each entry once, {', '.join(json.dumps(item) for item in repeated)} repeated")
        return value

    @field_validator("regions")
    @classmethod
    def _zones_of_their_region(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for region, zones in value.items():
            strangers = [zone for zone in zones if zone[:-1] != region]
            if strangers:
                raise ValueError(
                    f"zones of {region} are named {region} and a letter ({region}a, {region}b, ...), "
                    f"got {', '.join(json.dumps(zone) for zone in strangers)}"
                )
            repeated = sorted({zone for zone in zones if zones.count(zone) > 1})
            if repeated:
                raise ValueError(
                    f"zones of {region}: each zone once, {', '.join(json.dumps(zone) for zone in repeated)} repeated"
                )
        return value


class BaseFile(Model):
    """What every environment shares."""

    repositories: Repositories = Field(description="The fleet's Git repositories: `platform` (required).")
    flux: FluxSettings = Field(default_factory=FluxSettings, description="Defaults for the Flux objects written.")
    management: ManagementCluster = Field(description="The management (hub) cluster.")
    cluster_network: ClusterNetwork = Field(
        default_factory=ClusterNetwork, alias="clusterNetwork", description="VPC address pool for workload clusters."
    )
    cluster_defaults: dict[str, Any] = Field(
        default_factory=dict,
        alias="clusterDefaults",
        description="Values every workload cluster starts from (any cluster field).",
    )
    packs: dict[str, Any] = Field(default_factory=dict, description="Packs enabled on every cluster.")
    sealing_key: SealingKey = Field(
        default_factory=SealingKey,
        alias="sealingKey",
        description="The Sealed Secrets key pair every workload cluster fetches at bootstrap.",
    )
    teams: Teams = Field(default_factory=Teams, description="Code owners of the fleet's folders (dist/CODEOWNERS).")
    accounts: dict[DnsLabel, Account] = Field(
        default_factory=dict,
        description="AWS accounts besides the hub's, by name, that clusters name in `account` (see Accounts).",
    )
    aws_data: AwsData = Field(
        default_factory=AwsData,
        alias="awsData",
        description="AWS facts newer than fluxplane's data: instance types, regions and their zones, Kubernetes "
        "versions (see AWS data).",
    )

    @field_validator("accounts")
    @classmethod
    def _accounts(cls, value: dict[str, Account]) -> dict[str, Account]:
        if HUB_PROVIDER_CONFIG in value:
            raise ValueError(
                f"{HUB_PROVIDER_CONFIG!r} is the hub's own account's provider config; name the account otherwise"
            )
        twice = repeated([account.id for account in value.values()])
        if twice:
            raise ValueError(f"each account once, id {', '.join(map(repr, twice))} named twice")
        return value


class EnvironmentFile(Model):
    """An environment's clusters and its changes to the base; the file name is the environment's name."""

    cluster_defaults: dict[str, Any] = Field(
        default_factory=dict,
        alias="clusterDefaults",
        description="Merged over the base's clusterDefaults for this environment's clusters.",
    )
    packs: dict[str, Any] = Field(
        default_factory=dict, description="Merged over the base's packs for this environment's clusters."
    )
    clusters: list[dict[str, Any]] = Field(
        default_factory=list, description="The environment's workload clusters (see Workload cluster)."
    )


class Environment(Model):
    """One environment after merging: its name, its packs and its workload clusters."""

    name: DnsLabel
    file: str
    packs: dict[str, Any]
    clusters: tuple[WorkloadCluster, ...]


class Fleet(Model):
    """The whole fleet: repositories, the management cluster and every environment."""

    repositories: Repositories
    flux: FluxSettings
    management: ManagementCluster
    cluster_network: ClusterNetwork = Field(default_factory=ClusterNetwork)
    packs: dict[str, Any] = Field(default_factory=dict, description="The base file's packs section.")
    environments: tuple[Environment, ...]
    sealing_key: SealingKey = Field(default_factory=SealingKey)
    teams: Teams = Field(default_factory=Teams)
    accounts: dict[str, Account] = Field(default_factory=dict)
    aws_data: AwsData = Field(default_factory=AwsData)

    @property
    def clusters(self) -> tuple[WorkloadCluster, ...]:
        """Every workload cluster, environment by environment, in definition order."""
        return tuple(cluster for env in self.environments for cluster in env.clusters)


def repeated(values: Sequence[str]) -> list[str]:
    """The values given more than once in ``values``, sorted, each once."""
    counts = Counter(values)
    return sorted(value for value, count in counts.items() if count > 1)


def is_dns_label(value: str) -> bool:
    return len(value) <= 63 and re.fullmatch(DNS_LABEL, value) is not None
