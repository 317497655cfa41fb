"""The app resource composites (``platform.fluxplane.io/v1alpha1``): what an app may ask of AWS.

The kinds are fluxplane's own, defined by the XRDs the ``app-compositions`` pack writes
(fluxplane.packs.app_compositions). Each lives in the hub namespace of the workload cluster the app
runs on, next to that cluster's ``EKSCluster``:

- ``AppIdentity``: the app's IAM role, assumable through EKS Pod Identity by exactly one service
  account of one namespace of one cluster, and the Pod Identity association that binds them;
- ``AppTable``, ``AppQueue``, ``AppBucket``: a DynamoDB table, an SQS queue, an S3 bucket, each with an
  inline policy on the app's role that grants access to exactly that resource.

These props mirror the XRDs' schemas, so an object that passes them passes the API server too.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import DNS_LABEL, Label, Name, Props

GROUP = "platform.fluxplane.io"
VERSION = "v1alpha1"
REGION = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$"

#: kind -> plural, for the XRDs.
KINDS = {
    "AppIdentity": "appidentities",
    "AppTable": "apptables",
    "AppQueue": "appqueues",
    "AppBucket": "appbuckets",
    "AddonIdentity": "addonidentities",
}
#: Suffix of the hub service accounts that apply an app's own requests (``<app>-cloud``).
REQUEST_ACCOUNT_SUFFIX = "-cloud"
#: The kinds an app may request from its own repository (its identity is the platform's), kind -> plural.
REQUESTABLE = {kind: plural for kind, plural in KINDS.items() if kind not in ("AppIdentity", "AddonIdentity")}
#: An AWS managed policy (the only ARNs an add-on's role may attach).
MANAGED_POLICY = r"^arn:aws[a-z-]*:iam::aws:policy/[A-Za-z0-9+=,.@_/-]+$"


class _Composite(Props):
    name: Name = Field(pattern=DNS_LABEL)
    namespace: Label
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    region: str = Field(pattern=REGION)
    tags: dict[str, str] = Field(default_factory=dict)


class AppIdentityProps(_Composite):
    cluster_name: str = Field(min_length=1, max_length=100)
    service_account_namespace: Label
    service_account: Label


class InlinePolicy(Props):
    name: str = Field(pattern=r"^[A-Za-z0-9+=,.@_-]{1,128}$")
    #: The policy document, JSON.
    policy: str = Field(min_length=2, max_length=10240)


class AddonIdentityProps(AppIdentityProps):
    """An add-on's role: AWS managed policies and inline policies, for one service account."""

    managed_policy_arns: tuple[Annotated[str, Field(pattern=MANAGED_POLICY)], ...] = ()
    inline_policies: tuple[InlinePolicy, ...] = ()


class _AppResource(_Composite):
    #: The app whose role gets access (its AppIdentity's name, in the same namespace).
    app: Label


class Attribute(Props):
    name: str = Field(min_length=1, max_length=255)
    type: Literal["S", "N", "B"]


class AppTableProps(_AppResource):
    table_name: str = Field(pattern=r"^[A-Za-z0-9_.-]{3,255}$")
    hash_key: str = Field(min_length=1, max_length=255)
    range_key: str | None = Field(None, min_length=1, max_length=255)
    attributes: tuple[Attribute, ...] = Field(min_length=1, max_length=2)


class AppQueueProps(_AppResource):
    queue_name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,75}(\.fifo)?$", max_length=80)
    fifo: bool = False
    visibility_timeout_seconds: int = Field(30, ge=0, le=43200)
    message_retention_seconds: int = Field(345600, ge=60, le=1209600)


class AppBucketProps(_AppResource):
    bucket_name: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
    versioning: Literal["Enabled", "Disabled"] = "Disabled"


class AppIdentity(TypedResource[AppIdentityProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppIdentity"
    props_class = AppIdentityProps


class AppTable(TypedResource[AppTableProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppTable"
    props_class = AppTableProps


class AppQueue(TypedResource[AppQueueProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppQueue"
    props_class = AppQueueProps


class AppBucket(TypedResource[AppBucketProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppBucket"
    props_class = AppBucketProps


class AddonIdentity(TypedResource[AddonIdentityProps]):
    """The IAM role of one service account of an add-on (a pack) on one cluster, through EKS Pod Identity."""

    api_version = f"{GROUP}/{VERSION}"
    kind = "AddonIdentity"
    props_class = AddonIdentityProps
