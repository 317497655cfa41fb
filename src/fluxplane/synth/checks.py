"""Checks over the whole tree, run once before anything is written, all problems reported together.

They catch what Flux would only report at run time, on the cluster: a dependsOn or sourceRef that
names nothing, a dependency cycle (Flux would wait forever), a Flux path that is not in dist/, two
objects with one identity in one kustomize build, two files at one path, one object that two Flux
Kustomizations apply on a cluster (each takes it from the other, and prunes it when it stops applying it), two
HelmReleases that install one Helm release (each upgrades it to its own chart and values),
and plaintext in Git: a Secret with values, or a SealedSecret carrying values in clear beside its ciphertext.
"""

from __future__ import annotations

import json
import posixpath
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fluxplane.config.secrets import SECRET_KINDS, check_plaintext
from fluxplane.constructs.base import node_of, resources_below
from fluxplane.constructs.git_repository import GitRepository
from fluxplane.constructs.kustomization import Kustomization
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.props import FLUX_NAMESPACE
from fluxplane.core.tree import Placed, Walk
from fluxplane.packs.helm_charts import chart_file
from fluxplane.packs.registry import find_cycle
from fluxplane.synth.cdk8s_charts import CHART_FILES
from fluxplane.synth.hazards import HELM_RELEASE, field, release_target

if TYPE_CHECKING:
    from fluxplane.synth.tree import FleetTree


def flux_sources(chart: Any) -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of the Flux sources a chart defines."""
    return {
        ("GitRepository", resource.namespace or "", resource.name)
        for resource in resources_below(chart)
        if isinstance(resource, GitRepository)
    }


def _kustomizations(chart: Any) -> dict[tuple[str, str], Kustomization]:
    return {
        (resource.namespace or "", resource.name): resource
        for resource in resources_below(chart)
        if isinstance(resource, Kustomization)
    }


def check_cluster(
    chart: Any,
    *,
    cluster: str | None = None,
    sources: set[tuple[str, str, str]] | None = None,
    known: Any = None,
) -> list[str]:
    """References between the Flux objects of one cluster's chart (its entry point, the hub's spokes, tenants).

    ``sources`` are Flux sources defined elsewhere on the cluster, for charts that define none;
    ``known`` is the cluster's entry-point chart, whose Kustomizations a tenant may depend on.
    """
    problems: list[str] = []
    cluster = cluster or chart.cluster
    sources = set(sources or ())
    own: dict[tuple[str, str], Kustomization] = {}
    # one walk of the chart for its sources and its Kustomizations
    for resource in resources_below(chart):
        if isinstance(resource, Kustomization):
            own[(resource.namespace or "", resource.name)] = resource
        elif isinstance(resource, GitRepository):
            sources.add(("GitRepository", resource.namespace or "", resource.name))
    kustomizations = {**(_kustomizations(known) if known is not None else {}), **own}
    graph: dict[str, tuple[str, ...]] = {}
    for (namespace, name), kustomization in own.items():
        edges = []
        for dependency in kustomization.dependencies:
            target = (dependency.namespace or namespace, dependency.name)
            if target not in kustomizations:
                known = ", ".join(sorted(n for _, n in kustomizations))
                problems.append(
                    f"{kustomization.node.path}: dependsOn {dependency.name!r} does not name a Kustomization "
                    f"on cluster {cluster!r} (known: {known})"
                )
            edges.append(f"{target[0]}/{target[1]}")
        graph[f"{namespace}/{name}"] = tuple(edges)
        ref = kustomization.props.source_ref
        if (ref.kind, ref.namespace or namespace, ref.name) not in sources:
            problems.append(
                f"{kustomization.node.path}: sourceRef {ref.kind}/{ref.name} is not defined on cluster {cluster!r}"
            )
    cycle = find_cycle(graph)
    if cycle:
        names = " -> ".join(item.split("/", 1)[1] for item in cycle)
        problems.append(f"{node_of(chart).path}: dependsOn cycle on cluster {cluster!r}: {names}")
    return problems


def check_files(files: list[tuple[Any, Manifest]]) -> list[str]:
    """No path written twice; no object identity twice in one file."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for chart, manifest in files:
        path = posixpath.join(chart.layout.key, manifest.path)
        if path in seen:
            problems.append(f"{manifest.node.path}: writes {path}, already written by {seen[path]}")
        seen[path] = manifest.node.path
        identities: dict[tuple[Any, ...], str] = {}
        checked: set[str] = set()
        for resource in manifest.resources():
            construct_path = resource.node.path
            if construct_path in checked:
                continue
            checked.add(construct_path)
            ref = resource.ref
            if ref in identities:
                problems.append(
                    f"{construct_path}: {resource.kind} {resource.name!r} is already defined in {path} "
                    f"by {identities[ref]}"
                )
            identities[ref] = construct_path
            if resource.kind in SECRET_KINDS or resource.kind.endswith("List"):
                problems.extend(check_plaintext(resource.to_dict(), construct_path, path))
    return problems


