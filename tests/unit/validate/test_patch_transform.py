"""Tests for the patch-and-transform engine of fluxplane.validate.compose, against upstream behaviour.

Expected values are upstream's: the test tables of crossplane-contrib/function-patch-and-transform
(``transforms_test.go``, ``patches_test.go``) and crossplane-runtime (``fieldpath/*_test.go``) where
they have the case, else what the Go code does (cited in each test).
"""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.validate.compose import FunctionPipeline, Unknown, read_resources, render
from fluxplane.validate.compose.fieldpath import (
    FieldPathError,
    NotFound,
    expand_wildcards,
    get,
    merge_value,
    parse,
    set_value,
)
from fluxplane.validate.compose.gofmt import sprintf
from fluxplane.validate.compose.transforms import TransformError, combine, resolve, resolve_all

INPUT = ("spec", "pipeline", 0, "input")


def xr(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.org/v1",
        "kind": "XThing",
        "metadata": {"name": "demo", "namespace": "team", "labels": {"crossplane.io/composite": "demo"}},
        "spec": {"crossplane": {"compositionRef": {"name": "things"}}, **spec},
    }


def bucket(*patches: dict[str, Any], name: str = "bucket", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "base": {"apiVersion": "s3.example.org/v1", "kind": "Bucket", "spec": {"forProvider": {}}},
        "patches": list(patches),
        **extra,
    }


def run(resources: list[dict[str, Any]], composite: dict[str, Any], **extra: Any) -> Any:
    """Render one P&T step; the input must be valid."""
    data = {"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": resources, **extra}
    parsed = read_resources(data, INPUT)
    assert parsed.problems == []
    return render(FunctionPipeline([parsed, None]), composite)


def provider(result: Any, name: str = "bucket") -> Any:
    return result.composed[name].body["spec"]["forProvider"]


# -- field paths (crossplane-runtime pkg/fieldpath) ---------------------------------------------------


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


@pytest.mark.parametrize(
    ("policy", "want"),
    [
        # mergo without override still fills empty targets ("", 0, false, [], {}) and keeps a non-empty array
        (
            "MergeObjects",
            {"keep": "old", "empty": "filled", "zero": 5, "list": [1], "deep": {"x": 1, "y": 2}, "new": 1},
        ),
        (
            "ForceMergeObjects",
            {"keep": "new", "empty": "filled", "zero": 5, "list": [2], "deep": {"x": 9, "y": 2}, "new": 1},
        ),
        (
            "MergeObjectsAppendArrays",
            {"keep": "old", "empty": "filled", "zero": 5, "list": [1, 2], "deep": {"x": 1, "y": 2}, "new": 1},
        ),
        (
            "ForceMergeObjectsAppendArrays",
            {"keep": "new", "empty": "filled", "zero": 5, "list": [1, 2], "deep": {"x": 9, "y": 2}, "new": 1},
        ),
        ("Replace", {"keep": "new", "empty": "filled", "zero": 5, "list": [2], "deep": {"x": 9, "y": 2}, "new": 1}),
    ],
)
def test_to_field_path_policies(policy: str, want: dict[str, Any]) -> None:
    # GIVEN a base object and an XR object WHEN patched with each toFieldPath policy THEN mergo's semantics
    base = {"keep": "old", "empty": "", "zero": 0, "list": [1], "deep": {"x": 1}}
    source = {"keep": "new", "empty": "filled", "zero": 5, "list": [2], "deep": {"x": 9, "y": 2}, "new": 1}
    template = bucket(
        {
            "fromFieldPath": "spec.settings",
            "toFieldPath": "spec.forProvider.settings",
            "policy": {"toFieldPath": policy},
        }
    )
    template["base"]["spec"]["forProvider"]["settings"] = base
    result = run([template], xr(settings=source))
    assert provider(result)["settings"] == want


