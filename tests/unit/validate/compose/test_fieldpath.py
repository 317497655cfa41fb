"""Tests for fluxplane.validate.compose.fieldpath: crossplane-runtime's field paths, reads, writes and merges, against
upstream behaviour.

Expected values are upstream's: the test tables of crossplane-contrib/function-patch-and-transform
(``transforms_test.go``, ``patches_test.go``) and crossplane-runtime (``fieldpath/*_test.go``) where
they have the case, else what the Go code does (cited in each test).
"""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.validate.compose import Unknown
from fluxplane.validate.compose.fieldpath import (
    FieldPathError,
    NotFound,
    get,
    merge_value,
    parse,
    set_value,
)


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        ("spec.forProvider.region", ("spec", "forProvider", "region")),
        ("spec.forProvider.tags[kubernetes.io/role]", ("spec", "forProvider", "tags", "kubernetes.io/role")),
        ('metadata.labels["a.b/c"]', ("metadata", "labels", "a.b/c")),
        ("metadata.annotations['x.y']", ("metadata", "annotations", "x.y")),
        ("spec.zones[0].name", ("spec", "zones", 0, "name")),
        ("spec.zones[01]", ("spec", "zones", 1)),
        ("spec.rules[*].groups", ("spec", "rules", "*", "groups")),
        ("a[0]b", ("a", 0, "b")),
        ("", ()),
    ],
)
def test_field_path_parse(path: str, segments: tuple[Any, ...]) -> None:
    # GIVEN a path WHEN parsed THEN bracketed integers are indexes, other brackets fields, quotes trimmed
    assert parse(path) == segments


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (".a", r"unexpected '\.' at position 0"),
        ("a.", r"unexpected '\.' at position 1"),
        ("a..b", r"unexpected '\.' at position 2"),
        ("a.[0]", r"unexpected '\[' at position 2"),
        ("a[0", r"unterminated '\[' at position 1"),
        ("a]", r"unexpected '\]' at position 1"),
        ("a[]", r"unexpected '\]' at position 2"),
    ],
)
def test_field_path_parse_errors(path: str, message: str) -> None:
    # GIVEN a malformed path WHEN parsed THEN the lexer's error and position, as upstream reports them
    with pytest.raises(FieldPathError, match=message):
        parse(path)


def test_get_not_found_versus_type_errors() -> None:
    # GIVEN an object WHEN reading THEN absent fields and elements are "not found" (a patch is skipped)
    data = {"a": {"b": [1]}, "n": None, "s": "x"}
    assert get(data, parse("a.b[0]")) == 1
    with pytest.raises(NotFound, match=r"a\.c: no such field"):
        get(data, parse("a.c"))
    with pytest.raises(NotFound, match=r"a\.b\[3\]: no such element"):
        get(data, parse("a.b[3]"))
    with pytest.raises(NotFound, match="n: expected map, got nil"):
        get(data, parse("n.x"))
    # THEN reading through the wrong type is an error (the function's result is fatal)
    with pytest.raises(FieldPathError, match="a: not an array") as index_error:
        get(data, parse("a[0]"))
    assert not isinstance(index_error.value, NotFound)
    with pytest.raises(FieldPathError, match="s: not an object"):
        get(data, parse("s.x"))


def test_get_through_unknown_is_unknown() -> None:
    # GIVEN a value only the cluster knows WHEN reading below it THEN it is still unknown
    assert isinstance(get({"status": Unknown("x")}, parse("status.a.b")), Unknown)


def test_set_creates_objects_and_pads_arrays() -> None:
    # GIVEN an empty object WHEN a path through missing maps and an index is set THEN they are created
    data: dict[str, Any] = {}
    set_value(data, parse("a.b[2].c"), 1)
    assert data == {"a": {"b": [None, None, {"c": 1}]}}
    # THEN values round-trip through JSON: a whole float is an int64
    set_value(data, parse("f"), 2.0)
    assert data["f"] == 2 and isinstance(data["f"], int)


def test_set_refuses_large_indexes_and_type_clashes() -> None:
    # GIVEN paths upstream refuses WHEN set THEN errors
    with pytest.raises(FieldPathError, match="index 1025 is greater than max allowed index 1024"):
        set_value({}, parse("a[1025]"), 1)
    with pytest.raises(FieldPathError, match="s is not an object"):
        set_value({"s": "x"}, parse("s.t"), 1)
    with pytest.raises(FieldPathError, match="n is not an object"):
        set_value({"n": None}, parse("n.t"), 1)


# crossplane-runtime pkg/fieldpath/merge_test.go TestMergeValue, path "a"
SOURCE, SOURCE_2, DESTINATION = "e1-from-source", "e1-from-source-2", "e1-from-destination"


@pytest.mark.parametrize(
    ("target", "value", "options", "want"),
    [
        pytest.param({"a": DESTINATION}, [SOURCE], None, {"a": [SOURCE]}, id="MergeArrayNoMergeOptions"),
        pytest.param({"a": [DESTINATION]}, [SOURCE], (False, False), {"a": [SOURCE]}, id="MergeArrayNoAppend"),
        pytest.param(
            {"a": [DESTINATION]}, [SOURCE], (False, True), {"a": [DESTINATION, SOURCE]}, id="MergeArrayAppend"
        ),
        pytest.param(
            {"a": [DESTINATION, SOURCE]},
            [SOURCE, SOURCE_2],
            (False, True),
            {"a": [DESTINATION, SOURCE, SOURCE_2]},
            id="MergeArrayAppendDuplicate",
        ),
        pytest.param({"a": {"a": DESTINATION}}, {"a": SOURCE}, None, {"a": {"a": SOURCE}}, id="MergeMapNoMergeOptions"),
        pytest.param(
            {"a": {"a": DESTINATION}}, {"a": SOURCE}, (False, False), {"a": {"a": SOURCE}}, id="MergeMapNoKeep"
        ),
        pytest.param(
            {"a": {"a": DESTINATION}}, {"a": SOURCE}, (True, False), {"a": {"a": DESTINATION}}, id="MergeMapKeep"
        ),
    ],
)
def test_merge_value_upstream_cases(
    target: dict[str, Any], value: Any, options: tuple[bool, bool] | None, want: dict[str, Any]
) -> None:
    # GIVEN upstream's MergeValue cases WHEN merged at "a" THEN upstream's results
    merge_value(target, parse("a"), value, options)
    assert target == want
