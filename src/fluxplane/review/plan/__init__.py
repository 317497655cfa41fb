"""``fluxplane plan``: what a change to the definition does to the fleet's AWS resources, answered offline.

A ``terraform plan`` of the fleet's control plane, read from the walks of ``fluxplane diff`` (fluxplane.review.diff):
the base tree (the dist/ committed at the base ref, or its definition synthesized) and the head tree (what synth would
write now, rendered in memory) are compared file by file, and only the part of them the changed files reach is built
and walked (fluxplane.review.diff.scope), with kustomize, as Flux applies it. On each cluster the plan then compares the
AWS managed resources placed there and what each composite composes, Composition rendered offline for both trees
(fluxplane.review.plan.resources), and lists every resource created, updated in place, replaced, deleted or left in AWS,
with the fields that change and why (fluxplane.synth.cloud, reading fluxplane.kinds), in its AWS account and
region (fluxplane.review.plan.accounts); and every Kubernetes release or package installed or upgraded and object whose
change is destructive (fluxplane.review.plan.kube). Nothing is written. :func:`resolve` names the base, :func:`run`
returns the plan; the command (fluxplane.commands.plan) prints it (fluxplane.review.plan.report) and gates on it.
"""

from __future__ import annotations

from pathlib import Path

from fluxplane.core.tree.objects import Key
from fluxplane.packs.registry import PackRegistry
from fluxplane.review import diff
from fluxplane.review.diff.report import Report
from fluxplane.review.plan import kube
from fluxplane.review.plan.model import Plan, PlanBase, ordered
from fluxplane.review.plan.resources import Comparison, Reading, Side
from fluxplane.synth.composed import changed_kinds
from fluxplane.system.progress import Progress

__all__ = ["Plan", "from_diff", "resolve", "run"]


def resolve(root: Path, ref: str) -> diff.DiffBase:
    """The base ``ref`` names in the repository holding ``root``; DiffError when there is no repository or no
    such ref."""
    return diff.resolve(root, ref, "fluxplane plan")


def from_diff(report: Report) -> Plan:
    """The plan of what ``fluxplane diff`` compared, from its walks (those of what the change reaches) and their
    differences; the section diff's Markdown report ends with."""
    assert report.trees is not None and report.walks is not None and report.definitions is not None
    base = PlanBase(report.ref, report.commit, report.source)
    if report.scope == diff.NO_CHANGES:
        return Plan(base, scope=report.scope)
    hub = report.trees[1].hub
    before, after = (Reading(side, hub) for side in report.definitions)
    kinds = changed_kinds(before.definitions, after.definitions)
    walks = report.walks
    comparison = Comparison(Side(walks[0].clusters, before), Side(walks[1].clusters, after), kinds)
    changed: dict[str, list[Key]] = {}
    for section in report.sections:
        changed.setdefault(section.cluster, []).extend(change.key for change in section.changes)
    resources = comparison.run(changed)
    return Plan(
        base,
        ordered(resources),
        kube.kubernetes_changes(report.sections),
        notes=sorted({*report.notes, *comparison.notes}),
        scope=report.scope,
    )


def run(
    root: Path, base: diff.DiffBase, registry: PackRegistry | None = None, progress: Progress | None = None
) -> Plan:
    """The plan of the definition under ``root`` against ``base``'s (module docstring)."""
    progress = progress or Progress("plan", show="off")
    report = diff.run(root, base, progress, registry)
    with progress.stage("plan") as stage:
        plan = from_diff(report)
        stage.note(f"{len(plan.resources)} AWS resources, {len(plan.kubernetes)} Kubernetes changes")
    return plan