def test_deprecated_policies_are_aliases() -> None:
    # GIVEN MergeObject and AppendArray WHEN patched THEN as MergeObjects and ForceMergeObjectsAppendArrays
    for policy, want in (("MergeObject", {"a": "old", "l": [1]}), ("AppendArray", {"a": "new", "l": [1, 2]})):
        template = bucket(
            {"fromFieldPath": "spec.v", "toFieldPath": "spec.forProvider.v", "policy": {"toFieldPath": policy}}
        )
        template["base"]["spec"]["forProvider"]["v"] = {"a": "old", "l": [1]}
        assert provider(run([template], xr(v={"a": "new", "l": [2]})))["v"] == want


def test_wildcard_to_field_path_with_merge_policy() -> None:
    # GIVEN upstream's ValidToFieldPathWithWildcardsAndMergePolicy WHEN patched THEN each element gets the items once
    template = bucket(
        {
            "fromFieldPath": "spec.parameters.allowedGroups",
            "toFieldPath": "spec.forProvider.accessRules[*].allowedGroups",
            "policy": {"toFieldPath": "ForceMergeObjectsAppendArrays"},
        }
    )
    template["base"]["spec"]["forProvider"]["accessRules"] = [
        {"action": "Allow", "destination": "e1", "allowedGroups": [12345678]},
        {"action": "Allow", "destination": "e2", "allowedGroups": [12345678]},
    ]
    result = run([template], xr(parameters={"allowedGroups": [12345678, 7891234]}))
    assert [rule["allowedGroups"] for rule in provider(result)["accessRules"]] == [
        [12345678, 7891234],
        [12345678, 7891234],
    ]
    assert expand_wildcards({"a": [1, 2]}, parse("a[*]")) == [("a", 0), ("a", 1)]


def test_wildcard_without_elements_is_fatal() -> None:
    # GIVEN a [*] toFieldPath with nothing to expand WHEN rendered THEN "cannot expand ToFieldPath" is fatal
    template = bucket({"fromFieldPath": "spec.v", "toFieldPath": "spec.forProvider.rules[*].v"})
    result = run([template], xr(v=1))
    assert result.failure is not None
    assert result.failure.message == (
        'cannot render composed resource "bucket" "FromCompositeFieldPath" patch at index 0: '
        "cannot expand ToFieldPath spec.forProvider.rules[*].v"
    )


# -- Go's fmt ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "args", "want"),
    [
        ("verycool%s", ["thing"], "verycoolthing"),  # transforms_test.go FmtString
        ("the largest %d", [8], "the largest 8"),  # transforms_test.go FmtInt
        ("%s", [3], "%!s(int64=3)"),
        ("%d", ["x"], "%!d(string=x)"),
        ("%s-%s", ["a"], "a-%!s(MISSING)"),
        ("static", ["a"], "static%!(EXTRA string=a)"),
        ("%[2]s-%[1]s", ["a", "b"], "b-a"),
        ("%v", [{"b": 1, "a": [1, "x", None]}], "map[a:[1 x <nil>] b:1]"),
        ("%s", [["a", 1]], "[a %!s(int64=1)]"),
        ("%v|%v|%v", [1.5, 1e6, 1e-5], "1.5|1e+06|1e-05"),
        ("%.2f|%05d|%-4s|%x|%q|%t", [3.14159, -42, "ab", 255, "a", True], '3.14|-0042|ab  |ff|"a"|true'),
        ("%s", [None], "%!s(<nil>)"),
        ("100%%", [], "100%"),
    ],
)
def test_go_sprintf(fmt: str, args: list[Any], want: str) -> None:
    # GIVEN a format and decoded JSON values WHEN formatted THEN as Go's fmt.Sprintf prints them
    assert sprintf(fmt, args) == want


# -- transforms (transforms_test.go) ---------------------------------------------------------------


