"""The two trees a plan compares.

**Base.** The dist/ committed at the base ref, read from Git byte for byte (fluxplane.git.files_at): that is
what Flux applies, whatever fluxplane version wrote it. When the ref has no dist/ in the project's place, its
definition is synthesized in a temporary worktree as ``fluxplane diff`` does (fluxplane.diff); a ref with neither
is an empty tree.

**Head.** What synth would write now: the definition loaded and rendered in memory, the clusters whose inputs did
not change taken from the synth cache (read only: the plan writes nothing), with the folders another tool owns
as they are in dist/ (fluxplane.synth.with_kept).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from fluxplane import diff, git, synth
from fluxplane.config.awsdata import fleet_support_warnings
from fluxplane.diff.fleet import Tree, repositories_of_plan
from fluxplane.diff.report import HEAD_LABEL
from fluxplane.errors import FluxplaneError
from fluxplane.files import output_dir
from fluxplane.packs.registry import PackRegistry
from fluxplane.plan.model import Base
from fluxplane.synth.plan import FleetPlan

_PURPOSE = "fluxplane plan reads the base's dist/ from Git"


def _committed(base: diff.Base, dist: Path) -> dict[str, str] | None:
    """The files of dist/ as committed at the base, None when the base has none there."""
    try:
        folder = dist.resolve().relative_to(base.checkout.toplevel.resolve()).as_posix()
    except ValueError:
        return None
    found = git.files_at(base.checkout.toplevel, base.commit, folder, purpose=_PURPOSE)
    if found is None:
        return None
    return {path: data.decode("utf-8", errors="replace") for path, data in found.items()}


def base_tree(root: Path, base: diff.Base) -> tuple[Tree, Base]:
    """The tree at ``base`` (module docstring), and where it came from."""
    files = _committed(base, output_dir(root))
    if files is not None:
        return Tree(base.ref, files), Base(base.ref, base.commit, "committed")
    with diff.git.worktree(base.checkout, base.commit) as project:
        try:
            tree = diff.synthesize(project, base.ref)
        except FluxplaneError as exc:
            raise diff.DiffError([f"{base.ref}: {line}" for line in exc.problems]) from None
    return tree, Base(base.ref, base.commit, "synthesized" if tree.files else "empty")


def head_tree(root: Path, registry: PackRegistry | None = None) -> tuple[Tree, FleetPlan]:
    """What synth would write for the definition under ``root`` now (module docstring), nothing written."""
    with synth.paused_gc():
        plan = synth.load_plan(root, registry)
    cache = synth.SynthCache.for_root(root, read_only=True)
    files = synth.with_kept(plan, synth.render_plan(plan, cache), output_dir(root))
    support = tuple(fleet_support_warnings(plan.fleet, datetime.now(UTC).date()))
    return Tree(HEAD_LABEL, files, repositories_of_plan(plan), support), plan
