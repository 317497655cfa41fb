"""The two trees diff and plan compare.

**Base.** The dist/ committed at the base ref, read from Git byte for byte (fluxplane.system.git.blobs_at): that is
what Flux applies, whatever fluxplane version wrote it. The files the head holds with a committed blob's content
(its name says so) are taken from the head, the others read in one batch. When the ref has no dist/ in the
project's place, its definition is synthesized in a temporary worktree (fluxplane.review.diff.git.worktree), with the
installed fluxplane; a ref with neither is an empty tree.

**Head.** What synth would write now: the definition loaded and rendered in memory, the files parsed before and
the clusters whose inputs did not change taken from the caches (fluxplane.config.parsed, the synth cache; read
only: nothing is written), with the folders another tool owns as they are in dist/ (fluxplane.synth.with_kept).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from fluxplane import synth
from fluxplane.config.awsdata import fleet_support_warnings
from fluxplane.config.parsed import parsed_files
from fluxplane.errors import FluxplaneError
from fluxplane.packs.registry import PackRegistry
from fluxplane.review.diff import git as diff_git
from fluxplane.review.diff.fleet import DistSnapshot, repositories_of_plan
from fluxplane.review.diff.git import DiffError
from fluxplane.review.diff.report import COMMITTED, EMPTY, HEAD_LABEL, SYNTHESIZED
from fluxplane.system import git
from fluxplane.system.files import output_dir

__all__ = ["base_tree", "committed", "committed_blobs", "head_tree", "synthesize"]

_PURPOSE = "fluxplane reads the base's dist/ from Git"


def _folder(base: diff_git.DiffBase, dist: Path) -> str | None:
    """Where ``dist`` lies in the base's repository, None when outside it."""
    try:
        return dist.resolve().relative_to(base.checkout.toplevel.resolve()).as_posix()
    except ValueError:
        return None


def committed_blobs(base: diff_git.DiffBase, dist: Path) -> list[tuple[str, str]] | None:
    """The files of dist/ as committed at the base, with their blobs' names (fluxplane.system.git.blobs_at), None when
    the base has none there."""
    folder = _folder(base, dist)
    return None if folder is None else git.blobs_at(base.checkout.toplevel, base.commit, folder, purpose=_PURPOSE)


def committed(
    base: diff_git.DiffBase, blobs: list[tuple[str, str]], head: Mapping[str, str] | None = None
) -> DistSnapshot:
    """The tree of the committed ``blobs`` (:func:`committed_blobs`); the files ``head`` holds with the same
    content are taken from it, not read from Git."""
    known: dict[str, bytes] = {}
    for path, text in (head or {}).items():
        try:
            known[path] = text.encode("utf-8")
        except UnicodeEncodeError:
            continue
    found = git.read_blobs(base.checkout.toplevel, blobs, purpose=_PURPOSE, known=known)
    files = {
        path: head[path] if head is not None and data is known.get(path) else data.decode("utf-8", errors="replace")
        for path, data in found.items()
    }
    return DistSnapshot(base.ref, files)


def synthesize(root: Path, label: str) -> DistSnapshot:
    """The dist/ tree of the definition under ``root`` (empty when it has no environments/)."""
    if not (root / "environments").is_dir():
        return DistSnapshot(label, {})
    pipeline = synth.Pipeline(root)
    with synth.paused_gc():
        plan = pipeline.load()
    support = tuple(fleet_support_warnings(plan.fleet, datetime.now(UTC).date()))
    return DistSnapshot(label, pipeline.build(plan), repositories_of_plan(plan), support, plan.fleet.management.name)


def base_tree(root: Path, base: diff_git.DiffBase) -> tuple[DistSnapshot, str]:
    """The tree at ``base`` (module docstring), and where it came from: COMMITTED, SYNTHESIZED or EMPTY."""
    blobs = committed_blobs(base, output_dir(root))
    if blobs is not None:
        return committed(base, blobs), COMMITTED
    with diff_git.worktree(base.checkout, base.commit) as project:
        try:
            tree = synthesize(project, base.ref)
        except FluxplaneError as exc:
            raise DiffError([f"{base.ref}: {line}" for line in exc.problems]) from None
    return tree, SYNTHESIZED if tree.files else EMPTY


def head_tree(root: Path, registry: PackRegistry | None = None) -> DistSnapshot:
    """What synth would write for the definition under ``root`` now (module docstring), nothing written."""
    with synth.paused_gc(), parsed_files(root, read_only=True):
        plan = synth.load_plan(root, registry)
    cache = synth.SynthCache.for_root(root, read_only=True)
    files = synth.with_kept(plan, synth.render_plan(plan, cache), output_dir(root))
    support = tuple(fleet_support_warnings(plan.fleet, datetime.now(UTC).date()))
    return DistSnapshot(HEAD_LABEL, files, repositories_of_plan(plan), support, plan.fleet.management.name)
