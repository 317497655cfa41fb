"""function-patch-and-transform's transforms and combines (``transforms.go``, ``patches.go`` Combine).

Ported from crossplane-contrib/function-patch-and-transform at commit 55116ae (main after v0.10.8; the
transform code is unchanged since v0.10.8). Behaviour kept as the code has it, where it differs from a
plain reading of the docs:

- ``map`` needs a string input; ``match`` literal needs a string, regexp needs a non-null string; a
  pattern without ``type`` fails at run time ("unsupported pattern type ''") although the input
  validation accepts it; ``fallbackTo: Input`` with a ``fallbackValue`` fails.
- ``math``: ``Multiply`` keeps integers integral; ``ClampMin``/``ClampMax`` compare the input truncated
  to an integer and return the clamp as an integer, else the input unchanged.
- ``string``: ``Format`` is Go's ``fmt.Sprintf`` of one argument; ``Convert``, ``TrimPrefix``,
  ``TrimSuffix``, ``Regexp`` and ``Replace`` work on ``fmt.Sprintf("%v", input)``; ``Join`` needs an array
  and removes one character after the last element (only the separator's first byte when it is longer).
- ``convert``: the pairs of the upstream table (string, int64, float64, bool; string to object/array
  with ``format: json``; string to float64 with ``format: quantity``); the same type is a no-op.

Go regular expressions (RE2) are compiled with Python's ``re``; patterns RE2 rejects (backreferences,
lookarounds) are accepted here.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
import zlib
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from fluxplane.validate.compose.fieldpath import Unknown, go_type
from fluxplane.validate.compose.gofmt import format_float, go_json, sprintf


class TransformError(Exception):
    """A transform or combine that fails: the function returns a fatal result for the whole XR."""


TRANSFORM_TYPES = ("map", "match", "math", "string", "convert")
STRING_TYPES = ("Format", "Convert", "TrimPrefix", "TrimSuffix", "Regexp", "Join", "Replace")
STRING_CONVERSIONS = (
    "ToUpper",
    "ToLower",
    "ToJson",
    "ToBase64",
    "FromBase64",
    "ToSha1",
    "ToSha256",
    "ToSha512",
    "ToAdler32",
)
MATH_TYPES = ("Multiply", "ClampMin", "ClampMax")
IO_TYPES = ("string", "bool", "int", "int64", "float64", "object", "array")
CONVERT_FORMATS = ("none", "quantity", "json")


def go_regexp(pattern: str) -> re.Pattern[str]:
    """A Go (RE2) pattern compiled with Python: ``\\z`` and ``(?<name>`` translated."""
    translated = pattern.replace("\\z", "\\Z")
    translated = re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", translated)
    try:
        return re.compile(translated)
    except re.error as exc:
        raise TransformError(f"error parsing regexp: {exc}: `{pattern}`") from exc


def go_decoded(value: Any) -> Any:
    """``value`` as Go's encoding/json decodes it into ``any``: every number a float64.

    Map and match results and ``convert`` from JSON are decoded that way upstream, so ``%d`` of a mapped
    ``2`` prints ``%!d(float64=2)``; a patch's JSON round trip makes whole numbers integers again.
    """
    if isinstance(value, bool) or value is None or isinstance(value, str | Unknown):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {key: go_decoded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [go_decoded(item) for item in value]
    return value


def _sprint(value: Any) -> str:
    return value if isinstance(value, str) else sprintf("%v", [value])


def resolve_all(transforms: list[dict[str, Any]], value: Any) -> Any:
    """``ResolveTransforms``: each transform in turn; an :class:`Unknown` input stays unknown."""
    for index, transform in enumerate(transforms):
        if isinstance(value, Unknown):
            return value
        try:
            value = resolve(transform, value)
        except TransformError as exc:
            raise TransformError(f"transform at index {index} returned error: {exc}") from exc
    return value


def resolve(transform: dict[str, Any], value: Any) -> Any:
    kind = transform.get("type")
    config = transform.get(kind) if isinstance(kind, str) else None
    if kind not in TRANSFORM_TYPES:
        raise TransformError(f"transform type {kind} is not supported")
    if config is None:
        raise TransformError(f"given transform type {kind} requires configuration")
    resolver: Callable[[Any, Any], Any] = {
        "map": resolve_map,
        "match": resolve_match,
        "math": resolve_math,
        "string": resolve_string,
        "convert": resolve_convert,
    }[kind]
    try:
        return resolver(config, value)
    except TransformError as exc:
        raise TransformError(f"{kind} transform could not resolve: {exc}") from exc


def resolve_map(pairs: dict[str, Any], value: Any) -> Any:
    if not isinstance(value, str):
        raise TransformError(f"type {go_type(value)} is not supported for map transform")
    if value not in pairs:
        raise TransformError(f"key {value} is not found in map")
    return go_decoded(pairs[value])


def _matches(pattern: dict[str, Any], value: Any) -> bool:
    kind = pattern.get("type", "")
    if kind == "literal":
        if pattern.get("literal") is None:
            raise TransformError("literal is required by type literal")
        if not isinstance(value, str):
            raise TransformError(f"unsupported input type '{go_type(value)}'")
        return bool(value == pattern["literal"])
    if kind == "regexp":
        if pattern.get("regexp") is None:
            raise TransformError("regexp is required by type regexp")
        compiled = go_regexp(str(pattern["regexp"]))
        if value is None:
            raise TransformError("unsupported input type 'null'")
        if not isinstance(value, str):
            raise TransformError(f"unsupported input type '{go_type(value)}'")
        return compiled.search(value) is not None
    raise TransformError(f"unsupported pattern type '{kind}'")


def resolve_match(config: dict[str, Any], value: Any) -> Any:
    for index, pattern in enumerate(config.get("patterns") or []):
        try:
            matched = _matches(pattern, value)
        except TransformError as exc:
            raise TransformError(f"cannot match pattern at index {index}: {exc}") from exc
        if matched:
            return go_decoded(pattern.get("result"))
    if config.get("fallbackTo") == "Input":
        # a null fallbackValue is no value: extv1.JSON decodes null to nothing
        if config.get("fallbackValue") is not None:
            raise TransformError("cannot set both a fallback value and the fallback to input flag")
        return value
    return go_decoded(config.get("fallbackValue"))


def _validate_math(config: dict[str, Any]) -> None:
    kind = config.get("type", "")
    if kind == "":
        raise TransformError("type: Required value: math transform type is required")
    field = {"Multiply": "multiply", "ClampMin": "clampMin", "ClampMax": "clampMax"}.get(kind)
    if field is None:
        raise TransformError(f'type: Invalid value: "{kind}": unknown math transform type')
    if config.get(field) is None:
        raise TransformError(f"{field}: Required value: must specify a value if a {kind} math transform is specified")


def resolve_math(config: dict[str, Any], value: Any) -> Any:
    _validate_math(config)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TransformError(f"input is required to be a number for math transformer, got {go_type(value)}")
    kind = config["type"]
    if kind == "Multiply":
        factor = int(config["multiply"])
        return value * factor if isinstance(value, int) else value * float(factor)
    truncated = int(value)
    if kind == "ClampMin" and truncated < int(config["clampMin"]):
        return int(config["clampMin"])
    if kind == "ClampMax" and truncated > int(config["clampMax"]):
        return int(config["clampMax"])
    return value


def resolve_string(config: dict[str, Any], value: Any) -> str:
    kind = config.get("type")
    if kind == "Format":
        if config.get("fmt") is None:
            raise TransformError("string transform of type Format fmt is not set")
        return sprintf(str(config["fmt"]), [value])
    if kind == "Convert":
        if config.get("convert") is None:
            raise TransformError("string transform of type Convert convert is not set")
        return _string_convert(str(config["convert"]), value)
    if kind in ("TrimPrefix", "TrimSuffix"):
        if config.get("trim") is None:
            raise TransformError(f"string transform of type {kind} trim is not set")
        text, trim = _sprint(value), str(config["trim"])
        if kind == "TrimPrefix":
            return text.removeprefix(trim)
        return text.removesuffix(trim)
    if kind == "Regexp":
        regexp = config.get("regexp")
        if regexp is None:
            raise TransformError("string transform of type Regexp regexp is not set")
        try:
            compiled = go_regexp(str(regexp.get("match", "")))
        except TransformError as exc:
            raise TransformError(f"could not compile regexp: {exc}") from exc
        group = int(regexp.get("group") or 0)
        found = compiled.search(_sprint(value))
        groups = [found.group(0), *found.groups()] if found else []
        if not groups or group >= len(groups):
            raise TransformError(f"regexp {json.dumps(regexp.get('match', ''))} had no matches for group {group}")
        return groups[group] or ""
    if kind == "Join":
        join = config.get("join")
        if join is None:
            raise TransformError("string transform of type Join join is not set")
        if not isinstance(value, list):
            raise TransformError("could not parse input array")
        if not value:
            return ""
        separator = str(join.get("separator", ""))
        joined = "".join(f"{_sprint(item)}{separator}" for item in value)
        # upstream cuts one byte, not the whole separator
        return joined.encode()[:-1].decode(errors="replace") if separator else joined
    if kind == "Replace":
        replace = config.get("replace")
        if replace is None:
            raise TransformError("string transform of type Replace replace is not set")
        return _sprint(value).replace(str(replace.get("search", "")), str(replace.get("replace", "")))
    raise TransformError(f"type {kind} is not supported for string transform type")


def _hash_input(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode()
    return go_json(value).encode()


def _string_convert(conversion: str, value: Any) -> str:
    text = _sprint(value)
    if conversion == "ToUpper":
        return text.upper()
    if conversion == "ToLower":
        return text.lower()
    if conversion == "ToJson":
        return go_json(value)
    if conversion == "ToBase64":
        return base64.b64encode(text.encode()).decode()
    if conversion == "FromBase64":
        try:
            return base64.b64decode(text, validate=True).decode(errors="replace")
        except (binascii.Error, ValueError) as exc:
            raise TransformError(f"string is not valid base64: {exc}") from exc
    if conversion == "ToSha1":
        return hashlib.sha1(_hash_input(value), usedforsecurity=False).hexdigest()
    if conversion == "ToSha256":
        return hashlib.sha256(_hash_input(value)).hexdigest()
    if conversion == "ToSha512":
        return hashlib.sha512(_hash_input(value)).hexdigest()
    if conversion == "ToAdler32":
        return str(zlib.adler32(_hash_input(value)))
    raise TransformError(f"type {conversion} is not supported for string convert")


# -- convert -----------------------------------------------------------------------------------------

_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SPECIAL_FLOATS = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf, "infinity": math.inf}
_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def _parse_int(text: str) -> int:
    if not _INT.fullmatch(text):
        raise TransformError(f'strconv.ParseInt: parsing "{text}": invalid syntax')
    number = int(text)
    if not -(2**63) <= number < 2**63:
        raise TransformError(f'strconv.ParseInt: parsing "{text}": value out of range')
    return number


def _parse_bool(text: str) -> bool:
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise TransformError(f'strconv.ParseBool: parsing "{text}": invalid syntax')


def _parse_float(text: str) -> float:
    lowered = text.lower()
    if lowered in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[lowered]
    if lowered in ("nan", "+nan", "-nan"):
        return math.nan
    if not _FLOAT.fullmatch(text):
        raise TransformError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')
    return float(text)


def _parse_quantity(text: str) -> float:
    found = _QUANTITY.fullmatch(text)
    if not found:
        raise TransformError(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    try:
        number = Decimal(found.group(1))
    except InvalidOperation as exc:
        raise TransformError("unable to parse quantity's number") from exc
    suffix = found.group(2) or ""
    if suffix in _BINARY:
        number *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        number = number.scaleb(_DECIMAL[suffix])
    else:
        number = number.scaleb(int(suffix[1:]))
    return float(number)


def _json_object(text: str, want: type) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TransformError(f"invalid character in JSON: {exc}") from exc
    if not isinstance(value, want):
        target = "map[string]interface {}" if want is dict else "[]interface {}"
        raise TransformError(f"json: cannot unmarshal {_json_kind(value)} into Go value of type {target}")
    return go_decoded(value)


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


_CONVERSIONS: dict[tuple[str, str, str], Callable[[Any], Any]] = {
    ("string", "int64", "none"): _parse_int,
    ("string", "bool", "none"): _parse_bool,
    ("string", "float64", "none"): _parse_float,
    ("string", "float64", "quantity"): _parse_quantity,
    ("int64", "string", "none"): str,
    ("int64", "bool", "none"): lambda value: value == 1,
    ("int64", "float64", "none"): float,
    ("bool", "string", "none"): lambda value: "true" if value else "false",
    ("bool", "int64", "none"): lambda value: 1 if value else 0,
    ("bool", "float64", "none"): lambda value: 1.0 if value else 0.0,
    ("float64", "string", "none"): lambda value: format_float(value, "f", None),
    ("float64", "int64", "none"): lambda value: int(value) if math.isfinite(value) else -(2**63),
    ("float64", "bool", "none"): lambda value: value == 1.0,
    ("string", "object", "json"): lambda value: _json_object(value, dict),
    ("string", "array", "json"): lambda value: _json_object(value, list),
}


def resolve_convert(config: dict[str, Any], value: Any) -> Any:
    form = config.get("format") or "none"
    to_type = config.get("toType")
    if form not in CONVERT_FORMATS:
        raise TransformError(f'format: Invalid value: "{form}": invalid format')
    if to_type not in IO_TYPES:
        raise TransformError(f'toType: Invalid value: "{to_type}": invalid type')
    source = go_type(value)
    if source not in IO_TYPES:
        raise TransformError(f"invalid input type {source}")
    target = "int64" if to_type == "int" else str(to_type)
    if source == target:
        return value
    conversion = _CONVERSIONS.get((source, target, form))
    if conversion is None:
        raise TransformError(f"conversion from {source} to {target} is not supported with format {form}")
    return conversion(value)


def combine(config: dict[str, Any], values: list[Any]) -> Any:
    """``Combine``: the ``string`` strategy formats the variables with Go's fmt.Sprintf."""
    strategy = config.get("strategy")
    if strategy != "string":
        raise TransformError(f"combine strategy {strategy} is not supported")
    string = config.get("string")
    if string is None:
        raise TransformError("given combine strategy string requires configuration")
    if any(isinstance(value, Unknown) for value in values):
        return Unknown("combined from an observed value")
    return sprintf(str(string.get("fmt", "")), values)
