"""Tests for fluxplane.validate.findings: the line format, field paths and value display."""

from __future__ import annotations

from fluxplane.validate.findings import Finding, format_path, short


def test_line_format() -> None:
    # GIVEN a finding WHEN it is printed THEN it reads FILE:DOC KIND/NAME: PATH: MESSAGE
    finding = Finding("platform/a.yaml", 2, "Kustomization", "apps", "spec.dependsOn[0].name", "no such thing")
    assert finding.line() == "platform/a.yaml:2 Kustomization/apps: spec.dependsOn[0].name: no such thing"


def test_findings_sort_by_file_then_document() -> None:
    # GIVEN findings out of order WHEN sorted THEN file, then document index, decide
    later = Finding("b.yaml", 1, "K", "n", "p", "m")
    second = Finding("a.yaml", 10, "K", "n", "p", "m")
    first = Finding("a.yaml", 2, "K", "n", "p", "m")
    assert sorted([later, second, first]) == [first, second, later]


def test_format_path() -> None:
    # GIVEN keys and indexes THEN dots between keys, brackets for indexes and keys that need quoting
    assert format_path(["spec", "dependsOn", 0, "name"]) == "spec.dependsOn[0].name"
    assert format_path(["metadata", "labels", "fluxplane.io/layer"]) == 'metadata.labels["fluxplane.io/layer"]'
    assert format_path([]) == "(root)"


def test_short() -> None:
    # GIVEN values of each type THEN they show as JSON would, long strings cut
    assert short("x") == '"x"'
    assert short(None) == "null"
    assert short(True) == "true"
    assert short({"a": 1}) == "{...}"
    assert short([1]) == "[...]"
    assert short(3) == "3"
    assert short("a" * 100, limit=10) == '"aaaaaa...'
