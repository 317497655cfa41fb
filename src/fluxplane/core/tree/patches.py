"""A kustomization's patches, applied to the objects of its build the way kustomize applies them.

Each entry of ``patches`` (and the older ``patchesJson6902`` and ``patchesStrategicMerge``) is a patch and
the objects it targets:

* a JSON 6902 patch (a list of operations: ``add``, ``remove``, ``replace``, ``move``, ``copy``, ``test``)
  applies to the objects its ``target`` selects;
* a strategic-merge patch (an object) applies to the objects its ``target`` selects, or to the object it
  names itself (apiVersion, kind, name and namespace); maps merge key by key, a ``null`` removes a key, lists are
  replaced, and ``$patch: delete`` removes the object (kustomize merges lists of containers, ports and the
  like by key: a patch of fluxplane's own never patches into such a list, and one of the user's that does is
  read as replacing it).

A ``target`` selects by group, version, kind, name and namespace (``name`` and ``namespace`` are regular
expressions, matched whole, as in kustomize) and by ``labelSelector`` and ``annotationSelector`` (``key=value``
and ``key`` terms, comma-separated). Patched objects are copies: the documents of the tree never change (a copy
shares with the document what its patch leaves alone).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fluxplane.core.tree.objects import Document, group_of, metadata_of

#: A patch that removes the object it names, in a strategic-merge patch.
DELETE = "delete"


class PatchError(ValueError):
    """A patch kustomize would refuse (an operation on a path the object does not have)."""


@dataclass(frozen=True)
class KustomizePatch:
    """One patch of a kustomization file and the objects it applies to."""

    body: Any
    """The operations (a list: JSON 6902) or the object (a mapping: strategic merge)."""
    target: Mapping[str, Any] | None = None
    """The selector of ``patches`` or ``patchesJson6902``; None: the object a strategic-merge patch names."""

    @property
    def deletes(self) -> bool:
        return isinstance(self.body, Mapping) and self.body.get("$patch") == DELETE

    def selects(self, doc: Mapping[str, Any]) -> bool:
        if self.target is not None:
            return _selected(self.target, doc)
        if not isinstance(self.body, Mapping):
            return False
        wanted, metadata = metadata_of(self.body), metadata_of(doc)
        api_version = self.body.get("apiVersion")
        return (
            (not api_version or api_version == doc.get("apiVersion"))
            and self.body.get("kind") == doc.get("kind")
            and wanted.get("name") == metadata.get("name")
            and (not wanted.get("namespace") or wanted.get("namespace") == metadata.get("namespace"))
        )

    def apply(self, doc: Document) -> Document | None:
        """``doc`` patched (a copy), or None when the patch deletes it."""
        if self.deletes:
            return None
        if isinstance(self.body, list):
            return _json6902(doc, self.body)
        if isinstance(self.body, Mapping):
            merged = _merge(doc, self.body)
            return merged if isinstance(merged, dict) else doc
        return doc


def patches_of(entries: Iterable[tuple[Mapping[str, Any] | None, Sequence[Any]]]) -> list[KustomizePatch]:
    """The patches of a kustomization file's entries: (target or None, the documents of the patch's text)."""
    found: list[KustomizePatch] = []
    for target, documents in entries:
        for body in documents:
            if isinstance(body, list) or (isinstance(body, Mapping) and body):
                found.append(KustomizePatch(body, target))
    return found


def apply_patches(docs: Sequence[Document], patches: Sequence[KustomizePatch]) -> list[Document | None]:
    """Each of ``docs`` with every patch that selects it applied in order (None: deleted); a document no
    patch selects is returned as it is."""
    result: list[Document | None] = []
    for doc in docs:
        current: Document | None = doc
        for patch in patches:
            if current is None:
                break
            if patch.selects(current):
                current = patch.apply(current)
        result.append(current)
    return result


# -- selection ---------------------------------------------------------------------------------------


def _whole(pattern: Any, value: str) -> bool:
    if not isinstance(pattern, str) or not pattern:
        return True
    try:
        return re.fullmatch(pattern, value) is not None
    except re.error:
        return pattern == value


def _selector(text: Any, values: Mapping[str, Any]) -> bool:
    if not isinstance(text, str) or not text.strip():
        return True
    for term in (part.strip() for part in text.split(",")):
        if "!=" in term:
            key, _, value = term.partition("!=")
            if str(values.get(key.strip())) == value.strip():
                return False
        elif "=" in term:
            key, _, value = term.replace("==", "=").partition("=")
            if str(values.get(key.strip())) != value.strip():
                return False
        elif term.startswith("!"):
            if term[1:] in values:
                return False
        elif term not in values:
            return False
    return True


def _selected(target: Mapping[str, Any], doc: Mapping[str, Any]) -> bool:
    api_version = doc.get("apiVersion")
    version = api_version.rpartition("/")[2] if isinstance(api_version, str) else ""
    metadata = metadata_of(doc)
    labels = metadata.get("labels")
    annotations = metadata.get("annotations")
    group = target.get("group")
    return (
        (group is None or group == group_of(api_version))
        and (not target.get("version") or target.get("version") == version)
        and (not target.get("kind") or target.get("kind") == doc.get("kind"))
        and _whole(target.get("name"), str(metadata.get("name") or ""))
        and _whole(target.get("namespace"), str(metadata.get("namespace") or ""))
        and _selector(target.get("labelSelector"), labels if isinstance(labels, Mapping) else {})
        and _selector(target.get("annotationSelector"), annotations if isinstance(annotations, Mapping) else {})
    )


# -- JSON 6902 ----------------------------------------------------------------------------------------


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise PatchError(f"not a JSON pointer: {path!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]] if path else []


def _parent(doc: Any, parts: list[str]) -> tuple[Any, str]:
    node = doc
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise PatchError(f"no such path: /{'/'.join(parts)}")
    return node, parts[-1]


def _get(doc: Any, parts: list[str]) -> Any:
    if not parts:
        return doc
    node, last = _parent(doc, parts)
    if isinstance(node, dict) and last in node:
        return node[last]
    if isinstance(node, list) and last.isdigit() and int(last) < len(node):
        return node[int(last)]
    raise PatchError(f"no such path: /{'/'.join(parts)}")


def _add(doc: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    node, last = _parent(doc, parts)
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list) and (last == "-" or (last.isdigit() and int(last) <= len(node))):
        node.insert(len(node) if last == "-" else int(last), value)
    else:
        raise PatchError(f"no such path: /{'/'.join(parts)}")
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    node, last = _parent(doc, parts)
    if isinstance(node, dict) and last in node:
        del node[last]
    elif isinstance(node, list) and last.isdigit() and int(last) < len(node):
        del node[int(last)]
    else:
        raise PatchError(f"no such path: /{'/'.join(parts)}")
    return doc


def _replace(doc: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    _get(doc, parts)
    node, last = _parent(doc, parts)
    if isinstance(node, dict):
        node[last] = value
    else:
        node[int(last)] = value
    return doc


def _writable(doc: Any, parts: list[str], copied: set[int]) -> None:
    """Make the maps and lists on the way to ``parts``' parent copies of their own, those not copied yet: an operation
    changes only that parent, so what it leaves alone is shared with the tree's document, which never changes."""
    node = doc
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            key: Any = part
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            key = int(part)
        else:
            return  # the operation finds no such path and says so
        child = node[key]
        if isinstance(child, dict | list) and id(child) not in copied:
            child = node[key] = dict(child) if isinstance(child, dict) else list(child)
            copied.add(id(child))
        node = child


