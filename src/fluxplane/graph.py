"""``fluxplane graph`` and the dependency graph synth draws in each cluster folder's README.md.

A cluster's graph holds its Flux Kustomizations and HelmReleases. Edges are ``dependsOn`` (an arrow
leads from what must be ready to what waits for it); a HelmRelease, or a Kustomization applied by
another one than the cluster's root, sits in a box with the Kustomization that applies it. What a
Kustomization applies is found the way kustomize builds its ``spec.path``: the ``resources`` and
``components`` of each ``kustomization.yaml``, files and folders, recursively; patches add nothing
and a ``$patch: delete`` patch removes an object.

A workload cluster's graph also shows, in a box of its own, the hub's chain that builds and
bootstraps it: the hub's Kustomizations (and their HelmReleases) that reach the cluster through
``kubeConfig``, and the others in the hub namespace they live in. Which
cluster a ``kubeConfig`` reaches is read from the tree itself: the hub object that applies a
cluster's ``clusters/<cluster>/flux-system`` folder through it.

The functions here take documents already parsed, keyed by their path under dist/, so synth can
draw every cluster from the objects it holds in memory; only the files a cluster needs are read.
"""

from __future__ import annotations

import argparse
import bisect
import posixpath
import re
import shutil
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fluxplane.charts.cluster import SYNC_SOURCE, WORKLOADS_SOURCE
from fluxplane.charts.layout import PLATFORM, WORKLOADS, RepositoryLayout, cluster_dir
from fluxplane.constructs.props import FLUX_NAMESPACE
from fluxplane.constructs.render import parse_documents
from fluxplane.errors import FluxplaneError

if TYPE_CHECKING:
    from fluxplane.constructs.manifest import Manifest
    from fluxplane.synth.app import FleetApp

Document = dict[str, Any]
#: Documents by their path under dist/ (``platform/clusters/hub/infrastructure.yaml``).
Documents = Mapping[str, Sequence[Document]]
#: Per GitRepository in flux-system: the Flux path prefixes of its content and the dist/ folder of each.
Sources = Mapping[str, Sequence[tuple[str, str]]]

KUSTOMIZATION = "Kustomization"
HELM_RELEASE = "HelmRelease"
#: The Flux kinds the graph draws, by API group, and the prefix of their node ids.
GROUPS = {KUSTOMIZATION: "kustomize.toolkit.fluxcd.io", HELM_RELEASE: "helm.toolkit.fluxcd.io"}
PREFIXES = {KUSTOMIZATION: "ks", HELM_RELEASE: "hr"}
#: The fleet repository's sources as synth writes them by default.
DEFAULT_SOURCES: Sources = {SYNC_SOURCE: ((f"dist/{PLATFORM}", PLATFORM), (f"dist/{WORKLOADS}", WORKLOADS))}
KUSTOMIZE_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
README = "README.md"
FORMATS = ("mermaid", "dot", "svg")

Key = tuple[str, str, str]


class GraphError(FluxplaneError):
    """``fluxplane graph`` cannot draw what was asked (unknown cluster, Graphviz missing)."""


# -- the graph --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """A Flux Kustomization or HelmRelease; ``parent`` is the id of the Kustomization that applies it."""

    id: str
    kind: str
    namespace: str
    name: str
    hub: bool = False
    parent: str | None = None
    waits: str | None = None
    path: str | None = None

    @property
    def lines(self) -> list[str]:
        """The node's label, line by line."""
        lines = [f"{self.kind}/{self.name}"]
        if self.namespace != FLUX_NAMESPACE:
            lines.append(f"namespace: {self.namespace}")
        if self.waits:
            lines.append(f"waits: {self.waits}")
        return lines


@dataclass(frozen=True)
class Edge:
    """``source`` must be ready before ``target`` (dependsOn), or ``source`` applies ``target``."""

    source: str
    target: str
    applies: bool = False


@dataclass(frozen=True)
class Graph:
    """One cluster's graph; ``hub`` names the hub when the graph holds the chain that bootstraps it."""

    cluster: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    hub: str | None = None


