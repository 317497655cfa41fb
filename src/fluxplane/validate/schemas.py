"""Strict schema checks: custom resources against their CRDs, core kinds against Kubernetes' own schemas.

A CRD's ``openAPIV3Schema`` becomes a JSON Schema the way the API server reads it, but strict:
``additionalProperties: false`` wherever a node lists ``properties`` and does not set
``x-kubernetes-preserve-unknown-fields`` (never inside allOf/anyOf/oneOf, which cannot add fields), so
a misspelled field is a finding instead of being pruned in silence. ``x-kubernetes-int-or-string``
is an integer or a string, ``nullable`` admits null, an embedded resource admits apiVersion, kind
and metadata, a ``required`` field with a ``default`` is not reported missing, and null-valued fields
are dropped before checking (the API server prunes them). Flux post-build placeholders
(``${cluster_name}``) pass any scalar check: they are replaced before the object reaches the API.
Not evaluated: CEL ``x-kubernetes-validations`` and ``format``.

Each schema is compiled once per apiVersion and kind; CRD files are parsed when their API group is
first needed. Core kinds use the strict schemas of the ``kubernetes-validate`` package for the
newest Kubernetes it ships.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import jsonschema.exceptions  # type: ignore[import-untyped]
import jsonschema.validators  # type: ignore[import-untyped]
import yaml

from fluxplane.validate.findings import Finding, format_path, short
from fluxplane.validate.tree import Document, ManifestLoader, ValidateError

_Base: Any = jsonschema.Draft202012Validator

#: A Flux post-build placeholder: ``${var}``, ``${var:=default}``, ``${var:-default}``.
PLACEHOLDER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:(?::?[-=])[^}]*)?\}")

#: The cache ``fluxplane schemas pull`` fills and validate reads by default.
CACHE_ENV = "FLUXPLANE_CRDS"


def cache_dir() -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/fluxplane/crds``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fluxplane" / "crds"


def default_crd_dirs() -> list[Path]:
    """``$FLUXPLANE_CRDS`` (os.pathsep-separated), else the schema cache when it exists; else refuse."""
    configured = os.environ.get(CACHE_ENV, "")
    if configured:
        return [Path(item) for item in configured.split(os.pathsep) if item]
    cache = cache_dir()
    if cache.is_dir():
        return [cache]
    raise ValidateError(
        f"no CRD schemas: pass --crds DIR, set {CACHE_ENV}, or run 'fluxplane schemas pull' to fill {cache}"
    )


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


@dataclass
class _Version:
    served: bool
    schema: Any


@dataclass
class CrdCorpus:
    """CRDs from one or more folders, parsed per API group on first use."""

    group_files: dict[str, list[Path]] = field(default_factory=dict)
    kinds: dict[tuple[str, str], dict[str, _Version]] = field(default_factory=dict)
    #: (group, kind) -> ``Namespaced`` or ``Cluster``, for the groups loaded so far.
    scopes: dict[tuple[str, str], str] = field(default_factory=dict)
    partial_groups: set[str] = field(default_factory=set)
    _loaded: set[str] = field(default_factory=set)
    _validators: dict[tuple[str, str, str], Any] = field(default_factory=dict)

    @classmethod
    def from_dirs(cls, dirs: list[Path]) -> CrdCorpus:
        """Index every CRD file by its API group; a missing folder or unreadable file is bad input."""
        corpus = cls()
        for folder in dirs:
            if not folder.is_dir():
                raise ValidateError(f"--crds {folder}: no such folder")
            for path in sorted(folder.rglob("*")):
                if path.suffix not in (".yaml", ".yml") or not path.is_file():
                    continue
                for group in corpus._groups_of(path):
                    corpus.group_files.setdefault(group, []).append(path)
            partial = folder / "partial-groups.txt"
            if partial.is_file():
                for line in partial.read_text().splitlines():
                    group = line.split("#", 1)[0].strip()
                    if group:
                        corpus.partial_groups.add(group)
        return corpus

    def _groups_of(self, path: Path) -> set[str]:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValidateError(f"{path}: cannot read CRD file: {exc}") from exc
        found = re.findall(r"^  group:[ \t]*['\"]?([A-Za-z0-9.-]+)['\"]?[ \t]*$", text, re.M)
        if len(found) == 1 and len(re.findall(r"^kind:\s*CustomResourceDefinition\s*$", text, re.M)) == 1:
            return set(found)
        groups: set[str] = set()
        for document in self._parse(path, text):
            groups.add(document["spec"]["group"])
        return groups

    @staticmethod
    def _parse(path: Path, text: str | None = None) -> list[dict[str, Any]]:
        try:
            source = text if text is not None else path.read_text(encoding="utf-8")
            documents = list(yaml.load_all(source, Loader=ManifestLoader))
        except (OSError, UnicodeDecodeError) as exc:
            raise ValidateError(f"{path}: cannot read CRD file: {exc}") from exc
        except yaml.YAMLError as exc:
            first = " ".join(str(exc).split())
            raise ValidateError(f"{path}: cannot parse CRD file: {first}") from exc
        return [
            document
            for document in documents
            if isinstance(document, dict)
            and document.get("kind") == "CustomResourceDefinition"
            and isinstance(document.get("spec"), dict)
            and isinstance(document["spec"].get("group"), str)
        ]

    def _load(self, group: str) -> None:
        if group in self._loaded:
            return
        self._loaded.add(group)
        for path in self.group_files.get(group, []):
            for document in self._parse(path):
                spec = document["spec"]
                kind = (spec.get("names") or {}).get("kind")
                if spec["group"] != group or not isinstance(kind, str):
                    continue
                versions = self.kinds.setdefault((group, kind), {})
                if isinstance(spec.get("scope"), str):
                    self.scopes[(group, kind)] = spec["scope"]
                for version in spec.get("versions") or []:
                    schema = (version.get("schema") or {}).get("openAPIV3Schema")
                    versions[str(version.get("name"))] = _Version(bool(version.get("served", True)), schema)

    def covers(self, group: str) -> bool:
        return group in self.group_files

    def schema(self, group: str, version: str, kind: str, *, served: bool = True) -> Any:
        """The ``openAPIV3Schema`` of a version of a kind (of a served one, unless ``served`` is False), or None."""
        self._load(group)
        entry = (self.kinds.get((group, kind)) or {}).get(version)
        return entry.schema if entry is not None and (entry.served or not served) else None

    def scope(self, group: str, kind: str) -> str | None:
        """``Namespaced`` or ``Cluster`` for a kind this corpus defines, else None."""
        self._load(group)
        return self.scopes.get((group, kind))

    def check(self, document: Document, group: str, version: str, kind: str) -> list[Finding]:
        """Findings for one custom resource of a group this corpus covers."""
        self._load(group)
        api = f"{group}/{version}"
        versions = self.kinds.get((group, kind))
        if not versions:
            if group in self.partial_groups:
                return []
            known = ", ".join(sorted(k for g, k in self.kinds if g == group))
            return [document.finding("kind", f"no schema for {api} {kind}: group {group} defines {known}")]
        served = sorted(name for name, entry in versions.items() if entry.served)
        entry = versions.get(version)
        if entry is None or not entry.served:
            return [
                document.finding(
                    "apiVersion",
                    f"{api} {kind} is not served by its CRD (served versions: {', '.join(served) or 'none'})",
                )
            ]
        key = (group, version, kind)
        if key not in self._validators:
            self._validators[key] = Validator(document_schema(group, version, kind, entry.schema))
        return run_validator(self._validators[key], document)


class CoreSchemas:
    """Core Kubernetes kinds, from kubernetes-validate's strict schemas for its newest Kubernetes."""

    def __init__(self) -> None:
        import kubernetes_validate.utils as kvu  # type: ignore[import-untyped]
        from referencing import Registry, Resource

        self._kvu = kvu
        self.version: str = kvu.all_versions()[-1]
        self._folder = f"v{self.version}-local-strict"
        definitions = kvu.schema_contents(f"kubernetes-json-schema/{self._folder}/_definitions.json", self.version)
        self._registry: Any = Resource.from_contents(definitions) @ Registry()
        self.gvks: set[tuple[str, str, str]] = set()
        for definition in (definitions.get("$defs") or definitions.get("definitions") or {}).values():
            for gvk in definition.get("x-kubernetes-group-version-kind") or []:
                self.gvks.add((gvk.get("group", ""), gvk.get("version"), gvk.get("kind")))
        self.groups = {group for group, _, _ in self.gvks}
        self._validators: dict[tuple[str, str, str], Any] = {}

    def covers(self, group: str) -> bool:
        """Groups Kubernetes serves, and dotless groups (``extensions``) whose versions it removed."""
        return group in self.groups or "." not in group

    def check(self, document: Document, group: str, version: str, kind: str) -> list[Finding]:
        key = (group, version, kind)
        if key not in self.gvks:
            others = sorted(f"{g}/{v}" if g else v for g, v, k in self.gvks if k == kind)
            api = f"{group}/{version}" if group else version
            served = f" (served as {', '.join(others)})" if others else ""
            return [document.finding("apiVersion", f"{api} {kind} is not served by Kubernetes {self.version}{served}")]
        if key not in self._validators:
            prefix = f"{group.split('.')[0]}-{version}" if group else version
            name = f"kubernetes-json-schema/{self._folder}/{kind.lower()}-{prefix}.json"
            schema = self._kvu.schema_contents(name, self.version)
            self._validators[key] = Validator(schema, registry=self._registry)
        return run_validator(self._validators[key], document)


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


