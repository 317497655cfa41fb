"""fluxplane's own kinds (``platform.fluxplane.io``), each declared once, in one module: its construct and props, its
XRD's fields, what its Composition composes, the AWS provider family members it needs, and what a change to it
does to the live resources: the fields that replace them, what deleting it destroys, whether it holds data.

- EKSCluster (fluxplane.kinds.eks_cluster): a workload cluster, its network and node groups;
- AppIdentity and AddonIdentity (fluxplane.kinds.app_identity): an app's or an add-on's IAM role through EKS Pod
  Identity;
- AppTable, AppQueue, AppBucket, AppDatabase (fluxplane.kinds.app_table, ...): what an app may ask of AWS.

The same facts for the AWS managed resources those compose are fluxplane.kinds.aws's. fluxplane.kinds.registry
gathers both, and this package exports it to their readers: the charts and packs that write the kinds, and synth's
replacement guard, ``diff`` and ``plan``, which judge a change of one (``cloud_kind``, ``replacing_fields``,
``noun``, ``switches``).
"""

from __future__ import annotations

from fluxplane.kinds.app import AppKind
from fluxplane.kinds.live import (
    ANY_MANAGED,
    AUTO_MODE_FLAG,
    COMPOSITE_GROUP,
    DEFINITION_KINDS,
    EXTERNAL_NAME,
    MANAGED_GROUPS,
    PROVIDER_CONFIG_NAME,
    PROVIDER_CONFIG_REF,
    REGION,
    CloudKind,
    FieldPath,
    Switch,
    is_managed,
)
from fluxplane.kinds.registry import (
    APP_KINDS,
    KINDS,
    PLURALS,
    REQUESTABLE,
    cloud_kind,
    noun,
    replacing_fields,
    switches,
)

__all__ = [
    "ANY_MANAGED",
    "APP_KINDS",
    "AUTO_MODE_FLAG",
    "COMPOSITE_GROUP",
    "DEFINITION_KINDS",
    "EXTERNAL_NAME",
    "KINDS",
    "MANAGED_GROUPS",
    "PLURALS",
    "PROVIDER_CONFIG_NAME",
    "PROVIDER_CONFIG_REF",
    "REGION",
    "REQUESTABLE",
    "AppKind",
    "CloudKind",
    "FieldPath",
    "Switch",
    "cloud_kind",
    "is_managed",
    "noun",
    "replacing_fields",
    "switches",
]
