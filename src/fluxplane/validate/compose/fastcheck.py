"""A yes/no pre-check of the strict schemas, an order of magnitude faster than jsonschema, for the common case.

A render of a thousand XRs composes tens of thousands of resources, nearly all valid. The strict JSON
Schema that :func:`~fluxplane.validate.schemas.document_schema` builds is compiled here into nested
closures that answer only "valid?"; only when the answer is no does the caller run the jsonschema
validator for the messages. The closures implement the keywords those schemas use with jsonschema's
semantics (Draft 2020-12 as extended by schemas.py: Flux placeholders pass the scalar keywords,
``x-kubernetes-list-map-keys`` refuses duplicate keys). A schema with any other keyword does not
compile (:func:`compile_schema` returns None) and the caller always uses jsonschema: the pre-check may
only ever say "valid" when jsonschema would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from fluxplane.validate.schemas import PLACEHOLDER

Check = Callable[[Any], bool]

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "integer": lambda value: (
        (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())
    ),
}
_IGNORED = frozenset({"$schema", "$id", "title", "description", "default", "examples", "format", "deprecated"})
_SUPPORTED = frozenset(
    {
        "type",
        "properties",
        "additionalProperties",
        "patternProperties",
        "required",
        "items",
        "enum",
        "const",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "propertyNames",
        "x-kubernetes-list-map-keys",
    }
)


class _Unsupported(Exception):
    pass


def _placeholder(value: Any) -> bool:
    return isinstance(value, str) and "${" in value and PLACEHOLDER.search(value) is not None


def _canonical(value: Any) -> str:
    """A key equal for values jsonschema's ``equal`` treats as equal (1 and 1.0; not 1 and true)."""

    def normal(item: Any) -> Any:
        if isinstance(item, float) and item.is_integer():
            return int(item)
        if isinstance(item, dict):
            return {key: normal(sub) for key, sub in item.items()}
        if isinstance(item, list):
            return [normal(sub) for sub in item]
        return item

    return json.dumps(normal(value), sort_keys=True)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def compile_schema(schema: Any) -> Check | None:
    """A yes/no validator for ``schema``, or None when it uses a keyword this module does not implement."""
    try:
        return _compile(schema)
    except _Unsupported:
        return None


def _compile(schema: Any) -> Check:
    if schema is True or schema == {}:
        return lambda value: True
    if schema is False:
        return lambda value: False
    if not isinstance(schema, dict):
        raise _Unsupported
    unknown = set(schema) - _SUPPORTED - _IGNORED
    if unknown:
        raise _Unsupported
    checks: list[Check] = []
    kind = schema.get("type")
    if kind is not None:
        names = kind if isinstance(kind, list) else [kind]
        if any(name not in _TYPES for name in names):
            raise _Unsupported
        if len(names) == 1:
            is_type = _TYPES[names[0]]
            checks.append(lambda value: is_type(value) or _placeholder(value))
        else:
            tests = [_TYPES[name] for name in names]
            checks.append(lambda value: any(test(value) for test in tests) or _placeholder(value))
    if "enum" in schema:
        allowed = {_canonical(item) for item in schema["enum"]}
        checks.append(lambda value: _placeholder(value) or _canonical(value) in allowed)
    if "const" in schema:
        constant = _canonical(schema["const"])
        checks.append(lambda value: _placeholder(value) or _canonical(value) == constant)
    if "pattern" in schema:
        compiled = re.compile(schema["pattern"])
        checks.append(lambda value: not isinstance(value, str) or _placeholder(value) or bool(compiled.search(value)))
    for key in ("minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if key in schema:
            checks.append(_bounded(key, schema[key]))
    object_check = _object_checks(schema)
    if object_check is not None:
        checks.append(lambda value: not isinstance(value, dict) or object_check(value))
    array_check = _array_checks(schema)
    if array_check is not None:
        checks.append(lambda value: not isinstance(value, list) or array_check(value))
    if "allOf" in schema:
        subs = [_compile(sub) for sub in schema["allOf"]]
        checks.append(lambda value: all(sub(value) for sub in subs))
    if "anyOf" in schema:
        subs_any = [_compile(sub) for sub in schema["anyOf"]]
        checks.append(lambda value: any(sub(value) for sub in subs_any))
    if "oneOf" in schema:
        subs_one = [_compile(sub) for sub in schema["oneOf"]]
        checks.append(lambda value: sum(1 for sub in subs_one if sub(value)) == 1)
    if "not" in schema:
        negated = _compile(schema["not"])
        checks.append(lambda value: not negated(value))
    if not checks:
        return lambda value: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)

    def every(value: Any) -> bool:
        return all(check(value) for check in checks)

    return every


def _bounded(key: str, bound: Any) -> Check:
    """minLength and maxLength (strings), minimum, maximum and the exclusive bounds (numbers)."""
    if key in ("minLength", "maxLength"):
        longest = key == "maxLength"
        return lambda value: (
            not isinstance(value, str)
            or _placeholder(value)
            or (len(value) <= bound if longest else len(value) >= bound)
        )
    relations: dict[str, Callable[[Any, Any], bool]] = {
        "minimum": lambda number, limit: number >= limit,
        "maximum": lambda number, limit: number <= limit,
        "exclusiveMinimum": lambda number, limit: number > limit,
        "exclusiveMaximum": lambda number, limit: number < limit,
    }
    relation = relations[key]
    return lambda value: not _number(value) or _placeholder(value) or relation(value, bound)


def _object_checks(schema: dict[str, Any]) -> Check | None:
    properties = {key: _compile(sub) for key, sub in (schema.get("properties") or {}).items()}
    patterns = [(re.compile(key), _compile(sub)) for key, sub in (schema.get("patternProperties") or {}).items()]
    extra_schema = schema.get("additionalProperties", True)
    extra = _compile(extra_schema) if extra_schema is not True else None
    required = list(schema.get("required") or [])
    names = _compile(schema["propertyNames"]) if "propertyNames" in schema else None
    least, most = schema.get("minProperties"), schema.get("maxProperties")
    if not (properties or patterns or extra or required or names or least is not None or most is not None):
        return None

    def check(value: dict[str, Any]) -> bool:
        for key in required:
            if key not in value:
                return False
        if least is not None and len(value) < least:
            return False
        if most is not None and len(value) > most:
            return False
        for key, item in value.items():
            if names is not None and not names(key):
                return False
            sub = properties.get(key)
            matched = sub is not None
            if sub is not None and not sub(item):
                return False
            for pattern, pattern_check in patterns:
                if pattern.search(key):
                    matched = True
                    if not pattern_check(item):
                        return False
            if not matched and extra is not None and not extra(item):
                return False
        return True

    return check


def _array_checks(schema: dict[str, Any]) -> Check | None:
    items = _compile(schema["items"]) if isinstance(schema.get("items"), dict | bool) else None
    least, most = schema.get("minItems"), schema.get("maxItems")
    unique = schema.get("uniqueItems") is True
    keys = schema.get("x-kubernetes-list-map-keys")
    if items is None and least is None and most is None and not unique and not keys:
        return None

    def check(value: list[Any]) -> bool:
        if least is not None and len(value) < least:
            return False
        if most is not None and len(value) > most:
            return False
        if items is not None:
            for item in value:
                if not items(item):
                    return False
        if unique and len({_canonical(item) for item in value}) != len(value):
            return False
        if keys:
            seen = set()
            for item in value:
                if isinstance(item, dict):
                    identity = tuple(repr(item.get(key)) for key in keys)
                    if identity in seen:
                        return False
                    seen.add(identity)
        return True

    return check