class LazyDocuments(Mapping[str, Sequence[Document]]):
    """Documents by path, made when first asked for: by ``makers`` (synth's manifests), else parsed from ``texts``."""

    def __init__(
        self, makers: Mapping[str, Callable[[], Sequence[Document]]], texts: Mapping[str, str] | None = None
    ) -> None:
        self._makers = makers
        self._texts: Mapping[str, str] = {
            path: text for path, text in (texts or {}).items() if path.endswith((".yaml", ".yml"))
        }

    def __getitem__(self, path: str) -> Sequence[Document]:
        # Not kept: FluxTree keeps what it builds from a folder, and reads each file for one folder.
        maker = self._makers.get(path)
        if maker is not None:
            return maker()
        if path in self._texts:
            return parse_documents(self._texts[path])
        raise KeyError(path)

    def __contains__(self, path: object) -> bool:
        return path in self._makers or path in self._texts

    def __iter__(self) -> Iterator[str]:
        yield from self._makers
        yield from (path for path in self._texts if path not in self._makers)

    def __len__(self) -> int:
        return len(self._makers) + sum(1 for path in self._texts if path not in self._makers)


def fleet_sources(platform: RepositoryLayout, workloads: RepositoryLayout) -> dict[str, tuple[tuple[str, str], ...]]:
    """Where the GitRepositories synth writes find their paths: the platform's, and the workloads' own or shared."""
    mine = ((platform.prefix, platform.key),)
    theirs = ((workloads.prefix, workloads.key),)
    same = (workloads.repository.url, workloads.repository.branch) == (
        platform.repository.url,
        platform.repository.branch,
    )
    if same:
        return {SYNC_SOURCE: mine + theirs}
    return {SYNC_SOURCE: mine, WORKLOADS_SOURCE: theirs}


def _key(doc: Document) -> Key | None:
    kind = doc.get("kind")
    if kind not in GROUPS or not str(doc.get("apiVersion", "")).startswith(GROUPS[kind] + "/"):
        return None
    metadata = doc.get("metadata") or {}
    return (kind, metadata.get("namespace") or FLUX_NAMESPACE, metadata.get("name", ""))


def _spec(doc: Document) -> dict[str, Any]:
    spec = doc.get("spec")
    return spec if isinstance(spec, dict) else {}


def _access(doc: Document, namespace: str) -> str | None:
    """Which remote cluster access an object uses: its namespace and ``kubeConfig``, as one string."""
    config = _spec(doc).get("kubeConfig")
    if not config:
        return None
    return f"{namespace}:{sorted(config.items())!r}"


def waits(spec: Mapping[str, Any]) -> str | None:
    """What Flux checks before it calls the Kustomization ready (healthCheckExprs judge only those)."""
    if spec.get("wait"):
        return "all it applies"
    names: dict[str, list[str]] = {}
    for check in spec.get("healthChecks") or []:
        names.setdefault(check.get("kind", ""), []).append(check.get("name", ""))
    if not names:
        return None
    return ", ".join(
        f"{kind}/{found[0]}" if len(found) == 1 else f"{kind} ({len(found)})" for kind, found in sorted(names.items())
    )


# -- the tree as kustomize and Flux read it ---------------------------------------------------------


@dataclass
class _Entry:
    key: Key
    doc: Document
    parent: Key | None
    folder: str | None = None
    children: list[Key] = field(default_factory=list)


