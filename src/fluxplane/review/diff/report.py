"""The diff as text for a terminal, or as Markdown for a pull-request comment (under GitHub's size limit)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from fluxplane.review.diff.fleet import DistSnapshot, Received
from fluxplane.review.diff.objects import ADDED, CHANGED, REMOVED, ClusterDiff, FileChange, ObjectChange
from fluxplane.review.diff.risks import Risk
from fluxplane.review.diff.scope import Definitions

#: GitHub refuses a pull-request comment longer than this many characters.
COMMENT_LIMIT = 65_536
#: Objects listed per kind of change and cluster in Markdown before "... and N more".
LIST_LIMIT = 50
HEAD_LABEL = "working tree"
MARKS = {ADDED: "+", CHANGED: "~", REMOVED: "-"}
#: Where the base tree came from (fluxplane.review.diff.trees.base_tree): the dist/ committed at the ref, its definition
#: synthesized, or nothing (the ref has neither).
COMMITTED = "committed"
SYNTHESIZED = "synthesized"
EMPTY = "empty"
SOURCES = {
    COMMITTED: "dist/ as committed",
    SYNTHESIZED: "its definition, synthesized",
    EMPTY: "nothing: it has no dist/ and no environments/",
}


@dataclass
class Report:
    """Everything ``fluxplane diff`` found, in report order."""

    #: The base ref as given, and the commit it names.
    ref: str
    commit: str
    #: Where the base tree came from: COMMITTED, SYNTHESIZED or EMPTY.
    source: str = SYNTHESIZED
    #: How much of the trees the diff read: changed files, folders and clusters they reach, folders built.
    scope: str = ""
    sections: list[ClusterDiff] = field(default_factory=list)
    files: list[FileChange] = field(default_factory=list)
    risks: list[Risk] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Clusters of the working tree on a Kubernetes version past or near the end of EKS standard support.
    support: list[str] = field(default_factory=list)
    #: The trees compared and what each sends to every cluster (what fluxplane.review.plan reads a diff's plan from).
    trees: tuple[DistSnapshot, DistSnapshot] | None = field(default=None, repr=False, compare=False)
    walks: tuple[Received, Received] | None = field(default=None, repr=False, compare=False)
    #: The composite definitions of each tree, read once for the scope and again by plan.
    definitions: tuple[Definitions, Definitions] | None = field(default=None, repr=False, compare=False)

    @property
    def changed(self) -> bool:
        return bool(self.sections or self.files)


def _counts(items: Sequence[ObjectChange] | Sequence[FileChange]) -> tuple[str, str, str]:
    """Added, changed and removed, as the table shows them."""
    return tuple(str(sum(1 for item in items if item.status == status)) for status in (ADDED, CHANGED, REMOVED))  # type: ignore[return-value]


def _cluster_title(section: ClusterDiff) -> str:
    suffix = f" (cluster {section.status})" if section.status else ""
    return f"{section.repository} / {section.cluster}{suffix}"


def _intro(report: Report) -> list[str]:
    lines = [
        f"fluxplane diff: {report.ref} ({report.commit[:12]}) -> {HEAD_LABEL}",
        f"base: {SOURCES.get(report.source, report.source)} at {report.ref}",
    ]
    if report.scope:
        lines.append(f"read: {report.scope}")
    return lines


def text(report: Report) -> str:
    """The report for a terminal: risks, a summary table, then every change with its diff."""
    lines = _intro(report)
    lines += [f"note: {note}" for note in report.notes]
    lines += [f"warning: {line}" for line in report.support]
    if not report.changed:
        lines.append(f"no changes: the working tree synthesizes the same dist/ as {report.ref}")
        return "\n".join(lines) + "\n"
    lines.append("")
    if report.risks:
        lines.append(f"risky changes ({len(report.risks)}):")
        lines += [f"  ! {risk.repository} / {risk.cluster}: {risk.subject}: {risk.message}" for risk in report.risks]
    else:
        lines.append("risky changes: none")
    lines.append("")
    rows: list[tuple[str, ...]] = [("REPOSITORY", "CLUSTER", "ADDED", "CHANGED", "REMOVED")]
    rows += [
        (
            section.repository,
            section.cluster + (f" ({section.status})" if section.status else ""),
            *_counts(section.changes),
        )
        for section in report.sections
    ]
    if report.files:
        rows.append(("files", "(no cluster)", *_counts(report.files)))
    widths = [max(len(row[index]) for row in rows) for index in range(5)]
    for row in rows:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])] + [
            cell.rjust(width) for cell, width in zip(row[2:], widths[2:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    for section in report.sections:
        added, changed, removed = _counts(section.changes)
        lines += ["", f"{_cluster_title(section)}: {added} added, {changed} changed, {removed} removed"]
        for change in section.changes:
            lines.append(f"  {MARKS[change.status]} {change.label}")
            diff = change.diff(report.ref, HEAD_LABEL)
            lines += [f"      {line}" for line in diff.splitlines()]
    if report.files:
        added, changed, removed = _counts(report.files)
        lines += ["", f"files no cluster applies: {added} added, {changed} changed, {removed} removed"]
        for file in report.files:
            lines.append(f"  {MARKS[file.status]} dist/{file.path}")
            lines += [f"      {line}" for line in file.diff(report.ref, HEAD_LABEL).splitlines()]
    return "\n".join(lines) + "\n"


def _fence(body: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", body)), default=2)
    return "`" * (longest + 1)


def _cut(body: str, cap: int | None) -> str:
    """``body`` cut to at most ``cap`` characters at a line end, saying how many lines were left out."""
    if cap is None or len(body) <= cap:
        return body
    kept = body[:cap]
    kept = kept[: kept.rfind("\n") + 1] if "\n" in kept else ""
    left = body[len(kept) :].count("\n") + (0 if body.endswith("\n") else 1)
    return f"{kept}... {left} more lines\n"


def _listing(title: str, labels: list[str]) -> list[str]:
    if not labels:
        return []
    shown = [f"- `{name}`" for name in labels[:LIST_LIMIT]]
    if len(labels) > LIST_LIMIT:
        shown.append(f"- ... and {len(labels) - LIST_LIMIT} more")
    return [f"**{title}**", "", *shown, ""]


@dataclass
class _Block:
    summary: str
    lists: list[str]
    diff: str


def _blocks(report: Report) -> list[_Block]:
    blocks = []
    for section in report.sections:
        added, changed, removed = _counts(section.changes)
        lists: list[str] = []
        for status, title in ((ADDED, "Added"), (REMOVED, "Removed"), (CHANGED, "Changed")):
            lists += _listing(title, [change.label for change in section.changes if change.status == status])
        diff = "".join(change.diff(report.ref, HEAD_LABEL) for change in section.changes)
        summary = f"<b>{_cluster_title(section)}</b>: {added} added, {changed} changed, {removed} removed"
        blocks.append(_Block(summary, lists, diff))
    if report.files:
        added, changed, removed = _counts(report.files)
        lists = []
        for status, title in ((ADDED, "Added"), (REMOVED, "Removed"), (CHANGED, "Changed")):
            lists += _listing(title, [f"dist/{change.path}" for change in report.files if change.status == status])
        diff = "".join(change.diff(report.ref, HEAD_LABEL) for change in report.files)
        summary = f"<b>files no cluster applies</b>: {added} added, {changed} changed, {removed} removed"
        blocks.append(_Block(summary, lists, diff))
    return blocks


def _markdown_head(report: Report) -> list[str]:
    lines = [f"## fluxplane diff: `{report.ref}` ({report.commit[:12]}) → {HEAD_LABEL}", ""]
    lines += [f"Base: {SOURCES.get(report.source, report.source)} at `{report.ref}`.", ""]
    lines += [f"Note: {note}" for note in report.notes] + ([""] if report.notes else [])
    if not report.changed:
        return [*lines, f"No changes: the working tree synthesizes the same dist/ as `{report.ref}`."]
    lines += ["### Risky changes", ""]
    if report.risks:
        lines += [
            f"- :warning: **{risk.repository} / {risk.cluster}** `{risk.subject}`: {risk.message}"
            for risk in report.risks[:LIST_LIMIT]
        ]
        if len(report.risks) > LIST_LIMIT:
            lines.append(f"- ... and {len(report.risks) - LIST_LIMIT} more (run `fluxplane diff` to see all)")
    else:
        lines.append("None.")
    if report.support:
        lines += ["", "### Kubernetes versions", "", *(f"- :warning: {line}" for line in report.support)]
    lines += ["", "### Summary", "", "| Repository | Cluster | Added | Changed | Removed |", "|---|---|--:|--:|--:|"]
    for section in report.sections:
        cluster = section.cluster + (f" ({section.status})" if section.status else "")
        lines.append(f"| {section.repository} | {cluster} | " + " | ".join(_counts(section.changes)) + " |")
    if report.files:
        lines.append("| files | (no cluster) | " + " | ".join(_counts(report.files)) + " |")
    return [*lines, ""]


def _render(head: list[str], blocks: list[_Block], cap: int | None, kept: int, note: str) -> str:
    lines = list(head)
    for block in blocks[:kept]:
        lines += ["<details>", f"<summary>{block.summary}</summary>", "", *block.lists]
        if block.diff:
            body = _cut(block.diff, cap)
            fence = _fence(body)
            lines += [f"{fence}diff", body.rstrip("\n"), fence, ""]
        lines += ["</details>", ""]
    if kept < len(blocks):
        lines += [f"{len(blocks) - kept} more sections left out.", ""]
    if note:
        lines += [note, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def markdown(report: Report, limit: int = COMMENT_LIMIT) -> str:
    """The report as a pull-request comment of at most ``limit`` characters; long diffs are cut evenly."""
    head = _markdown_head(report)
    blocks = _blocks(report)
    full = _render(head, blocks, None, len(blocks), "")
    if len(full) <= limit:
        return full
    note = (
        f"_Diffs cut to fit a pull-request comment: run `fluxplane diff --base {report.ref}` locally to see them all._"
    )
    longest = max((len(block.diff) for block in blocks), default=0)
    for kept in range(len(blocks), -1, -1):
        if len(_render(head, blocks, 0, kept, note)) > limit:
            continue
        low, high = 0, longest
        while low < high:
            middle = (low + high + 1) // 2
            if len(_render(head, blocks, middle, kept, note)) <= limit:
                low = middle
            else:
                high = middle - 1
        return _render(head, blocks, low, kept, note)
    return _render(head[:3], [], 0, 0, note)[:limit]
