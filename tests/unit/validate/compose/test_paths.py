"""Tests for fluxplane.validate.compose.paths: a patch's field path against the schema it points into, and where a
reference selector points."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.validate.compose.fieldpath import Segments
from fluxplane.validate.compose.paths import check_path, raw_node, selector_target

#: A managed resource's schema: a string, a map, a list of objects, and a field that keeps any value.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "forProvider": {
                    "type": "object",
                    "properties": {
                        "region": {"type": "string"},
                        "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                        "rules": {
                            "type": "array",
                            "items": {"type": "object", "properties": {"port": {"type": "integer"}}},
                        },
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    },
                }
            },
        }
    },
}


@pytest.mark.parametrize(
    "segments",
    [
        ("spec", "forProvider", "region"),
        ("spec", "forProvider", "tags", "any-key"),  # a map admits any key
        ("spec", "forProvider", "rules", 0, "port"),
        ("spec", "forProvider", "free", "a", "b"),  # so does a field that keeps unknown fields
        ("metadata", "labels", "app"),  # metadata is ObjectMeta, whatever the schema says
    ],
)
def test_a_path_the_schema_has_is_fine(segments: Segments) -> None:
    assert check_path(SCHEMA, segments) is None


@pytest.mark.parametrize(
    ("segments", "problem"),
    [
        (
            ("spec", "forProvider", "regoin"),
            'spec.forProvider.regoin: unknown field "regoin" (did you mean "region"?)',
        ),
        (
            ("spec", "forProvider", "rules", "*", "prot"),
            'spec.forProvider.rules["*"].prot: unknown field "prot" (did you mean "port"?)',
        ),
        (("spec", "forProvider", "region", "x"), "spec.forProvider.region: is string, it has no field 'x'"),
        (("spec", "forProvider", "region", 0), "spec.forProvider.region: expected string, not an array"),
        (("metadata", "nam"), 'metadata.nam: unknown field "nam" (did you mean "name"?)'),
    ],
)
def test_a_path_the_schema_cannot_have_is_named_with_what_is_wrong(segments: Segments, problem: str) -> None:
    assert check_path(SCHEMA, segments) == problem


def test_the_raw_node_follows_properties_and_items_only() -> None:
    assert raw_node(SCHEMA, ["spec", "forProvider", "rules", 0, "port"]) == {"type": "integer"}
    assert raw_node(SCHEMA, ["spec", "nope"]) is None


@pytest.mark.parametrize(
    ("group", "field", "node", "target"),
    [
        # the provider's description names the kind and the short group, in the referencing resource's family
        (
            "iam.aws.m.upbound.io",
            "roleSelector",
            {"description": "Selector for a Role in iam to populate role."},
            ("iam.aws.m.upbound.io", "Role"),
        ),
        (
            "iam.aws.m.upbound.io",
            "groupSelector",
            {"description": "Selector for a list of SecurityGroup in ec2 to populate group."},
            ("ec2.aws.m.upbound.io", "SecurityGroup"),
        ),
        # without a description, the selectors fluxplane composes are known
        ("ec2.aws.m.upbound.io", "vpcIdSelector", {}, ("ec2.aws.m.upbound.io", "VPC")),
        ("ec2.aws.m.upbound.io", "otherSelector", {}, None),
    ],
)
def test_a_selector_points_at_the_kind_its_description_or_the_known_table_names(
    group: str, field: str, node: dict[str, Any], target: tuple[str, str] | None
) -> None:
    assert selector_target(group, field, node) == target