class FluxTree:
    """Builds cluster graphs from the documents of a dist/ tree, reading each folder once."""

    def __init__(
        self,
        documents: Documents,
        *,
        sources: Sources = DEFAULT_SOURCES,
        platform: str = PLATFORM,
        hub: str | None = None,
    ) -> None:
        self.documents = documents
        self.sources = {
            name: sorted(((_normal(prefix), key) for prefix, key in roots), key=lambda root: -len(root[0]))
            for name, roots in sources.items()
        }
        self.platform = platform
        self.hub = hub
        self._objects: dict[str, list[Document]] = {}
        self._building: set[str] = set()
        self._paths: list[str] | None = None
        self._chains: dict[str, list[_Entry]] | None = None
        self._folders: dict[tuple[str, str], str | None] = {}

    # kustomize ----------------------------------------------------------------------------------

    def folder(self, doc: Document) -> str | None:
        """The dist/ folder a Flux Kustomization applies, if its source is one of the fleet's repositories."""
        spec = _spec(doc)
        ref = spec.get("sourceRef") or {}
        namespace = ref.get("namespace") or (doc.get("metadata") or {}).get("namespace") or FLUX_NAMESPACE
        if ref.get("kind") != "GitRepository" or namespace != FLUX_NAMESPACE:
            return None
        wanted = (ref.get("name", ""), str(spec.get("path") or "."))
        if wanted not in self._folders:
            self._folders[wanted] = self._source_folder(*wanted)
        return self._folders[wanted]

    def _source_folder(self, source: str, spec_path: str) -> str | None:
        path = _normal(spec_path)
        for prefix, key in self.sources.get(source, ()):
            if prefix == ".":
                rest = path
            elif path == prefix:
                rest = "."
            elif path.startswith(prefix + "/"):
                rest = path[len(prefix) + 1 :]
            else:
                continue
            return posixpath.normpath(posixpath.join(key, rest))
        return None

    def objects(self, folder: str) -> list[Document]:
        """The objects kustomize builds from ``folder`` (resources and components, minus deleted ones)."""
        cached = self._objects.get(folder)
        if cached is not None:
            return cached
        if folder in self._building:
            return []
        self._building.add(folder)
        try:
            built = self._build(folder)
        finally:
            self._building.discard(folder)
        self._objects[folder] = built
        return built

    def _build(self, folder: str) -> list[Document]:
        config_path = next(
            (
                posixpath.join(folder, name)
                for name in KUSTOMIZE_FILES
                if posixpath.join(folder, name) in self.documents
            ),
            None,
        )
        if config_path is None:
            # Flux generates a kustomization.yaml listing the folder's manifests and subfolders.
            return [doc for entry in self._listing(folder) for doc in self._resource(entry)]
        config = next(iter(self.documents[config_path]), {})
        built: list[Document] = []
        for entry in [*(config.get("resources") or []), *(config.get("components") or [])]:
            if isinstance(entry, str) and "://" not in entry and not entry.startswith("git@"):
                built.extend(self._resource(posixpath.normpath(posixpath.join(folder, entry))))
        for patch in config.get("patches") or []:
            text = patch.get("patch") if isinstance(patch, dict) else None
            if isinstance(text, str) and "$patch" in text and "delete" in text:
                for deletion in parse_documents(text):
                    if deletion.get("$patch") == "delete":
                        built = [doc for doc in built if not _matches(deletion, doc)]
        return built

    def _resource(self, path: str) -> list[Document]:
        if path in self.documents:
            return list(self.documents[path])
        return self.objects(path)

    def _listing(self, folder: str) -> list[str]:
        """The files and folders right below ``folder`` (what Flux lists when there is no kustomization.yaml)."""
        if self._paths is None:
            self._paths = sorted(self.documents)
        prefix = folder + "/" if folder else ""
        start = bisect.bisect_left(self._paths, prefix)
        found: set[str] = set()
        for path in self._paths[start:]:
            if not path.startswith(prefix):
                break
            found.add(prefix + path[len(prefix) :].split("/", 1)[0])
        return sorted(found)

    def forget(self, cluster: str) -> None:
        """Drop what was built from ``cluster``'s own folders (drawn once), keeping the shared ones."""
        folders = tuple(
            posixpath.join(key, cluster_dir(cluster)) for roots in self.sources.values() for _, key in roots
        )
        for folder in [folder for folder in self._objects if folder.startswith(folders)]:
            if any(folder == mine or folder.startswith(mine + "/") for mine in folders):
                del self._objects[folder]

    # walking a cluster --------------------------------------------------------------------------

    def _walk(self, cluster: str) -> dict[Key, _Entry]:
        """Every Flux object a cluster's root folder leads to, with the Kustomization that applies it.

        A Kustomization with ``kubeConfig`` applies to another cluster: it is listed, not followed.
        """
        entries: dict[Key, _Entry] = {}
        queue: deque[_Entry] = deque()

        def add(doc: Document, parent: Key | None) -> None:
            key = _key(doc)
            if key is None:
                return
            if parent is not None:
                entries[parent].children.append(key)
            if key not in entries:
                entry = _Entry(key, doc, parent)
                entries[key] = entry
                queue.append(entry)

        for doc in self.objects(posixpath.join(self.platform, cluster_dir(cluster))):
            add(doc, None)
        while queue:
            entry = queue.popleft()
            if entry.key[0] != KUSTOMIZATION:
                continue
            entry.folder = self.folder(entry.doc)
            if entry.folder is None or _spec(entry.doc).get("kubeConfig"):
                continue
            for doc in self.objects(entry.folder):
                add(doc, entry.key)
        return entries

    def applied(self, cluster: str) -> Iterator[tuple[str, str, Document]]:
        """(namespace, name) of each Kustomization on ``cluster`` that applies objects there, with each object.

        Kustomizations that apply to another cluster (``kubeConfig``) are left out.
        """
        for (kind, namespace, name), entry in self._walk(cluster).items():
            if kind != KUSTOMIZATION or entry.folder is None or _spec(entry.doc).get("kubeConfig"):
                continue
            for document in self.objects(entry.folder):
                yield namespace, name, document

    def _reach(self, entries: Mapping[Key, _Entry]) -> dict[str, str]:
        """Per remote access: the cluster whose root Kustomization it applies."""
        clusters = posixpath.join(self.platform, "clusters") + "/"
        reach: dict[str, str] = {}
        for entry in entries.values():
            access = _access(entry.doc, entry.key[1])
            if access is None or entry.folder is None:
                continue
            for doc in self.objects(entry.folder):
                target = self.folder(doc) if _key(doc) is not None and doc["kind"] == KUSTOMIZATION else None
                if target is not None and target.startswith(clusters) and "/" not in target[len(clusters) :]:
                    reach.setdefault(access, target[len(clusters) :])
        return reach

    def _target(self, entry: _Entry, entries: Mapping[Key, _Entry], reach: Mapping[str, str]) -> str | None:
        """The cluster a remote object works on ("" when unknown); None for the cluster's own objects."""
        access = _access(entry.doc, entry.key[1])
        if access is None and entry.key[0] == KUSTOMIZATION:
            access = next(
                (
                    found
                    for child in entry.children
                    if child[0] == HELM_RELEASE
                    and entries[child].parent == entry.key
                    and (found := _access(entries[child].doc, child[1])) is not None
                ),
                None,
            )
        return None if access is None else reach.get(access, "")

    def _own(self, entries: Mapping[Key, _Entry]) -> list[_Entry]:
        reach = self._reach(entries)
        own: dict[Key, _Entry] = {}
        for entry in entries.values():
            if (entry.parent is None or entry.parent in own) and self._target(entry, entries, reach) is None:
                own[entry.key] = entry
        return list(own.values())

    def _hub_chains(self) -> dict[str, list[_Entry]]:
        """Per workload cluster: the hub's objects that build and bootstrap it.

        Those that reach the cluster through ``kubeConfig``, and every other hub object in the
        namespaces they live in (a cluster's chain lives in its own hub namespace: the steps that
        build it and make its cloud resources come before the ones that reach it).
        """
        if self._chains is None:
            self._chains = {}
            if self.hub is not None:
                entries = self._walk(self.hub)
                reach = self._reach(entries)
                namespaces: dict[str, str] = {}
                for entry in entries.values():
                    target = self._target(entry, entries, reach)
                    if target:
                        self._chains.setdefault(target, []).append(entry)
                        if entry.key[1] != FLUX_NAMESPACE:
                            namespaces.setdefault(entry.key[1], target)
                for entry in entries.values():
                    target = namespaces.get(entry.key[1])
                    if target is not None and self._target(entry, entries, reach) is None:
                        self._chains[target].append(entry)
        return self._chains

    def _chain_namespaces(self) -> set[str]:
        """The hub namespaces that hold a workload cluster's chain (drawn with that cluster)."""
        return {
            entry.key[1] for chain in self._hub_chains().values() for entry in chain if entry.key[1] != FLUX_NAMESPACE
        }

    # the graph ----------------------------------------------------------------------------------

    def graph(self, cluster: str) -> Graph:
        """The graph of ``cluster``; a workload cluster's includes the hub's chain that bootstraps it."""
        own = self._own(self._walk(cluster))
        chain = self._hub_chains().get(cluster, []) if cluster != self.hub else []
        if cluster == self.hub:
            # each workload cluster's chain is drawn in that cluster's graph
            chains = self._chain_namespaces()
            own = [entry for entry in own if entry.key[1] not in chains]
        sides = [(True, chain), (False, own)]
        ids = _ids([(hub, entry.key) for hub, entries in sides for entry in entries])
        nodes: list[Node] = []
        edges: set[tuple[str, str, bool]] = set()
        for hub, entries in sides:
            present = {entry.key for entry in entries}
            for entry in entries:
                spec = _spec(entry.doc)
                node_id = ids[(hub, entry.key)]
                nodes.append(
                    Node(
                        id=node_id,
                        kind=entry.key[0],
                        namespace=entry.key[1],
                        name=entry.key[2],
                        hub=hub,
                        parent=ids[(hub, entry.parent)] if entry.parent in present else None,
                        waits=waits(spec) if entry.key[0] == KUSTOMIZATION else None,
                        path=spec.get("path") if entry.key[0] == KUSTOMIZATION else None,
                    )
                )
                for dependency in spec.get("dependsOn") or []:
                    key = (entry.key[0], dependency.get("namespace") or entry.key[1], dependency.get("name", ""))
                    if key in present:
                        edges.add((ids[(hub, key)], node_id, False))
        targets = {entry.key for entry in own}
        for entry in chain:
            if entry.key[0] == KUSTOMIZATION and entry.folder is not None and _spec(entry.doc).get("kubeConfig"):
                for doc in self.objects(entry.folder):
                    applied = _key(doc)
                    if applied is not None and applied in targets:
                        edges.add((ids[(True, entry.key)], ids[(False, applied)], True))
        return Graph(
            cluster=cluster,
            nodes=tuple(sorted(nodes, key=lambda node: (not node.hub, node.kind, node.namespace, node.name))),
            edges=tuple(Edge(source, target, applies) for source, target, applies in sorted(edges)),
            hub=self.hub if chain else None,
        )


