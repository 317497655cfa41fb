"""AppTable: a DynamoDB table for one app, and an inline policy on the app's role that grants access to it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Props
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

#: What the app's role may do with its table.
ACTIONS = (
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:DescribeTable",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:UpdateItem",
)


class Attribute(Props):
    """A DynamoDB key attribute: its name and type."""

    name: str = Field(min_length=1, max_length=255)
    """Name of the attribute."""
    type: Literal["S", "N", "B"]
    """Type of the attribute: ``S`` (string), ``N`` (number) or ``B`` (binary)."""


class AppTableProps(AppResourceProps):
    """A DynamoDB table, and an inline policy on the app's role that grants access to it."""

    table_name: str = Field(pattern=r"^[A-Za-z0-9_.-]{3,255}$")
    """Name of the DynamoDB table."""
    hash_key: str = Field(min_length=1, max_length=255)
    """Name of the partition (hash) key attribute."""
    range_key: str | None = Field(None, min_length=1, max_length=255)
    """Name of the sort (range) key attribute. Default: not set (the key is the partition key alone)."""
    attributes: tuple[Attribute, ...] = Field(min_length=1, max_length=2)
    """The key attributes and their types: the partition key's, and the sort key's if any."""


class AppTable(TypedResource[AppTableProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppTable"
    props_class = AppTableProps


SPEC: Spec = (
    {
        **APP_FIELD,
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
)


def composed(access_policy: bool = True) -> list[dict[str, Any]]:
    """The table, and (unless on a workload cluster, whose Crossplane may not touch IAM) the app role's access."""
    return [
        pt.resource(
            "table",
            pt.managed(
                "dynamodb", "Table", {"billingMode": "PAY_PER_REQUEST", "pointInTimeRecovery": {"enabled": True}}
            ),
            [
                pt.use("region"),
                external_name("spec.tableName"),
                pt.patch("spec.hashKey", "spec.forProvider.hashKey", required=True),
                pt.patch("spec.rangeKey", "spec.forProvider.rangeKey"),
                pt.patch("spec.attributes", "spec.forProvider.attribute", required=True),
                pt.use("tags"),
                pt.status("status.atProvider.arn", "status.arn"),
            ],
        ),
        *([access(policy((ACTIONS, ("%s", "%s/index/*"))), 2)] if access_policy else []),
    ]


APP_KIND = AppKind(
    construct=AppTable,
    plural="apptables",
    spec=SPEC,
    services=("dynamodb", "iam"),
    composed=composed,
    spoke_composed=lambda: composed(access_policy=False),
    live=CloudKind(
        COMPOSITE_GROUP,
        "AppTable",
        "app table",
        (*spec("region"), PROVIDER_CONFIG_NAME, *spec("tableName", "hashKey", "rangeKey")),
        deletes="the DynamoDB table and its data",
        data=True,
        name=("spec", "tableName"),
    ),
)
