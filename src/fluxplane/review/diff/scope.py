"""Which part of two trees a change reaches, so that diff (and plan, from diff's walks) builds that part and nothing
else.

The files whose text differs between the trees are the change (with, when the definitions of a composite kind
differ, the files holding composites of that kind: what they compose changes too, which plan renders). From them,
in each tree:

* **touched** folders are those whose build reads a changed file: the folder a changed file is the kustomization
  file of, a folder without one above a changed file or touched folder (Flux generates its build from what lies
  below it), and a folder whose kustomization file lists one (core.tree.kustomize.listed);
* **dirty** folders are those from which Flux reaches a changed file: the touched ones, and, again and again,
  the folders that read a file holding a Flux Kustomization whose ``spec.path`` leads to a dirty folder;
* the **clusters** walked are those whose entry folder (platform/clusters/<cluster>) is dirty.

Only the kustomization files whose text names a target, and the files holding Flux Kustomizations whose text
names a dirty folder's path, are parsed. The walk (fluxplane.review.diff.fleet.received, kustomize builds with kubectl
of only the folders it visits) then follows a Kustomization when the folder it applies is dirty, or when the
Kustomization itself differs from the other tree's (a touched folder placed it and the other tree's build of that
folder holds another one, or none): below such a one everything is followed, since all it applies may land
differently. What no followed Kustomization reaches is the same in both trees, and costs nothing.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fluxplane.core.codec import parse_documents
from fluxplane.core.layout import PLATFORM
from fluxplane.core.tree import KubectlFolders, Placed
from fluxplane.core.tree.flux import normal
from fluxplane.core.tree.kustomize import Build, listed
from fluxplane.core.tree.objects import (
    FLUX_KUSTOMIZE,
    KUSTOMIZE_FILES,
    Item,
    group_of,
    is_flux_kustomization,
    metadata_of,
    spec_of,
)
from fluxplane.synth.composed import DEFINITION_KINDS, Texts, changed_kinds, composite_files, definitions
from fluxplane.validate.tree import Document

#: Where the entry folders are: platform/clusters/<cluster>.
CLUSTERS = f"{PLATFORM}/clusters/"
_FLUX_KUSTOMIZATION = re.compile(r"(?m)^kind: Kustomization\s*$")
_DOCUMENT = re.compile(r"(?m)^---[ \t]*$")


def changed_files(before: Mapping[str, str], after: Mapping[str, str]) -> frozenset[str]:
    """The paths whose text differs between two trees (added and removed ones too)."""
    return frozenset(path for path in set(before) | set(after) if before.get(path) != after.get(path))


#: What the text of a file naming a definition kind holds: the first letters of each (Composit, Function).
_DEFINITION_MARKS = tuple(sorted({kind[:8] for kind in DEFINITION_KINDS}))


def _names_definition(text: str) -> bool:
    """Whether a text may name a definition kind (it holds the first letters of one)."""
    return any(mark in text for mark in _DEFINITION_MARKS)


class Definitions:
    """One tree's texts and its composite definitions (XRDs, Compositions and Functions, with the clusters'
    overlays of them), each read once: the scope reaches the composites of a kind whose definitions differ, and
    plan renders them (fluxplane.synth.composed). ``kinds`` is shared by the trees compared, keyed by text.

    The tree compared with ``base``, which differs from it in the ``changed`` files, has the same definitions as
    ``base`` (:attr:`same`) when no changed file can hold one or overlay one: none names a definition kind, and no
    changed kustomization file lies in a folder of a file of ``base`` that names one, or names such a folder (as
    the overlays are found); they are then read only if asked for, once for both."""

    def __init__(
        self,
        files: Mapping[str, str],
        kinds: dict[str, frozenset[str]] | None = None,
        *,
        base: Definitions | None = None,
        changed: Iterable[str] = (),
    ) -> None:
        self.texts = Texts(files, kinds)
        self._kinds = kinds
        self._base = base
        self._changed = frozenset(changed)

    @functools.cached_property
    def definitions(self) -> list[Document]:
        if self._base is not None and self.same:
            return self._base.definitions
        # read from the files that can hold a definition or overlay one (a definition is read from its file alone,
        # and an overlay from its kustomization file alone): the others are never looked at
        files = self.texts.files
        folders = self.folders
        needles = _needles(folders)
        chosen = {
            path: text
            for path, text in files.items()
            if _names_definition(text)
            or (
                posixpath.basename(path) in KUSTOMIZE_FILES
                and (posixpath.dirname(path) in folders or any(needle in text for needle in needles))
            )
        }
        return definitions(Texts(chosen, self._kinds))

    @functools.cached_property
    def folders(self) -> frozenset[str]:
        """The folders of every file that names a definition kind: where the definitions may lie."""
        return frozenset(posixpath.dirname(path) for path, text in self.texts.files.items() if _names_definition(text))

    @functools.cached_property
    def same(self) -> bool:
        """Whether the definitions are ``base``'s (class docstring)."""
        base = self._base
        if base is None:
            return False
        configs = [path for path in self._changed if posixpath.basename(path) in KUSTOMIZE_FILES]
        folders = base.folders if configs else frozenset()
        needles = _needles(folders)
        for path in self._changed:
            for text in (base.texts.files.get(path), self.texts.files.get(path)):
                if text is None:
                    continue
                if _names_definition(text):
                    return False
                if path in configs and (
                    posixpath.dirname(path) in folders or any(needle in text for needle in needles)
                ):
                    return False
        return True