_UNSAFE = re.compile(r"[^A-Za-z0-9]")


def _normal(path: str) -> str:
    return posixpath.normpath(path.lstrip("/")) if path.strip("./") else "."


def _matches(deletion: Document, doc: Document) -> bool:
    wanted = deletion.get("metadata") or {}
    metadata = doc.get("metadata") or {}
    return (
        deletion.get("kind") == doc.get("kind")
        and wanted.get("name") == metadata.get("name")
        and (not wanted.get("namespace") or wanted.get("namespace") == metadata.get("namespace"))
    )


@lru_cache(maxsize=4096)
def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text)


def _ids(keys: Iterable[tuple[bool, Key]]) -> dict[tuple[bool, Key], str]:
    """Stable node ids safe in Mermaid and dot: side, kind prefix, namespace (unless flux-system), name."""
    ids: dict[tuple[bool, Key], str] = {}
    used: set[str] = set()
    for hub, (kind, namespace, name) in sorted(keys):
        base = "hub_" if hub else ""
        base += f"{PREFIXES[kind]}_"
        base += "" if namespace == FLUX_NAMESPACE else f"{_safe(namespace)}__"
        base += _safe(name)
        node_id, number = base, 2
        while node_id in used:
            node_id, number = f"{base}_{number}", number + 1
        used.add(node_id)
        ids[(hub, (kind, namespace, name))] = node_id
    return ids


