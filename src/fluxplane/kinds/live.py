"""What a change to a cloud kind does to the live resource: the form of each kind's entry, read by the replacement
guard (fluxplane.synth.hazards, fluxplane.synth.guard), diff's risk report and plan through fluxplane.kinds.

Each entry says how a reader names the resource ("RDS instance"), the fields whose change replaces it (AWS
cannot change them in place: Terraform's ForceNew in the provider the Upbound AWS providers are generated
from; the resource is deleted and made anew, or the update is refused), where its AWS name is when the
external name does not hold it, what deleting it destroys, and whether it holds data (a replacement or a
deletion loses what it holds): the RDS, DynamoDB, S3 and SQS stores, an EKS cluster with its workloads, a
VPC with everything in it.

A kind may also have switches: a field that turns a mode of the resource on or off in place, which changes what runs
on it as much as a replacement does (an EKS cluster's Auto Mode: EKS takes over or gives back its nodes). Each says
what switching it on and off does and the synth flag that allows it. An object without the field has the mode
off; one that drops the field leaves the mode as it was in the cloud (fluxplane.synth.hazards.switched).

Besides its own fields, every AWS managed resource is replaced when its region, its external name or its
provider config (the AWS account) changes (``ANY_MANAGED``). The AWS managed resources' entries are
fluxplane.kinds.aws's; each of fluxplane's own composites (``platform.fluxplane.io``) has its entry in its own
module (fluxplane.kinds.app_table, ...): the fields of theirs that feed those of the resources they compose.

Groups are glob patterns: ``rds.aws*`` is the cluster-scoped family (``rds.aws.upbound.io``) and the
namespaced one (``rds.aws.m.upbound.io``).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

FieldPath = tuple[str, ...]

#: The annotation Crossplane keeps a managed resource's cloud name in.
EXTERNAL_NAME: FieldPath = ("metadata", "annotations", "crossplane.io/external-name")
#: The provider config a managed resource's account comes from (``ProviderConfig`` or ``ClusterProviderConfig``).
PROVIDER_CONFIG_REF: FieldPath = ("spec", "providerConfigRef", "name")
#: The provider config of fluxplane's composites, passed on to what they compose.
PROVIDER_CONFIG_NAME: FieldPath = ("spec", "providerConfigName")
REGION: FieldPath = ("spec", "forProvider", "region")
#: API groups of the AWS managed resources: a service's group in either family (``rds.aws.m.upbound.io``).
MANAGED_GROUPS = ("*.aws.upbound.io", "*.aws.m.upbound.io")
#: fluxplane's composites.
COMPOSITE_GROUP = "platform.fluxplane.io"
#: The kinds that say what a composite composes: its XRD, its Compositions and the functions they run.
DEFINITION_KINDS = ("CompositeResourceDefinition", "Composition", "Function")
#: Fields whose change replaces any AWS managed resource: another region or external name is another resource,
#: another provider config another account.
ANY_MANAGED: tuple[FieldPath, ...] = (REGION, EXTERNAL_NAME, PROVIDER_CONFIG_REF)


def given(*names: str) -> tuple[FieldPath, ...]:
    return tuple(("spec", "forProvider", *name.split(".")) for name in names)


def spec(*names: str) -> tuple[FieldPath, ...]:
    return tuple(("spec", *name.split(".")) for name in names)


@dataclass(frozen=True)
class Switch:
    """A field that turns a mode of the live resource on or off in place (module docstring)."""

    path: FieldPath
    #: What the mode is, as a reader names it: "EKS Auto Mode".
    mode: str
    #: What switching it on does, and switching it off.
    on: str
    off: str
    #: The synth flag that allows switching it, either way (fluxplane.synth.guard).
    flag: str


#: EKS Auto Mode, switched as one.
AUTO_MODE_ON = (
    "EKS launches the cluster's nodes from its node pools and runs its block storage and load balancing: its managed "
    "node groups are deleted (their pods move to Auto Mode's nodes) and the add-ons Auto Mode stands in for "
    "(Karpenter, the EBS CSI driver, the AWS Load Balancer Controller) are uninstalled"
)
AUTO_MODE_OFF = (
    "EKS terminates the nodes it launched and deletes the load balancers it made (its EBS volumes stay): managed node "
    "groups are made, and a cluster made in Auto Mode has no VPC CNI, kube-proxy or CoreDNS for their nodes until "
    "they are installed as EKS add-ons"
)
AUTO_MODE_FLAG = "auto-mode"


@dataclass(frozen=True)
class CloudKind:
    """What one kind of cloud object means for the live resource (module docstring)."""

    group: str
    kind: str
    #: How a reader names the resource: "RDS instance".
    noun: str
    #: Fields whose change replaces the resource, besides ANY_MANAGED for a managed resource.
    replaces: tuple[FieldPath, ...] = ()
    #: What deleting it destroys in AWS ("" when that needs no saying).
    deletes: str = ""
    #: It holds data: a replacement or a deletion loses it.
    data: bool = False
    #: The field naming it in AWS, where the external name does not.
    name: FieldPath | None = None
    #: Fields that turn a mode of it on or off in place.
    switches: tuple[Switch, ...] = ()

    def matches(self, group: str, kind: str) -> bool:
        return fnmatch.fnmatchcase(group, self.group) and fnmatch.fnmatchcase(kind, self.kind)


def is_managed(group: str) -> bool:
    """Whether objects of ``group`` are AWS managed resources (a service's group, not the providers' own)."""
    return any(fnmatch.fnmatchcase(group, pattern) for pattern in MANAGED_GROUPS)