def _needles(folders: Iterable[str]) -> set[str]:
    """What the text of a cluster's overlay of a folder's definitions holds: the folder's last two segments, as
    fluxplane.synth.composed.with_overlays finds the overlays."""
    return {"/".join(folder.split("/")[-2:]) for folder in folders if folder}


def reached(changed: Iterable[str], sides: tuple[Definitions, Definitions]) -> set[str]:
    """What a change reaches before any folder: the ``changed`` files and, when the definitions of a composite kind
    differ between the two ``sides``, the files of either tree holding composites of that kind."""
    before, after = sides
    reach = set(changed)
    if after.same:
        return reach
    kinds = changed_kinds(before.definitions, after.definitions)
    for side in sides:
        reach.update(composite_files(side.texts, kinds, side.definitions))
    return reach


#: A name the entry keys answer for exactly (:func:`_entry_key`): no whitespace, quote, colon or slash, no leading
#: dash. Other names are looked for in every kustomization file.
_PLAIN_NAME = re.compile(r"[^\s\"':/-][^\s\"':/]*")
_PATH = "path:"


def _value_end(line: str) -> str:
    """A line without its end as an entry may end: whitespace, then one quote, then one slash."""
    value = line.rstrip()
    if value[-1:] in ("'", '"'):
        value = value[:-1]
    return value[:-1] if value.endswith("/") else value


def _entry_key(line: str) -> str:
    """The one plain name a line can list, as ``Index.readers`` matches it: the last segment of its value, past a
    leading dash, ``path:`` and quote (a line that names a plain name, its text ending in it after a slash or
    such a start, has that name for key)."""
    value = _value_end(line)
    slash = value.rfind("/")
    if slash >= 0:
        return value[slash + 1 :]
    value = value.lstrip()
    if value.startswith("-"):
        value = value[1:].lstrip()
    if value.startswith(_PATH):
        value = value[len(_PATH) :].lstrip()
    return value[1:] if value[:1] in ("'", '"') else value


def _entry_keys(text: str) -> frozenset[str]:
    return frozenset(_entry_key(line) for line in text.split("\n"))


def _path_keys(text: str) -> frozenset[str]:
    """The last segment of each ``path:`` value in a file (on the line of ``path:`` or, when it has none there,
    the next line holding any), as ``Index.appliers`` matches them."""
    keys: set[str] = set()
    at = text.find(_PATH)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if not text[start:at].strip():
            value = text[at + len(_PATH) : end]
            while not value.strip() and end < len(text):
                start, end = end + 1, text.find("\n", end + 1)
                end = len(text) if end < 0 else end
                value = text[start:end]
            keys.add(_entry_key(value))
        at = text.find(_PATH, at + len(_PATH))
    return frozenset(keys)


def _escapes(text: str) -> bool:
    """Whether a kustomization file may list a path outside its folder: one with ``..``, or written with YAML's
    escapes (``/`` at the start names no path of the tree)."""
    return ".." in text or "\\" in text


def _above(path: str) -> list[str]:
    """``path`` and the folders above it, up to the top ("")."""
    parts = path.split("/")
    return ["/".join(parts[:end]) for end in range(len(parts) + 1)]


