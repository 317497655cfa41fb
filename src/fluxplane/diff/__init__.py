"""``fluxplane diff``: what a change to the definition does to each cluster, object by object.

The definition at the base ref (read from a temporary Git worktree) and the working tree's are both
synthesized in this process, with the installed fluxplane, so the difference is the definition's
alone. Each tree is then followed as Flux applies it (fluxplane.diff.fleet: fluxplane.core.tree's walk): per
cluster, the objects its entry folder and its Kustomizations' paths build to, with their variables
substituted. The report lists, per repository and cluster, what is added, changed and removed, with
the YAML diff of each changed object, and flags risky changes first (fluxplane.diff.risks). Nothing is
written to dist/. :func:`resolve` names the base, :func:`run` returns the report; the command
(fluxplane.commands.diff) prints it.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fluxplane import synth
from fluxplane.config.awsdata import fleet_support_warnings
from fluxplane.core.layout import PLATFORM
from fluxplane.diff import git
from fluxplane.diff.fleet import Builder, Tree, receive, repositories_of_plan
from fluxplane.diff.git import DiffError
from fluxplane.diff.objects import compare_clusters, compare_files
from fluxplane.diff.report import HEAD_LABEL, Report
from fluxplane.diff.risks import risks
from fluxplane.errors import FluxplaneError
from fluxplane.progress import Progress

__all__ = ["Base", "DiffError", "resolve", "run", "synthesize"]


def synthesize(root: Path, label: str) -> Tree:
    """The dist/ tree of the definition under ``root`` (empty when it has no environments/)."""
    if not (root / "environments").is_dir():
        return Tree(label, {})
    pipeline = synth.Pipeline(root)
    with synth.paused_gc():
        plan = pipeline.load()
    support = tuple(fleet_support_warnings(plan.fleet, datetime.now(UTC).date()))
    return Tree(label, pipeline.build(plan), repositories_of_plan(plan), support)


def _base(checkout: git.Checkout, ref: str, commit: str) -> Tree:
    with git.worktree(checkout, commit) as project:
        try:
            return synthesize(project, ref)
        except FluxplaneError as exc:
            raise DiffError([f"{ref}: {line}" for line in exc.problems]) from None


def compare(base: Tree, head: Tree, ref: str, commit: str, progress: Progress) -> Report:
    """The report of what changes from ``base`` to ``head``."""
    with tempfile.TemporaryDirectory(prefix="fluxplane-diff-") as workdir, progress.stage("build") as stage:
        builder = Builder()
        before, after = receive([base, head], Path(workdir), builder)
        stage.note(f"{builder.builds} kustomize builds")
    with progress.stage("compare") as stage:
        sections = compare_clusters(before.clusters, after.clusters)
        files = compare_files(base.files, head.files, before.read | after.read)
        entries = {cluster: cluster in _entries(head) for cluster in _entries(base)}
        report = Report(
            ref=ref,
            commit=commit,
            empty_base=not base.files,
            sections=sections,
            files=files,
            risks=risks(sections, entries),
            notes=sorted(set(before.notes) | set(after.notes)),
            support=list(head.support),
            trees=(base, head),
            walks=(before, after),
        )
        stage.note(f"{len(sections)} cluster sections, {len(report.risks)} risky changes")
    return report


def _entries(tree: Tree) -> set[str]:
    prefix = f"{PLATFORM}/clusters/"
    return {path[len(prefix) :].split("/")[0] for path in tree.files if path.startswith(prefix)}


@dataclass(frozen=True)
class Base:
    """The base of a diff: the ref as given, the repository holding the project, and the commit the ref names."""

    ref: str
    checkout: git.Checkout
    commit: str


def resolve(root: Path, ref: str, command: str = "fluxplane diff") -> Base:
    """The base ``ref`` names in the repository holding ``root``; DiffError (naming ``command``) when there is no
    repository or no such ref."""
    checkout = git.locate(root, command)
    return Base(ref, checkout, git.resolve(checkout, ref))


def run(root: Path, base: Base, progress: Progress | None = None) -> Report:
    """What the definition under ``root`` changes from ``base``'s, per repository, cluster and object."""
    progress = progress or Progress("diff", show="off")
    with progress.stage("base") as stage:
        before = _base(base.checkout, base.ref, base.commit)
        stage.note(f"{len(before.files)} files")
    with progress.stage("head") as stage:
        head = synthesize(root, HEAD_LABEL)
        stage.note(f"{len(head.files)} files")
    return compare(before, head, base.ref, base.commit, progress)
