"""Reference selectors of composed resources: each must select something that will exist.

A managed resource resolves ``<field>Selector`` only while ``<field>`` and ``<field>Ref`` (or the list
forms ``<field>s``/``<field>Refs``) are unset. It lists resources of the kind the field references (see
:func:`~fluxplane.validate.compose.paths.selector_target`) carrying every ``matchLabels`` label: with
``matchControllerRef: true`` only those with the same controller (composed for the same XR, so the same
render), otherwise any in the selector's ``namespace`` or the resource's own (for a namespaced kind),
composed by any render or placed in the tree. A label only the cluster knows matches any value.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fluxplane.validate.compose.composition import CompositionModel, SchemaOf, split_api
from fluxplane.validate.compose.engine import DesiredResource
from fluxplane.validate.compose.fieldpath import Unknown
from fluxplane.validate.compose.paths import raw_node, selector_target
from fluxplane.validate.findings import format_path
from fluxplane.validate.tree import Document

_SHOWN = 3
#: (group, kind) -> "Namespaced", "Cluster" or None when not known
ScopeOf = Callable[[str, str], str | None]


@dataclass
class RenderedResource:
    """A composed resource of one render."""

    render: int
    xr: str
    model: CompositionModel
    composed: DesiredResource
    group: str
    version: str
    kind: str
    namespace: str

    @property
    def labels(self) -> dict[str, Any]:
        return dict((self.composed.body.get("metadata") or {}).get("labels") or {})


@dataclass(frozen=True)
class SelectorProblem:
    placed: RenderedResource
    #: the selector's path in the composed resource
    parts: list[str | int]
    message: str


def labels_match(wanted: dict[str, Any], labels: dict[str, Any]) -> bool:
    for key, value in wanted.items():
        if key not in labels:
            return False
        have = labels[key]
        if not (isinstance(value, Unknown) or isinstance(have, Unknown) or have == value):
            return False
    return True


def find_selectors(value: Any, parts: list[str | int]) -> list[tuple[list[str | int], dict[str, Any], dict[str, Any]]]:
    """(path, selector, the object holding it) of every ``*Selector`` with matchControllerRef or matchLabels."""
    out: list[tuple[list[str | int], dict[str, Any], dict[str, Any]]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if (
                key.endswith("Selector")
                and isinstance(item, dict)
                and (item.get("matchControllerRef") is True or isinstance(item.get("matchLabels"), dict))
            ):
                out.append(([*parts, key], item, value))
            else:
                out.extend(find_selectors(item, [*parts, key]))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(find_selectors(item, [*parts, index]))
    return out


class _Selectors:
    def __init__(
        self,
        placed: list[RenderedResource],
        documents: list[Document],
        schema_of: SchemaOf,
        scope_of: ScopeOf,
        incomplete: frozenset[str] = frozenset(),
    ) -> None:
        self.placed = placed
        self.incomplete = incomplete
        self.schema_of = schema_of
        self.scope_of = scope_of
        self.index: dict[tuple[str, str, int | str], list[RenderedResource]] = defaultdict(list)
        for item in placed:
            self.index[(item.group, item.kind, item.render)].append(item)
            self.index[(item.group, item.kind, item.namespace)].append(item)
        self.tree: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        for document in documents:
            meta = document.body.get("metadata") or {}
            entry = (str(meta.get("namespace") or ""), dict(meta.get("labels") or {}))
            self.tree[(split_api(document.body.get("apiVersion"))[0], document.kind)].append(entry)
        self.targets: dict[tuple[str, str, str, tuple[str | int, ...]], tuple[str, str] | None] = {}

    def run(self) -> list[SelectorProblem]:
        out: list[SelectorProblem] = []
        for item in self.placed:
            for parts, selector, holder in find_selectors(item.composed.body.get("spec"), ["spec"]):
                name = str(parts[-1])
                stem = name.removesuffix("Selector")
                if any(
                    holder.get(key) not in (None, "", []) for key in (stem, f"{stem}s", f"{stem}Ref", f"{stem}Refs")
                ):
                    continue
                slot = (item.group, item.version, item.kind, tuple(parts))
                if slot not in self.targets:
                    schema = self.schema_of(item.group, item.version, item.kind)
                    self.targets[slot] = selector_target(item.group, name, raw_node(schema, parts))
                target = self.targets[slot]
                if target is not None:
                    message = self._check(item, parts, selector, target)
                    if message is not None:
                        out.append(SelectorProblem(item, parts, message))
        return out

    def _check(
        self, item: RenderedResource, parts: list[str | int], selector: dict[str, Any], target: tuple[str, str]
    ) -> str | None:
        wanted = dict(selector.get("matchLabels") or {})
        controller = selector.get("matchControllerRef") is True
        namespaced = self.scope_of(*target) != "Cluster"
        namespace = str(selector.get("namespace") or item.namespace) if namespaced else ""
        if controller:
            candidates = [
                other
                for other in self.index.get((*target, item.render), [])
                if not namespaced or other.namespace == namespace
            ]
        elif namespaced:
            if namespace in self.incomplete:
                # a render there failed (reported on its own): what it would compose is unknown
                return None
            candidates = list(self.index.get((*target, namespace), []))
        else:
            candidates = [
                other for (group, kind, _), items in self.index.items() if (group, kind) == target for other in items
            ]
        if any(labels_match(wanted, other.labels) for other in candidates):
            return None
        if not controller and any(
            (not namespaced or own == namespace) and labels_match(wanted, labels)
            for own, labels in self.tree.get(target, [])
        ):
            return None
        group, kind = target
        scope = "composed for the same XR (matchControllerRef)" if controller else f'in namespace "{namespace}"'
        shown_labels = ", ".join(f"{key}={value}" for key, value in sorted(wanted.items(), key=lambda pair: pair[0]))
        message = f"{format_path(parts)} selects no {kind} ({group}) {scope}" + (
            f" with labels {shown_labels}" if shown_labels else ""
        )
        if not candidates:
            return message + (": none is composed" if controller else ": there is none")
        described: list[str] = []
        for other in sorted(candidates, key=lambda candidate: not any(key in candidate.labels for key in wanted)):
            labels = ", ".join(f"{key}={other.labels[key]}" for key in wanted if key in other.labels)
            owner = "" if controller else f" of {other.xr}"
            text = f'"{other.composed.name}"{owner} has {labels or "none of these labels"}'
            if text not in described:
                described.append(text)
        more = len(described) - _SHOWN
        return message + ": " + "; ".join(described[:_SHOWN]) + (f"; and {more} more" if more > 0 else "")


def selector_problems(
    placed: list[RenderedResource],
    documents: list[Document],
    schema_of: SchemaOf,
    scope_of: ScopeOf,
    incomplete: frozenset[str] = frozenset(),
) -> list[SelectorProblem]:
    """Every selector of ``placed`` that selects nothing, with what there is instead; a selector across composites
    of a namespace in ``incomplete``, where a render failed, is not judged."""
    return _Selectors(placed, documents, schema_of, scope_of, incomplete).run()
