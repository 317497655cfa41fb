"""``fluxplane diff``: what a change to the definition does to each cluster, object by object.

The base tree is the dist/ committed at the base ref, or its definition synthesized in a temporary Git worktree
when it has none; the head is what synth would write now, rendered in memory (fluxplane.review.diff.trees). The two are
compared file by file, and only the part of them the changed files reach is built and walked
(fluxplane.review.diff.scope) as Flux applies it (fluxplane.review.diff.fleet: fluxplane.core.tree's walk): per
cluster, the
objects its entry folder and its Kustomizations' paths build to, with their variables substituted. What the walk
leaves out is the same in both trees, so the report is that of walking both trees whole (``compare(...,
whole=True)``, which the tests hold it to). The report lists, per repository and cluster, what is added, changed
and removed, with the YAML diff of each changed object, and flags risky changes first (fluxplane.review.diff.risks);
clusters the change does not reach have no section. Nothing is written. :func:`resolve` names the base,
:func:`run` returns the report; the command (fluxplane.commands.diff) prints it, and fluxplane.review.plan reads its
walks.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from fluxplane.core.tree import FleetWalk, KubectlBuilder
from fluxplane.packs.registry import PackRegistry
from fluxplane.review.diff import git
from fluxplane.review.diff.fleet import DistSnapshot, Received, receive, received
from fluxplane.review.diff.git import DiffBase, DiffError
from fluxplane.review.diff.objects import compare_clusters, compare_files
from fluxplane.review.diff.report import COMMITTED, HEAD_LABEL, SYNTHESIZED, Report
from fluxplane.review.diff.risks import risks
from fluxplane.review.diff.scope import (
    CLUSTERS,
    Definitions,
    Follow,
    Index,
    Keys,
    Scope,
    ScopedFolders,
    Shared,
    changed_files,
    reached,
)
from fluxplane.review.diff.trees import base_tree, committed, committed_blobs, head_tree
from fluxplane.system.files import output_dir
from fluxplane.system.progress import Progress

__all__ = ["NO_CHANGES", "DiffBase", "DiffError", "compare", "resolve", "run"]

#: What a diff reads when no file differs between the trees: nothing is built.
NO_CHANGES = "no file changes"


def _scoped(
    before: DistSnapshot,
    after: DistSnapshot,
    changed: frozenset[str],
    sides: tuple[Definitions, Definitions],
    workdir: Path,
    progress: Progress,
) -> tuple[list[Received], str]:
    """The walks of what the ``changed`` files, from ``before`` to ``after``, reach (fluxplane.review.diff.scope), and
    how much of the trees they read."""
    if not changed:
        return [Received(), Received()], NO_CHANGES
    with progress.stage("scope") as stage:
        scope = Scope(changed)
        reach = reached(changed, sides)
        keys = Keys()
        for tree in (before, after):
            scope.add(Index(tree.files, keys), reach)
        stage.note(f"{len(changed)} changed files, {len(scope.clusters)} clusters")
    with progress.stage("build") as stage:
        builder = KubectlBuilder()
        shared = Shared()
        folders = [
            ScopedFolders(tree.files, workdir / name, builder, tree.label, scope, shared)
            for name, tree in (("base", before), ("head", after))
        ]
        present = [
            {cluster for cluster in scope.clusters if mine.is_folder(FleetWalk.entry(cluster))} for mine in folders
        ]
        entries = present[0] ^ present[1]
        walks: list[Received] = []
        for index, tree in enumerate((before, after)):
            mine, other = folders[index], folders[1 - index]
            repositories = tree.repositories or FleetWalk(mine).find_repositories(sorted(present[index]))
            walks.append(
                received(
                    tree,
                    mine,
                    repositories=repositories,
                    clusters=sorted(present[index]),
                    follow=Follow(scope, mine, other, entries),
                )
            )
        stage.note(f"{builder.builds} kustomize builds")
    clusters = set(FleetWalk(folders[0]).clusters)
    if _moves_clusters(changed, before, after):
        clusters |= set(FleetWalk(folders[1]).clusters)
    return walks, scope.line(builder.builds, len(clusters))


def _whole(before: DistSnapshot, after: DistSnapshot, workdir: Path, progress: Progress) -> tuple[list[Received], str]:
    """The walks of every cluster of both trees, every folder they reach built: what a scoped diff must equal."""
    with progress.stage("build") as stage:
        builder = KubectlBuilder()
        walks = receive([before, after], workdir, builder)
        stage.note(f"{builder.builds} kustomize builds")
    clusters = set(walks[0].clusters) | set(walks[1].clusters)
    return walks, f"both trees whole: {len(clusters)} clusters; {builder.builds} folders built"


def compare(
    before: DistSnapshot,
    after: DistSnapshot,
    ref: str,
    commit: str,
    source: str = SYNTHESIZED,
    progress: Progress | None = None,
    *,
    whole: bool = False,
) -> Report:
    """The report of what changes from ``before`` (the tree at ``ref``, its ``source``) to ``after``, building
    only what the change reaches, or, ``whole``, everything."""
    progress = progress or Progress("diff", show="off")
    kinds: dict[str, frozenset[str]] = {}
    changed = changed_files(before.files, after.files)
    first = Definitions(before.files, kinds)
    sides = (first, Definitions(after.files, kinds, base=first, changed=changed))
    with tempfile.TemporaryDirectory(prefix="fluxplane-diff-") as workdir:
        if whole:
            walks, scope = _whole(before, after, Path(workdir), progress)
        else:
            walks, scope = _scoped(before, after, changed, sides, Path(workdir), progress)
    with progress.stage("compare") as stage:
        sections = compare_clusters(walks[0].clusters, walks[1].clusters)
        files = compare_files(before.files, after.files, walks[0].read | walks[1].read, changed)
        present = _entries(before)
        kept = _entries(after) if _moves_clusters(changed, before, after) else present
        entries = {cluster: cluster in kept for cluster in present}
        report = Report(
            ref=ref,
            commit=commit,
            source=source,
            scope=scope,
            sections=sections,
            files=files,
            risks=risks(sections, entries),
            notes=sorted(set(walks[0].notes) | set(walks[1].notes)),
            support=list(after.support),
            trees=(before, after),
            walks=(walks[0], walks[1]),
            definitions=sides,
        )
        stage.note(f"{len(sections)} cluster sections, {len(report.risks)} risky changes")
    return report


def _moves_clusters(changed: frozenset[str], before: DistSnapshot, after: DistSnapshot) -> bool:
    """Whether a file is added or removed below platform/clusters/: the trees' clusters may differ (otherwise they
    are the same, read from one tree)."""
    return any(path.startswith(CLUSTERS) for path in changed if (path in before.files) != (path in after.files))


def _entries(tree: DistSnapshot) -> set[str]:
    return {path[len(CLUSTERS) :].split("/")[0] for path in tree.files if path.startswith(CLUSTERS)}


def resolve(root: Path, ref: str, command: str = "fluxplane diff") -> DiffBase:
    """The base ``ref`` names in the repository holding ``root``; DiffError (naming ``command``) when there is no
    repository or no such ref."""
    checkout = git.locate(root, command)
    return DiffBase(ref, checkout, git.resolve(checkout, ref))


def run(root: Path, base: DiffBase, progress: Progress | None = None, registry: PackRegistry | None = None) -> Report:
    """What the definition under ``root`` changes from ``base``'s, per repository, cluster and object."""
    progress = progress or Progress("diff", show="off")
    blobs = committed_blobs(base, output_dir(root))
    if blobs is None:
        with progress.stage("base") as stage:
            before, source = base_tree(root, base)
            stage.note(f"{len(before.files)} files, {source}")
    with progress.stage("head") as stage:
        after = head_tree(root, registry) if (root / "environments").is_dir() else DistSnapshot(HEAD_LABEL, {})
        stage.note(f"{len(after.files)} files")
    if blobs is not None:
        # the committed dist/: the files the head holds unchanged are not read from Git
        with progress.stage("base") as stage:
            before, source = committed(base, blobs, after.files), COMMITTED
            stage.note(f"{len(before.files)} files, {source}")
    return compare(before, after, base.ref, base.commit, source, progress)
