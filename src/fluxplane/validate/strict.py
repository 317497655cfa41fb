"""The strict schema dialect: a CRD's ``openAPIV3Schema`` as a JSON Schema the way the API server reads it, but
strict, and its errors as messages a person can act on.

``additionalProperties: false`` wherever a node lists ``properties`` and does not set
``x-kubernetes-preserve-unknown-fields`` (never inside allOf/anyOf/oneOf, which cannot add fields), so
a misspelled field is a finding instead of being pruned in silence. ``x-kubernetes-int-or-string``
is an integer or a string, ``nullable`` admits null, an embedded resource admits apiVersion, kind
and metadata, a ``required`` field with a ``default`` is not reported missing, and null-valued fields
are dropped before checking (the API server prunes them). Flux post-build placeholders
(``${cluster_name}``) pass any scalar check: they are replaced before the object reaches the API.
Not evaluated: CEL ``x-kubernetes-validations`` and ``format``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import jsonschema.exceptions  # type: ignore[import-untyped]
import jsonschema.validators  # type: ignore[import-untyped]

from fluxplane.config.problems import closest
from fluxplane.validate.findings import Finding, format_path, short
from fluxplane.validate.tree import Document

_Base: Any = jsonschema.Draft202012Validator

#: A Flux post-build placeholder: ``${var}``, ``${var:=default}``, ``${var:-default}``.
PLACEHOLDER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:(?::?[-=])[^}]*)?\}")


def _lenient(check: Callable[..., Any]) -> Callable[..., Iterator[Any]]:
    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if isinstance(instance, str) and PLACEHOLDER.search(instance):
            return
        yield from check(validator, value, instance, schema) or ()

    return run


def _list_map_keys(validator: Any, keys: list[str], instance: Any, schema: Any) -> Iterator[Any]:
    if not isinstance(instance, list):
        return
    seen: dict[tuple[str, ...], int] = {}
    for index, item in enumerate(instance):
        if not isinstance(item, dict):
            continue
        identity = tuple(repr(item.get(key)) for key in keys)
        if identity in seen:
            described = ", ".join(f"{key}={short(item.get(key))}" for key in keys)
            yield jsonschema.exceptions.ValidationError(
                f"duplicate list entry ({described}): items [{seen[identity]}] and [{index}] have the same key",
                validator="x-kubernetes-list-map-keys",
                path=[index],
            )
        else:
            seen[identity] = index


_LENIENT = (
    "type",
    "enum",
    "const",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
)
Validator: Any = jsonschema.validators.extend(
    _Base,
    {
        **{keyword: _lenient(_Base.VALIDATORS[keyword]) for keyword in _LENIENT},
        "x-kubernetes-list-map-keys": _list_map_keys,
    },
)

_DROP = {
    "description",
    "format",
    "example",
    "externalDocs",
    "default",
    "nullable",
    "readOnly",
    "writeOnly",
    "title",
    "deprecated",
}
_DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_QUALIFIED_KEY = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"


def object_meta_schema() -> dict[str, Any]:
    """ObjectMeta as the API server checks it: names, namespaces, label and annotation keys, strictly."""
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "maxLength": 253, "pattern": _DNS_SUBDOMAIN},
            "generateName": {"type": "string"},
            "namespace": {"type": "string", "maxLength": 63, "pattern": _DNS_LABEL},
            "labels": {
                "type": "object",
                "propertyNames": {"pattern": _QUALIFIED_KEY},
                "additionalProperties": {"type": "string", "maxLength": 63, "pattern": _LABEL_VALUE},
            },
            "annotations": {
                "type": "object",
                "propertyNames": {"pattern": _QUALIFIED_KEY},
                "additionalProperties": {"type": "string"},
            },
            "finalizers": {"type": "array", "items": {"type": "string"}},
            "ownerReferences": {"type": "array", "items": {"type": "object"}},
            "uid": {"type": "string"},
            "resourceVersion": {"type": "string"},
            "generation": {"type": "integer"},
            "creationTimestamp": {"type": ["string", "null"]},
            "deletionTimestamp": {"type": ["string", "null"]},
            "deletionGracePeriodSeconds": {"type": "integer"},
            "managedFields": {"type": "array"},
            "selfLink": {"type": "string"},
        },
    }


def convert_schema(node: Any, in_junctor: bool = False) -> Any:
    """One structural-schema node as strict JSON Schema (see the module docstring for the rules)."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP or key.startswith("x-"):
            continue
        if key in ("properties", "patternProperties"):
            out[key] = {name: convert_schema(sub, in_junctor) for name, sub in (value or {}).items()}
        elif key in ("items", "additionalProperties", "not"):
            if isinstance(value, dict):
                out[key] = convert_schema(value, in_junctor or key == "not")
            elif isinstance(value, list):
                out["prefixItems"] = [convert_schema(sub, in_junctor) for sub in value]
            else:
                out[key] = value
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [convert_schema(sub, True) for sub in value]
        elif key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
            bound = "minimum" if key == "exclusiveMinimum" else "maximum"
            if value and bound in node:
                out[key] = node[bound]
        elif key in ("minimum", "maximum"):
            if node.get("exclusive" + key[0].upper() + key[1:]) is not True:
                out[key] = value
        elif key == "required":
            properties = node.get("properties") or {}
            required = [
                name for name in value if not (isinstance(properties.get(name), dict) and "default" in properties[name])
            ]
            if required:
                out["required"] = required
        else:
            out[key] = value
    if node.get("x-kubernetes-int-or-string") is True:
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    list_type = node.get("x-kubernetes-list-type")
    if list_type == "set":
        out["uniqueItems"] = True
    elif list_type == "map" and node.get("x-kubernetes-list-map-keys"):
        out["x-kubernetes-list-map-keys"] = list(node["x-kubernetes-list-map-keys"])
    if node.get("x-kubernetes-embedded-resource") is True and "properties" in out:
        out["properties"].setdefault("apiVersion", {"type": "string"})
        out["properties"].setdefault("kind", {"type": "string"})
        out["properties"].setdefault("metadata", {"type": "object"})
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    if not preserve and not in_junctor and "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def document_schema(group: str, version: str, kind: str, openapi: Any) -> dict[str, Any]:
    """The schema of a whole object of a CRD version: its openAPIV3Schema, exact apiVersion/kind, ObjectMeta."""
    source: dict[str, Any] = openapi if isinstance(openapi, dict) else {"x-kubernetes-preserve-unknown-fields": True}
    root: dict[str, Any] = convert_schema(source)
    properties = root.setdefault("properties", {})
    properties["apiVersion"] = {"type": "string", "enum": [f"{group}/{version}"]}
    properties["kind"] = {"type": "string", "enum": [kind]}
    meta: dict[str, Any] = object_meta_schema()
    crd_meta = (source.get("properties") or {}).get("metadata")
    if isinstance(crd_meta, dict):
        extra = convert_schema(crd_meta, in_junctor=True)
        extra.pop("type", None)
        if extra:
            meta = {"allOf": [meta, extra]}
    properties["metadata"] = meta
    root["type"] = "object"
    if "additionalProperties" not in root and source.get("x-kubernetes-preserve-unknown-fields") is not True:
        root["additionalProperties"] = False
    return root


