"""Nodes: managed node groups (their sizes, and their node labels and taints in Kubernetes' syntax under EKS's
stricter rules), and what a Karpenter NodePool asks of its nodes (instance categories, families, capacity types,
architectures, disruption durations), which the karpenter pack's NodePool and EKS Auto Mode's share."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from fluxplane.config.merge import quoted
from fluxplane.config.models.fields import DnsLabel, InstanceType, Model

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


# -- what a Karpenter NodePool asks of its nodes -----------------------------------------------------

#: A Karpenter disruption duration: a Go duration of whole s, m and h, or Never.
KARPENTER_DURATION = r"^(([0-9]+(s|m|h))+|Never)$"
#: An EC2 instance family (m7i, c7gn, r8g, u-6tb1, ...).
INSTANCE_FAMILY = r"^[a-z][a-z0-9-]*[0-9][a-z0-9-]*$"
#: An EC2 instance category: the letters before the generation (c, m, r, t, g, inf, trn, ...).
INSTANCE_CATEGORY = r"^[a-z]+$"


def _distinct(items: list[str]) -> list[str]:
    duplicates = sorted({item for item in items if items.count(item) > 1})
    if duplicates:
        raise ValueError(f"expected distinct values, got {', '.join(quoted(item, 80) for item in duplicates)} twice")
    return items


def _pattern(pattern: str, what: str) -> AfterValidator:
    def check(values: list[str]) -> list[str]:
        for value in values:
            if not re.fullmatch(pattern, value) or len(value) > 63:
                raise ValueError(f"expected {what}, got {quoted(value, 80)}")
        return values

    return AfterValidator(check)


Distinct = AfterValidator(_distinct)
InstanceCategories = Annotated[
    list[str], Field(min_length=1), _pattern(INSTANCE_CATEGORY, "instance categories such as c, m or r"), Distinct
]
InstanceFamilies = Annotated[
    list[str], Field(min_length=1), _pattern(INSTANCE_FAMILY, "instance families such as m7i or c7g"), Distinct
]
CapacityTypes = Annotated[list[Literal["on-demand", "spot"]], Field(min_length=1), Distinct]
Architectures = Annotated[list[Literal["amd64", "arm64"]], Field(min_length=1), Distinct]
KarpenterDuration = Annotated[str, Field(pattern=KARPENTER_DURATION)]
