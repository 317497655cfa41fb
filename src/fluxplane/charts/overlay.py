"""Express one set of objects as a kustomize overlay over another.

The catalogue renders each add-on once per distinct configuration (the base, an environment, a
cluster). An overlay must build to exactly the child's objects, and read as a small patch, so:

* an object only the child has is added as a resource;
* an object only the parent has is removed with a ``$patch: delete`` patch;
* an object both have but that differs gets one JSON 6902 patch with an op per changed field
  (lists are replaced whole). JSON 6902 is exact for every kind, where a strategic-merge patch would
  merge some built-in lists by key instead of replacing them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fluxplane.constructs.props import Patch, PatchSelector

ObjectKey = tuple[str, str, str, str]


def object_key(doc: dict[str, Any]) -> ObjectKey:
    metadata = doc.get("metadata", {})
    return (doc["apiVersion"], doc["kind"], metadata.get("namespace", ""), metadata["name"])


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _multiline(value: Any) -> bool:
    if isinstance(value, str):
        return "\n" in value
    if isinstance(value, dict):
        return any(_multiline(item) for item in value.values())
    if isinstance(value, list):
        return any(_multiline(item) for item in value)
    return False


def _op(op: str, path: str, value: Any) -> dict[str, Any]:
    """One operation. kustomize drops the final newline of a ``|`` block that ends the patch text, so a
    value holding multi-line strings is written before the path, never last."""
    if _multiline(value):
        return {"op": op, "value": value, "path": path}
    return {"op": op, "path": path, "value": value}


def json_patch_ops(parent: Any, child: Any, path: str = "") -> list[dict[str, Any]]:
    """JSON 6902 operations that turn ``parent`` into ``child`` (mappings recursed, lists replaced)."""
    if isinstance(parent, dict) and isinstance(child, dict):
        ops: list[dict[str, Any]] = []
        for key, value in parent.items():
            sub = f"{path}/{_escape(key)}"
            if key not in child:
                ops.append({"op": "remove", "path": sub})
            else:
                ops.extend(json_patch_ops(value, child[key], sub))
        for key, value in child.items():
            if key not in parent:
                ops.append(_op("add", f"{path}/{_escape(key)}", value))
        return ops
    if parent == child and type(parent) is type(child):
        return []
    return [_op("replace", path, child)]


def _selector(key: ObjectKey) -> PatchSelector:
    api_version, kind, namespace, name = key
    group, _, version = api_version.rpartition("/")
    return PatchSelector(group=group or None, version=version, kind=kind, name=name, namespace=namespace or None)


@dataclass
class OverlayPlan:
    """What an overlay directory holds: added objects and patches, in a stable order."""

    added: list[dict[str, Any]] = field(default_factory=list)
    patches: list[Patch] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.added and not self.patches


def plan_overlay(parent: list[dict[str, Any]], child: list[dict[str, Any]], dump: Any) -> OverlayPlan:
    """Plan the overlay turning ``parent`` into ``child``; ``dump`` renders a patch body to YAML."""
    parents = {object_key(doc): doc for doc in parent}
    children = {object_key(doc): doc for doc in child}
    plan = OverlayPlan()
    for key, doc in children.items():
        if key not in parents:
            plan.added.append(doc)
            continue
        ops = json_patch_ops(parents[key], doc)
        if ops:
            plan.patches.append(Patch(patch=dump(ops), target=_selector(key)))
    for key, doc in parents.items():
        if key not in children:
            deletion = {
                "$patch": "delete",
                "apiVersion": doc["apiVersion"],
                "kind": doc["kind"],
                "metadata": {k: v for k, v in doc["metadata"].items() if k in ("name", "namespace")},
            }
            plan.patches.append(Patch(patch=dump(deletion)))
    return plan