def test_map_transform() -> None:
    # GIVEN a map WHEN resolved THEN the value of the key; numbers are float64 as encoding/json decodes them
    assert resolve({"type": "map", "map": {"EU": "eu-north-1", "US": "us-east-2"}}, "EU") == "eu-north-1"
    assert resolve({"type": "map", "map": {"n": 2}}, "n") == 2.0
    with pytest.raises(TransformError, match="map transform could not resolve: key nope is not found in map"):
        resolve({"type": "map", "map": {"a": "b"}}, "nope")
    with pytest.raises(TransformError, match="type int64 is not supported for map transform"):
        resolve({"type": "map", "map": {"1": "b"}}, 1)


@pytest.mark.parametrize(
    ("config", "value", "want"),
    [
        ({"patterns": [{"type": "literal", "literal": "foo", "result": "bar"}]}, "foo", "bar"),  # MatchLiteral
        (
            {
                "patterns": [
                    {"type": "literal", "literal": "foo", "result": "bar"},
                    {"type": "literal", "literal": "foo", "result": "not this"},
                ]
            },
            "foo",
            "bar",
        ),  # MatchLiteralFirst
        (
            {"patterns": [{"type": "literal", "literal": "foo", "result": 5}]},
            "foo",
            5.0,
        ),  # MatchLiteralWithResultNumber
        ({"patterns": [{"type": "regexp", "regexp": "^foo.*$", "result": "Hello World"}]}, "foobar", "Hello World"),
        ({"fallbackValue": "bar"}, "foo", "bar"),  # NoPatternsFallback
        ({"fallbackTo": "Input"}, "foo", "foo"),  # NoPatternsFallbackToInput
        ({"fallbackValue": None, "fallbackTo": "Input"}, "foo", "foo"),  # NoPatternsFallbackNilToInput
        ({"patterns": [{"type": "literal", "literal": "x", "result": 1}]}, "foo", None),  # no fallback: null
    ],
)
def test_match_transform(config: dict[str, Any], value: Any, want: Any) -> None:
    # GIVEN upstream's TestMatchResolve cases WHEN resolved THEN upstream's results
    assert resolve({"type": "match", "match": config}, value) == want


@pytest.mark.parametrize(
    ("config", "value", "message"),
    [
        (
            {"patterns": [{"type": "literal", "literal": "5", "result": 1}]},
            5,
            "cannot match pattern at index 0: unsupported input type 'int64'",
        ),
        ({"fallbackValue": "foo", "fallbackTo": "Input"}, "foo", "cannot set both a fallback value"),
        # validate.go accepts a pattern without type (as literal), Matches does not
        ({"patterns": [{"literal": "foo", "result": 1}]}, "foo", "unsupported pattern type ''"),
        ({"patterns": [{"type": "regexp", "regexp": "^f", "result": 1}]}, None, "unsupported input type 'null'"),
    ],
)
def test_match_transform_errors(config: dict[str, Any], value: Any, message: str) -> None:
    # GIVEN a match transform upstream fails WHEN resolved THEN the error
    with pytest.raises(TransformError, match=message):
        resolve({"type": "match", "match": config}, value)


@pytest.mark.parametrize(
    ("config", "value", "want"),
    [
        ({"type": "Multiply", "multiply": 2}, 3, 6),
        ({"type": "Multiply", "multiply": 2}, 1.5, 3.0),
        ({"type": "ClampMin", "clampMin": 10}, 5, 10),
        ({"type": "ClampMin", "clampMin": 10}, 15, 15),
        ({"type": "ClampMax", "clampMax": 10}, 15, 10),
        # the input is compared truncated to an integer and returned unchanged
        ({"type": "ClampMin", "clampMin": 2}, 2.5, 2.5),
        ({"type": "ClampMin", "clampMin": 2}, 1.9, 2),
    ],
)
def test_math_transform(config: dict[str, Any], value: Any, want: Any) -> None:
    # GIVEN math transforms WHEN resolved THEN Multiply keeps integers integral, clamps return the clamp
    out = resolve({"type": "math", "math": config}, value)
    assert out == want and type(out) is type(want)