class Keys:
    """What the indexes of the trees compared read of each text once (most texts are the same in both): the parsed
    documents, the entry keys of kustomization files, the ``path:`` keys of files holding Flux Kustomizations, and
    which files hold those."""

    def __init__(self) -> None:
        self.parsed: dict[str, list[dict[str, Any]]] = {}
        self.entries: dict[str, frozenset[str] | None] = {}
        self.paths: dict[str, frozenset[str]] = {}
        self.flux: dict[str, bool] = {}

    def holds_flux(self, text: str) -> bool:
        """Whether a file's text may hold a Flux Kustomization."""
        found = self.flux.get(text)
        if found is None:
            found = self.flux[text] = FLUX_KUSTOMIZE in text and _FLUX_KUSTOMIZATION.search(text) is not None
        return found

    def entry_keys(self, text: str) -> frozenset[str] | None:
        """The entry keys of a kustomization file that may list a path outside its folder, None for another."""
        if text in self.entries:
            return self.entries[text]
        found = self.entries[text] = _entry_keys(text) if _escapes(text) else None
        return found


class Index:
    """One tree's kustomization files and Flux Kustomizations, parsed where a question needs them; ``keys`` is
    shared by the trees of a plan, keyed by text (most files are the same in both).

    A question is asked of the files that can answer it: ``readers`` of the kustomization files with a line whose
    key (:func:`_entry_key`) is the name looked for, among those in a folder above the target or that may list a
    path outside their own; ``appliers`` of the files with a ``path:`` whose key is the folder's name. The texts
    of those are then read as before, so the answers are those of reading every file."""

    def __init__(self, files: Mapping[str, str], keys: Keys | None = None) -> None:
        self.files = files
        self.keys = keys or Keys()
        self._parsed = self.keys.parsed
        self.configs: dict[str, str] = {}
        for path in sorted(files):
            folder, _, name = path.rpartition("/")
            if name in KUSTOMIZE_FILES:
                current = self.configs.get(folder)
                if current is None or KUSTOMIZE_FILES.index(name) < KUSTOMIZE_FILES.index(current.rpartition("/")[2]):
                    self.configs[folder] = path
        self.flux = [
            path
            for path, text in files.items()
            if path.rpartition("/")[2] not in KUSTOMIZE_FILES and self.keys.holds_flux(text)
        ]
        self._listed: dict[str, frozenset[str]] = {}
        self._paths: dict[str, list[str]] = {}
        self._by_entry: dict[str, list[str]] | None = None
        self._escaping: set[str] = set()
        self._by_path: dict[str, list[str]] | None = None

    def parse(self, text: str) -> list[dict[str, Any]]:
        found = self._parsed.get(text)
        if found is None:
            found = self._parsed[text] = parse_documents(text)
        return found

    def listed(self, folder: str) -> frozenset[str]:
        """What ``folder``'s kustomization file lists."""
        found = self._listed.get(folder)
        if found is None:
            documents = self.parse(self.files[self.configs[folder]])
            found = self._listed[folder] = frozenset(listed(folder, documents[0]) if documents else ())
        return found

    def _listing(self, target: str, name: str) -> set[str]:
        """The folders whose kustomization file may list ``target``, named ``name``: those at or above it (a file
        lists only what lies below its folder) and, of those that may list a path outside their folder, the ones
        with a line keyed ``name`` (all of them for a name that is not plain)."""
        if self._by_entry is None:
            self._by_entry = {}
            for folder, config in self.configs.items():
                keys = self.keys.entry_keys(self.files[config])
                if keys is None:
                    continue
                self._escaping.add(folder)
                for key in keys:
                    self._by_entry.setdefault(key, []).append(folder)
        found = {folder for folder in _above(target) if folder in self.configs}
        found.update(self._by_entry.get(name, ()) if _PLAIN_NAME.fullmatch(name) else self._escaping)
        return found

    def readers(self, target: str) -> set[str]:
        """The folders whose build reads ``target`` (a file or a folder) itself."""
        found: set[str] = set()
        parent = posixpath.dirname(target)
        if parent:
            config = self.configs.get(parent)
            if config is None or config == target:
                found.add(parent)
        name = posixpath.basename(target)
        # an entry naming it: a list item or a patch's path whose value ends in its name
        entry = re.compile(r"(?m)^\s*-?\s*(?:path:\s*)?[\"']?(?:[^\s\"']*/)?" + re.escape(name) + r"/?[\"']?\s*$")
        for folder in self._listing(target, name):
            text = self.files[self.configs[folder]]
            if name in text and entry.search(text) and target in self.listed(folder):
                found.add(folder)
        return found

    def flux_paths(self, path: str) -> list[str]:
        """The normalised ``spec.path`` of every Flux Kustomization in one file."""
        found = self._paths.get(path)
        if found is None:
            found = []
            for text in _DOCUMENT.split(self.files[path]):
                if FLUX_KUSTOMIZE not in text or not _FLUX_KUSTOMIZATION.search(text):
                    continue
                for doc in self.parse(text):
                    spec_path = spec_of(doc).get("path")
                    if is_flux_kustomization(doc):
                        found.append(normal(spec_path) if isinstance(spec_path, str) and spec_path else ".")
            self._paths[path] = found
        return found

    def _applying(self, name: str) -> list[str]:
        """The files holding Flux Kustomizations with a ``path:`` that may end in ``name``."""
        if self._by_path is None:
            self._by_path = {}
            for path in self.flux:
                text = self.files[path]
                found = self.keys.paths.get(text)
                if found is None:
                    found = self.keys.paths[text] = _path_keys(text)
                for key in found:
                    self._by_path.setdefault(key, []).append(path)
        return self._by_path.get(name, []) if _PLAIN_NAME.fullmatch(name) else self.flux

    def appliers(self, folder: str) -> set[str]:
        """The files holding a Flux Kustomization whose path may lead to ``folder``: its path ends like the folder's
        below dist/'s repository folder (where the repositories lie is not needed); a repository folder's own
        path ends in its name."""
        rest = folder.partition("/")[2] or folder
        # a line "path: <...>rest", the value ending there, quoted or not, with or without a final slash
        line = re.compile(r"(?m)^\s*path:\s*[\"']?(?:[^\n]*/)?" + re.escape(rest) + r"/?[\"']?\s*$")
        found: set[str] = set()
        for path in self._applying(rest.rpartition("/")[2]):
            if rest not in self.files[path] or not line.search(self.files[path]):
                continue
            for spec_path in self.flux_paths(path):
                if spec_path == rest or spec_path.endswith("/" + rest):
                    found.add(path)
                    break
        return found


