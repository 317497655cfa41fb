"""``fluxplane plan``: what a change to the definition does to the fleet's AWS resources, answered offline.

A ``terraform plan`` of the fleet's control plane. The base tree (the dist/ committed at the base ref, or its
definition synthesized) and the head tree (what synth would write now, rendered in memory) are compared file by
file; only the part of them the changed files reach is built and walked (fluxplane.plan.scope), with kustomize,
as Flux applies it. On each cluster the plan then compares the AWS managed resources placed there and what each
composite composes, Composition rendered offline for both trees (fluxplane.plan.resources), and lists every
resource created, updated in place, replaced, deleted or left in AWS, with the fields that change and why
(fluxplane.synth.cloud, reading fluxplane.synth.kinds), in its AWS account and region (fluxplane.plan.accounts);
and every Kubernetes release or package installed or upgraded and object whose change is destructive
(fluxplane.plan.kube). Nothing is written. :func:`resolve` names the base, :func:`run` returns the plan; the
command (fluxplane.commands.plan) prints it (fluxplane.plan.report) and gates on it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fluxplane import diff
from fluxplane.core.tree import Fleet, KubectlBuilder
from fluxplane.diff.fleet import ObjectKey, Placed, Received, Tree, received
from fluxplane.diff.objects import ClusterDiff, compare_clusters
from fluxplane.diff.report import Report
from fluxplane.packs.registry import PackRegistry
from fluxplane.plan import kube
from fluxplane.plan.model import Base, Plan, ordered
from fluxplane.plan.resources import Comparison, Reading, Side
from fluxplane.plan.scope import Follow, Index, PlanFolders, Scope, changed_files
from fluxplane.plan.trees import base_tree, head_tree
from fluxplane.progress import Progress
from fluxplane.synth.composed import changed_kinds, composite_files

__all__ = ["Plan", "compare", "from_diff", "from_walks", "resolve", "run"]


def resolve(root: Path, ref: str) -> diff.Base:
    """The base ``ref`` names in the repository holding ``root``; DiffError when there is no repository or no
    such ref."""
    return diff.resolve(root, ref, "fluxplane plan")


def from_walks(
    base: Base,
    trees: tuple[Tree, Tree],
    walks: tuple[Mapping[str, Mapping[ObjectKey, Placed]], Mapping[str, Mapping[ObjectKey, Placed]]],
    sections: list[ClusterDiff],
    hub: str | None = None,
    readings: tuple[Reading, Reading] | None = None,
    notes: Iterable[str] = (),
) -> Plan:
    """The plan of what the walks of two trees (their objects per cluster) and their differences (``sections``)
    say; ``diff`` makes one from its whole walks."""
    before, after = readings or _readings(trees, hub)
    kinds = changed_kinds(before.definitions, after.definitions)
    comparison = Comparison(Side(walks[0], before), Side(walks[1], after), kinds)
    changed: dict[str, list[ObjectKey]] = {}
    for section in sections:
        changed.setdefault(section.cluster, []).extend(change.key for change in section.changes)
    resources = comparison.run(changed)
    return Plan(base, ordered(resources), kube.kubernetes_changes(sections), notes=sorted({*notes, *comparison.notes}))


def from_diff(report: Report) -> Plan:
    """The plan of what ``fluxplane diff`` compared, from its whole walks: the section its Markdown report ends with."""
    assert report.trees is not None and report.walks is not None
    source = "empty" if report.empty_base else "synthesized"
    before, after = report.walks
    return from_walks(
        Base(report.ref, report.commit, source),
        report.trees,
        (before.clusters, after.clusters),
        report.sections,
        notes=report.notes,
    )


def _readings(trees: tuple[Tree, Tree], hub: str | None) -> tuple[Reading, Reading]:
    kinds: dict[str, frozenset[str]] = {}
    return Reading(trees[0].files, kinds, hub), Reading(trees[1].files, kinds, hub)


def _entry(cluster: str) -> str:
    return Fleet.entry(cluster)


def compare(before: Tree, after: Tree, base: Base, hub: str | None = None, progress: Progress | None = None) -> Plan:
    """The plan of the change from ``before`` to ``after``, building only what it reaches (fluxplane.plan.scope)."""
    progress = progress or Progress("plan", show="off")
    changed = changed_files(before.files, after.files)
    if not changed:
        return Plan(base, scope="no file changes")
    readings = _readings((before, after), hub)
    with progress.stage("scope") as stage:
        kinds = changed_kinds(readings[0].definitions, readings[1].definitions)
        reach = set(changed)
        for reading in readings:
            reach.update(composite_files(reading.texts, kinds, reading.definitions))
        scope = Scope(frozenset(changed))
        parsed: dict[str, list[dict[str, Any]]] = {}
        for tree in (before, after):
            scope.add(Index(tree.files, parsed), reach)
        stage.note(f"{len(changed)} changed files, {len(scope.clusters)} clusters")
    with tempfile.TemporaryDirectory(prefix="fluxplane-plan-") as workdir, progress.stage("build") as stage:
        builder = KubectlBuilder()
        folders = [
            PlanFolders(tree.files, Path(workdir) / name, builder, tree.label, scope)
            for name, tree in (("base", before), ("head", after))
        ]
        present = [{cluster for cluster in scope.clusters if mine.is_folder(_entry(cluster))} for mine in folders]
        entries = present[0] ^ present[1]
        walks: list[Received] = []
        for index, tree in enumerate((before, after)):
            mine, other = folders[index], folders[1 - index]
            repositories = tree.repositories or Fleet(mine).find_repositories(sorted(present[index]))
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
    with progress.stage("compare") as stage:
        sections = compare_clusters(walks[0].clusters, walks[1].clusters)
        plan = from_walks(
            base,
            (before, after),
            (walks[0].clusters, walks[1].clusters),
            sections,
            hub,
            readings,
            [*walks[0].notes, *walks[1].notes],
        )
        total = len(Fleet(folders[1]).clusters)
        plan.scope = scope.line(builder.builds, total)
        stage.note(f"{len(plan.resources)} AWS resources, {len(plan.kubernetes)} Kubernetes changes")
    return plan


def run(root: Path, base: diff.Base, registry: PackRegistry | None = None, progress: Progress | None = None) -> Plan:
    """The plan of the definition under ``root`` against ``base``'s (module docstring)."""
    progress = progress or Progress("plan", show="off")
    with progress.stage("base") as stage:
        before, where = base_tree(root, base)
        stage.note(f"{len(before.files)} files, {where.source}")
    with progress.stage("head") as stage:
        after, fleet = head_tree(root, registry)
        stage.note(f"{len(after.files)} files")
    return compare(before, after, where, fleet.fleet.management.name, progress)
