"""Render a finished FleetTree (or FleetApp) to file contents, keyed by their path in dist/.

fluxplane's own objects are dumped with libyaml straight from Python dicts; cdk8s constructs a
user added under a cluster chart are synthesized by cdk8s in one call per chart (``to_json``).

Dumping is most of synth's time and PyYAML holds the GIL, so large fleets are rendered by forked
worker processes, one per core, while synth checks the tree. The work is cut into a few parts per
worker, each part every n-th cluster and every n-th file outside cluster folders, taken by the
workers as they get free. For each cluster a worker turns the cluster's files into documents once,
dumps them and draws the cluster's README.md graph from them; the walk the graph is drawn from says
which objects two writers apply on the cluster, which synth refuses once the workers are done.
Workers only read the tree and return text; they never touch the JavaScript runtime. Output does
not depend on the number of workers.
"""

from __future__ import annotations

import marshal
import multiprocessing
import posixpath
import signal
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from fluxplane.charts.cluster import ClusterChart
from fluxplane.config.secrets import check_plaintext
from fluxplane.constructs.base import Resource, node_of
from fluxplane.constructs.manifest import Manifest
from fluxplane.core.codec import dump_documents
from fluxplane.errors import TreeError
from fluxplane.synth.checks import (
    Contest,
    Writers,
    check_cluster,
    check_files,
    check_flux_paths,
    check_writers,
    flux_sources,
)
from fluxplane.synth.codeowners import codeowners
from fluxplane.synth.graph import FluxTree
from fluxplane.synth.readmes import cluster_readme, cluster_readmes, fleet_tree
from fluxplane.synth.writer import FileText, TreeFiles
from fluxplane.system.keys import content_hash
from fluxplane.system.processes import POLL, cores

#: Where synth writes the code owners of the fleet repository, under dist/.
CODEOWNERS = "CODEOWNERS"

if TYPE_CHECKING:
    from fluxplane.synth.tree import FleetTree


class Dumps:
    """The YAML text of documents, taking the texts an earlier run dumped (``known``) instead of dumping the same
    documents again; :attr:`used` holds the texts this run took or made, by their key.

    A text is known by a hash of the documents marshalled (format 2, without references): marshal takes only
    Python's own types, no subclass of them, and tells each apart (a string from a number, a key ``1`` from ``"1"``,
    ``True`` from ``1``, ``1`` from ``1.0``, a list from a tuple) as the dumper does, so the same key is the same
    YAML. Documents marshal does not take are dumped every time.
    """

    def __init__(self, known: Mapping[str, str] | None = None) -> None:
        self.known: Mapping[str, str] = known or {}
        self.used: dict[str, str] = {}

    def dump(self, documents: list[dict[str, Any]]) -> str:
        try:
            key = content_hash(marshal.dumps(documents, 2))
        except ValueError:  # a value of a type marshal does not take
            return dump_documents(documents)
        text = self.known.get(key)
        if text is None:
            text = dump_documents(documents)
        self.used[key] = text
        return text


def render_app(app: FleetTree) -> dict[str, str]:
    """Finish, check and render ``app``; returns {path under dist/: file text}, sorted by path. An object two
    Flux Kustomizations apply on a cluster it renders is refused (fluxplane.synth.checks.Writers), as the other checks'
    problems are (TreeError)."""
    return render_tree(app).as_dict()


