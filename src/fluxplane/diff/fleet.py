"""What each cluster receives from a synthesized dist/ tree, as Flux applies it.

A cluster's Flux starts at its entry folder, ``dist/platform/clusters/<cluster>/``, and applies what
``kustomize build`` makes of it. Every Flux Kustomization among those objects applies its own
``spec.path`` the same way, on the same cluster, or on the cluster its ``kubeConfig`` reaches (the
hub's spoke Kustomizations), after replacing ``${VAR}`` with its ``postBuild`` variables. This module
follows those links from every entry folder and collects, per cluster, the objects that land there
and the dist/ repository folder each came from.

Folders are built with ``kubectl kustomize`` from the tree written to a temporary folder, many at a
time in threads. A build is keyed by the content of every file it reads, so a folder whose inputs are
the same in the base and the working tree is built once.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import posixpath
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fluxplane.charts.layout import PLATFORM, RepositoryLayout, workloads_layout
from fluxplane.constructs.render import parse_documents
from fluxplane.diff.git import DiffError

Document = dict[str, Any]
#: (API group, kind, namespace, name): an object's identity on a cluster; its version may change.
ObjectKey = tuple[str, str, str, str]

FLUX_KUSTOMIZE_GROUP = "kustomize.toolkit.fluxcd.io"
KUSTOMIZATION_FILE = "kustomization.yaml"
#: Flux skips variable substitution for an object carrying this annotation or label with value "disabled".
SUBSTITUTE_SWITCH = "kustomize.toolkit.fluxcd.io/substitute"


@dataclass(frozen=True)
class Repository:
    """A dist/ folder (``platform``, ``workloads``) and where Flux finds it: clone URL and folder."""

    key: str
    url: str
    prefix: str


@dataclass(frozen=True)
class Tree:
    """One synthesized dist/ ({path: text}) with the repositories its Flux objects point into."""

    label: str
    files: Mapping[str, str]
    repositories: tuple[Repository, ...] = ()


def repositories_of(plan: Any) -> tuple[Repository, ...]:
    """The dist/ repositories of a fleet plan, from its ``repositories`` section."""
    repos = plan.fleet.repositories
    layouts: list[RepositoryLayout] = [RepositoryLayout(PLATFORM, repos.platform), workloads_layout(repos)]
    return tuple(Repository(layout.key, layout.repository.url, layout.prefix) for layout in layouts)


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def object_key(doc: Document) -> ObjectKey:
    metadata = doc.get("metadata") or {}
    return (
        group_of(str(doc.get("apiVersion", ""))),
        str(doc.get("kind", "")),
        str(metadata.get("namespace") or ""),
        str(metadata.get("name") or ""),
    )


@dataclass(frozen=True)
class Placed:
    """An object on a cluster, with the dist/ repository folder it was built from."""

    repository: str
    doc: Document


@dataclass
class Received:
    """Everything a tree sends: objects per cluster, the files any build read, and what could not be followed."""

    clusters: dict[str, dict[ObjectKey, Placed]] = field(default_factory=dict)
    read: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


class Folder:
    """A tree written to disk, with the inputs of each kustomization folder."""

    def __init__(self, tree: Tree, path: Path) -> None:
        self.tree = tree
        self.path = path
        self.directories = {posixpath.dirname(name) for name in tree.files}
        for name in list(self.directories):
            while name:
                name = posixpath.dirname(name)
                self.directories.add(name)
        self._inputs: dict[str, tuple[str, ...]] = {}
        for relative, text in tree.files.items():
            target = path / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    def inputs(self, directory: str) -> tuple[str, ...]:
        """The files ``kustomize build directory`` reads (resources, components, patches; recursively)."""
        if directory not in self._inputs:
            found: set[str] = set()
            self._collect(directory, found, set())
            self._inputs[directory] = tuple(sorted(found))
        return self._inputs[directory]

    def _collect(self, directory: str, found: set[str], seen: set[str]) -> None:
        if directory in seen:
            return
        seen.add(directory)
        kustomization = posixpath.join(directory, KUSTOMIZATION_FILE)
        if kustomization not in self.tree.files:
            prefix = f"{directory}/"
            found.update(name for name in self.tree.files if name.startswith(prefix) and _manifest(name))
            return
        found.add(kustomization)
        try:
            spec = yaml.safe_load(self.tree.files[kustomization]) or {}
        except yaml.YAMLError:
            return
        if not isinstance(spec, dict):
            return
        entries: list[str] = []
        for key in ("resources", "components", "bases", "crds", "patchesStrategicMerge"):
            entries += [item for item in spec.get(key) or [] if isinstance(item, str)]
        for key in ("patches", "patchesJson6902"):
            entries += [
                item["path"]
                for item in spec.get(key) or []
                if isinstance(item, dict) and isinstance(item.get("path"), str)
            ]
        for entry in entries:
            if "://" in entry or "\n" in entry:
                continue
            target = posixpath.normpath(posixpath.join(directory, entry))
            if target in self.tree.files:
                found.add(target)
            elif target in self.directories:
                self._collect(target, found, seen)

    def exists(self, directory: str) -> bool:
        return directory in self.directories


def _manifest(name: str) -> bool:
    return name.endswith((".yaml", ".yml"))


class Builder:
    """Runs ``kubectl kustomize``, in threads, once per distinct set of inputs."""

    def __init__(self, workers: int | None = None) -> None:
        self.kubectl = shutil.which("kubectl")
        self.workers = workers or min(8, 2 * (os.cpu_count() or 1))
        self._cache: dict[str, list[Document]] = {}
        self.builds = 0

    def _fingerprint(self, folder: Folder, directory: str) -> str:
        digest = hashlib.sha256(directory.encode())
        for name in folder.inputs(directory):
            digest.update(b"\0" + name.encode() + b"\0" + folder.tree.files[name].encode())
        return digest.hexdigest()

    def prefetch(self, jobs: Iterable[tuple[Folder, str]]) -> None:
        """Build every folder in ``jobs`` not built yet (by content), in parallel."""
        todo: dict[str, tuple[Folder, str]] = {}
        for folder, directory in jobs:
            if not folder.exists(directory):
                continue
            key = self._fingerprint(folder, directory)
            if key not in self._cache:
                todo.setdefault(key, (folder, directory))
        if not todo:
            return
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            results = pool.map(lambda job: self._build(*job), todo.values())
            for key, docs in zip(todo, results, strict=True):
                self._cache[key] = docs

    def get(self, folder: Folder, directory: str) -> list[Document]:
        key = self._fingerprint(folder, directory)
        if key not in self._cache:
            self._cache[key] = self._build(folder, directory)
        return self._cache[key]

    def _build(self, folder: Folder, directory: str) -> list[Document]:
        self.builds += 1
        if posixpath.join(directory, KUSTOMIZATION_FILE) not in folder.tree.files:
            return [doc for name in folder.inputs(directory) for doc in parse_documents(folder.tree.files[name])]
        if self.kubectl is None:
            raise DiffError(
                "kubectl is not installed: fluxplane diff builds each cluster's folders with kubectl kustomize"
            )
        done = subprocess.run(
            [self.kubectl, "kustomize", str(folder.path / directory)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            detail = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise DiffError(f"{folder.tree.label}: kubectl kustomize dist/{directory}: {detail}")
        return parse_documents(done.stdout)


_TOKEN = re.compile(r"\$\$|\$\{([_A-Za-z][_A-Za-z0-9]*)(?:(:?[=-])([^}]*))?\}")


def substitute_text(text: str, variables: Mapping[str, str], *, complete: bool = True) -> str:
    """Flux's postBuild substitution on a manifest's text.

    ``${VAR}`` takes the variable's value; ``${VAR:=default}`` and ``${VAR:-default}`` the default when
    the variable is unset or empty, ``${VAR=default}`` and ``${VAR-default}`` when it is unset;
    ``$$`` is an escape and becomes ``$``, so ``$${...}`` becomes ``${...}``. An unset variable without
    default becomes "", as Flux does, unless ``complete`` is false (a variable source was not found in
    the tree): then it stays as written, which says more in a review than an empty string.
    """

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, operator, default = match.groups()
        value = variables.get(name)
        if operator is not None and (value is None or (operator.startswith(":") and value == "")):
            return default
        if value is None:
            return "" if complete else match.group(0)
        return value

    return _TOKEN.sub(replace, text)


def substitute(doc: Document, variables: Mapping[str, str], *, complete: bool = True) -> Document:
    metadata = doc.get("metadata") or {}
    for marks in (metadata.get("annotations") or {}, metadata.get("labels") or {}):
        if marks.get(SUBSTITUTE_SWITCH) == "disabled":
            return doc
    text = yaml.safe_dump(doc, sort_keys=False, width=1 << 30)
    if "${" not in text and "$$" not in text:
        return doc
    try:
        replaced = yaml.safe_load(substitute_text(text, variables, complete=complete))
    except yaml.YAMLError:
        return doc
    return replaced if isinstance(replaced, dict) else doc


def _source_values(doc: Document) -> dict[str, str]:
    if doc.get("kind") == "ConfigMap":
        return {str(key): str(value) for key, value in (doc.get("data") or {}).items()}
    values: dict[str, str] = {}
    for key, value in (doc.get("data") or {}).items():
        try:
            values[str(key)] = base64.b64decode(str(value)).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
    values.update({str(key): str(value) for key, value in (doc.get("stringData") or {}).items()})
    return values


def variables_of(kustomization: Document, objects: Mapping[ObjectKey, Placed]) -> tuple[dict[str, str], bool] | None:
    """The postBuild variables of a Flux Kustomization (None without postBuild), and whether all sources were found."""
    post = (kustomization.get("spec") or {}).get("postBuild")
    if not isinstance(post, dict):
        return None
    namespace = str((kustomization.get("metadata") or {}).get("namespace") or "")
    values: dict[str, str] = {}
    complete = True
    for ref in post.get("substituteFrom") or []:
        kind = str(ref.get("kind", ""))
        found = objects.get(("", kind, namespace, str(ref.get("name", ""))))
        if found is None:
            complete = complete and bool(ref.get("optional"))
            continue
        values.update(_source_values(found.doc))
    values.update({str(key): str(value) for key, value in (post.get("substitute") or {}).items()})
    return values, complete


@dataclass(frozen=True)
class Visit:
    """Apply ``directory`` on ``cluster`` with these variables (None: no substitution)."""

    cluster: str
    directory: str
    variables: tuple[tuple[str, str], ...] | None = None
    complete: bool = True


class Walker:
    """Follows the Flux Kustomizations of one tree from every cluster's entry folder."""

    def __init__(self, folder: Folder, builder: Builder) -> None:
        self.folder = folder
        self.builder = builder
        self.sources: dict[tuple[str, str], str] = {}
        for name, text in sorted(folder.tree.files.items()):
            if not _manifest(name) or "GitRepository" not in text:
                continue
            for doc in parse_documents(text):
                if doc.get("kind") == "GitRepository":
                    metadata = doc.get("metadata") or {}
                    key = (str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))
                    self.sources.setdefault(key, str((doc.get("spec") or {}).get("url", "")))

    def entry_clusters(self) -> list[str]:
        prefix = f"{PLATFORM}/clusters/"
        return sorted({name[len(prefix) :].split("/")[0] for name in self.folder.tree.files if name.startswith(prefix)})

    def directory_of(self, kustomization: Document) -> str | None:
        """The dist/ folder a Flux Kustomization applies, or None when it is outside the fleet's repositories."""
        spec = kustomization.get("spec") or {}
        source = spec.get("sourceRef") or {}
        if source.get("kind") != "GitRepository":
            return None
        namespace = str(source.get("namespace") or (kustomization.get("metadata") or {}).get("namespace") or "")
        url = self.sources.get((namespace, str(source.get("name", ""))))
        path = posixpath.normpath(str(spec.get("path") or ".").lstrip("/"))
        best: tuple[int, str] | None = None
        for repository in self.folder.tree.repositories:
            if repository.url != url:
                continue
            prefix = posixpath.normpath(repository.prefix)
            if prefix == ".":
                rest = path
            elif path == prefix or path.startswith(f"{prefix}/"):
                rest = path[len(prefix) :].lstrip("/")
            else:
                continue
            rank = 0 if prefix == "." else len(prefix)
            candidate = posixpath.normpath(posixpath.join(repository.key, rest))
            if best is None or rank > best[0]:
                best = (rank, candidate)
        return best[1] if best else None

    def target_of(self, kustomization: Document, cluster: str, known: set[str]) -> str:
        """The cluster a Kustomization applies to: its own, or the one its ``kubeConfig`` reaches."""
        config = (kustomization.get("spec") or {}).get("kubeConfig")
        if not isinstance(config, dict):
            return cluster
        namespace = str((kustomization.get("metadata") or {}).get("namespace") or "")
        if namespace in known:
            return namespace
        ref = config.get("secretRef") or config.get("configMapRef") or {}
        name = str(ref.get("name") or namespace)
        return name.removesuffix("-kubeconfig")

    def walk(self) -> Received:
        received = Received()
        entries = self.entry_clusters()
        known = set(entries)
        frontier = [Visit(cluster, f"{PLATFORM}/clusters/{cluster}") for cluster in entries]
        seen = set(frontier)
        while frontier:
            self.builder.prefetch((self.folder, visit.directory) for visit in frontier)
            built: list[tuple[Visit, list[Document]]] = []
            for visit in frontier:
                if not self.folder.exists(visit.directory):
                    continue
                received.read.update(self.folder.inputs(visit.directory))
                docs = self.builder.get(self.folder, visit.directory)
                if visit.variables is not None:
                    docs = [substitute(doc, dict(visit.variables), complete=visit.complete) for doc in docs]
                objects = received.clusters.setdefault(visit.cluster, {})
                repository = visit.directory.split("/")[0]
                for doc in docs:
                    objects[object_key(doc)] = Placed(repository, doc)
                built.append((visit, docs))
            following: list[Visit] = []
            for visit, docs in built:
                for doc in docs:
                    if (
                        group_of(str(doc.get("apiVersion", ""))) != FLUX_KUSTOMIZE_GROUP
                        or doc.get("kind") != "Kustomization"
                    ):
                        continue
                    following += self._follow(doc, visit, received, known)
            frontier = []
            for visit in following:
                if visit not in seen:
                    seen.add(visit)
                    frontier.append(visit)
        return received

    def _follow(self, doc: Document, visit: Visit, received: Received, known: set[str]) -> list[Visit]:
        directory = self.directory_of(doc)
        if directory is None:
            return []
        key = object_key(doc)
        if not self.folder.exists(directory):
            path = (doc.get("spec") or {}).get("path")
            received.notes.append(
                f"{self.folder.tree.label}: {visit.cluster}: Kustomization {key[2]}/{key[3]}: "
                f"spec.path {path!r} is not in dist/"
            )
            return []
        variables = variables_of(doc, received.clusters.get(visit.cluster, {}))
        target = self.target_of(doc, visit.cluster, known)
        if variables is None:
            return [Visit(target, directory)]
        values, complete = variables
        return [Visit(target, directory, tuple(sorted(values.items())), complete)]


def receive(trees: Iterable[Tree], workdir: Path, builder: Builder | None = None) -> list[Received]:
    """What every cluster receives from each tree; ``workdir`` holds the trees written out."""
    chosen = builder or Builder()
    results: list[Received] = []
    for index, tree in enumerate(trees):
        folder = Folder(tree, workdir / f"tree-{index}")
        results.append(Walker(folder, chosen).walk())
    return results