def cluster_graph(
    documents: Documents,
    cluster: str,
    *,
    hub: str | None = None,
    sources: Sources = DEFAULT_SOURCES,
    platform: str = PLATFORM,
) -> Graph:
    """The graph of ``cluster`` in ``documents``; with ``hub``, a workload cluster's shows the hub's chain."""
    return FluxTree(documents, sources=sources, platform=platform, hub=hub).graph(cluster)


# -- output -----------------------------------------------------------------------------------------


def _children(graph: Graph) -> dict[str | None, list[Node]]:
    children: dict[str | None, list[Node]] = {}
    for node in graph.nodes:
        children.setdefault(node.parent, []).append(node)
    return children


def _sides(graph: Graph) -> list[tuple[str | None, str | None, list[Node]]]:
    """(box id, box label, top-level nodes): the hub and the cluster boxes, or the cluster's nodes alone."""
    tops = [node for node in graph.nodes if node.parent is None]
    if graph.hub is None:
        return [(None, None, tops)]
    return [
        ("side_hub", f"{graph.hub}: builds and bootstraps {graph.cluster}", [node for node in tops if node.hub]),
        ("side_cluster", graph.cluster, [node for node in tops if not node.hub]),
    ]


def _mermaid_text(text: str) -> str:
    return text.replace('"', "#quot;")


