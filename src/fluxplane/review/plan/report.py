"""The plan as text for a terminal, Markdown for a pull-request comment, or JSON for tools.

Text and Markdown say the same, in the same order: the data-bearing AWS resources replaced or deleted first, one
line each ("replaces RDS instance production-use1-orders-main in account 444455556666 (...): forProvider.engine
changed from postgres to mysql"); then every AWS resource by account, region and cluster; then the Kubernetes
changes by cluster (releases and packages installed or upgraded, destructive changes marked ``!``); then the
one-line summary.

JSON (``schema``: ``fluxplane.review.plan/v1``; within a schema version keys are only ever added)::

    {"schema": "fluxplane.review.plan/v1",
     "base": {"ref", "commit", "source": "committed" | "synthesized" | "empty"},
     "summary": {"create", "update", "replace", "delete", "forget", "manage", "import", "dataBearing",
                 "kubernetes", "destructive"},
     "resources": [{"action", "account", "region", "cluster", "apiVersion", "kind", "noun", "name",
                    "source", "fields": [...], "reasons": [...], "dataBearing"}],
     "kubernetes": [{"action", "destructive", "cluster", "repository", "apiVersion", "kind", "namespace",
                     "name", "reason"}],
     "notes": [...]}

``resources`` and ``kubernetes`` are in report order; ``action`` is one of create, update, replace, delete,
forget (left in AWS, unmanaged), manage (an imported resource Crossplane starts to write) and import (an existing
resource only read) for a resource, and create, update, reinstall, replace and delete for a Kubernetes object.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import groupby
from typing import Any

from fluxplane.review.diff.report import COMMENT_LIMIT, HEAD_LABEL, SOURCES
from fluxplane.review.plan.model import (
    CREATE,
    DELETE,
    FORGET,
    IMPORT,
    MANAGE,
    REINSTALL,
    REPLACE,
    UPDATE,
    KubernetesChange,
    Plan,
    ResourceChange,
)

SCHEMA = "fluxplane.review.plan/v1"
#: How each action reads in a plan's headline.
VERBS = {
    CREATE: "creates",
    UPDATE: "updates in place",
    REPLACE: "replaces",
    DELETE: "deletes",
    FORGET: "leaves",
    MANAGE: "starts to manage",
    IMPORT: "reads",
}
MARKS = {CREATE: "+", UPDATE: "~", REPLACE: "-/+", DELETE: "-", FORGET: "?", MANAGE: "!", IMPORT: "=", REINSTALL: "-/+"}
NOTHING = "No AWS resource changes, and no Kubernetes release, package or destructive change."


def summary(plan: Plan) -> str:
    """The one-line summary."""
    counts = ", ".join(
        f"{plan.count(action)} to {word}"
        for action, word in ((CREATE, "create"), (UPDATE, "update in place"), (REPLACE, "replace"), (DELETE, "delete"))
    )
    forgotten, managed, imported = plan.count(FORGET), plan.count(MANAGE), plan.count(IMPORT)
    left = f", {forgotten} to leave in AWS unmanaged" if forgotten else ""
    left += f", {managed} to start managing" if managed else ""
    left += f", {imported} to read without change" if imported else ""
    installed = len(plan.kubernetes) - len(plan.destructive)
    return (
        f"Plan: AWS {counts}{left} ({len(plan.data_bearing)} data-bearing replaced or deleted); Kubernetes "
        f"{installed} releases or packages installed or upgraded, {len(plan.destructive)} destructive changes."
    )


def headline(change: ResourceChange) -> str:
    """``replaces RDS instance production-use1-orders-main in account 444455556666 (...): ... changed``"""
    why = "; ".join(change.reasons)
    where = f"in account {change.account} ({change.region}, cluster {change.cluster})"
    verb = f"leaves {change.noun} {change.name} {where} unmanaged" if change.action == FORGET else None
    text = verb or f"{VERBS[change.action]} {change.noun} {change.name} {where}"
    return text + (f": {why}" if why else "")


def _details(change: ResourceChange) -> list[str]:
    details = [change.source]
    if change.fields and change.action in (UPDATE, REPLACE, MANAGE):
        details.append("changes " + ", ".join(change.fields))
    return details + list(change.reasons)


def _groups(plan: Plan) -> Iterator[tuple[tuple[str, str, str], list[ResourceChange]]]:
    """The resources by (account, region, cluster), each group in report order."""
    order = {id(change): index for index, change in enumerate(plan.resources)}

    def where(change: ResourceChange) -> tuple[str, str, str]:
        return (change.account, change.region, change.cluster)

    for key, items in groupby(sorted(plan.resources, key=where), key=where):
        yield key, sorted(items, key=lambda change: order[id(change)])


def _kubernetes_mark(change: KubernetesChange) -> str:
    return "!" if change.destructive else MARKS[change.action]


def _intro(plan: Plan) -> list[str]:
    base = plan.base
    return [
        f"fluxplane plan: {base.ref} ({base.commit[:12]}) -> {HEAD_LABEL}",
        f"base: {SOURCES.get(base.source, base.source)} at {base.ref}",
    ]


def text(plan: Plan) -> str:
    """The plan for a terminal (module docstring)."""
    lines = _intro(plan)
    lines += [f"note: {note}" for note in plan.notes]
    if plan.scope:
        lines.append(f"read: {plan.scope}")
    if not plan.resources and not plan.kubernetes:
        return "\n".join([*lines, "", NOTHING, summary(plan)]) + "\n"
    if plan.data_bearing:
        lines += ["", f"data-bearing resources replaced or deleted ({len(plan.data_bearing)}):"]
        lines += [f"  ! {headline(change)}" for change in plan.data_bearing]
    for (account, region, cluster), changes in _groups(plan):
        lines += ["", f"AWS account {account}, region {region}, cluster {cluster}:"]
        for change in changes:
            lines.append(f"  {MARKS[change.action]:<3} {change.action:<7} {change.noun} {change.name}")
            lines += [f"                {detail}" for detail in _details(change)]
    for cluster, items in groupby(plan.kubernetes, key=lambda item: item.cluster):
        lines += ["", f"Kubernetes, cluster {cluster}:"]
        for item in items:
            lines.append(
                f"  {_kubernetes_mark(item):<3} {item.action:<9} {item.label} ({item.repository}): {item.reason}"
            )
    return "\n".join([*lines, "", summary(plan)]) + "\n"


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def markdown(plan: Plan, limit: int = COMMENT_LIMIT, heading: str = "##") -> str:
    """The plan as a pull-request comment (or a section of one, under ``heading``) of at most ``limit`` characters:
    lines past it are left out (the data-bearing resources come first), the summary never is."""
    base = plan.base
    lines = [f"{heading} fluxplane plan: `{base.ref}` ({base.commit[:12]}) → {HEAD_LABEL}", ""]
    lines += [f"Base: {SOURCES.get(base.source, base.source)} at `{base.ref}`.", ""]
    lines += [f"Note: {note}" for note in plan.notes] + ([""] if plan.notes else [])
    tail = [f"**{summary(plan)}**"]
    if not plan.resources and not plan.kubernetes:
        return "\n".join([*lines, NOTHING, "", *tail]) + "\n"
    rows: list[str] = []
    if plan.data_bearing:
        rows += [f"{heading}# :warning: Data-bearing resources replaced or deleted", ""]
        rows += [f"- **{_cell(headline(change))}**" for change in plan.data_bearing]
        rows.append("")
    for (account, region, cluster), changes in _groups(plan):
        rows += [f"{heading}# AWS account {account}, region {region}, cluster {cluster}", ""]
        rows += ["| Action | Resource | Declared by | Changes | Why |", "|---|---|---|---|---|"]
        for change in changes:
            rows.append(
                f"| {MARKS[change.action]} {change.action} | {_cell(change.noun)} `{_cell(change.name)}` | "
                f"`{_cell(change.source)}` | {_cell(', '.join(change.fields))} | {_cell('; '.join(change.reasons))} |"
            )
        rows.append("")
    if plan.kubernetes:
        rows += [f"{heading}# Kubernetes", "", "| Cluster | Action | Object | Why |", "|---|---|---|---|"]
        for item in plan.kubernetes:
            action = f"{_kubernetes_mark(item)} {item.action}"
            rows.append(
                f"| {item.cluster} | {action} | `{_cell(item.label)}` ({item.repository}) | {_cell(item.reason)} |"
            )
        rows.append("")
    budget = limit - len("\n".join([*lines, *tail])) - 200
    for index, row in enumerate(rows):
        if len(row) + 1 > budget:
            lines += [
                "",
                f"_{len(rows) - index} more lines left out to fit a comment: run `fluxplane plan` to see all._",
            ]
            lines.append("")
            break
        lines.append(row)
        budget -= len(row) + 1
    return "\n".join([*lines, *tail]) + "\n"


def _resource(change: ResourceChange) -> dict[str, Any]:
    return {
        "action": change.action,
        "account": change.account,
        "region": change.region,
        "cluster": change.cluster,
        "apiVersion": change.api_version,
        "kind": change.kind,
        "noun": change.noun,
        "name": change.name,
        "source": change.source,
        "fields": list(change.fields),
        "reasons": list(change.reasons),
        "dataBearing": change.data,
    }


def _kubernetes(change: KubernetesChange) -> dict[str, Any]:
    return {
        "action": change.action,
        "destructive": change.destructive,
        "cluster": change.cluster,
        "repository": change.repository,
        "apiVersion": change.api_version,
        "kind": change.kind,
        "namespace": change.namespace,
        "name": change.name,
        "reason": change.reason,
    }


def to_json(plan: Plan) -> str:
    """The plan for tools (module docstring), one JSON document."""
    document = {
        "schema": SCHEMA,
        "base": {"ref": plan.base.ref, "commit": plan.base.commit, "source": plan.base.source},
        "summary": {
            **{action: plan.count(action) for action in (CREATE, UPDATE, REPLACE, DELETE, FORGET, MANAGE, IMPORT)},
            "dataBearing": len(plan.data_bearing),
            "kubernetes": len(plan.kubernetes),
            "destructive": len(plan.destructive),
        },
        "resources": [_resource(change) for change in plan.resources],
        "kubernetes": [_kubernetes(change) for change in plan.kubernetes],
        "notes": list(plan.notes),
    }
    return json.dumps(document, indent=2) + "\n"