def check_flux_paths(charts: list[Any], directories: set[str], layouts: list[Any] | None = None) -> list[str]:
    """Every Flux Kustomization path is a dist/ folder with a kustomization.yaml.

    A path is looked up in the repository folder whose prefix it starts with: the chart's own, or
    one of ``layouts`` (an entry point applies the workloads repository's tenants, say).
    """
    problems: list[str] = []
    # each repository folder's prefix in a Flux path, worked out once
    bases: dict[int, str] = {}
    for layout in (*(chart.layout for chart in charts), *(layouts or ())):
        if id(layout) not in bases:
            bases[id(layout)] = layout.flux_path("").rstrip("/") + "/"
    for chart in charts:
        candidates = [chart.layout, *(layouts or ())]
        by_path: defaultdict[str, list[Kustomization]] = defaultdict(list)
        for resource in resources_below(chart):
            if isinstance(resource, Kustomization):
                by_path[resource.props.path].append(resource)
        for path, users in sorted(by_path.items()):
            found = None
            for layout in candidates:
                base = bases[id(layout)]
                relative = path[len(base) :].rstrip("/") if path.startswith(base) else None
                if relative:
                    found = posixpath.join(layout.key, relative)
                    break
            if found is None or found not in directories:
                problems.append(
                    f"{users[0].node.path}: spec.path {path!r} is not a folder of dist/ with a kustomization.yaml"
                )
    return problems


# -- one writer per object on a cluster ------------------------------------------------------------------------

#: One object two writers apply on a cluster, as its line names it: what leads the line, the object, the other writer,
#: the remedy, and the cluster (check_writers joins the clusters of one line).
Contest = tuple[str, str, str, str, str]


@dataclass(frozen=True)
class _Writer:
    """How a message names what writes an object: ``where`` leads the line, ``name`` is how the other writer's line
    names it; the lowest ``rank`` leads (0: a file of the user's own, 1: a chart file, 2: a pack or fluxplane's own),
    and its ``remedy`` ends the line."""

    rank: int
    where: str
    name: str
    remedy: str


_EITHER = "only one of them may apply it"