def render_tree(app: FleetTree, reused: TreeFiles | None = None, dumps: Dumps | None = None) -> TreeFiles:
    """:func:`render_app`, with the files of the clusters ``app`` reuses from the synth cache (FleetTree.reused):
    ``reused``, which join the output (their texts read only when asked for), and whose folders count for the Flux
    path checks. ``dumps`` gives the texts of documents dumped before, for the files this process dumps (a small
    tree, or what the cache left to render).
    """
    app.finish()
    spokes = [app.spokes] if app.spokes is not None else []
    tenants = list(app.tenants.values())
    cloud = [chart for chart in (app.cloud, app.addon_identities) if chart is not None]
    charts: list[Any] = [*app.clusters.values(), *app.catalogue.values(), *spokes, *tenants, *cloud]
    files: list[tuple[Any, Manifest]] = [(chart, manifest) for chart in charts for manifest in chart.files]
    custom_charts = [chart for chart in app.cdk8s_children() if isinstance(chart, ClusterChart)]
    # The workers start first: they only read the finished tree, so they render while this process checks
    # it and synthesizes the cdk8s constructs; a problem stops them. cdk8s output is in the README graphs,
    # so when there is some, this process draws the graphs once it has it.
    drawn = _drawn(app, reused or TreeFiles({}))
    rendering = start_render(app, files, drawn, readmes=not custom_charts)
    try:
        custom = _check(app, files, spokes, tenants, reused, custom_charts)
        texts, readmes, contests = rendering.result(drawn.merged(custom) if custom else drawn, dumps)
    finally:
        rendering.stop()
    # what each cluster applies, judged from the walks its README graph is drawn from
    problems = check_writers(contests)
    if problems:
        raise TreeError(problems)
    out: dict[str, FileText] = dict(reused.raw) if reused is not None else {}
    out.update(
        (posixpath.join(chart.layout.key, manifest.path), text)
        for (chart, manifest), text in zip(files, texts, strict=True)
    )
    out.update(custom)
    out.update(readmes)
    elsewhere = tuple(folder for chart in app.clusters.values() for folder in chart.owned_elsewhere)
    if elsewhere:
        out = {path: text for path, text in out.items() if not path.startswith(elsewhere)}

    owners = codeowners(app.plan.fleet.teams, app.plan.apps, app.layout, app.workloads)
    if owners is not None:
        out[CODEOWNERS] = owners
    return TreeFiles(dict(sorted(out.items())))


def _drawn(app: FleetTree, reused: TreeFiles) -> TreeFiles:
    """The reused files the README graphs read: not the hub's folders of reused clusters.

    Only a cluster's own graph shows the hub's chain for it, and a reused cluster's README is reused
    too; leaving those folders out spares parsing every cluster's chain to draw the few rendered anew.
    """
    if not app.reused:
        return reused
    skipped = {prefix for name in app.reused for prefix in app.hub_prefixes(name)}
    # only a path below one of the hub's folders that hold a folder per cluster is cut into segments
    above = app.hub_folders
    return TreeFiles(
        {
            path: text
            for path, text in reused.raw.items()
            if not path.startswith(above) or _folder_of(path, 3) not in skipped
        }
    )


def _folder_of(path: str, depth: int) -> str:
    """The first ``depth`` segments of ``path``, with a final slash (or "" for a shorter path)."""
    parts = path.split("/", depth)
    return "/".join(parts[:depth]) + "/" if len(parts) > depth else ""


#: A kustomization.yaml below a folder ends so.
_KUSTOMIZATION_FILE = "/kustomization.yaml"


def _kustomization_folders(paths: Collection[str]) -> set[str]:
    """The folders of the kustomization.yaml files among ``paths``, as posixpath.dirname gives them (a fleet's reused
    files are tens of thousands: a call per path is too many)."""
    cut = len(_KUSTOMIZATION_FILE)
    folders = {
        # dirname drops the slashes a folder ends with: only an odd path has more than one
        path[:-cut] if path[-cut - 1 : -cut] not in ("/", "") else posixpath.dirname(path)
        for path in paths
        if path.endswith(_KUSTOMIZATION_FILE)
    }
    if _KUSTOMIZATION_FILE[1:] in paths:
        folders.add("")
    return folders


def _unwritten(chart: Any) -> Iterator[Resource]:
    """The fluxplane objects under ``chart`` outside its files (Manifests), which no file would hold."""
    stack = list(reversed(node_of(chart).children))
    while stack:
        construct = stack.pop()
        if isinstance(construct, Manifest):
            continue
        if isinstance(construct, Resource):
            yield construct
            continue
        stack.extend(reversed(node_of(construct).children))


