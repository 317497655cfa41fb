"""Tests for fluxplane.validate.compose.fastcheck: the yes/no pre-check of the strict schemas, which may only ever
say "valid" when jsonschema would."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.validate.compose.fastcheck import compile_schema
from fluxplane.validate.schemas import Validator, document_schema

PRECHECK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["spec"],
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
                "port": {"x-kubernetes-int-or-string": True},
                "flag": {"type": "boolean", "nullable": True},
                "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                "items": {
                    "type": "array",
                    "maxItems": 2,
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["key"],
                    "items": {"type": "object", "properties": {"key": {"type": "string"}}},
                },
                "choice": {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        }
    },
}


@pytest.mark.parametrize(
    "spec",
    [
        {"size": 3, "mode": "fast", "name": "abc", "port": 80, "flag": None, "tags": {"a": "b"}},
        {"size": 3.0},
        {"size": 0},
        {"size": True},
        {"size": "${observed}"},
        {"mode": "medium"},
        {"mode": "${observed}"},
        {"name": "ABC"},
        {"name": "abcdef"},
        {"port": "http"},
        {"port": 1.5},
        {"flag": "yes"},
        {"tags": {"a": 1}},
        {"items": [{"key": "a"}, {"key": "b"}]},
        {"items": [{"key": "a"}, {"key": "a"}]},
        {"items": [{"key": "a"}, {"key": "b"}, {"key": "c"}]},
        {"choice": {"a": 1}},
        {"choice": {"a": 1, "b": 2}},
        {"free": {"anything": {"at": ["all"]}}},
        {"sise": 3},
    ],
)
def test_fast_precheck_agrees_with_jsonschema(spec: dict[str, Any]) -> None:
    # GIVEN the strict schema schemas.py builds WHEN a document is pre-checked THEN valid exactly when jsonschema
    # finds no error (so skipping jsonschema on "valid" loses nothing)
    schema = document_schema("example.org", "v1", "Thing", PRECHECK_SCHEMA)
    body = {"apiVersion": "example.org/v1", "kind": "Thing", "metadata": {"name": "a"}, "spec": spec}
    check = compile_schema(schema)
    assert check is not None
    assert check(body) == (not list(Validator(schema).iter_errors(body)))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}},
        {"type": "object", "properties": {"a": {"type": "string", "contentEncoding": "base64"}}},
    ],
)
def test_a_schema_with_a_keyword_the_pre_check_does_not_know_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert compile_schema(schema) is None
