"""Each cluster folder's README.md: its Flux dependency graph (fluxplane.synth.graph), drawn from the manifests synth
holds in memory, so no file is read back from dist/.

The walk a cluster's graph is drawn from also says which objects two writers apply there (fluxplane.synth.checks
.Writers): synth judges them from it, and so walks each cluster once."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fluxplane.constructs.manifest import Manifest
from fluxplane.core.tree import LazyDocuments, repositories_of
from fluxplane.synth.checks import Contest, Writers
from fluxplane.synth.graph import README, FluxTree, readme

if TYPE_CHECKING:
    from fluxplane.synth.tree import FleetTree

Document = dict[str, Any]


def fleet_tree(
    app: FleetTree, makers: Mapping[str, Callable[[], Sequence[Document]]], texts: Mapping[str, str]
) -> FluxTree:
    """The FluxTree of ``app``'s fleet: ``makers`` make the documents of synth's manifests by path, ``texts``
    supplies the files that are not manifests (cdk8s output, files reused from the synth cache)."""
    return FluxTree(
        LazyDocuments(makers, texts),
        repositories=repositories_of([app.layout, app.workloads]),
        hub=app.plan.fleet.management.name,
    )


def cluster_readme(app: FleetTree, tree: FluxTree, cluster: str, writers: Writers) -> tuple[str, str, list[Contest]]:
    """The path and text of ``cluster``'s README.md, drawn from ``tree`` (see ``fleet_tree``), and the objects two
    writers apply on the cluster (``writers``); what was built from the cluster's own folders is dropped afterwards,
    so clusters may be drawn in any order and grouping."""
    chart = app.clusters[cluster]
    text = readme(tree.graph(cluster))
    contests = writers.contests(tree.local(cluster), cluster)
    tree.forget(cluster)
    return posixpath.join(chart.layout.key, chart.directory, README), text, contests


def cluster_readmes(
    app: FleetTree, files: Iterable[tuple[Any, Manifest]], texts: Mapping[str, str]
) -> tuple[dict[str, str], list[Contest]]:
    """Per cluster of ``app``: its folder's README.md, drawn from the manifests synth holds (not listed in
    kustomization.yaml), and the objects two writers apply there. ``texts`` supplies the files that are not
    manifests (cdk8s output)."""
    makers = {posixpath.join(chart.layout.key, manifest.path): manifest.documents for chart, manifest in files}
    tree = fleet_tree(app, makers, texts)
    writers = Writers(app)
    readmes: dict[str, str] = {}
    contests: list[Contest] = []
    for name in sorted(app.clusters):
        path, text, found = cluster_readme(app, tree, name, writers)
        readmes[path] = text
        contests.extend(found)
    return readmes, contests
