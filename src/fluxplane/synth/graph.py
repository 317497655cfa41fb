"""The dependency graph of a cluster's Flux objects: what ``fluxplane graph`` draws, and synth in each cluster
folder's README.md (fluxplane.synth.readmes).

A cluster's graph holds its Flux Kustomizations and HelmReleases. Edges are ``dependsOn`` (an arrow
leads from what must be ready to what waits for it); a HelmRelease, or a Kustomization applied by
another one than the cluster's root, sits in a box with the Kustomization that applies it. What lands
on the cluster, and what applies it, is fluxplane.core.tree's walk from the cluster's entry folder (the
first Kustomization to apply an object is the box it sits in).

A workload cluster's graph also shows, in a box of its own, the hub's chain that builds and
bootstraps it: the hub's Kustomizations (and their HelmReleases) that reach the cluster through
``kubeConfig`` (fluxplane.core.tree's rule for the cluster a kubeConfig reaches), and the others in the hub
namespace they live in.

The functions here take documents already parsed, keyed by their path under dist/, so synth can
draw every cluster from the objects it holds in memory; only the files a cluster needs are read.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from fluxplane.constructs.props import FLUX_NAMESPACE
from fluxplane.core.tree import DistRepository, Documents, FleetWalk, Placed, Walk
from fluxplane.core.tree.objects import group_of, metadata_of, spec_of
from fluxplane.errors import FluxplaneError

Document = dict[str, Any]

KUSTOMIZATION = "Kustomization"
HELM_RELEASE = "HelmRelease"
#: The Flux kinds the graph draws, by API group, and the prefix of their node ids.
GROUPS = {KUSTOMIZATION: "kustomize.toolkit.fluxcd.io", HELM_RELEASE: "helm.toolkit.fluxcd.io"}
PREFIXES = {KUSTOMIZATION: "ks", HELM_RELEASE: "hr"}
README = "README.md"

Key = tuple[str, str, str]


class GraphError(FluxplaneError):
    """``fluxplane graph`` cannot draw what was asked (unknown cluster, Graphviz missing)."""


# -- the graph --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FluxNode:
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
    nodes: tuple[FluxNode, ...]
    edges: tuple[Edge, ...]
    hub: str | None = None


def _key(doc: Document, namespace: str | None) -> Key | None:
    """(kind, namespace, name) of a Flux Kustomization or HelmRelease (namespace flux-system when it names none)."""
    kind = doc.get("kind")
    if not isinstance(kind, str) or kind not in GROUPS or group_of(doc.get("apiVersion")) != GROUPS[kind]:
        return None
    metadata = metadata_of(doc)
    own = metadata.get("namespace") if namespace is None else namespace
    return (kind, str(own or FLUX_NAMESPACE), str(metadata.get("name") or ""))


def _placed_key(placed: Placed) -> Key | None:
    """``_key`` of an object a walk placed, from its walk key (``Placed.key``), which the walk keeps and the check of
    what two writers apply on the cluster reads too: each object's key is worked out once."""
    group, kind, namespace, name = placed.key
    if kind not in GROUPS or group != GROUPS[kind]:
        return None
    return (kind, namespace or FLUX_NAMESPACE, name)


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


# -- the tree as fluxplane.core.tree walks it -----------------------------------------------------------


@dataclass
class _GraphEntry:
    key: Key
    placed: Placed
    parent: Key | None
    folder: str | None = None
    children: list[Key] = field(default_factory=list)

    @property
    def doc(self) -> Document:
        return self.placed.item.doc


