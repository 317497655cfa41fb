"""What a composite composes, compared between two trees: the comparison plan lists and the replacement guard judges.

A composite (an object of a kind an XRD defines: fluxplane's ``EKSCluster``, ``AppTable``, ``AppDatabase``, ...)
stands for the AWS resources its Composition composes. Its Composition, among those its cluster meets, is rendered
offline for the old tree's composite with the old tree's definitions and for the new one's with the new ones
(fluxplane.validate.compose.composer), and the two are compared managed resource by managed resource, by their
names in the Composition, each judged as one resource (fluxplane.synth.cloud): a resource whose kind changes
under one name is deleted and made anew. So a Composition that sets a field differently, or composes a resource
no more, shows as the change of each composite it renders, its composites unchanged. A composite that cannot be
rendered on either side says why, and nothing is compared (plan then compares the composite itself).

``fluxplane plan`` compares what each cluster applies (fluxplane.review.plan.resources); the replacement guard
(fluxplane.synth.guard) compares the files synth writes with the tree it replaces (:class:`ChangedTrees`), a
composite placed on the cluster its path names (fluxplane.core.layout.cluster_of), as validate renders it.

:class:`Texts` reads one tree's files: those holding a top-level ``kind:`` of the kinds asked for are parsed (once),
the others are never read as YAML.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from fluxplane.core.layout import cluster_of, is_cluster_overlay
from fluxplane.core.tree.objects import Key
from fluxplane.kinds import DEFINITION_KINDS, is_managed
from fluxplane.synth.cloud import DELETE, FORGET, ResourceAction, judge
from fluxplane.synth.hazards import document_key, field
from fluxplane.validate.changed import is_definition
from fluxplane.validate.compose.composer import Composer
from fluxplane.validate.compose.overlays import overlay_objects
from fluxplane.validate.tree import Document, load_documents

__all__ = [
    "DEFINITION_KINDS",
    "EVERY_KIND",
    "ChangedTrees",
    "ComposedChange",
    "Pair",
    "Rendering",
    "Texts",
    "changed_kinds",
    "compare",
    "composite_files",
    "definitions",
    "group_kind",
    "with_overlays",
]

#: Any composite kind: a Function changed.
EVERY_KIND = "*"

_KIND = re.compile(r"(?m)^kind: (\S+)\s*$")


class Texts:
    """One tree's files by path, parsed where asked (module docstring); ``kinds`` is shared by the trees compared,
    keyed by text: the top-level kinds of each file."""

    def __init__(self, files: Mapping[str, str], kinds: dict[str, frozenset[str]] | None = None) -> None:
        self.files = files
        self._parsed: dict[str, list[Document]] = {}
        self._kinds_of = {} if kinds is None else kinds
        self._by_kind: dict[str, list[str]] | None = None

    def documents(self, path: str) -> list[Document]:
        """The documents of one file (none when it does not parse)."""
        found = self._parsed.get(path)
        if found is None:
            found = self._parsed[path] = load_documents(self.files[path], path, typed=False)[0]
        return found

    def holding(self, kinds: Iterable[str]) -> list[str]:
        """The YAML files with a top-level ``kind:`` among ``kinds``, sorted."""
        if self._by_kind is None:
            self._by_kind = {}
            for path in sorted(self.files):
                if not path.endswith((".yaml", ".yml")):
                    continue
                text = self.files[path]
                found = self._kinds_of.get(text)
                if found is None:
                    found = self._kinds_of[text] = frozenset(_KIND.findall(text))
                for kind in found:
                    self._by_kind.setdefault(kind, []).append(path)
        return sorted({path for kind in set(kinds) for path in self._by_kind.get(kind, ())})

    def objects(
        self, kinds: Iterable[str], wanted: Callable[[dict[str, Any]], bool], mentions: Iterable[str] = ()
    ) -> list[Document]:
        """The documents of ``kinds`` that ``wanted`` accepts, in path order; with ``mentions``, only files whose
        text holds one of them are parsed."""
        chosen = set(kinds)
        needles = tuple(mentions)
        return [
            document
            for path in self.holding(chosen)
            if not needles or any(needle in self.files[path] for needle in needles)
            for document in self.documents(path)
            if isinstance(document.body, dict) and document.body.get("kind") in chosen and wanted(document.body)
        ]


def with_overlays(texts: Texts, documents: list[Document], wanted: Callable[[dict[str, Any]], bool]) -> list[Document]:
    """``documents`` and the clusters' overlays of them (fluxplane.validate.compose.overlays): the overlays that
    name a folder holding one of them are read, with the kustomization files of those folders."""
    folders = {document.file.rpartition("/")[0] for document in documents}
    needles = {"/".join(folder.split("/")[-2:]) for folder in folders if folder}
    configs: list[Document] = []
    for path, text in texts.files.items():
        name = path.rpartition("/")[2]
        if name != "kustomization.yaml":
            continue
        folder = path.rpartition("/")[0]
        overlay = is_cluster_overlay(folder)
        if folder in folders or (overlay and any(needle in text for needle in needles)):
            configs.extend(texts.documents(path))
    return [*documents, *overlay_objects([*documents, *configs], wanted)]


def definitions(texts: Texts) -> list[Document]:
    """The XRDs, Compositions and Functions of a tree, with the clusters' overlays of them."""

    def wanted(body: dict[str, Any]) -> bool:
        return is_definition(body) or (
            body.get("kind") == "Function" and "crossplane.io" in str(body.get("apiVersion"))
        )

    found = texts.objects(DEFINITION_KINDS, wanted)
    return with_overlays(texts, found, lambda body: is_definition(body) and body.get("kind") != "Function")