def prune_nulls(value: Any) -> Any:
    """Drop null-valued fields, as the API server does before validating."""
    if isinstance(value, dict):
        return {key: prune_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [prune_nulls(item) for item in value]
    return value


def run_validator(validator: Any, document: Document) -> list[Finding]:
    instance = prune_nulls(document.body)
    out: list[Finding] = []
    meta = instance.get("metadata")
    if not isinstance(meta, dict) or not (meta.get("name") or meta.get("generateName")):
        out.append(document.finding("metadata", 'missing required field "name"'))
    errors = sorted(validator.iter_errors(instance), key=lambda error: [str(part) for part in error.absolute_path])
    for error in errors:
        for parts, message in explain(error):
            finding = document.finding(format_path(parts), message)
            if finding not in out:
                out.append(finding)
    return out


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def unknown_field(key: str, known: list[str]) -> str:
    """``unknown field "key"``, with the closest known name, or all of them when they are few."""
    message = f'unknown field "{key}"'
    guess = closest(key, known)
    if guess:
        message += f' (did you mean "{guess}"?)'
    elif known and len(known) <= 12:
        message += f" (allowed: {', '.join(sorted(known))})"
    return message


def explain(error: Any) -> Iterator[tuple[list[str | int], str]]:
    """A jsonschema error as (field path, message) pairs a person can act on."""
    path: list[str | int] = list(error.absolute_path)
    keyword = error.validator
    instance = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    if "propertyNames" in list(error.schema_path):
        yield path, f"invalid key {short(instance)}: must match {error.validator_value}"
        return
    if keyword == "additionalProperties" and isinstance(instance, dict) and schema.get("additionalProperties") is False:
        known = list((schema.get("properties") or {}).keys())
        patterns = list((schema.get("patternProperties") or {}).keys())
        for key in instance:
            if key in known or any(re.search(pattern, key) for pattern in patterns):
                continue
            yield [*path, key], unknown_field(key, known)
        return
    if keyword == "required":
        match = re.match(r"^'(.*)' is a required property$", error.message)
        yield path, f'missing required field "{match.group(1) if match else error.message}"'
        return
    if keyword == "type":
        wanted = error.validator_value
        wanted = " or ".join(wanted) if isinstance(wanted, list) else wanted
        yield path, f"expected {wanted}, got {json_type(instance)} {short(instance)}"
        return
    if keyword == "enum":
        options = [short(option, 40) for option in error.validator_value]
        more = "" if len(options) <= 12 else f", ... ({len(options) - 12} more)"
        yield path, f"{short(instance)} is not one of: {', '.join(options[:12])}{more}"
        return
    if keyword == "pattern":
        yield path, f"{short(instance)} does not match pattern {error.validator_value}"
        return
    if keyword in ("anyOf", "oneOf") and error.context:
        context = list(error.context)
        if all(item.validator == "type" and list(item.absolute_path) == path for item in context):
            kinds: list[str] = []
            for item in context:
                value = item.validator_value
                kinds.extend(value if isinstance(value, list) else [value])
            yield path, f"expected {' or '.join(dict.fromkeys(kinds))}, got {json_type(instance)} {short(instance)}"
            return
        yield from explain(jsonschema.exceptions.best_match(context))
        return
    message = " ".join(str(error.message).split())
    yield path, message if len(message) <= 200 else message[:197] + "..."