class FluxTree:
    """Builds cluster graphs from the documents of a dist/ tree (or a fluxplane.core.tree FleetWalk over them).

    ``repositories`` are where the repositories fluxplane writes live (read from the tree when not given);
    ``hub`` names the cluster whose chains bootstrap the others.
    """

    def __init__(
        self,
        documents: Documents | FleetWalk,
        *,
        repositories: Iterable[DistRepository] | None = None,
        hub: str | None = None,
    ) -> None:
        self.fleet = documents if isinstance(documents, FleetWalk) else FleetWalk(documents, repositories)
        self.hub = hub
        self._chains: dict[str, list[_GraphEntry]] | None = None
        self._hub: tuple[dict[Key, _GraphEntry], Walk] | None = None
        self._local: dict[str, Walk] = {}

    def forget(self, cluster: str) -> None:
        """Drop what was built from ``cluster``'s own folders (drawn once), keeping the shared ones."""
        self.fleet.forget(cluster)
        if cluster != self.hub:
            self._local.pop(cluster, None)

    def local(self, cluster: str) -> Walk:
        """``cluster``'s own walk (fluxplane.core.tree's ``FleetWalk.local``), which its graph is drawn from; kept until
        the cluster is forgotten (the hub's for good), so what else reads it needs no walk of its own."""
        walk = self._local.get(cluster)
        if walk is None:
            walk = self._local[cluster] = self.fleet.local(cluster)
        return walk

    def _walk(self, cluster: str) -> tuple[dict[Key, _GraphEntry], Walk]:
        """Every Flux object of the cluster's walk, with the Kustomization that first applies it.

        A Kustomization with ``kubeConfig`` applies to another cluster: it is listed, not followed. The hub's
        is kept: every workload cluster's graph shows part of it.
        """
        if cluster == self.hub and self._hub is not None:
            return self._hub
        walk = self.local(cluster)
        applications = {application.applier: application for application in walk.applications}
        entries: dict[Key, _GraphEntry] = {}
        queue: deque[_GraphEntry] = deque()

        def add(placed: Placed, parent: Key | None) -> None:
            key = _placed_key(placed)
            if key is None:
                return
            if parent is not None:
                entries[parent].children.append(key)
            if key not in entries:
                entry = _GraphEntry(key, placed, parent)
                entries[key] = entry
                queue.append(entry)

        for placed in walk.applications[0].objects:
            add(placed, None)
        while queue:
            entry = queue.popleft()
            if entry.key[0] != KUSTOMIZATION:
                continue
            entry.folder = walk.folders.get(entry.placed)
            application = applications.get(entry.placed)
            if application is not None:
                for placed in application.objects:
                    add(placed, entry.key)
        if cluster == self.hub:
            self._hub = (entries, walk)
        return entries, walk

    @staticmethod
    def _target(walk: Walk, entry: _GraphEntry, entries: Mapping[Key, _GraphEntry]) -> str | None:
        """The cluster a remote object works on; None for the cluster's own objects. A Kustomization that applies
        a HelmRelease with ``kubeConfig`` works where the release does."""
        placed: Placed | None = entry.placed
        if walk.access(entry.placed) is None:
            placed = None
            if entry.key[0] == KUSTOMIZATION:
                placed = next(
                    (
                        entries[child].placed
                        for child in entry.children
                        if child[0] == HELM_RELEASE
                        and entries[child].parent == entry.key
                        and walk.access(entries[child].placed) is not None
                    ),
                    None,
                )
        return None if placed is None else walk.target(placed)

    def _own(self, entries: Mapping[Key, _GraphEntry], walk: Walk) -> list[_GraphEntry]:
        own: dict[Key, _GraphEntry] = {}
        for entry in entries.values():
            if (entry.parent is None or entry.parent in own) and self._target(walk, entry, entries) is None:
                own[entry.key] = entry
        return list(own.values())

    def _hub_chains(self) -> dict[str, list[_GraphEntry]]:
        """Per workload cluster: the hub's objects that build and bootstrap it.

        Those that reach the cluster through ``kubeConfig``, and every other hub object in the
        namespaces they live in (a cluster's chain lives in its own hub namespace: the steps that
        build it and make its cloud resources come before the ones that reach it).
        """
        if self._chains is None:
            self._chains = {}
            if self.hub is not None:
                entries, walk = self._walk(self.hub)
                namespaces: dict[str, str] = {}
                for entry in entries.values():
                    target = self._target(walk, entry, entries)
                    if target:
                        self._chains.setdefault(target, []).append(entry)
                        if entry.key[1] != FLUX_NAMESPACE:
                            namespaces.setdefault(entry.key[1], target)
                for entry in entries.values():
                    target = namespaces.get(entry.key[1])
                    if target is not None and self._target(walk, entry, entries) is None:
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
        entries, walk = self._walk(cluster)
        own = self._own(entries, walk)
        chain = self._hub_chains().get(cluster, []) if cluster != self.hub else []
        if cluster == self.hub:
            # each workload cluster's chain is drawn in that cluster's graph
            chains = self._chain_namespaces()
            own = [entry for entry in own if entry.key[1] not in chains]
        sides = [(True, chain), (False, own)]
        ids = _ids([(hub, entry.key) for hub, entries in sides for entry in entries])
        nodes: list[FluxNode] = []
        edges: set[tuple[str, str, bool]] = set()
        for hub, side in sides:
            present = {entry.key for entry in side}
            for entry in side:
                spec = spec_of(entry.doc)
                node_id = ids[(hub, entry.key)]
                nodes.append(
                    FluxNode(
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
        hub_walk = self._hub[1] if self._hub is not None else walk
        for entry in chain:
            if entry.key[0] == KUSTOMIZATION and entry.folder is not None and hub_walk.access(entry.placed):
                for item in self.fleet.folders.build(entry.folder).items:
                    applied = _key(item.doc, item.namespace)
                    if applied is not None and applied in targets:
                        edges.add((ids[(True, entry.key)], ids[(False, applied)], True))
        return Graph(
            cluster=cluster,
            nodes=tuple(sorted(nodes, key=lambda node: (not node.hub, node.kind, node.namespace, node.name))),
            edges=tuple(Edge(source, target, applies) for source, target, applies in sorted(edges)),
            hub=self.hub if chain else None,
        )


_UNSAFE = re.compile(r"[^A-Za-z0-9]")


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
    repositories: Iterable[DistRepository] | None = None,
) -> Graph:
    """The graph of ``cluster`` in ``documents``; with ``hub``, a workload cluster's shows the hub's chain.
    ``repositories`` are read from the tree when not given."""
    return FluxTree(documents, repositories=repositories, hub=hub).graph(cluster)


# -- output -----------------------------------------------------------------------------------------


def _children(graph: Graph) -> dict[str | None, list[FluxNode]]:
    children: dict[str | None, list[FluxNode]] = {}
    for node in graph.nodes:
        children.setdefault(node.parent, []).append(node)
    return children


def _sides(graph: Graph) -> list[tuple[str | None, str | None, list[FluxNode]]]:
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

    def draw(node: FluxNode, depth: int) -> None:
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

    def draw(node: FluxNode, depth: int) -> None:
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


__all__ = [
    "Edge",
    "FluxNode",
    "FluxTree",
    "Graph",
    "GraphError",
    "cluster_graph",
    "dot",
    "mermaid",
    "readme",
    "svg",
    "waits",
]
