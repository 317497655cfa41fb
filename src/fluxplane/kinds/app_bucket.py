"""AppBucket: an S3 bucket for one app, and an inline policy on the app's role that grants access to it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.base import TypedResource
from fluxplane.kinds.app import (
    APP_FIELD,
    GROUP,
    VERSION,
    AppKind,
    AppResourceProps,
    Spec,
    access,
    external_name,
    policy,
)
from fluxplane.kinds.live import COMPOSITE_GROUP, PROVIDER_CONFIG_NAME, CloudKind, spec

#: What the app's role may do with its bucket, and with the objects in it.
BUCKET_ACTIONS = ("s3:GetBucketLocation", "s3:ListBucket")
OBJECT_ACTIONS = ("s3:DeleteObject", "s3:GetObject", "s3:PutObject")


class AppBucketProps(AppResourceProps):
    """An S3 bucket, and an inline policy on the app's role that grants access to it."""

    bucket_name: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
    """Name of the S3 bucket, unique in all of AWS."""
    versioning: Literal["Enabled", "Disabled"] = "Disabled"
    """Whether S3 keeps every version of an object: ``Enabled`` or ``Disabled``. Default: ``"Disabled"``."""


class AppBucket(TypedResource[AppBucketProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppBucket"
    props_class = AppBucketProps


SPEC: Spec = (
    {
        **APP_FIELD,
        "bucketName": pt.string_property(
            "S3 bucket name, unique in all of AWS.", pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"
        ),
        "versioning": pt.string_property("Keep object versions.", enum=["Enabled", "Disabled"], default="Disabled"),
    },
    ["region", "app", "bucketName"],
    {"arn": {"type": "string"}},
)


def composed(access_policy: bool = True) -> list[dict[str, Any]]:
    """The bucket and its versioning, and (unless on a workload cluster, whose Crossplane may not touch IAM) the app
    role's access."""
    return [
        pt.resource(
            "bucket",
            pt.managed("s3", "Bucket", {}),
            [
                pt.use("region"),
                external_name("spec.bucketName"),
                pt.use("tags"),
                pt.status("status.atProvider.arn", "status.arn"),
            ],
        ),
        pt.resource(
            "versioning",
            pt.managed("s3", "BucketVersioning", {"bucketSelector": pt.selector(), "versioningConfiguration": {}}),
            [pt.use("region"), pt.patch("spec.versioning", "spec.forProvider.versioningConfiguration.status")],
        ),
        *([access(policy((BUCKET_ACTIONS, ("%s",)), (OBJECT_ACTIONS, ("%s/*",))), 2)] if access_policy else []),
    ]


APP_KIND = AppKind(
    construct=AppBucket,
    plural="appbuckets",
    spec=SPEC,
    services=("s3", "iam"),
    composed=composed,
    spoke_composed=lambda: composed(access_policy=False),
    live=CloudKind(
        COMPOSITE_GROUP,
        "AppBucket",
        "app bucket",
        (*spec("region"), PROVIDER_CONFIG_NAME, *spec("bucketName")),
        deletes="the S3 bucket and its objects",
        data=True,
        name=("spec", "bucketName"),
    ),
)