def mermaid(graph: Graph) -> str:
    """The graph as a Mermaid flowchart (GitHub and GitLab draw it in Markdown)."""
    children = _children(graph)
    lines = ["flowchart LR"]

    def draw(node: Node, depth: int) -> None:
        pad = "  " * depth
        label = _mermaid_text("<br/>".join(node.lines))
        shape = f'(["{label}"])' if node.kind == HELM_RELEASE else f'["{label}"]'
        inner = children.get(node.id)
        if not inner:
            lines.append(f"{pad}{node.id}{shape}")
            return
        lines.append(f'{pad}subgraph group_{node.id}["{_mermaid_text(node.path or node.name)}"]')
        lines.append(f"{pad}  {node.id}{shape}")
        for child in inner:
            draw(child, depth + 1)
        lines.append(f"{pad}end")

    for box, label, tops in _sides(graph):
        if box is None:
            for node in tops:
                draw(node, 1)
            continue
        lines.append(f'  subgraph {box}["{_mermaid_text(label or box)}"]')
        for node in tops:
            draw(node, 2)
        lines.append("  end")
    for edge in graph.edges:
        arrow = "-. applies .->" if edge.applies else "-->"
        lines.append(f"  {edge.source} {arrow} {edge.target}")
    return "\n".join(lines) + "\n"


def _dot_text(*lines: str) -> str:
    """A quoted dot string; several lines are joined with dot's line break."""
    return '"' + "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines) + '"'