@dataclass
class Scope:
    """The part of two trees a change reaches (module docstring)."""

    changed: frozenset[str]
    touched: set[str] = field(default_factory=set)
    dirty: set[str] = field(default_factory=set)
    clusters: set[str] = field(default_factory=set)
    #: The files that lead to a change: the changed ones, and those holding a Kustomization into a dirty folder.
    files: set[str] = field(default_factory=set)

    def add(self, index: Index, changed: Iterable[str]) -> None:
        """What ``changed`` reaches in one tree."""
        frontier = list(changed)
        touched: set[str] = set()
        while frontier:
            for reader in index.readers(frontier.pop()):
                if reader not in touched:
                    touched.add(reader)
                    frontier.append(reader)
        dirty = set(touched)
        frontier = sorted(touched)
        seen_files: set[str] = set()
        while frontier:
            folder = frontier.pop()
            for path in index.appliers(folder) - seen_files:
                seen_files.add(path)
                pending = [path]
                while pending:
                    for reader in index.readers(pending.pop()):
                        if reader not in dirty:
                            dirty.add(reader)
                            frontier.append(reader)
                            pending.append(reader)
        self.touched |= touched
        self.dirty |= dirty
        self.files |= set(changed) | seen_files
        self.clusters |= {folder[len(CLUSTERS) :] for folder in dirty if folder.startswith(CLUSTERS)} - {""}
        self.clusters = {cluster for cluster in self.clusters if "/" not in cluster}

    def line(self, walked: int, total: int) -> str:
        return (
            f"{len(self.changed)} changed files reach {len(self.dirty)} folders and {len(self.clusters)} of {total} "
            f"clusters; {walked} folders built"
        )


def _identity(doc: Mapping[str, Any]) -> tuple[str, str, str, str]:
    metadata = metadata_of(doc)
    return (
        group_of(doc.get("apiVersion")),
        str(doc.get("kind") or ""),
        str(metadata.get("namespace") or ""),
        str(metadata.get("name") or ""),
    )


#: What the walk needs of a folder besides the Kustomizations it follows: the sources they name, the variables
#: they substitute.
_WALK_NEEDS = re.compile(r"(?m)^kind: (?:GitRepository|OCIRepository|Bucket|ExternalArtifact|ConfigMap|Secret)\s*$")
#: The fields of a kustomization file that only gather what it lists.
_GATHERS = frozenset({"apiVersion", "kind", "resources"})


class Shared:
    """What the folders of the trees compared read of each text once, shared: their folders mostly hold the same
    files (a hub's folder of a thousand clusters' chains is read in both)."""

    def __init__(self) -> None:
        #: The first document of each kustomization file.
        self.configs: dict[str, Any] = {}
        #: Whether a file holds what the walk needs (_WALK_NEEDS).
        self.needs: dict[str, bool] = {}