def test_math_transform_needs_a_number() -> None:
    with pytest.raises(TransformError, match="input is required to be a number for math transformer, got string"):
        resolve({"type": "math", "math": {"type": "Multiply", "multiply": 2}}, "3")
    with pytest.raises(TransformError, match="math transform type is required"):
        resolve({"type": "math", "math": {"multiply": 2}}, 3)


@pytest.mark.parametrize(
    ("config", "value", "want"),
    [
        ({"type": "Convert", "convert": "ToUpper"}, "crossplane", "CROSSPLANE"),
        ({"type": "Convert", "convert": "ToLower"}, "CrossPlane", "crossplane"),
        ({"type": "Convert", "convert": "ToBase64"}, "CrossPlane", "Q3Jvc3NQbGFuZQ=="),
        ({"type": "Convert", "convert": "FromBase64"}, "Q3Jvc3NQbGFuZQ==", "CrossPlane"),
        ({"type": "Convert", "convert": "ToSha1"}, "Crossplane", "3b683dc8ff44122b331a5e4f253dd69d90726d75"),
        (
            {"type": "Convert", "convert": "ToSha256"},
            "Crossplane",
            "19c8a7c24ed0067f606815b59e5b82d92935ff69deed04171457a55018e31224",
        ),
        (
            {"type": "Convert", "convert": "ToSha512"},
            1234,
            "d404559f602eab6fd602ac7680dacbfaadd13630335e951f097af3900e9de176"
            "b6db28512f2e000b9d04fba5133e8b1c6e8df59db3a8ab9d60be4b97cc9e81db",
        ),
        ({"type": "Convert", "convert": "ToAdler32"}, "Crossplane", "373097499"),
        ({"type": "Convert", "convert": "ToJson"}, {"foo": "bar"}, '{"foo":"bar"}'),
        ({"type": "TrimPrefix", "trim": "https://"}, "https://crossplane.io", "crossplane.io"),
        ({"type": "TrimSuffix", "trim": "-test"}, "my-string-test", "my-string"),
        ({"type": "TrimPrefix", "trim": "https://"}, "crossplane.io", "crossplane.io"),
        ({"type": "Regexp", "regexp": {"match": "my-([0-9]+)-string", "group": 1}}, "my-1-string", "1"),
        ({"type": "Regexp", "regexp": {"match": "[0-9]"}}, "my-1-string", "1"),
        ({"type": "Join", "join": {"separator": ","}}, ["cross", "plane"], "cross,plane"),
        ({"type": "Join", "join": {"separator": ""}}, ["cross", "plane"], "crossplane"),
        ({"type": "Join", "join": {"separator": "-"}}, ["cross", "plane", 42], "cross-plane-42"),
        # upstream removes one byte after the last element, not the whole separator
        ({"type": "Join", "join": {"separator": ", "}}, ["a", "b"], "a, b,"),
        ({"type": "Replace", "replace": {"search": "Cr", "replace": "B"}}, "Crossplane", "Bossplane"),
        ({"type": "Replace", "replace": {"search": "ss", "replace": ""}}, "Crossplane", "Croplane"),
        ({"type": "Format", "fmt": "%s-x"}, 5, "%!s(int64=5)-x"),
    ],
)
def test_string_transform(config: dict[str, Any], value: Any, want: str) -> None:
    # GIVEN upstream's TestStringResolve cases WHEN resolved THEN upstream's results
    assert resolve({"type": "string", "string": config}, value) == want


def test_string_transform_errors() -> None:
    with pytest.raises(TransformError, match='regexp "my-\\(\\[0-9\\]\\+\\)-string" had no matches for group 2'):
        resolve(
            {"type": "string", "string": {"type": "Regexp", "regexp": {"match": "my-([0-9]+)-string", "group": 2}}},
            "my-1-string",
        )
    with pytest.raises(TransformError, match="could not parse input array"):
        resolve({"type": "string", "string": {"type": "Join", "join": {"separator": ","}}}, "x")
    with pytest.raises(TransformError, match="string is not valid base64"):
        resolve({"type": "string", "string": {"type": "Convert", "convert": "FromBase64"}}, "ThisStringIsNotBase64")