class Writers:
    """The objects two Flux Kustomizations, or one and the cluster's entry point, apply on a cluster of ``app``
    (fluxplane.core.tree's ``Walk.contested``), each with its writers named as the user knows them: the plain
    manifest or cdk8s chart an object, or the Kustomization that applies it, comes from; the chart file or pack whose
    Kustomization applies it; else what applies it. Each writer would take the object from the other at every
    reconciliation, and the one that stops applying it would prune it while the other still needs it.

    The walk is each cluster's own, which its README graph is drawn from (fluxplane.synth.readmes), so synth walks a
    cluster once; a cluster reused from the synth cache was judged when it was rendered. What the hub applies on a
    workload cluster through kubeConfig is not in that cluster's own walk: its Flux sync objects, handed over, and
    its bootstrap steps (the secret store and the sealing key), whose names are fluxplane's own.
    """

    def __init__(self, app: FleetTree) -> None:
        self.registry = app.plan.registry
        self.source = app.catalogue.source
        self.files = {
            posixpath.join(chart.layout.key, path): item
            for chart in app.clusters.values()
            for path, item in chart.manifest_files.items()
        }
        self.custom = {posixpath.join(chart.layout.key, chart.custom_path) for chart in app.clusters.values()}

    def contests(self, walk: Walk, cluster: str) -> list[Contest]:
        """The objects two writers apply on ``cluster`` (``walk`` is the cluster's own)."""
        found: list[Contest] = []
        for contested in walk.contested(cluster):
            (lead, _), (other, second) = sorted(
                ((self._of(walk, side), side) for side in (contested.placed, contested.other)),
                key=lambda pair: pair[0].rank,
            )
            if other == lead:  # both through one Kustomization of the user's: the other by what applies it
                other = self._of(walk, second, own=False)
            what = contested.key.shown if lead.rank < 2 else f"{contested.key.shown} of {lead.name}"
            found.append((lead.where, what, other.name, lead.remedy, cluster))
        return found + self._releases(walk, cluster)

    def _releases(self, walk: Walk, cluster: str) -> list[Contest]:
        """The Helm releases two HelmReleases on ``cluster`` install: Helm keeps a release by its name in its storage
        namespace (fluxplane.synth.hazards.release_target) on the cluster it installs into, so each HelmRelease would
        upgrade the other's release to its own chart and values at every reconciliation."""
        found: list[Contest] = []
        releases: dict[tuple[str, str, str], Placed] = {}
        for placed in walk.on(cluster):
            if (placed.key.group, placed.key.kind) != HELM_RELEASE:
                continue
            metadata = placed.doc.get("metadata")
            landed = {
                **placed.doc,
                "metadata": {**(metadata if isinstance(metadata, dict) else {}), "namespace": placed.namespace},
            }
            storage, _, name = release_target(landed)
            # a HelmRelease with a kubeConfig installs into the cluster its Secret or ConfigMap (in its own namespace)
            # names: another kubeConfig, another cluster
            remote = field(placed.doc, ("spec", "kubeConfig"))
            there = f"{placed.namespace}/{json.dumps(remote, sort_keys=True)}" if remote else ""
            first = releases.setdefault((there, storage, name), placed)
            if first.key == placed.key:
                continue
            (lead, mine), (other, theirs) = sorted(
                ((self._of(walk, side), side) for side in (first, placed)), key=lambda pair: pair[0].rank
            )
            if other == lead:
                other = self._of(walk, theirs, own=False)
            what = f"Helm release {name} (stored in {storage}), which {mine.key.shown} installs,"
            remedy = f"give {theirs.key.shown} another releaseName or storageNamespace"
            found.append((lead.where, what, f"{theirs.key.shown} of {other.name}", remedy, cluster))
        return found

    def _of(self, walk: Walk, placed: Placed, *, own: bool = True) -> _Writer:
        """How ``placed``'s writer is named; ``own``: a Kustomization of the user's that leads to it names it."""
        path = placed.item.path or ""
        item = self.files.get(path)
        if item is not None:
            what = "chart" if item.scope == CHART_FILES else "file"
            return _Writer(0, item.source, item.source, f"remove it from the {what} or give it another name")
        if path in self.custom:
            return _Writer(
                0, path, f"the cdk8s constructs of {path}", "remove it from the cluster chart or give it another name"
            )
        applier = walk.writer(placed)
        if applier is None:
            return _Writer(2, path, "the cluster's entry point", _EITHER)
        # a Kustomization of the user's own (a plain manifest's or cdk8s chart's) applies it, or one it applies does
        origin: Placed | None = applier if own else None
        while origin is not None:
            item = self.files.get(origin.item.path or "")
            if item is not None:
                theirs = f"Kustomization {origin.key.namespace}/{origin.key.name}"
                return _Writer(
                    0,
                    item.source,
                    f"{theirs} of {item.source}",
                    f"its {theirs} applies it: point that at a folder of its own",
                )
            origin = walk.writer(origin)
        namespace, name = applier.key.namespace, applier.key.name
        pack = self.source(name) if namespace == FLUX_NAMESPACE else None
        if pack is not None and pack in self.registry:
            chart = chart_file(self.registry.get(pack))
            if chart is not None:
                # a chart's objects are named after its file, but its Namespace (``namespace``)
                remedy = "choose another namespace in the file" if placed.key.name != pack else "rename the chart file"
                return _Writer(1, chart, chart, remedy)
            return _Writer(2, path, f"pack {pack!r}", _EITHER)
        elsewhere = f" of cluster {applier.cluster!r}" if applier.cluster != placed.cluster else ""
        return _Writer(2, path, f"Kustomization {namespace}/{name}{elsewhere}", _EITHER)


def check_writers(contests: Iterable[Contest]) -> list[str]:
    """One line per object and pair of writers (Writers.contests), led by the user's file, with its clusters."""
    found: dict[tuple[str, str, str, str], set[str]] = {}
    for where, what, by, remedy, cluster in contests:
        found.setdefault((where, what, by, remedy), set()).add(cluster)
    problems = []
    for (where, what, by, remedy), clusters in sorted(found.items()):
        named = ", ".join(map(repr, sorted(clusters)))
        problems.append(
            f"{where}: {what} is written by {by} too on cluster{'s' if len(clusters) > 1 else ''} {named}; {remedy}"
        )
    return problems
