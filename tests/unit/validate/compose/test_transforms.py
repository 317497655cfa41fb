"""Tests for fluxplane.validate.compose.transforms: function-patch-and-transform's transforms and combines, against
upstream behaviour.

Expected values are upstream's: the test tables of crossplane-contrib/function-patch-and-transform
(``transforms_test.go``, ``patches_test.go``) and crossplane-runtime (``fieldpath/*_test.go``) where
they have the case, else what the Go code does (cited in each test).
"""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.validate.compose import Unknown
from fluxplane.validate.compose.transforms import TransformError, combine, resolve, resolve_all


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