def _json6902(doc: Document, operations: Sequence[Any]) -> Document:
    patched: Any = dict(doc)
    # the containers copied so far (held by ``patched``, so their ids stay theirs)
    copied = {id(patched)}
    for operation in operations:
        if not isinstance(operation, Mapping):
            raise PatchError(f"not an operation: {operation!r}")
        op, parts = operation.get("op"), _pointer(operation.get("path"))
        if op in ("add", "remove", "replace", "move", "copy") and isinstance(patched, dict | list):
            if id(patched) not in copied:
                patched = dict(patched) if isinstance(patched, dict) else list(patched)
                copied.add(id(patched))
            _writable(patched, parts, copied)
        if op == "add":
            patched = _add(patched, parts, copy.deepcopy(operation.get("value")))
        elif op == "remove":
            patched = _remove(patched, parts)
        elif op == "replace":
            patched = _replace(patched, parts, copy.deepcopy(operation.get("value")))
        elif op in ("move", "copy"):
            source = _pointer(operation.get("from"))
            value = copy.deepcopy(_get(patched, source))
            if op == "move":
                _writable(patched, source, copied)
                patched = _remove(patched, source)
            patched = _add(patched, parts, value)
        elif op == "test":
            if _get(patched, parts) != operation.get("value"):
                raise PatchError(f"test failed at {operation.get('path')}")
        else:
            raise PatchError(f"unknown operation: {op!r}")
    if not isinstance(patched, dict):
        raise PatchError("the patch does not leave an object")
    return patched


# -- strategic merge ----------------------------------------------------------------------------------


def _merge(base: Any, patch: Any) -> Any:
    if not isinstance(base, dict) or not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    merged = dict(base)
    for key, value in patch.items():
        if isinstance(key, str) and key.startswith("$"):
            continue
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = _merge(base.get(key), value)
    return merged
