"""Render a finished FleetApp to file contents, keyed by their path in dist/.

fluxplane's own objects are dumped with libyaml straight from Python dicts; cdk8s constructs a
user added under a cluster chart are synthesized by cdk8s in one call per chart (``to_json``).

Dumping is most of synth's time and PyYAML holds the GIL, so large fleets are dumped by forked
worker processes, one per core, each taking every n-th file of the finished tree. Workers only
read the tree and return text; they never touch the JavaScript runtime. Output does not depend on
the number of workers.
"""

from __future__ import annotations

import multiprocessing
import os
import posixpath
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fluxplane.charts.cluster import ClusterChart
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.render import dump_documents
from fluxplane.errors import TreeError
from fluxplane.synth.checks import check_cluster, check_files, check_flux_paths, check_plaintext, flux_sources
from fluxplane.synth.codeowners import codeowners

#: Where synth writes the code owners of the fleet repository, under dist/.
CODEOWNERS = "CODEOWNERS"

if TYPE_CHECKING:
    from fluxplane.synth.app import FleetApp


def render_app(app: FleetApp, reused: Mapping[str, str] | None = None) -> dict[str, str]:
    """Finish, check and render ``app``; returns {path under dist/: file text}, sorted by path.

    ``reused`` holds the files of the clusters ``app`` reuses from the synth cache (FleetApp.reused):
    they join the output, and the folders among them count for the Flux path checks.
    """
    app.finish()
    spokes = [app.spokes] if app.spokes is not None else []
    tenants = list(app.tenants.values())
    cloud = [chart for chart in (app.cloud, app.addon_identities) if chart is not None]
    charts: list[Any] = [*app.clusters.values(), *app.catalogue.values(), *spokes, *tenants, *cloud]
    files: list[tuple[Any, Manifest]] = [(chart, manifest) for chart in charts for manifest in chart.files]
    # The dump workers start first: they only read the finished tree, so they dump while this process
    # checks it, renders the cdk8s constructs and draws the README graphs. A problem stops them.
    dumping = start_dump([manifest for _, manifest in files])
    try:
        readmes, custom = _check_and_draw(app, files, spokes, tenants, reused)
        texts = dumping.texts()
    finally:
        dumping.stop()
    out = dict(reused or {})
    out.update(
        (posixpath.join(chart.layout.key, manifest.path), text)
        for (chart, manifest), text in zip(files, texts, strict=True)
    )
    out.update(custom)
    out.update(readmes)

    owners = codeowners(app.plan.fleet.teams, app.plan.apps, app.layout, app.workloads)
    if owners is not None:
        out[CODEOWNERS] = owners
    return dict(sorted(out.items()))


def _check_and_draw(
    app: FleetApp,
    files: list[tuple[Any, Manifest]],
    spokes: list[Any],
    tenants: list[Any],
    reused: Mapping[str, str] | None,
) -> tuple[dict[str, str], dict[str, str]]:
    """Check the finished tree (TreeError on problems); returns the README of each cluster folder and the
    YAML of the cdk8s constructs, by path."""
    from fluxplane.graph import cluster_readmes
    from fluxplane.synth.app import jsii_children_by_chart

    problems = check_files(files)
    for cluster_chart in app.clusters.values():
        problems.extend(check_cluster(cluster_chart))
    hub = app.clusters[app.plan.fleet.management.name]
    for spokes_chart in spokes:
        problems.extend(check_cluster(spokes_chart, cluster=hub.cluster, sources=flux_sources(hub)))
    for tenants_chart in tenants:
        problems.extend(check_cluster(tenants_chart, known=app.clusters[tenants_chart.cluster]))
    directories = {
        posixpath.join(chart.layout.key, manifest.directory)
        for chart, manifest in files
        if posixpath.basename(manifest.path) == "kustomization.yaml"
    }
    directories.update(
        posixpath.dirname(path) for path in reused or () if posixpath.basename(path) == "kustomization.yaml"
    )
    problems.extend(check_flux_paths([*app.clusters.values(), *spokes], directories, [app.layout, app.workloads]))
    if problems:
        raise TreeError(problems)

    # cdk8s constructs, synthesized by the JavaScript runtime (which the dump workers never touch).
    custom: dict[str, str] = {}
    for chart in jsii_children_by_chart(app):
        if isinstance(chart, ClusterChart):
            path = posixpath.join(chart.layout.key, chart.custom_path)
            documents = chart.to_json()
            for document in documents:
                problems.extend(check_plaintext(document, f"cluster-{chart.cluster} (cdk8s)", path))
            custom[path] = dump_documents(documents)
    if problems:
        raise TreeError(problems)

    # Each cluster folder's README.md: its Flux dependency graph, drawn from the manifests in memory.
    return cluster_readmes(app, files, {**(reused or {}), **custom}), custom


#: Below this many files a worker process costs more than it saves.
PARALLEL_MIN_FILES = 2000

_JOBS: list[Manifest] = []


def _dump_slice(part: tuple[int, int]) -> list[str]:
    start, step = part
    return [dump_documents(manifest.documents()) for manifest in _JOBS[start::step]]


def _workers() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def dump_manifests(manifests: list[Manifest], workers: int | None = None) -> list[str]:
    """The YAML text of each manifest, in order; forked workers share the work for large trees."""
    dumping = start_dump(manifests, workers)
    try:
        return dumping.texts()
    finally:
        dumping.stop()


class PendingDump:
    """Manifests being dumped: ``texts`` waits and gives their texts, in order; ``stop`` ends the workers."""

    def __init__(self, manifests: list[Manifest], pool: Any = None, pending: Any = None, workers: int = 1) -> None:
        self._manifests = manifests
        self._pool = pool
        self._pending = pending
        self._workers = workers

    def texts(self) -> list[str]:
        if self._pool is None:
            return [dump_documents(manifest.documents()) for manifest in self._manifests]
        slices = self._pending.get()
        texts: list[str] = [""] * len(self._manifests)
        for index, part in enumerate(slices):
            texts[index :: self._workers] = part
        return texts

    def stop(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None


def start_dump(manifests: list[Manifest], workers: int | None = None) -> PendingDump:
    """Start dumping ``manifests``; the caller goes on with other work and then asks for the texts.

    For large trees, one forked worker per core dumps while the caller works (checks, README graphs);
    small trees are dumped when the texts are asked for.
    """
    count = workers if workers is not None else _workers()
    if count < 2 or len(manifests) < PARALLEL_MIN_FILES or "fork" not in multiprocessing.get_all_start_methods():
        return PendingDump(manifests)
    global _JOBS
    _JOBS = manifests
    pool = multiprocessing.get_context("fork").Pool(count)
    _JOBS = []  # the workers hold their copy; the parent keeps no extra reference
    pending = pool.map_async(_dump_slice, [(index, count) for index in range(count)])
    return PendingDump(manifests, pool, pending, count)
