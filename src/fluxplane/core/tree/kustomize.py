"""Reading a folder of the tree the way ``kustomize build`` (and Flux, for a folder without one) reads it.

**With a kustomization file** (``kustomization.yaml``, ``kustomization.yml`` or ``Kustomization``): the
``resources``, ``bases`` and ``components`` it lists, files and folders, each folder read the same way;
entries that are URLs (another repository) are not read. Its patches (``patches``, ``patchesJson6902``,
``patchesStrategicMerge``, inline or from a file) apply to the objects they target (fluxplane.core.tree.patches),
and one that is ``$patch: delete`` removes the object it names. The ``namespace`` field moves every object it
builds into that namespace (an outer kustomization's wins over an inner one's).

**Without one**, Flux generates it: every YAML file below the folder, and each subfolder that holds a
kustomization file as one resource (kustomize builds it; Flux does not look inside), in path order.

A build also says which kustomization files it read (validate checks the variables in their patches), and
``Folders.inputs`` which files a build reads, the patches' files included, from the kustomization files alone
(``fluxplane diff`` lists the files no cluster reads).

``KubectlFolders`` builds the folders that have a kustomization file with ``kubectl kustomize`` instead
(``fluxplane diff`` shows what kustomize makes of them, patches applied), from a copy of the tree written
to a temporary folder, many folders at a time in threads (fluxplane.system.processes: a signal ends them at
once). A build is keyed by the content of every file it reads, so a folder whose inputs are the same in two
trees (the base and the working tree) is built once.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import posixpath
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fluxplane.core.codec import load_documents, parse_documents
from fluxplane.core.tree.objects import KUSTOMIZE_FILES, Document, Documents, Item, LazyDocuments
from fluxplane.core.tree.patches import PatchError, apply_patches, patches_of
from fluxplane.errors import FluxplaneError
from fluxplane.system.processes import Processes

#: The fields of a kustomization file whose entries are objects of the build.
RESOURCE_FIELDS = ("resources", "bases", "components")


class BuildError(FluxplaneError):
    """A folder cannot be built: kubectl is missing, or ``kubectl kustomize`` failed on it."""


@dataclass(frozen=True)
class Build:
    """What kustomize makes of one folder: its objects and the kustomization files it read.

    ``derived`` keeps what a reader works out from the build for as long as the build is kept (the walk keeps
    where its objects land, which is the same on every cluster that applies the folder)."""

    items: tuple[Item, ...]
    configs: tuple[Item, ...] = ()
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class _Entries:
    """A kustomization file's entries: the resources it builds, the files its patches read, its inline patches."""

    resources: tuple[str, ...]
    files: tuple[str, ...]
    inline: tuple[str, ...]
    #: Each patch in order: its target (None: the object a strategic-merge patch names), its text when inline,
    #: its file when not.
    patches: tuple[tuple[Mapping[str, Any] | None, str | None, str | None], ...] = ()


def _listed(config: Mapping[str, Any], name: str) -> list[Any]:
    value = config.get(name)
    return value if isinstance(value, list) else []


def _entries(config: Mapping[str, Any]) -> _Entries:
    resources = [entry for name in RESOURCE_FIELDS for entry in _listed(config, name) if isinstance(entry, str)]
    files = [entry for entry in _listed(config, "crds") if isinstance(entry, str)]
    inline: list[str] = []
    patches: list[tuple[Mapping[str, Any] | None, str | None, str | None]] = []
    for patch in _listed(config, "patchesStrategicMerge"):
        if isinstance(patch, str):
            (inline if "\n" in patch else files).append(patch)
            patches.append((None, patch, None) if "\n" in patch else (None, None, patch))
    for name in ("patchesJson6902", "patches"):
        for patch in _listed(config, name):
            if not isinstance(patch, dict):
                continue
            target = patch.get("target") if isinstance(patch.get("target"), dict) else None
            if isinstance(patch.get("path"), str):
                files.append(patch["path"])
                patches.append((target, None, patch["path"]))
            elif isinstance(patch.get("patch"), str):
                inline.append(patch["patch"])
                patches.append((target, patch["patch"], None))
    local = [entry for entry in resources if "://" not in entry and not entry.startswith("git@")]
    return _Entries(tuple(local), tuple(files), tuple(inline), tuple(patches))


def _join(folder: str, entry: str) -> str:
    """``entry`` of a kustomization file in ``folder``, as a path of the tree."""
    if entry and not entry.startswith((".", "/")) and "/." not in entry and "//" not in entry:
        return f"{folder}/{entry}".rstrip("/") if folder not in ("", ".") else entry.rstrip("/")
    return posixpath.normpath(posixpath.join(folder, entry))