def dot(graph: Graph) -> str:
    """The graph in Graphviz's dot language."""
    children = _children(graph)
    lines = [f"digraph {_dot_text(graph.cluster)} {{", "  rankdir=LR;", "  node [shape=box];"]

    def draw(node: Node, depth: int) -> None:
        pad = "  " * depth
        style = ", style=rounded" if node.kind == HELM_RELEASE else ""
        statement = f"{_dot_text(node.id)} [label={_dot_text(*node.lines)}{style}];"
        inner = children.get(node.id)
        if not inner:
            lines.append(pad + statement)
            return
        lines.append(f"{pad}subgraph {_dot_text('cluster_group_' + node.id)} {{")
        lines.append(f"{pad}  label={_dot_text(node.path or node.name)};")
        lines.append(f"{pad}  {statement}")
        for child in inner:
            draw(child, depth + 1)
        lines.append(f"{pad}}}")

    for box, label, tops in _sides(graph):
        if box is None:
            for node in tops:
                draw(node, 1)
            continue
        lines.append(f"  subgraph {_dot_text('cluster_' + box)} {{")
        lines.append(f"    label={_dot_text(label or box)};")
        for node in tops:
            draw(node, 2)
        lines.append("  }")
    for edge in graph.edges:
        attributes = ' [style=dashed, label="applies"]' if edge.applies else ""
        lines.append(f"  {_dot_text(edge.source)} -> {_dot_text(edge.target)}{attributes};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def svg(graph: Graph) -> str:
    """The graph drawn by Graphviz (``dot -Tsvg``), which must be on PATH."""
    program = shutil.which("dot")
    if program is None:
        raise GraphError(
            "--format svg: Graphviz's 'dot' is not on PATH; install graphviz (apt-get install graphviz, "
            "brew install graphviz), or use --format dot or --format mermaid, which need nothing"
        )
    result = subprocess.run([program, "-Tsvg"], input=dot(graph), capture_output=True, text=True, check=False)
    if result.returncode != 0:
        detail = (result.stderr.strip().splitlines() or [f"exit code {result.returncode}"])[0]
        raise GraphError(f"--format svg: {program} -Tsvg failed: {detail}")
    return result.stdout


def readme(graph: Graph) -> str:
    """The README.md of a cluster folder: what the folder is, and its graph in Mermaid."""
    hub = (
        f", and the `{graph.hub}` box is the hub's chain that builds and bootstraps this cluster until its own Flux "
        "takes over"
        if graph.hub
        else ""
    )
    return (
        f"# Cluster {graph.cluster}\n\n"
        f"The Flux entry point of cluster `{graph.cluster}`: its `flux-system` Kustomization applies this folder. "
        "It is generated by `fluxplane synth` from `environments/`; change the definition, not these files. "
        "The graph shows the order Flux applies things in: an arrow leads from what must be ready to what depends on "
        "it (`dependsOn`), a box holds what a Kustomization applies, `waits:` names what Flux checks before it calls "
        f"a Kustomization ready{hub}. `fluxplane graph --cluster {graph.cluster}` prints it.\n\n"
        f"```mermaid\n{mermaid(graph)}```\n"
    )


def fleet_tree(
    app: FleetApp, makers: Mapping[str, Callable[[], Sequence[Document]]], texts: Mapping[str, str]
) -> FluxTree:
    """The FluxTree of ``app``'s fleet: ``makers`` make the documents of synth's manifests by path, ``texts``
    supplies the files that are not manifests (cdk8s output, files reused from the synth cache)."""
    return FluxTree(
        LazyDocuments(makers, texts),
        sources=fleet_sources(app.layout, app.workloads),
        platform=app.layout.key,
        hub=app.plan.fleet.management.name,
    )


def cluster_readme(app: FleetApp, tree: FluxTree, cluster: str) -> tuple[str, str]:
    """The path and text of ``cluster``'s README.md, drawn from ``tree`` (see ``fleet_tree``); what was built
    from the cluster's own folders is dropped afterwards, so clusters may be drawn in any order and grouping."""
    chart = app.clusters[cluster]
    text = readme(tree.graph(cluster))
    tree.forget(cluster)
    return posixpath.join(chart.layout.key, chart.directory, README), text


def cluster_readmes(app: FleetApp, files: Iterable[tuple[Any, Manifest]], texts: Mapping[str, str]) -> dict[str, str]:
    """Per cluster of ``app``: its folder's README.md, drawn from the manifests synth holds (not listed in
    kustomization.yaml). ``texts`` supplies the files that are not manifests (cdk8s output)."""
    makers = {posixpath.join(chart.layout.key, manifest.path): manifest.documents for chart, manifest in files}
    tree = fleet_tree(app, makers, texts)
    return dict(cluster_readme(app, tree, name) for name in sorted(app.clusters))


# -- the command ------------------------------------------------------------------------------------


def command(args: argparse.Namespace) -> int:
    """``fluxplane graph --cluster NAME``: the graph of the definition as synth would write it."""
    from fluxplane import synth
    from fluxplane.charts.layout import workloads_layout
    from fluxplane.node import use_project_node
    from fluxplane.progress import Progress

    root: Path = args.root
    progress = Progress("graph")
    with progress.stage("load"):
        plan = synth.load_plan(root)
    clusters = sorted(cluster.name for cluster in plan.clusters)
    if args.cluster not in clusters:
        raise GraphError(f"--cluster: unknown cluster {args.cluster!r} (clusters: {', '.join(clusters)})")
    use_project_node(root)
    with progress.stage("render") as stage:
        files = synth.render_plan(plan)
        stage.note(f"{len(files)} files")
    repositories = plan.fleet.repositories
    platform = RepositoryLayout(PLATFORM, repositories.platform)
    tree = FluxTree(
        LazyDocuments({}, files),
        sources=fleet_sources(platform, workloads_layout(repositories)),
        platform=platform.key,
        hub=plan.fleet.management.name,
    )
    graph = tree.graph(args.cluster)
    draw: Callable[[Graph], str] = {"mermaid": mermaid, "dot": dot, "svg": svg}[args.format or "mermaid"]
    text = draw(graph)
    output: Path | None = args.output
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        output.write_text(text)
    except OSError as exc:
        raise GraphError(f"{output}: cannot write the graph: {exc.strerror or exc}") from exc
    return 0


__all__ = [
    "DEFAULT_SOURCES",
    "Edge",
    "FluxTree",
    "Graph",
    "GraphError",
    "LazyDocuments",
    "Node",
    "cluster_graph",
    "cluster_readme",
    "cluster_readmes",
    "command",
    "dot",
    "fleet_sources",
    "fleet_tree",
    "mermaid",
    "readme",
    "svg",
    "waits",
]
