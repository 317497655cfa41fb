"""The Crossplane definitions a cluster's own overlay makes of the catalogue's, for rendering its composites.

A cluster whose pack config differs from its environment's gets the pack as an overlay
(``<repository>/clusters/<cluster>/overlays/<pack>/``): the catalogue's folder, with JSON 6902 patches
(``op`` add, replace or remove, targeted by kind and name) and ``$patch: delete``. A cluster that makes its
apps' resources runs the app kinds' Compositions so changed; its composites must be rendered with those, not
with the hub's. This module reads each such overlay's XRDs and Compositions with their patches applied, as
documents of the overlay's kustomization file, which fluxplane.validate.compose.checks then prefers for the
composites of that cluster.
"""

from __future__ import annotations

import copy
import posixpath
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import yaml

from fluxplane.core.tree.kustomize import Folders
from fluxplane.validate.changed import is_definition
from fluxplane.validate.tree import Document

_KINDS = ("CompositeResourceDefinition", "Composition")


def cluster_of(file: str) -> str | None:
    """The cluster a file of the tree is for when its path says so (``.../clusters/<cluster>/...``: the cluster's
    entry point, its overlays, its tenants); None for what the hub applies or what clusters share (the catalogue)."""
    parts = file.split("/")
    for index, part in enumerate(parts[:-2]):
        if part == "clusters":
            return parts[index + 1]
    return None


def _pointer(path: str) -> list[str]:
    return [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]]


def _apply(doc: Any, operation: dict[str, Any]) -> None:
    """One JSON 6902 operation (add, replace, remove) on ``doc``; others, and paths that miss, change nothing."""
    parts = _pointer(str(operation.get("path", "")))
    if not parts:
        return
    parent = doc
    for part in parts[:-1]:
        if isinstance(parent, dict) and part in parent:
            parent = parent[part]
        elif isinstance(parent, list) and part.isdigit() and int(part) < len(parent):
            parent = parent[int(part)]
        else:
            return
    last, op = parts[-1], operation.get("op")
    if isinstance(parent, dict):
        if op in ("add", "replace"):
            parent[last] = copy.deepcopy(operation.get("value"))
        elif op == "remove":
            parent.pop(last, None)
    elif isinstance(parent, list) and (last.isdigit() or last == "-"):
        index = len(parent) if last == "-" else int(last)
        if op == "add" and index <= len(parent):
            parent.insert(index, copy.deepcopy(operation.get("value")))
        elif op == "replace" and index < len(parent):
            parent[index] = copy.deepcopy(operation.get("value"))
        elif op == "remove" and index < len(parent):
            del parent[index]


def _patched(doc: dict[str, Any], patches: list[Any]) -> dict[str, Any]:
    name = (doc.get("metadata") or {}).get("name")
    for patch in patches:
        if not isinstance(patch, dict) or not isinstance(patch.get("patch"), str):
            continue
        target = patch.get("target") or {}
        if target.get("kind") != doc.get("kind") or target.get("name") != name:
            continue
        operations = yaml.safe_load(patch["patch"])
        if isinstance(operations, list):
            for operation in operations:
                if isinstance(operation, dict):
                    _apply(doc, operation)
    return doc


def _overlay_definition(doc: dict[str, Any]) -> bool:
    return is_definition(doc) and doc.get("kind") in _KINDS


def overlay_definitions(documents: Iterable[Document]) -> Iterator[Document]:
    """The XRDs and Compositions of every cluster overlay among ``documents``, patched, as documents of its
    kustomization file."""
    return overlay_objects(documents, _overlay_definition)


def overlay_objects(documents: Iterable[Document], wanted: Callable[[dict[str, Any]], bool]) -> Iterator[Document]:
    """The objects ``wanted`` accepts of every cluster overlay among ``documents``, patched, as documents of its
    kustomization file."""
    by_file: dict[str, list[Any]] = {}
    for document in documents:
        bodies = by_file.setdefault(document.file, [])
        bodies.extend([None] * (document.index - 1 - len(bodies)))
        bodies.append(document.body)
    folders = Folders(by_file)
    configs = sorted(posixpath.dirname(file) for file in by_file if posixpath.basename(file) == "kustomization.yaml")
    for folder in configs:
        if cluster_of(f"{folder}/kustomization.yaml") is None or "/overlays/" not in f"/{folder}/":
            continue
        config_file = posixpath.join(folder, "kustomization.yaml")
        config = next(iter(by_file.get(config_file) or [None]), None)
        patches = (config.get("patches") or []) if isinstance(config, dict) else []
        index = 0
        for item in folders.build(folder).items:
            if not wanted(item.doc):
                continue
            index += 1
            yield Document(config_file, index, _patched(copy.deepcopy(item.doc), patches))