def listed(folder: str, config: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths of the tree a kustomization file in ``folder`` lists: its resources, bases and components, and the
    files its patches and CRDs read (URLs left out)."""
    entries = _entries(config)
    return tuple(_join(folder, entry) for entry in (*entries.resources, *entries.files))


def bases(folder: str, config: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths a kustomization file in ``folder`` lists as ``resources`` or ``bases`` (URLs left out). Kustomize
    builds those that are folders whole, as it builds them on their own, before this file's own changes apply:
    a build that reads one fails when it does. ``components`` are not among them: a component is built in the
    context of the file that lists it."""
    return tuple(
        _join(folder, entry)
        for name in ("resources", "bases")
        for entry in _listed(config, name)
        if isinstance(entry, str) and "://" not in entry and not entry.startswith("git@")
    )


#: Built folders are grouped by this many leading segments, so that forgetting a cluster's folders reads only them.
GROUP = 3


def _group(folder: str) -> str:
    return "/".join(folder.split("/", GROUP)[:GROUP])


def _within(folder: str, mine: str) -> bool:
    return folder == mine or folder.startswith(mine + "/") or mine in ("", ".")


class Folders:
    """Reads the folders of one tree from its documents, building each folder once (until forgotten)."""

    def __init__(self, documents: Documents) -> None:
        self.documents = documents
        self._built: dict[str, Build] = {}
        #: The folders built, by their first GROUP segments (a cluster's folder: repository/clusters/<cluster>).
        self._groups: dict[str, set[str]] = {}
        self._building: set[str] = set()
        self._paths: list[str] | None = None
        self._configs: dict[str, str | None] = {}
        self._folders: dict[str, bool] = {}
        self._inputs: dict[str, frozenset[str]] = {}
        #: Inline patches parsed, by their text (None: not YAML): every cluster's overlay of a catalogue folder may
        #: hold the same one. Patching never changes a patch's documents (fluxplane.core.tree.patches copies them).
        self._parsed: dict[str, list[Any] | None] = {}

    # -- what the tree holds -------------------------------------------------------------------
    def config(self, folder: str) -> str | None:
        """The path of ``folder``'s kustomization file, if it has one."""
        if folder in self._configs:
            return self._configs[folder]
        found = None
        for name in KUSTOMIZE_FILES:
            path = f"{folder}/{name}" if folder not in ("", ".") else name
            if path in self.documents:
                found = path
                break
        self._configs[folder] = found
        return found

    def is_file(self, path: str) -> bool:
        return path in self.documents

    def is_folder(self, folder: str) -> bool:
        """Whether ``folder`` holds anything kustomize reads (a kustomization file, or YAML below it)."""
        known = self._folders.get(folder)
        if known is None:
            known = self.config(folder) is not None or self._holds(folder)
            self._folders[folder] = known
        return known

    def listing(self, folder: str) -> list[str]:
        """The files and folders right below ``folder``, sorted (what Flux lists without a kustomization file).

        One path is read for each entry: the paths below a subfolder are skipped at once, so listing a folder whose
        subfolders hold a fleet (the hub's, the root) costs what it lists, not what lies below it."""
        paths = self._sorted()
        prefix = folder + "/" if folder not in ("", ".") else ""
        start = len(prefix)
        found: set[str] = set()
        index = bisect.bisect_left(paths, prefix)
        while index < len(paths) and paths[index].startswith(prefix):
            path = paths[index]
            end = path.find("/", start)
            if end < 0:
                found.add(path)
                index += 1
            else:
                # every path below the subfolder sorts before its name followed by "0", the character after "/"
                found.add(path[:end])
                index = bisect.bisect_left(paths, path[:end] + "0", index + 1)
        return sorted(found)

    def _sorted(self) -> list[str]:
        if self._paths is None:
            self._paths = sorted(self.documents)
        return self._paths

    def _holds(self, folder: str) -> bool:
        """Whether any path lies below ``folder``: the first one after it in path order does."""
        paths = self._sorted()
        prefix = folder + "/" if folder not in ("", ".") else ""
        index = bisect.bisect_left(paths, prefix)
        return index < len(paths) and paths[index].startswith(prefix)

    def items(self, path: str) -> list[Item]:
        """The objects of one file, numbered from 1 as the file holds them."""
        return [
            Item(doc, path, position) for position, doc in enumerate(self.documents[path], 1) if isinstance(doc, dict)
        ]

    # -- building ------------------------------------------------------------------------------
    def build(self, folder: str) -> Build:
        """What kustomize builds from ``folder`` (module docstring); a folder that includes itself adds nothing."""
        built = self._built.get(folder)
        if built is not None:
            return built
        if folder in self._building:
            return Build(())
        self._building.add(folder)
        try:
            config = self.config(folder)
            built = self._generate(folder) if config is None else self._kustomize(folder, config)
        finally:
            self._building.discard(folder)
        self._built[folder] = built
        self._groups.setdefault(_group(folder), set()).add(folder)
        return built

    def prefetch(self, folders: Iterable[str]) -> None:
        """Prepare the builds of ``folders``, which the walk asks for next (a backend may build them together)."""

    def forget(self, folders: Iterable[str]) -> None:
        """Drop what was built from ``folders`` and the folders below them, keeping the rest."""
        for mine in folders:
            deep = mine.count("/") >= GROUP - 1
            groups = [_group(mine)] if deep else [group for group in self._groups if _within(group, mine)]
            for group in groups:
                built = self._groups.get(group, set())
                for folder in [folder for folder in built if _within(folder, mine)]:
                    built.discard(folder)
                    del self._built[folder]

    def _generate(self, folder: str) -> Build:
        items: list[Item] = []
        configs: list[Item] = []
        for entry in self.listing(folder):
            if entry in self.documents:
                items.extend(self.items(entry))
            else:
                built = self.build(entry)
                items.extend(built.items)
                configs.extend(built.configs)
        return Build(tuple(items), tuple(configs))

    def _config_item(self, config: str) -> Item:
        documents = self.documents[config]
        first = documents[0] if documents else None
        return Item(first if isinstance(first, dict) else {}, config, 1)

    def _kustomize(self, folder: str, config: str) -> Build:
        own = self._config_item(config)
        entries = _entries(own.doc)
        items: list[Item] = []
        configs: list[Item] = [own]
        for entry in entries.resources:
            target = _join(folder, entry)
            if target in self.documents:
                items.extend(self.items(target))
            else:
                built = self.build(target)
                items.extend(built.items)
                configs.extend(built.configs)
        items = self._patched(folder, entries, items)
        namespace = own.doc.get("namespace")
        if isinstance(namespace, str) and namespace:
            items = [item._replace(namespace=namespace) for item in items]
        return Build(tuple(items), tuple(configs))

    def _patched(self, folder: str, entries: _Entries, items: list[Item]) -> list[Item]:
        """``items`` with the kustomization's patches applied (fluxplane.core.tree.patches); a patch that cannot be
        read or applied leaves the objects as they are (``kubectl kustomize`` says why: validate and diff run it)."""
        sources: list[tuple[Mapping[str, Any] | None, Sequence[Any]]] = []
        for target, text, path in entries.patches:
            try:
                if text is not None:
                    parsed = self._parse(text)
                    if parsed is not None:
                        sources.append((target, parsed))
                elif path is not None and _join(folder, path) in self.documents:
                    sources.append((target, self.documents[_join(folder, path)]))
            except (yaml.YAMLError, ValueError):
                continue
        patches = patches_of(sources)
        if not patches:
            return items
        try:
            patched = apply_patches([item.doc for item in items], patches)
        except PatchError:
            return items
        return [item._replace(doc=doc) for item, doc in zip(items, patched, strict=True) if doc is not None]

    def _parse(self, text: str) -> list[Any] | None:
        """The documents of an inline patch's ``text``, parsed once per text; None when it is not YAML."""
        if text in self._parsed:
            return self._parsed[text]
        parsed: list[Any] | None
        try:
            parsed = load_documents(text)
        except (yaml.YAMLError, ValueError):
            parsed = None
        self._parsed[text] = parsed
        return parsed

    def inputs(self, folder: str) -> frozenset[str]:
        """The files a build of ``folder`` reads, found from the kustomization files alone (nothing else is parsed).

        Each folder's set is worked out once and joined into those of the folders that list it; a folder on a
        cycle of entries (which kustomize refuses) is walked on its own instead, since what it reaches depends on
        where the walk entered the cycle."""
        known = self._inputs.get(folder)
        if known is None:
            try:
                known = self._closure(folder, set())
            except _Cycle:
                found: set[str] = set()
                self._collect(folder, found, set())
                known = self._inputs[folder] = frozenset(found)
        return known

    def _targets(self, folder: str) -> tuple[str | None, Iterable[str]]:
        """``folder``'s kustomization file (None: it has none) and the paths a build of it reads next."""
        config = self.config(folder)
        if config is None:
            return None, self.listing(folder)
        return config, listed(folder, self._config_item(config).doc)

    def _closure(self, folder: str, active: set[str]) -> frozenset[str]:
        """``inputs`` of ``folder``, from the sets of the folders it reads; _Cycle when it reaches ``active``."""
        active.add(folder)
        config, targets = self._targets(folder)
        found: set[str] = set() if config is None else {config}
        for target in targets:
            if target in self.documents:
                found.add(target)
                continue
            if target in active:
                raise _Cycle(target)
            known = self._inputs.get(target)
            found.update(known if known is not None else self._closure(target, active))
        active.discard(folder)
        known = self._inputs[folder] = frozenset(found)
        return known

    def _collect(self, folder: str, found: set[str], seen: set[str]) -> None:
        if folder in seen:
            return
        seen.add(folder)
        config, targets = self._targets(folder)
        if config is not None:
            found.add(config)
        for target in targets:
            if target in self.documents:
                found.add(target)
            else:
                self._collect(target, found, seen)


class _Cycle(Exception):
    """A folder's entries lead back to a folder whose walk has not ended."""


class KubectlBuilder:
    """Runs ``kubectl kustomize``, in threads, once per distinct set of inputs (shared by several trees)."""

    def __init__(self, workers: int | None = None) -> None:
        self.kubectl = shutil.which("kubectl")
        self.workers = workers or min(8, 2 * (os.cpu_count() or 1))
        self.processes = Processes(self.workers)
        self._cache: dict[str, list[Document]] = {}
        self.builds = 0

    def prefetch(self, jobs: Iterable[tuple[KubectlFolders, str]]) -> None:
        """Build every folder of ``jobs`` not built yet (by content), in parallel."""
        todo: dict[str, tuple[KubectlFolders, str]] = {}
        for folders, folder in jobs:
            key = folders.fingerprint(folder)
            if key not in self._cache:
                todo.setdefault(key, (folders, folder))
        if not todo:
            return
        for folders, folder in todo.values():
            folders.materialize(folder)
        results = self.processes.map(lambda job: self._run(*job), todo.values())
        for key, docs in zip(todo, results, strict=True):
            self._cache[key] = docs

    def get(self, folders: KubectlFolders, folder: str) -> list[Document]:
        key = folders.fingerprint(folder)
        if key not in self._cache:
            folders.materialize(folder)
            self._cache[key] = self._run(folders, folder)
        return self._cache[key]

    def _run(self, folders: KubectlFolders, folder: str) -> list[Document]:
        self.builds += 1
        if self.kubectl is None:
            raise BuildError(
                "kubectl is not installed: fluxplane diff builds each cluster's folders with kubectl kustomize"
            )
        done = self.processes.run([self.kubectl, "kustomize", str(folders.root / folder)])
        if done.returncode != 0:
            detail = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise BuildError(f"{folders.label}: kubectl kustomize dist/{folder}: {detail}")
        return parse_documents(done.stdout)


class KubectlFolders(Folders):
    """A tree ({path: text}) written under ``root``, whose folders with a kustomization file kubectl builds.

    The whole tree is written at once; with ``lazy``, only the files a build reads (``inputs``), before kubectl
    builds it: a reader that builds a few folders of a large tree writes only those."""

    def __init__(
        self, files: Mapping[str, str], root: Path, builder: KubectlBuilder, label: str, *, lazy: bool = False
    ) -> None:
        super().__init__(LazyDocuments({}, files))
        self.files = files
        self.root = root
        self.builder = builder
        self.label = label
        self._fingerprints: dict[str, str] = {}
        self._written: set[str] = set()
        if not lazy:
            self._write(files)

    def _write(self, paths: Iterable[str]) -> None:
        made: set[Path] = set()
        for relative in paths:
            if relative in self._written:
                continue
            self._written.add(relative)
            target = self.root / relative
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            target.write_text(self.files[relative], encoding="utf-8")

    def materialize(self, folder: str) -> None:
        """Write the files a build of ``folder`` reads, those not written yet."""
        self._write(sorted(self.inputs(folder)))

    def fingerprint(self, folder: str) -> str:
        """The key of ``folder``'s build: the folder and the name and content of every file it reads."""
        if folder not in self._fingerprints:
            digest = hashlib.sha256(folder.encode())
            for name in sorted(self.inputs(folder)):
                digest.update(b"\0" + name.encode() + b"\0" + self.files[name].encode())
            self._fingerprints[folder] = digest.hexdigest()
        return self._fingerprints[folder]

    def prefetch(self, folders: Iterable[str]) -> None:
        self.builder.prefetch((self, folder) for folder in folders if self.config(folder) is not None)

    def _kustomize(self, folder: str, config: str) -> Build:
        return Build(tuple(Item(doc) for doc in self.builder.get(self, folder)))