def _json_type(value: Any) -> str:
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
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if close:
        message += f' (did you mean "{close[0]}"?)'
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
        yield path, f"expected {wanted}, got {_json_type(instance)} {short(instance)}"
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
            yield path, f"expected {' or '.join(dict.fromkeys(kinds))}, got {_json_type(instance)} {short(instance)}"
            return
        yield from explain(jsonschema.exceptions.best_match(context))
        return
    message = " ".join(str(error.message).split())
    yield path, message if len(message) <= 200 else message[:197] + "..."


@dataclass
class SchemaReport:
    findings: list[Finding]
    #: (apiVersion, kind) -> number of documents whose API group no schema covers.
    uncovered: dict[tuple[str, str], int]


def is_kustomize_file(document: Document) -> bool:
    api = document.body.get("apiVersion") if isinstance(document.body, dict) else None
    return isinstance(api, str) and api.startswith("kustomize.config.k8s.io/")


def check_documents(
    documents: list[Document], corpus: CrdCorpus, core: CoreSchemas, defined: set[tuple[str, str]]
) -> SchemaReport:
    """Check every object; ``defined`` holds (group, kind) pairs the tree's own CRDs and XRDs define.

    Kinds the tree defines itself (composite resources of its XRDs) are not checked here and are not
    reported as lacking a schema: their definition travels with them.
    """
    findings: list[Finding] = []
    uncovered: dict[tuple[str, str], int] = {}
    for document in documents:
        body = document.body
        if not isinstance(body, dict):
            findings.append(document.finding("(root)", f"expected an object, got {_json_type(body)}"))
            continue
        if is_kustomize_file(document):
            continue
        api, kind = body.get("apiVersion"), body.get("kind")
        if not isinstance(api, str) or not api or api.count("/") > 1:
            findings.append(document.finding("apiVersion", f"expected group/version or version, got {short(api)}"))
            continue
        if not isinstance(kind, str) or not kind:
            findings.append(document.finding("kind", f"expected a kind, got {short(kind)}"))
            continue
        group, version = api.split("/", 1) if "/" in api else ("", api)
        if corpus.covers(group):
            findings.extend(corpus.check(document, group, version, kind))
        elif core.covers(group):
            findings.extend(core.check(document, group, version, kind))
        elif (group, kind) not in defined:
            uncovered[(api, kind)] = uncovered.get((api, kind), 0) + 1
    return SchemaReport(findings, uncovered)


def defined_kinds(documents: list[Document]) -> set[tuple[str, str]]:
    """(group, kind) of every CustomResourceDefinition and CompositeResourceDefinition in the tree."""
    out: set[tuple[str, str]] = set()
    for document in documents:
        body = document.body
        if isinstance(body, dict) and body.get("kind") in ("CustomResourceDefinition", "CompositeResourceDefinition"):
            spec = body.get("spec") or {}
            kind = (spec.get("names") or {}).get("kind")
            if isinstance(spec.get("group"), str) and isinstance(kind, str):
                out.add((spec["group"], kind))
    return out


def warning_lines(uncovered: dict[tuple[str, str], int]) -> list[str]:
    """One line per apiVersion and kind no schema covers, for standard error."""
    lines = []
    for (api, kind), count in sorted(uncovered.items()):
        noun = "document" if count == 1 else "documents"
        lines.append(f"no schema for {api} {kind} ({count} {noun}): run 'fluxplane schemas pull' or pass --crds")
    return lines