class ScopedFolders(KubectlFolders):
    """A tree's folders for a scoped walk: kustomize builds with kubectl, but a folder that is dirty, not touched and
    only gathers what it lists (a kustomization file of ``resources`` alone) is built from the entries that lead to
    the change, and those holding what the walk needs (sources, variables): the others' objects are the same in
    both trees and lead nowhere that changes (a hub's folder of a thousand clusters' chains, one of which changes)."""

    def __init__(
        self,
        files: Mapping[str, str],
        root: Any,
        builder: Any,
        label: str,
        scope: Scope,
        shared: Shared | None = None,
    ) -> None:
        super().__init__(files, root, builder, label, lazy=True)
        self.scope = scope
        self._whole: set[str] = set()
        shared = shared or Shared()
        self._first = shared.configs
        self._wants = shared.needs

    def _config_item(self, config: str) -> Item:
        text = self.files[config]
        first = self._first.get(text)
        if first is None:
            first = self._first[text] = super()._config_item(config).doc
        return Item(first, config, 1)

    def whole(self, folder: str) -> None:
        """Build ``folder`` whole from now on: a Kustomization that differs applies it, and all it holds may land
        differently (what was gathered of it before is forgotten)."""
        if folder not in self._whole:
            self._whole.add(folder)
            self.forget([folder])

    def _gathered(self, folder: str) -> tuple[str, ...] | None:
        """The entries of a folder built from some of them, None for a folder kustomize builds."""
        if folder not in self.scope.dirty or folder in self.scope.touched or folder in self._whole:
            return None
        config = self.config(folder)
        if config is None:
            return None
        documents = self.documents[config]
        own = documents[0] if documents and isinstance(documents[0], dict) else None
        if own is None or not set(own) <= _GATHERS:
            return None
        return listed(folder, own)

    def _needed(self, entry: str) -> bool:
        if entry in self.scope.dirty or entry in self.scope.files:
            return True
        paths = [entry] if entry in self.files else sorted(self.inputs(entry))
        return any(self._needs(self.files[path]) for path in paths if path in self.files)

    def _needs(self, text: str) -> bool:
        found = self._wants.get(text)
        if found is None:
            found = self._wants[text] = _WALK_NEEDS.search(text) is not None
        return found

    def _kustomize(self, folder: str, config: str) -> Build:
        entries = self._gathered(folder)
        if entries is None:
            return super()._kustomize(folder, config)
        items: list[Item] = []
        for entry in entries:
            if not self._needed(entry):
                continue
            items.extend(self.items(entry) if entry in self.files else self.build(entry).items)
        return Build(tuple(items))

    def prefetch(self, folders: Iterable[str]) -> None:
        super().prefetch(folder for folder in folders if self._gathered(folder) is None)


class Follow:
    """The walk's choice of Kustomizations to follow in one tree, against the other tree (module docstring)."""

    def __init__(self, scope: Scope, mine: KubectlFolders, other: KubectlFolders, entries: set[str]) -> None:
        self.scope = scope
        self.mine = mine
        self.other = other
        #: Clusters whose entry folder only one of the trees has: everything they apply is new or gone.
        self.entries = entries
        self._tainted: dict[int, bool] = {}

    def _differs(self, placed: Placed, folder: str) -> bool:
        """Whether the Kustomization ``placed`` is not the same in the other tree's build of the folder placing it."""
        if not self.other.is_folder(folder):
            return True
        identity = _identity(placed.item.doc)
        mine = [item.doc for item in self.mine.build(folder).items if _identity(item.doc) == identity]
        theirs = [item.doc for item in self.other.build(folder).items if _identity(item.doc) == identity]
        return mine != theirs

    def tainted(self, placed: Placed) -> bool:
        application = placed.application
        if application.applier is None:
            inherited = application.cluster in self.entries
        else:
            inherited = self._tainted.get(id(application.applier), True)
        return inherited or (application.folder in self.scope.touched and self._differs(placed, application.folder))

    def __call__(self, placed: Placed, folder: str) -> bool:
        tainted = self.tainted(placed)
        if tainted or folder in self.scope.dirty:
            self._tainted[id(placed)] = tainted
            if tainted:
                for folders in (self.mine, self.other):
                    if isinstance(folders, ScopedFolders):
                        folders.whole(folder)
            return True
        return False