@pytest.mark.parametrize(
    ("config", "value", "want"),
    [
        ({"toType": "bool"}, "true", True),  # StringToBool
        ({"toType": "float64"}, "1000", 1000.0),  # StringToFloat64
        ({"toType": "float64", "format": "quantity"}, "1000m", 1.0),  # StringToQuantityFloat64
        ({"toType": "float64", "format": "quantity"}, "1Gi", 1073741824.0),
        ({"toType": "bool"}, True, True),  # SameTypeNoOp
        ({"toType": "int"}, 1, 1),  # IntAliasToInt64
        ({"toType": "object", "format": "json"}, '{"foo":"bar"}', {"foo": "bar"}),  # StringToObject
        ({"toType": "array", "format": "json"}, '["foo", "bar", "baz"]', ["foo", "bar", "baz"]),  # StringToList
        ({"toType": "int64"}, 1.1, 1),  # ConversionPairSupportedFloat64Int64
        ({"toType": "int64"}, "-12", -12),
        ({"toType": "string"}, 1.5, "1.5"),
        ({"toType": "string"}, False, "false"),
        ({"toType": "bool"}, 1, True),
    ],
)
def test_convert_transform(config: dict[str, Any], value: Any, want: Any) -> None:
    # GIVEN upstream's TestConvertResolve cases WHEN resolved THEN upstream's results
    out = resolve({"type": "convert", "convert": config}, value)
    assert out == want and type(out) is type(want)


@pytest.mark.parametrize(
    ("config", "value", "message"),
    [
        ({"toType": "float64", "format": "quantity"}, "1000 blabla", "quantities must match the regular expression"),
        ({"toType": "string"}, [64], r"invalid input type \[\]interface \{\}"),  # InputTypeNotSupported
        (
            {"toType": "string", "format": "quantity"},
            100,
            "conversion from int64 to string is not supported with format quantity",
        ),
        ({"toType": "[]int"}, "[64]", 'toType: Invalid value: "\\[\\]int": invalid type'),  # ConversionPairNotSupported
        ({"toType": "int64"}, "1.5", 'strconv.ParseInt: parsing "1.5": invalid syntax'),
    ],
)
def test_convert_transform_errors(config: dict[str, Any], value: Any, message: str) -> None:
    with pytest.raises(TransformError, match=message):
        resolve({"type": "convert", "convert": config}, value)


def test_transforms_chain_and_unknown() -> None:
    # GIVEN transforms in a row WHEN resolved THEN each gets the previous output; an unknown stays unknown
    chain = [
        {"type": "string", "string": {"type": "Format", "fmt": "%s-1"}},
        {"type": "string", "string": {"type": "Convert", "convert": "ToUpper"}},
    ]
    assert resolve_all(chain, "a") == "A-1"
    assert isinstance(resolve_all(chain, Unknown("status")), Unknown)
    with pytest.raises(TransformError, match="transform at index 1 returned error: map transform could not resolve"):
        resolve_all([chain[0], {"type": "map", "map": {"x": "y"}}], "a")


def test_combine_string() -> None:
    # GIVEN a string combine WHEN the variables are combined THEN Go's Sprintf; an unknown variable is unknown
    config = {"strategy": "string", "string": {"fmt": "%s-%s"}}
    assert combine(config, ["a", "b"]) == "a-b"
    assert isinstance(combine(config, ["a", Unknown("x")]), Unknown)
    with pytest.raises(TransformError, match="combine strategy other is not supported"):
        combine({"strategy": "other"}, ["a"])


# -- patches and policies (fn.go, patches.go) ----------------------------------------------------------


