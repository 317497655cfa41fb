"""Strict schema checks: custom resources against their CRDs, core kinds against Kubernetes' own schemas.

Schemas are read in the strict dialect of :mod:`fluxplane.validate.strict`. Each schema is compiled once
per apiVersion and kind; CRD files are parsed when their API group is first needed. Core kinds use the
strict schemas of the ``kubernetes-validate`` package for the newest Kubernetes it ships.

The CRDs of every kind fluxplane emits ship with it (:data:`SHIPPED_CRDS`: one ``<group>.json.gz`` per API
group, a JSON list of its CRDs, with ``SOURCES.json`` and ``NOTICE`` saying where each comes from and under
which licence), so validate needs no network; ``fluxplane schemas pull`` refreshes them into a cache.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from referencing import Registry, Resource

from fluxplane import __version__
from fluxplane.packs.auto_mode import EKS_API
from fluxplane.system.keys import content_hash
from fluxplane.validate.findings import Finding, short
from fluxplane.validate.strict import (
    PLACEHOLDER,
    Validator,
    convert_schema,
    document_schema,
    explain,
    json_type,
    object_meta_schema,
    prune_nulls,
    run_validator,
    unknown_field,
)
from fluxplane.validate.tree import Document, ManifestLoader, ValidateError

# The strict dialect's names stay importable from here, where the other checks have taken them.
__all__ = [
    "CACHE_ENV",
    "PLACEHOLDER",
    "PULLED_BY",
    "SHIPPED_CRDS",
    "CoreSchemas",
    "CrdCorpus",
    "SchemaReport",
    "Validator",
    "cache_dir",
    "check_documents",
    "convert_schema",
    "default_crd_dirs",
    "defined_kinds",
    "document_schema",
    "explain",
    "is_kustomize_file",
    "object_meta_schema",
    "prune_nulls",
    "run_validator",
    "unknown_field",
    "warning_lines",
]

#: The CRD folders validate reads instead of its defaults (os.pathsep-separated).
CACHE_ENV = "FLUXPLANE_CRDS"
#: The CRDs fluxplane ships (built by scripts/build_crds.py).
SHIPPED_CRDS = Path(__file__).parent / "data" / "crds"
#: The file ``fluxplane schemas pull`` leaves in the folder it fills: the fluxplane that pulled, one line.
PULLED_BY = "pulled-by.txt"
#: A CRD file of the shipped kind: one API group's CRDs, a gzip-compressed JSON list.
_BUNDLE = ".json.gz"


def cache_dir() -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/fluxplane/crds``: the cache ``fluxplane schemas pull`` fills."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fluxplane" / "crds"


def pulled_by() -> str:
    """What ``schemas pull`` writes to :data:`PULLED_BY`: this fluxplane."""
    return f"fluxplane {__version__}\n"


def default_crd_dirs() -> list[Path]:
    """``$FLUXPLANE_CRDS``, else the schema cache when this fluxplane pulled it, else the CRDs fluxplane ships.

    A cache pulled by another fluxplane version (or by none that says so) holds the CRDs of that version's pins:
    the shipped ones are newer for this one, so they win until ``schemas pull`` runs again.
    """
    configured = os.environ.get(CACHE_ENV, "")
    if configured:
        return [Path(item) for item in configured.split(os.pathsep) if item]
    cache = cache_dir()
    try:
        stamp = (cache / PULLED_BY).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        stamp = ""
    return [cache] if stamp == pulled_by() else [SHIPPED_CRDS]


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
                if not path.name.endswith((".yaml", ".yml", _BUNDLE)) or not path.is_file():
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

    def identity(self) -> list[Any]:
        """What the checks against this corpus depend on: its files (path, content) by group, and the partial groups."""
        files: list[Any] = []
        for group, paths in sorted(self.group_files.items()):
            for path in paths:
                try:
                    files.append([group, str(path), content_hash(path.read_bytes())])
                except OSError as exc:
                    files.append([group, str(path), str(exc)])
        return [files, sorted(self.partial_groups)]

    def _groups_of(self, path: Path) -> set[str]:
        if path.name.endswith(_BUNDLE):
            return {path.name.removesuffix(_BUNDLE)}
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
            if path.name.endswith(_BUNDLE):
                documents = json.loads(gzip.decompress(path.read_bytes()))
            else:
                source = text if text is not None else path.read_text(encoding="utf-8")
                documents = list(yaml.load_all(source, Loader=ManifestLoader))
        except (OSError, UnicodeDecodeError) as exc:
            raise ValidateError(f"{path}: cannot read CRD file: {exc}") from exc
        except (yaml.YAMLError, ValueError, EOFError, zlib.error) as exc:
            first = " ".join(str(exc).split())
            raise ValidateError(f"{path}: cannot parse CRD file: {first}") from exc
        if not isinstance(documents, list):
            raise ValidateError(f"{path}: cannot parse CRD file: expected a list of CRDs")
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
            findings.append(document.finding("(root)", f"expected an object, got {json_type(body)}"))
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


#: Kinds fluxplane emits whose makers publish no CRD, so no corpus can hold their schema: why, instead of the way
#: to fetch one. EKS Auto Mode's NodeClass is built into the cluster (fluxplane.packs.auto_mode holds it to the
#: fields EKS documents).
UNPUBLISHED = {(EKS_API, "NodeClass"): "EKS Auto Mode's own kind, whose CRD AWS does not publish"}


def warning_lines(uncovered: dict[tuple[str, str], int]) -> list[str]:
    """One line per apiVersion and kind no schema covers, for standard error."""
    lines = []
    for (api, kind), count in sorted(uncovered.items()):
        noun = "document" if count == 1 else "documents"
        unpublished = UNPUBLISHED.get((api, kind))
        why = f"not checked: {unpublished}" if unpublished else "run 'fluxplane schemas pull' or pass --crds"
        lines.append(f"no schema for {api} {kind} ({count} {noun}): {why}")
    return lines
