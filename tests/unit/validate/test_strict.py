"""Tests for fluxplane.validate.strict: a CRD schema read strictly, Flux placeholders let through, and
errors explained."""

from __future__ import annotations

from typing import Any

from fluxplane.validate.findings import Finding
from fluxplane.validate.strict import Validator, convert_schema, document_schema, run_validator, unknown_field
from fluxplane.validate.tree import Document

WIDGET = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}, "mode": {"type": "string"}}}
    },
}
VALIDATOR = Validator(document_schema("example.io", "v1", "Widget", WIDGET))


def _widget(spec: dict[str, Any], metadata: dict[str, Any] | None = None) -> Document:
    body = {
        "apiVersion": "example.io/v1",
        "kind": "Widget",
        "metadata": {"name": "w"} if metadata is None else metadata,
        "spec": spec,
    }
    return Document("f.yaml", 1, body)


def test_convert_schema_strictness() -> None:
    # GIVEN properties inside anyOf THEN they stay open there; elsewhere closed unless preserved
    converted = convert_schema(
        {"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"properties": {"a": {}}}]}
    )
    assert converted["additionalProperties"] is False
    assert "additionalProperties" not in converted["anyOf"][0]
    assert "additionalProperties" not in convert_schema(
        {"type": "object", "properties": {}, "x-kubernetes-preserve-unknown-fields": True}
    )


def test_an_unknown_field_names_the_closest_known_one() -> None:
    # GIVEN a misspelled field WHEN checked THEN a finding at the field, with the name it probably meant
    assert run_validator(VALIDATOR, _widget({"replica": 2})) == [
        Finding("f.yaml", 1, "Widget", "w", "spec.replica", 'unknown field "replica" (did you mean "replicas"?)')
    ]


def test_a_wrong_type_is_explained_a_placeholder_and_a_null_pass() -> None:
    # GIVEN text where an integer belongs, then a Flux placeholder there, each with a null field beside it
    wrong = run_validator(VALIDATOR, _widget({"replicas": "three", "mode": None}))
    placeholder = run_validator(VALIDATOR, _widget({"replicas": "${count}", "mode": None}))
    # THEN the text is a finding; the placeholder is replaced before the API sees it, the null is pruned
    assert [finding.line() for finding in wrong] == [
        'f.yaml:1 Widget/w: spec.replicas: expected integer, got string "three"'
    ]
    assert placeholder == []


def test_an_object_without_a_name_is_a_finding() -> None:
    assert [finding.line() for finding in run_validator(VALIDATOR, _widget({}, {}))] == [
        'f.yaml:1 Widget/-: metadata: missing required field "name"'
    ]


def test_an_unknown_field_lists_the_allowed_ones_when_they_are_few() -> None:
    # GIVEN no close match WHEN up to 12 names are allowed THEN all are listed; with more, none
    assert unknown_field("colour", ["size", "mode"]) == 'unknown field "colour" (allowed: mode, size)'
    assert unknown_field("x", [f"a{index}" for index in range(13)]) == 'unknown field "x"'