def test_from_composite_field_path_and_defaults() -> None:
    # GIVEN a patch without type and without toFieldPath WHEN rendered THEN FromCompositeFieldPath to the same path
    template = bucket({"fromFieldPath": "spec.forProvider.region"})
    result = run([template], xr(forProvider={"region": "eu-west-1"}))
    assert provider(result) == {"region": "eu-west-1"}


def test_optional_patch_with_absent_source_is_skipped() -> None:
    # GIVEN an Optional patch (the default) whose source is absent WHEN rendered THEN the patch is skipped
    template = bucket(
        {"fromFieldPath": "spec.missing", "toFieldPath": "spec.forProvider.a"},
        {"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region"},
    )
    result = run([template], xr(region="eu"))
    assert provider(result) == {"region": "eu"}
    assert result.withheld == {}


def test_required_patch_with_absent_source_withholds_a_new_resource() -> None:
    # GIVEN a Required patch whose source the XR never has WHEN rendered THEN the resource is never composed
    template = bucket(
        {"fromFieldPath": "spec.missing", "toFieldPath": "spec.forProvider.a", "policy": {"fromFieldPath": "Required"}}
    )
    result = run([template, bucket(name="other")], xr())
    assert list(result.composed) == ["other"]
    assert result.withheld["bucket"].patch.from_path == "spec.missing"


def test_required_source_from_status_composes_once_written() -> None:
    # GIVEN a resource that needs status.arn, which another resource's ToCompositeFieldPath writes
    # WHEN rendered to the fixed point THEN both are composed, the value unknown offline
    writer = bucket(
        {"type": "ToCompositeFieldPath", "fromFieldPath": "status.atProvider.arn", "toFieldPath": "status.arn"}
    )
    reader = bucket(
        {"fromFieldPath": "status.arn", "toFieldPath": "spec.forProvider.arn", "policy": {"fromFieldPath": "Required"}},
        name="policy",
    )
    result = run([writer, reader], xr())
    assert list(result.composed) == ["bucket", "policy"]
    assert isinstance(provider(result, "policy")["arn"], Unknown)
    assert isinstance(result.xr["status"]["arn"], Unknown)
    assert result.converged and result.passes == 4


def test_combine_from_composite_and_missing_variable() -> None:
    # GIVEN a combine WHEN all variables exist THEN formatted; WHEN one is absent THEN the patch is skipped
    patch = {
        "type": "CombineFromComposite",
        "combine": {
            "variables": [{"fromFieldPath": "metadata.name"}, {"fromFieldPath": "spec.zone"}],
            "strategy": "string",
            "string": {"fmt": "%s-%s"},
        },
        "toFieldPath": "spec.forProvider.name",
    }
    assert provider(run([bucket(patch)], xr(zone="a")))["name"] == "demo-a"
    assert provider(run([bucket(patch)], xr())) == {}


def test_patch_sets_are_expanded_in_place() -> None:
    # GIVEN a PatchSet referenced between two patches WHEN rendered THEN its patches run at that position
    patch_sets = [
        {"name": "region", "patches": [{"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.v"}]}
    ]
    template = bucket(
        {"fromFieldPath": "spec.first", "toFieldPath": "spec.forProvider.v"},
        {"type": "PatchSet", "patchSetName": "region"},
    )
    result = run([template], xr(first="first", region="eu"), patchSets=patch_sets)
    assert provider(result)["v"] == "eu"
    patch = result.composed["bucket"].applied[-1][0]
    assert patch.location == (*INPUT, "patchSets", 0, "patches", 0)
    assert patch.where == 'patch 1 (PatchSet "region")'
    assert patch.index == 1