def changed_kinds(before: Iterable[Document], after: Iterable[Document]) -> frozenset[str]:
    """The composite kinds whose definitions differ between two trees (EVERY_KIND when a Function does)."""

    def by_kind(documents: Iterable[Document]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for document in documents:
            body = document.body
            if body.get("kind") == "Function":
                kind = EVERY_KIND
            elif body.get("kind") == "Composition":
                kind = str(field(body, ("spec", "compositeTypeRef", "kind")))
            else:
                kind = str(field(body, ("spec", "names", "kind")))
            text = json.dumps([cluster_of(document.file), body], sort_keys=True, default=str)
            found.setdefault(kind, []).append(text)
        return {kind: sorted(texts) for kind, texts in found.items()}

    old, new = by_kind(before), by_kind(after)
    return frozenset(kind for kind in set(old) | set(new) if old.get(kind) != new.get(kind))


def composite_files(texts: Texts, kinds: frozenset[str], documents: Iterable[Document]) -> list[str]:
    """The files of a tree holding composites of ``kinds`` (every kind the XRDs among ``documents`` define, for
    EVERY_KIND)."""
    if EVERY_KIND in kinds:
        kinds = frozenset(
            str(field(document.body, ("spec", "names", "kind")))
            for document in documents
            if document.kind == "CompositeResourceDefinition"
        )
    return texts.holding(kinds) if kinds else []


def group_kind(body: Mapping[str, Any]) -> tuple[str, str]:
    """An object's API group and kind."""
    api = str(body.get("apiVersion") or "")
    return (api.rpartition("/")[0] if "/" in api else "", str(body.get("kind") or ""))


@dataclass(frozen=True)
class ComposedChange:
    """What happens to one AWS resource a composite composes: its name in the Composition, the verdict, and its
    managed resource on either side (None where it is not composed)."""

    name: str
    verdict: ResourceAction
    old: Mapping[str, Any] | None
    new: Mapping[str, Any] | None

    @property
    def body(self) -> Mapping[str, Any]:
        """The managed resource as a reader names it: the one that goes for a deletion, else the one that will be."""
        chosen = self.old if self.new is None or self.verdict.action in (DELETE, FORGET) else self.new
        assert chosen is not None
        return chosen


@dataclass(frozen=True)
class Rendering:
    """A composite rendered on both sides and compared (module docstring)."""

    changes: tuple[ComposedChange, ...] = ()
    #: The sides rendered (a side without the composite is not).
    rendered: int = 0
    #: Why a side could not be rendered: then nothing was compared.
    reasons: tuple[str, ...] = ()


def compare(
    before: Composer, after: Composer, cluster: str | None, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
) -> Rendering:
    """What the composite that was ``old`` (composed by ``before``) and becomes ``new`` (by ``after``), placed on
    ``cluster``, does to the AWS resources it composes; None for a side without it."""
    composed = []
    reasons: list[str] = []
    for composer, body in ((before, old), (after, new)):
        result = composer.compose(dict(body), cluster) if body is not None else None
        if result is not None and result.reason:
            reasons.append(result.reason)
        composed.append(result)
    rendered = sum(result is not None for result in composed)
    if reasons:
        return Rendering(rendered=rendered, reasons=tuple(reasons))
    old_resources = composed[0].resources if composed[0] is not None else {}
    new_resources = composed[1].resources if composed[1] is not None else {}
    changes: list[ComposedChange] = []
    for name in [*old_resources, *(name for name in new_resources if name not in old_resources)]:
        was, now = old_resources.get(name), new_resources.get(name)
        # another kind under the same name is another resource: the old one deleted, the new one made
        pairs = [(was, None), (None, now)] if was and now and group_kind(was) != group_kind(now) else [(was, now)]
        for first, second in pairs:
            group, kind = group_kind(second if second is not None else first or {})
            if not is_managed(group):
                continue
            verdict = judge(group, kind, first, second)
            if verdict is not None:
                changes.append(ComposedChange(name, verdict, first, second))
    return Rendering(tuple(changes), rendered)


@dataclass(frozen=True)
class Pair:
    """A composite in both trees, in the file of the new one that holds it, that may compose otherwise."""

    path: str
    key: Key
    old: dict[str, Any]
    new: dict[str, Any]


class ChangedTrees:
    """Two trees as the guard holds them: the new one's files, and the old one's texts of the paths whose content
    differs (None for a new path). The old tree's definitions are read only when ``definitions_changed`` (a changed
    file may hold one); else they are the new tree's, and one Composer renders both sides."""

    def __init__(self, files: Mapping[str, str], changed: Mapping[str, str | None], definitions_changed: bool) -> None:
        self.changed = changed
        kinds: dict[str, frozenset[str]] = {}
        self.after = Texts(files, kinds)
        old = {path: text for path, text in files.items() if path not in changed}
        old.update((path, text) for path, text in changed.items() if text is not None)
        self.before = Texts(old, kinds)
        self.definitions_changed = definitions_changed

    @functools.cached_property
    def _definitions(self) -> tuple[list[Document], list[Document]]:
        after = definitions(self.after)
        return (definitions(self.before) if self.definitions_changed else after), after

    @functools.cached_property
    def composers(self) -> tuple[Composer, Composer]:
        """The old tree's Composer and the new one's: the same when no definition changed."""
        before, after = self._definitions
        composer = Composer(after)
        return (Composer(before) if before is not after else composer), composer

    @functools.cached_property
    def kinds(self) -> frozenset[str]:
        """The composite kinds whose definitions differ (changed_kinds)."""
        before, after = self._definitions
        return changed_kinds(before, after) if before is not after else frozenset()

    def _composites(self, texts: Texts, composer: Composer, paths: Iterable[str]) -> dict[Key, tuple[str, Any]]:
        found: dict[Key, tuple[str, Any]] = {}
        for path in paths:
            cluster = cluster_of(path)
            documents = texts.documents(path) if path in self.changed else self.after.documents(path)
            for document in documents:
                key = document_key(document.body) if isinstance(document.body, dict) else None
                if key is not None and composer.definition(key[0], key[1], cluster) is not None:
                    found.setdefault(key, (path, document.body))
        return found

    def pairs(self) -> Iterator[Pair]:
        """The composites in both trees that may compose otherwise: those whose object changes, and every one of a
        kind whose definitions do."""
        before, after = self.composers
        defined = {kind for composer in (before, after) for (_, _, kind) in composer.cluster_xrds}
        kinds = self.kinds
        old_paths, new_paths = (
            {
                *(path for path in texts.holding(defined) if path in self.changed),
                *composite_files(texts, kinds, documents),
            }
            for texts, documents in zip((self.before, self.after), self._definitions, strict=True)
        )
        was = self._composites(self.before, before, sorted(old_paths))
        now = self._composites(self.after, after, sorted(new_paths))
        for key in sorted(was.keys() & now.keys()):
            (_, old), (path, new) = was[key], now[key]
            if old != new or EVERY_KIND in kinds or key[1] in kinds:
                yield Pair(path, key, old, new)

    def compare(self, pair: Pair) -> Rendering:
        """What ``pair``'s composite does to the AWS resources it composes (:func:`compare`)."""
        before, after = self.composers
        return compare(before, after, cluster_of(pair.path), pair.old, pair.new)
