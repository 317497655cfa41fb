"""Synthesis: plan the fleet, build the construct tree, check it, render it and write dist/.

The steps are one pipeline (fluxplane.synth.pipeline), which every entry point goes through; this package
exports it and the two calls the library documents, :func:`synthesize` and :func:`check`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fluxplane.packs.registry import PackRegistry
from fluxplane.synth.cache import SynthCache
from fluxplane.synth.collector import paused_gc
from fluxplane.synth.pipeline import Pipeline, load_plan, project_registry, render_plan
from fluxplane.synth.plan import FleetPlan
from fluxplane.synth.publish import Allowances, CompleteTree, Publisher, kept_folders, kept_owners, with_kept
from fluxplane.synth.writer import Staleness, check_outdir, compare_tree, copy_tree, write_tree


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
    manage: Sequence[str] = (),
    auto_mode: Sequence[str] = (),
) -> SynthResult:
    """Synthesize the fleet under ``root`` into ``outdir`` (default: fluxplane.system.files.output_dir), atomically.

    ``use_cache`` reuses unchanged clusters from ``root/.fluxplane-cache`` (fluxplane.synth.cache).
    A change that replaces, deletes or moves a live object of the tree it replaces, that starts to manage a
    cluster's imported AWS resources, or that switches a cluster into or out of EKS Auto Mode, is refused
    (ConfigError) unless ``replace``, ``delete``, ``move``, ``manage`` or ``auto_mode`` names it
    (fluxplane.synth.guard).
    """
    allow = Allowances.of(replace, delete, move, manage, auto_mode)
    pipeline = Pipeline(root, outdir, registry=registry, cache=use_cache, allow=allow)
    pipeline.expect_write()
    tree = pipeline.render()
    pipeline.write(tree)
    return SynthResult(files=tree.files.as_dict(), outdir=pipeline.outdir)


def check(root: Path, outdir: Path | None = None, registry: PackRegistry | None = None) -> Staleness:
    """What synth would change in dist/ (nothing written); the recorded allocations count as ``changed``."""
    pipeline = Pipeline(root, outdir, registry=registry)
    return pipeline.staleness(pipeline.render())


__all__ = [
    "Allowances",
    "CompleteTree",
    "FleetPlan",
    "Pipeline",
    "Publisher",
    "Staleness",
    "SynthCache",
    "SynthResult",
    "check",
    "check_outdir",
    "compare_tree",
    "copy_tree",
    "kept_folders",
    "kept_owners",
    "load_plan",
    "paused_gc",
    "project_registry",
    "render_plan",
    "synthesize",
    "with_kept",
    "write_tree",
]