def test_to_composite_runs_only_once_the_resource_exists() -> None:
    # GIVEN a ToCompositeFieldPath patch from a spec field the base sets WHEN rendered THEN the XR gets it
    template = bucket(
        {"type": "ToCompositeFieldPath", "fromFieldPath": "spec.forProvider.name", "toFieldPath": "status.name"}
    )
    template["base"]["spec"]["forProvider"]["name"] = "fixed"
    result = run([template], xr())
    assert result.xr["status"] == {"name": "fixed"}


def test_environment_patches() -> None:
    # GIVEN patches to and from the environment WHEN rendered THEN values flow XR -> environment -> composed
    result = run(
        [
            bucket(
                {"type": "FromEnvironmentFieldPath", "fromFieldPath": "tier", "toFieldPath": "spec.forProvider.tier"},
                {"type": "FromEnvironmentFieldPath", "fromFieldPath": "absent", "toFieldPath": "spec.forProvider.x"},
            )
        ],
        xr(tier="gold"),
        environment={
            "patches": [{"type": "ToEnvironmentFieldPath", "fromFieldPath": "spec.tier", "toFieldPath": "tier"}]
        },
    )
    assert provider(result) == {"tier": "gold"}


def test_required_environment_patch_with_absent_source_is_fatal() -> None:
    # GIVEN a Required environment patch whose source is absent WHEN rendered THEN fatal, unlike a resource patch
    result = run(
        [bucket()],
        xr(),
        environment={
            "patches": [{"fromFieldPath": "spec.tier", "toFieldPath": "tier", "policy": {"fromFieldPath": "Required"}}]
        },
    )
    assert result.failure is not None
    assert result.failure.message.startswith('cannot apply the "FromCompositeFieldPath" environment patch at index 0:')


def test_failing_transform_is_fatal_for_the_xr() -> None:
    # GIVEN a map transform without the XR's key WHEN rendered THEN nothing is composed, upstream's message
    template = bucket(
        {
            "fromFieldPath": "spec.size",
            "toFieldPath": "spec.forProvider.size",
            "transforms": [{"type": "map", "map": {"S": "small"}}],
        }
    )
    result = run([template], xr(size="M"))
    assert result.composed == {}
    assert result.failure is not None
    assert result.failure.location == (*INPUT, "resources", 0, "patches", 0)
    assert result.failure.message == (
        'cannot render composed resource "bucket" "FromCompositeFieldPath" patch at index 0: '
        "transform at index 0 returned error: map transform could not resolve: key M is not found in map"
    )


def test_composed_metadata_crossplane_adds() -> None:
    # GIVEN a base without a name WHEN rendered THEN Crossplane's generateName, namespace, annotation and label
    result = run([bucket()], xr())
    assert result.composed["bucket"].body["metadata"] == {
        "generateName": "demo-",
        "namespace": "team",
        "annotations": {"crossplane.io/composition-resource-name": "bucket"},
        "labels": {"crossplane.io/composite": "demo"},
    }


def test_connection_secret_of_a_v2_xr() -> None:
    # GIVEN connection details and writeConnectionSecretToRef patches WHEN rendered THEN a Secret is composed
    template = bucket(
        connectionDetails=[
            {"name": "value", "type": "FromConnectionSecretKey", "fromConnectionSecretKey": "kubeconfig"},
            {"name": "port", "type": "FromValue", "value": "443"},
        ]
    )
    result = run(
        [template],
        xr(secretName="creds"),
        writeConnectionSecretToRef={"patches": [{"fromFieldPath": "spec.secretName", "toFieldPath": "name"}]},
    )
    secret = result.composed["demo-connection-secret"].body
    assert secret["metadata"]["name"] == "creds"
    assert secret["metadata"]["namespace"] == "team"
    assert secret["type"] == "connection.crossplane.io/v1alpha1"
    assert secret["data"]["port"] == "NDQz"
    assert isinstance(secret["data"]["value"], Unknown)


def test_connection_secret_default_name() -> None:
    # GIVEN no reference WHEN a connection detail exists THEN the Secret is <xr>-connection
    template = bucket(connectionDetails=[{"name": "port", "type": "FromValue", "value": "443"}])
    result = run([template], xr())
    assert result.composed["demo-connection-secret"].body["metadata"]["name"] == "demo-connection"


