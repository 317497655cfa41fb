"""Synthesis: plan the fleet, build the construct tree, check it, render it and write dist/."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fluxplane.config.loader import load_fleet
from fluxplane.config.manifests import MANIFEST_LAYERS, read_manifests, repeated_objects
from fluxplane.config.merge import Origins
from fluxplane.core.layout import PLATFORM
from fluxplane.errors import ConfigError
from fluxplane.files import output_dir
from fluxplane.packs.helm_charts import load_chart_packs
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import allocations
from fluxplane.synth.cache import SynthCache, render_cached
from fluxplane.synth.cdk8s_charts import cdk8s_chart_files
from fluxplane.synth.collector import paused_gc
from fluxplane.synth.guard import guard
from fluxplane.synth.plan import FleetPlan, plan_fleet
from fluxplane.synth.writer import (
    Staleness,
    check_outdir,
    compare_tree,
    copy_tree,
    read_kept,
    regular_files,
    write_tree,
)


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
    plan = plan_fleet(loaded, packs)
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
    """Build the cdk8s app for ``plan`` and render it to {path under dist/: text}.

    With ``cache`` (fluxplane.synth.cache), clusters whose inputs did not change are taken from it;
    the output is the same.
    """
    # Imported here: both load cdk8s, which this package must not (load_plan, the packs and edit commands)
    from fluxplane.synth.app import FleetApp
    from fluxplane.synth.render import render_app

    with paused_gc():
        if cache is not None:
            return render_cached(plan, cache)
        return render_app(FleetApp(plan))


def _sync_folder(plan: FleetPlan) -> str:
    # Imported here: the charts load cdk8s, which this package must not (load_plan, the packs and edit commands)
    from fluxplane.charts.cluster import sync_folder

    return sync_folder(PLATFORM, plan.fleet.management.name)


def kept_folders(plan: FleetPlan) -> tuple[str, ...]:
    """The folders of dist/ another tool owns: the hub's ``flux-system/`` when ``flux bootstrap`` writes it, or
    the FluxInstance of the Flux Operator syncs the hub (``management.bootstrap: flux`` or ``flux-operator``)."""
    return (_sync_folder(plan),) if plan.fleet.management.bootstrap != "fluxplane" else ()


def with_kept(plan: FleetPlan, files: dict[str, str], outdir: Path) -> dict[str, str]:
    """``files`` and, as they are in ``outdir``, the files of the folders another tool owns (kept_folders).

    Without ``management.bootstrap: flux``, a file in the hub's ``flux-system/`` that synth does not write
    (``flux bootstrap``'s ``gotk-components.yaml``: the Flux controllers and CRDs) is refused, not deleted:
    Flux would prune itself, and every custom resource with its CRDs.
    """
    folders = kept_folders(plan)
    if folders:
        return {**files, **read_kept(outdir, folders)}
    foreign = [path for path in regular_files(outdir, _sync_folder(plan)) if path not in files]
    if foreign:
        raise ConfigError(
            [
                f"{outdir / path}: a file fluxplane does not write (flux bootstrap keeps the Flux controllers in "
                "this folder); synth would delete it and Flux would prune what it holds: set management.bootstrap: "
                "flux (or flux-operator, for a FluxInstance of yours) in environments/base.yaml to keep the folder as "
                "it is, or remove the file yourself"
                for path in foreign
            ]
            + [f"{outdir}: nothing written"]
        )
    return files


@dataclass(frozen=True)
class SynthResult:
    files: dict[str, str]
    outdir: Path


def synthesize(
    root: Path,
    outdir: Path | None = None,
    registry: PackRegistry | None = None,
    *,
    use_cache: bool = False,
    replace: Sequence[str] = (),
    delete: Sequence[str] = (),
    move: Sequence[str] = (),
) -> SynthResult:
    """Synthesize the fleet under ``root`` into ``outdir`` (default: fluxplane.files.output_dir), atomically.

    ``use_cache`` reuses unchanged clusters from ``root/.fluxplane-cache`` (fluxplane.synth.cache).
    A change that replaces, deletes or moves a live object of the tree it replaces is refused
    (ConfigError) unless ``replace``, ``delete`` or ``move`` names it (fluxplane.synth.guard).
    """
    target = output_dir(root, outdir)
    check_outdir(target, root)
    plan = load_plan(root, registry)
    files = with_kept(plan, render_plan(plan, SynthCache.for_root(root) if use_cache else None), target)
    refused = guard(
        files,
        target,
        hub=plan.fleet.management.name,
        replace=replace,
        delete=delete,
        move=move,
        followed_versions=plan.followed_versions,
    )
    if refused:
        raise ConfigError(refused)
    allocations.write(root, plan)
    write_tree(files, target)
    return SynthResult(files=files, outdir=target)


def check(root: Path, outdir: Path | None = None, registry: PackRegistry | None = None) -> Staleness:
    """What synth would change in dist/ (nothing written); the recorded allocations count as ``changed``."""
    plan = load_plan(root, registry)
    target = output_dir(root, outdir)
    staleness = compare_tree(with_kept(plan, render_plan(plan), target), target)
    if allocations.stale(root, plan):
        staleness.recorded.append(allocations.ALLOCATIONS)
    return staleness


__all__ = [
    "FleetPlan",
    "Staleness",
    "SynthCache",
    "SynthResult",
    "check",
    "check_outdir",
    "compare_tree",
    "copy_tree",
    "kept_folders",
    "load_plan",
    "paused_gc",
    "project_registry",
    "render_plan",
    "synthesize",
    "with_kept",
    "write_tree",
]