def _check(
    app: FleetTree,
    files: list[tuple[Any, Manifest]],
    spokes: list[Any],
    tenants: list[Any],
    reused: Mapping[str, str] | None,
    custom_charts: list[ClusterChart],
) -> dict[str, str]:
    """Check the finished tree (TreeError on problems); returns the YAML of the cdk8s constructs of
    ``custom_charts``, by path."""
    problems = check_files(files)
    for chart in dict.fromkeys(chart for chart, _ in files):
        problems.extend(
            f"{resource.node.path}: not in any of the chart's files, so it would be written nowhere: create it in "
            "one (chart.add_manifest(...))"
            for resource in _unwritten(chart)
        )
    for cluster_chart in app.clusters.values():
        problems.extend(check_cluster(cluster_chart))
    hub = app.clusters[app.plan.fleet.management.name]
    for spokes_chart in spokes:
        problems.extend(check_cluster(spokes_chart, cluster=hub.cluster, sources=flux_sources(hub), known=hub))
    for tenants_chart in tenants:
        problems.extend(check_cluster(tenants_chart, known=app.clusters[tenants_chart.cluster]))
    directories = {
        posixpath.join(chart.layout.key, manifest.directory)
        for chart, manifest in files
        if posixpath.basename(manifest.path) == "kustomization.yaml"
    }
    directories.update(_kustomization_folders(reused or ()))
    problems.extend(check_flux_paths([*app.clusters.values(), *spokes], directories, [app.layout, app.workloads]))
    if problems:
        raise TreeError(problems)

    # cdk8s constructs, synthesized by the JavaScript runtime (which the workers never touch).
    custom: dict[str, str] = {}
    for chart in custom_charts:
        path = posixpath.join(chart.layout.key, chart.custom_path)
        documents = cast(Any, chart).to_json()  # a cdk8s Chart too: the tree is a FleetApp (cdk8s_children)
        for document in documents:
            problems.extend(check_plaintext(document, f"cluster-{chart.cluster} (cdk8s)", path))
        custom[path] = dump_documents(documents)
    if problems:
        raise TreeError(problems)
    return custom


#: Below this many files a worker process costs more than it saves.
PARALLEL_MIN_FILES = 2000
PARTS_PER_WORKER = 4


@dataclass
class _Job:
    """What the forked workers render: ``parts[n]`` is part n's clusters and its files outside them."""

    app: Any
    manifests: list[Manifest]
    index: dict[str, int]
    clusters: dict[str, list[int]]
    parts: list[tuple[list[str], list[int]]]
    texts: Mapping[str, str]
    readmes: bool


_JOB: _Job | None = None
#: In a worker: the documents of the cluster it renders, by file position, the tree its graphs use, and what names
#: the writers of the objects two of them apply on a cluster.
_MADE: dict[int, list[dict[str, Any]]] = {}
_TREE: tuple[FluxTree, Writers] | None = None


class _Makers(Mapping[str, Callable[[], list[dict[str, Any]]]]):
    """The documents of each manifest by path, for the graph: the worker's current cluster's as dumped."""

    def __init__(self, job: _Job, made: dict[int, list[dict[str, Any]]]) -> None:
        self._job = job
        self._made = made

    def _documents(self, position: int) -> list[dict[str, Any]]:
        made = self._made.get(position)
        return made if made is not None else self._job.manifests[position].documents()

    def __getitem__(self, path: str) -> Callable[[], list[dict[str, Any]]]:
        return partial(self._documents, self._job.index[path])

    def __contains__(self, path: object) -> bool:
        return path in self._job.index

    def __iter__(self) -> Iterator[str]:
        return iter(self._job.index)

    def __len__(self) -> int:
        return len(self._job.index)


def _render_part(part: int) -> tuple[list[int], list[str], dict[str, str], list[Contest]]:
    """Part ``part`` of the work: (positions in the file list, their YAML texts, README.md texts by path, the
    objects two writers apply on its clusters)."""
    job = _JOB
    assert job is not None  # set before the fork
    clusters, others = job.parts[part]
    positions: list[int] = []
    texts: list[str] = []
    readmes: dict[str, str] = {}
    contests: list[Contest] = []
    global _TREE
    if _TREE is None and job.readmes:
        _TREE = fleet_tree(job.app, _Makers(job, _MADE), job.texts), Writers(job.app)
    made, drawing = _MADE, _TREE
    for name in clusters:
        for position in job.clusters[name]:
            documents = job.manifests[position].documents()
            made[position] = documents
            positions.append(position)
            texts.append(dump_documents(documents))
        if drawing is not None:
            tree, writers = drawing
            path, text, found = cluster_readme(job.app, tree, name, writers)
            readmes[path] = text
            contests.extend(found)
        made.clear()
    for position in others:
        positions.append(position)
        texts.append(dump_documents(job.manifests[position].documents()))
    return positions, texts, readmes, contests


