"""The one synthesis pipeline: load the definition, plan, build and render, check against what it replaces, write.

Every way to synthesize goes through it: ``fluxplane synth`` (and ``cdk8s synth``, which runs it), the library's
``synthesize(root)``, the pytest plugin (which renders and writes nothing), ``diff``, ``graph``, ``versions`` and
the benchmarks; ``FleetApp.synth()``, whose tree the caller builds, joins it at the publishing steps
(fluxplane.synth.publish). What protects the user is not a caller's choice: a :class:`Pipeline` is a
:class:`~fluxplane.synth.publish.Publisher`, whose steps keep the files another tool owns and guard every write.

Loading and planning are pure. Nothing in it starts the JavaScript runtime but the project's own cdk8s charts
(fluxplane.synth.cdk8s_charts), for the clusters that name some: the fleet's construct tree is plain Python
(fluxplane.synth.tree).
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import replace
from pathlib import Path
from typing import Any

from fluxplane.config.loader import load_fleet
from fluxplane.config.manifests import MANIFEST_LAYERS, read_manifests, repeated_objects
from fluxplane.config.merge import Origins
from fluxplane.config.parsed import parsed_files
from fluxplane.errors import CacheChanged, ConfigError
from fluxplane.packs.helm_charts import load_chart_packs
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth.cache import SynthCache, render_cached
from fluxplane.synth.cdk8s_charts import cdk8s_chart_files
from fluxplane.synth.collector import paused_gc
from fluxplane.synth.plan import FleetPlan, plan_fleet
from fluxplane.synth.publish import Allowances, CompleteTree, Publisher
from fluxplane.synth.writer import TreeFiles


def _relative(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def project_registry(root: Path, registry: PackRegistry | None = None) -> PackRegistry:
    """The packs a project can use: ``registry`` (default: the installed ones) and the Helm charts of its
    environments/charts/ (fluxplane.packs.helm_charts); ConfigError for a chart file that is wrong."""
    installed = registry or PackRegistry.from_entry_points()
    charts, problems = load_chart_packs(root, installed, lambda path: _relative(root, path))
    if problems:
        raise ConfigError(problems)
    return PackRegistry([*installed, *charts]) if charts else installed


def load_plan(root: Path, registry: PackRegistry | None = None) -> FleetPlan:
    """Load and validate the definition under ``root``, and run the project's cdk8s charts for the clusters
    that name them (the JavaScript runtime starts only then, after the definition is known to be valid)."""
    packs = project_registry(root, registry)

    def check_packs(sections: dict[str, Any], origins: Origins) -> list[str]:
        return packs.configure(sections, origins)[1]

    loaded = load_fleet(root, check_packs)
    plan = replace(plan_fleet(loaded, packs), root=root)
    environments = {item.name: [cluster.name for cluster in item.clusters] for item in plan.fleet.environments}
    display = functools.partial(_relative, root)
    manifests = read_manifests(root, environments, display)
    charts = cdk8s_chart_files(root, plan.fleet, loaded.cdk8s_charts, display)
    if not manifests and not charts:
        return plan
    clusters, problems = [], []
    for cluster in plan.clusters:
        files = sorted(
            [*manifests.get(cluster.name, ()), *charts.get(cluster.name, ())],
            key=lambda item: MANIFEST_LAYERS.index(item.layer),
        )
        if cluster.name in charts:
            problems.extend(repeated_objects(cluster.name, files))
        clusters.append(replace(cluster, manifests=tuple(files)))
    if problems:
        raise ConfigError(problems)
    return replace(plan, clusters=tuple(clusters))


def render_plan(plan: FleetPlan, cache: SynthCache | None = None) -> dict[str, str]:
    """Build the construct tree for ``plan`` and render it to {path under dist/: text}.

    With ``cache`` (fluxplane.synth.cache), clusters whose inputs did not change are taken from it;
    the output is the same.
    """
    return render_files(plan, cache).as_dict()


def render_files(plan: FleetPlan, cache: SynthCache | None = None, *, deferred: bool = False) -> TreeFiles:
    """:func:`render_plan`'s files; ``deferred``, the texts of the clusters taken from ``cache`` are read only when
    one is asked for (fluxplane.synth.cache.render_cached)."""
    # Imported here: the tree's charts and the render are heavy, and only building needs them (not load_plan, the
    # packs and edit commands)
    from fluxplane.synth.render import render_tree
    from fluxplane.synth.tree import FleetTree

    with paused_gc():
        if cache is not None:
            return render_cached(plan, cache, deferred=deferred)
        return render_tree(FleetTree(plan))


class Pipeline(Publisher):
    """Synthesis of the project under ``root`` into ``outdir`` (default: fluxplane.system.files.output_dir).

    ``cache`` reuses unchanged clusters from ``root/.fluxplane-cache`` (fluxplane.synth.cache), and the definition's
    files parsed before (fluxplane.config.parsed); ``read_only`` reads the caches without adding to them
    (``synth --check``). ``allow`` names the changes to live infrastructure the user asked for.
    """

    def __init__(
        self,
        root: Path,
        outdir: Path | None = None,
        *,
        registry: PackRegistry | None = None,
        cache: bool = False,
        read_only: bool = False,
        allow: Allowances | None = None,
    ) -> None:
        super().__init__(root, outdir, allow=allow)
        self.registry = registry
        self.cache = SynthCache.for_root(root, read_only=read_only) if cache else None
        self._plan: FleetPlan | None = None

    def load(self) -> FleetPlan:
        """The definition under ``root``, loaded, validated and planned (once)."""
        if self._plan is None:
            cache = self.cache
            parsed = contextlib.nullcontext() if cache is None else parsed_files(self.root, read_only=cache.read_only)
            with parsed:
                self._plan = load_plan(self.root, self.registry)
        return self._plan

    def build(self, plan: FleetPlan | None = None) -> dict[str, str]:
        """The files synth renders for ``plan`` (default: :meth:`load`'s), with the cache when there is one; not
        yet a tree to write (:meth:`render`)."""
        return render_plan(plan or self.load(), self.cache)

    def render(self, plan: FleetPlan | None = None, *, deferred: bool = False) -> CompleteTree:
        """The tree for ``plan`` (default: :meth:`load`'s): :meth:`build`, then :meth:`complete`. ``deferred``, the
        texts of the clusters taken from the cache are read only when one is asked for (TreeFiles): a write reads
        those of the files that differ from dist/ alone. Otherwise they are read first, and a cluster whose texts
        cannot be read is rendered again (fluxplane.synth.cache.render_cached), as it is when a deferred text
        cannot be read, here or in :meth:`write`."""
        chosen = plan or self.load()
        if deferred:
            try:
                return self.complete(chosen, render_files(chosen, self.cache, deferred=True))
            except CacheChanged:
                pass  # the entry is removed: rendered again below
        return self.complete(chosen, render_files(chosen, self.cache))

    def write(self, tree: CompleteTree) -> None:
        """:meth:`Publisher.write`; a tree of deferred texts, one of which can no longer be read (its cache entry
        changed while synth ran, and is removed), is rendered again with every text read first, and written."""
        try:
            super().write(tree)
        except CacheChanged:
            super().write(self.render(tree.plan))
