"""Tests for fluxplane.validate.compose.xr: a composite resource defaulted as the API server defaults it. Which
Composition an XR selects, and its generated schema, are tested with the compose checks
(tests/unit/validate/compose/test_checks.py)."""

from __future__ import annotations

from typing import Any

from fluxplane.validate.compose.xr import apply_defaults, defaulted

#: An XR's schema: a defaulted field, a defaulted object's own default, and defaults inside a list and a map.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer", "default": 1},
                "network": {
                    "type": "object",
                    "default": {},
                    "properties": {"zones": {"type": "integer", "default": 3}},
                },
                "groups": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"min": {"type": "integer", "default": 0}}},
                },
                "tags": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"kept": {"type": "boolean", "default": True}},
                    },
                },
            },
        }
    },
}


def test_defaults_fill_what_is_missing_at_every_depth_and_keep_what_is_set() -> None:
    # GIVEN an XR that sets the size and has one group and one tag
    value: dict[str, Any] = {"spec": {"size": 5, "groups": [{}], "tags": {"team": {}}}}

    # WHEN defaulted in place
    apply_defaults(value, SCHEMA)

    # THEN the size is kept, a defaulted object gets its own defaults, and list items and map values theirs
    assert value == {
        "spec": {
            "size": 5,
            "groups": [{"min": 0}],
            "tags": {"team": {"kept": True}},
            "network": {"zones": 3},
        }
    }


def test_a_defaulted_copy_drops_nulls_and_leaves_the_body_alone() -> None:
    body: dict[str, Any] = {"spec": {"size": None}}
    assert defaulted(body, SCHEMA) == {"spec": {"size": 1, "network": {"zones": 3}}}
    assert body == {"spec": {"size": None}}