class PendingRender:
    """Files being rendered: ``result`` gives the YAML text of each file, in order, and each cluster's
    README.md by path; ``stop`` ends the workers."""

    def __init__(self, app: FleetTree, files: list[tuple[Any, Manifest]]) -> None:
        self._app = app
        self._files = files
        self._pool: Any = None
        self._pending: Any = None
        self._readmes = False

    def _start(self, pool: Any, pending: Any, readmes: bool) -> None:
        self._pool, self._pending, self._readmes = pool, pending, readmes

    def result(
        self, texts: Mapping[str, str], dumps: Dumps | None = None
    ) -> tuple[list[str], dict[str, str], list[Contest]]:
        """The texts, the README.md texts and the objects two writers apply on a cluster (Writers.contests).
        ``texts`` supplies the files that are not manifests, for the graphs this process draws; ``dumps``, the texts
        of documents dumped before, when this process dumps them."""
        readmes, contests = ({}, []) if self._readmes else cluster_readmes(self._app, self._files, texts)
        if self._pool is None:
            dump = dumps.dump if dumps is not None else dump_documents
            return [dump(manifest.documents()) for _, manifest in self._files], readmes, contests
        dumped: list[str] = [""] * len(self._files)
        while not self._pending.ready():  # the pool's threads may take a signal: look for it (processes.POLL)
            self._pending.wait(POLL)
        for positions, part, drawn, found in self._pending.get():
            for position, text in zip(positions, part, strict=True):
                dumped[position] = text
            readmes.update(drawn)
            contests.extend(found)
        return dumped, readmes, contests

    def stop(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None


def _worker_signals() -> None:
    """A worker leaves Ctrl-C to the command (the terminal sends it to the whole group) and ends at once on
    SIGTERM, which ``Pool.terminate`` sends: the command's own handlers, inherited through fork, would raise
    in the worker instead, and a worker that outlives its pool leaves the command waiting for it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start_render(
    app: FleetTree,
    files: list[tuple[Any, Manifest]],
    texts: Mapping[str, str],
    *,
    readmes: bool,
    workers: int | None = None,
) -> PendingRender:
    """Start rendering ``files`` (``app``'s, in order); the caller goes on with other work, then asks for the result.

    For large trees, one forked worker per core renders while the caller works; with ``readmes`` the
    workers also draw each cluster's README.md, with ``texts`` for the files that are not manifests.
    Small trees are rendered by the caller when it asks for the result.
    """
    rendering = PendingRender(app, files)
    count = workers if workers is not None else cores()
    if count < 2 or len(files) < PARALLEL_MIN_FILES or "fork" not in multiprocessing.get_all_start_methods():
        return rendering
    owners = {id(chart): name for name, chart in app.clusters.items()}
    clusters: dict[str, list[int]] = {name: [] for name in app.clusters}
    others: list[int] = []
    for position, (chart, _) in enumerate(files):
        name = owners.get(id(chart))
        (clusters[name] if name is not None else others).append(position)
    names = sorted(clusters)
    # A few parts per worker, taken as workers get free, even out their loads.
    parts = count * PARTS_PER_WORKER
    global _JOB
    _JOB = _Job(
        app=app,
        manifests=[manifest for _, manifest in files],
        index={
            posixpath.join(chart.layout.key, manifest.path): position
            for position, (chart, manifest) in enumerate(files)
        },
        clusters=clusters,
        parts=[(names[part::parts], others[part::parts]) for part in range(parts)],
        texts=texts,
        readmes=readmes,
    )
    pool = multiprocessing.get_context("fork").Pool(count, initializer=_worker_signals)
    _JOB = None  # the workers hold their copy; the parent keeps no extra reference
    rendering._start(pool, pool.map_async(_render_part, range(parts), chunksize=1), readmes)
    return rendering
