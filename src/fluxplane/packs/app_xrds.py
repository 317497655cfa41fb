"""The XRDs of the app kinds: the typed fields of an app's request, each kind defaulting to its Composition.

The fields every kind shares (region, AWS account, tags) are added here; AppDatabase's are
fluxplane.packs.app_database's. The Compositions are fluxplane.packs.app_composed's.
"""

from __future__ import annotations

from typing import Any

from fluxplane.constructs import app_resources as xr
from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.composite_resource_definition import (
    CompositeResourceDefinitionProps,
    CompositeResourceDefinitionVersion,
    CompositeResourceNames,
    CompositeResourceValidation,
    CompositionReference,
)
from fluxplane.constructs.patch_and_transform import PROVIDER_CONFIG_FIELD
from fluxplane.packs import app_database
from fluxplane.packs.app_composed import composition_name

_COMMON = {
    "region": pt.string_property("AWS region.", pattern=xr.REGION),
    PROVIDER_CONFIG_FIELD: pt.provider_config_property(),
    "tags": {"type": "object", "additionalProperties": {"type": "string"}},
}
_APP = {"app": pt.string_property("The app whose role gets access: its AppIdentity in this namespace.")}

SPECS: dict[str, tuple[dict[str, Any], list[str], dict[str, Any]]] = {
    "AppIdentity": (
        {
            "clusterName": pt.string_property("EKS cluster the app runs on."),
            "serviceAccountNamespace": pt.string_property("Namespace of the app's service account on that cluster."),
            "serviceAccount": pt.string_property("The app's service account."),
        },
        ["region", "clusterName", "serviceAccountNamespace", "serviceAccount"],
        {"roleArn": {"type": "string"}},
    ),
    "AddonIdentity": (
        {
            "clusterName": pt.string_property("EKS cluster the add-on runs on."),
            "serviceAccountNamespace": pt.string_property("Namespace of the add-on's service account on that cluster."),
            "serviceAccount": pt.string_property("The add-on's service account."),
            "managedPolicyArns": {
                "type": "array",
                "description": "AWS managed policies attached to the role.",
                "items": pt.string_property("An AWS managed policy ARN.", pattern=xr.MANAGED_POLICY),
            },
            "inlinePolicies": {
                "type": "array",
                "description": "Inline policies of the role.",
                "items": {
                    "type": "object",
                    "required": ["name", "policy"],
                    "properties": {
                        "name": pt.string_property("Policy name."),
                        "policy": pt.string_property("Policy document (JSON)."),
                    },
                },
            },
        },
        ["region", "clusterName", "serviceAccountNamespace", "serviceAccount"],
        {"roleArn": {"type": "string"}},
    ),
    "AppTable": (
        {
            **_APP,
            "tableName": pt.string_property("DynamoDB table name.", pattern=r"^[A-Za-z0-9_.-]{3,255}$"),
            "hashKey": pt.string_property("Partition key attribute."),
            "rangeKey": pt.string_property("Sort key attribute."),
            "attributes": {
                "type": "array",
                "minItems": 1,
                "maxItems": 2,
                "items": {
                    "type": "object",
                    "required": ["name", "type"],
                    "properties": {"name": {"type": "string"}, "type": {"type": "string", "enum": ["S", "N", "B"]}},
                },
            },
        },
        ["region", "app", "tableName", "hashKey", "attributes"],
        {"arn": {"type": "string"}},
    ),
    "AppQueue": (
        {
            **_APP,
            "queueName": pt.string_property("SQS queue name (with .fifo for a FIFO queue).", maxLength=80),
            "fifo": {"type": "boolean", "default": False},
            "visibilityTimeoutSeconds": {"type": "integer", "minimum": 0, "maximum": 43200, "default": 30},
            "messageRetentionSeconds": {"type": "integer", "minimum": 60, "maximum": 1209600, "default": 345600},
        },
        ["region", "app", "queueName"],
        {"arn": {"type": "string"}, "url": {"type": "string"}},
    ),
    "AppBucket": (
        {
            **_APP,
            "bucketName": pt.string_property(
                "S3 bucket name, unique in all of AWS.", pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"
            ),
            "versioning": pt.string_property("Keep object versions.", enum=["Enabled", "Disabled"], default="Disabled"),
        },
        ["region", "app", "bucketName"],
        {"arn": {"type": "string"}},
    ),
    app_database.KIND: app_database.SPEC,
}


def xrd_props(kind: str) -> CompositeResourceDefinitionProps:
    properties, required, status = SPECS[kind]
    plural = xr.KINDS[kind]
    schema = {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "spec": {"type": "object", "required": required, "properties": {**properties, **_COMMON}},
            "status": {"type": "object", "properties": status},
        },
    }
    return CompositeResourceDefinitionProps(
        name=f"{plural}.{xr.GROUP}",
        group=xr.GROUP,
        names=CompositeResourceNames(kind=kind, plural=plural, categories=("crossplane", "composite", "app")),
        scope="Namespaced",
        default_composition_ref=CompositionReference(name=composition_name(kind)),
        versions=(
            CompositeResourceDefinitionVersion(
                name=xr.VERSION,
                served=True,
                referenceable=True,
                schema_=CompositeResourceValidation(open_api_v3_schema=schema),
            ),
        ),
    )