def test_a_later_step_patches_what_an_earlier_produced() -> None:
    # GIVEN two P&T steps, the second without a base WHEN rendered THEN it patches the first step's resource
    first = read_resources({"resources": [bucket()]}, INPUT)
    second = read_resources(
        {
            "resources": [
                {
                    "name": "bucket",
                    "patches": [{"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region"}],
                }
            ]
        },
        ("spec", "pipeline", 1, "input"),
    )
    result = render(FunctionPipeline([first, second]), xr(region="eu"))
    assert provider(result) == {"region": "eu"}


# -- the input (validate.go) ---------------------------------------------------------------------------


def problems(data: dict[str, Any]) -> list[tuple[Any, str, bool]]:
    return [
        (problem.location[len(INPUT) :], problem.message, problem.fatal)
        for problem in read_resources(data, INPUT).problems
    ]


def test_unknown_input_field_is_ignored_by_the_function() -> None:
    # GIVEN a misspelled toFieldPath WHEN read THEN a problem the render survives (Go ignores unknown fields)
    data = {"resources": [bucket({"fromFieldPath": "spec.a", "toFieldPaht": "spec.forProvider.a"})]}
    assert problems(data) == [
        (
            ("resources", 0, "patches", 0, "toFieldPaht"),
            'unknown field "toFieldPaht" (did you mean "toFieldPath"?): the function ignores it',
            False,
        )
    ]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            {"type": "FromCompositeFieldPath"},
            "resources[0].patches[0].fromFieldPath: Required value: fromFieldPath must be set for patch type "
            "FromCompositeFieldPath",
        ),
        (
            {"type": "PatchSet"},
            "resources[0].patches[0].patchSetName: Required value: patchSetName must be set for patch type PatchSet",
        ),
        (
            {
                "type": "CombineFromComposite",
                "toFieldPath": "a",
                "combine": {"variables": [], "strategy": "string", "string": {"fmt": "x"}},
            },
            "resources[0].patches[0].combine.variables: Required value: at least one variable must be provided",
        ),
        (
            {"fromFieldPath": "a", "transforms": [{"type": "string", "string": {"fmt": "%s"}}]},
            "resources[0].patches[0].transforms[0].string.type: Required value: string transform type is required",
        ),
        (
            {"fromFieldPath": "a", "transforms": [{"type": "math", "math": {"type": "Multiply"}}]},
            "resources[0].patches[0].transforms[0].math.multiply: Required value: must specify a value if a multiply "
            "math transform is specified",
        ),
    ],
)
def test_validate_resources_errors_are_fatal(patch: dict[str, Any], message: str) -> None:
    # GIVEN input ValidateResources refuses WHEN read THEN one fatal problem with upstream's message
    assert problems({"resources": [bucket(patch)]}) == [((), f"invalid Function input: {message}", True)]


def test_unknown_patch_set_is_fatal() -> None:
    data = {"resources": [bucket({"type": "PatchSet", "patchSetName": "nope"})]}
    assert problems(data) == [
        (
            ("resources", 0, "patches", 0, "patchSetName"),
            "cannot resolve PatchSets: cannot find PatchSet by name nope",
            True,
        )
    ]


def test_wrong_type_in_input_is_fatal() -> None:
    # GIVEN a string where the Go type is an integer WHEN read THEN decoding fails: fatal
    data = {
        "resources": [
            bucket(
                {"fromFieldPath": "a", "transforms": [{"type": "math", "math": {"type": "Multiply", "multiply": "2"}}]}
            )
        ]
    }
    assert problems(data) == [
        (
            ("resources", 0, "patches", 0, "transforms", 0, "math", "multiply"),
            'cannot get Function input: expected integer, got string "2"',
            True,
        )
    ]
