"""The text and Markdown reports: order, summary, risks first, and the comment size limit."""

from __future__ import annotations

from typing import Any

from fluxplane.core.tree.objects import key_of
from fluxplane.review.diff.objects import ClusterDiff, FileChange, ObjectChange
from fluxplane.review.diff.report import COMMITTED, EMPTY, Report, markdown, text
from fluxplane.review.diff.risks import Risk

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def config_map(name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "apps"},
        "data": {"v": value},
    }


def report(value_lines: int = 1) -> Report:
    old = config_map("edit", "\n".join(f"old {n}" for n in range(value_lines)))
    new = config_map("edit", "\n".join(f"new {n}" for n in range(value_lines)))
    gone = config_map("gone", "x")
    hub = ClusterDiff(
        "platform",
        "hub",
        "",
        [
            ObjectChange("platform", "hub", key_of(old), old, new),
            ObjectChange("platform", "hub", key_of(gone), gone, None),
        ],
    )
    east = ClusterDiff("platform", "east", "removed", [ObjectChange("platform", "east", key_of(gone), gone, None)])
    return Report(
        ref="main",
        commit=COMMIT,
        source=COMMITTED,
        scope="2 changed files reach 5 folders and 2 of 3 clusters; 4 folders built",
        sections=[east, hub],
        files=[FileChange("CODEOWNERS", "* @a\n", "* @b\n")],
        risks=[Risk("platform", "east", "cluster", "cluster removed: dist/platform/clusters/east/ is gone")],
    )


def test_text_lists_risks_the_summary_and_each_change() -> None:
    assert text(report()) == (
        "fluxplane diff: main (0123456789ab) -> working tree\n"
        "base: dist/ as committed at main\n"
        "read: 2 changed files reach 5 folders and 2 of 3 clusters; 4 folders built\n"
        "\n"
        "risky changes (1):\n"
        "  ! platform / east: cluster: cluster removed: dist/platform/clusters/east/ is gone\n"
        "\n"
        "REPOSITORY  CLUSTER         ADDED  CHANGED  REMOVED\n"
        "platform    east (removed)      0        0        1\n"
        "platform    hub                 0        1        1\n"
        "files       (no cluster)        0        1        0\n"
        "\n"
        "platform / east (cluster removed): 0 added, 0 changed, 1 removed\n"
        "  - v1 ConfigMap apps/gone\n"
        "\n"
        "platform / hub: 0 added, 1 changed, 1 removed\n"
        "  ~ v1 ConfigMap apps/edit\n"
        "      --- main: v1 ConfigMap apps/edit\n"
        "      +++ working tree: v1 ConfigMap apps/edit\n"
        "      @@ -4,4 +4,4 @@\n"
        "         name: edit\n"
        "         namespace: apps\n"
        "       data:\n"
        "      -  v: old 0\n"
        "      +  v: new 0\n"
        "  - v1 ConfigMap apps/gone\n"
        "\n"
        "files no cluster applies: 0 added, 1 changed, 0 removed\n"
        "  ~ dist/CODEOWNERS\n"
        "      --- main: dist/CODEOWNERS\n"
        "      +++ working tree: dist/CODEOWNERS\n"
        "      @@ -1 +1 @@\n"
        "      -* @a\n"
        "      +* @b\n"
    )


def test_text_without_changes_says_so() -> None:
    empty = Report(ref="HEAD", commit=COMMIT, source=EMPTY, scope="no file changes")
    assert text(empty) == (
        "fluxplane diff: HEAD (0123456789ab) -> working tree\n"
        "base: nothing: it has no dist/ and no environments/ at HEAD\n"
        "read: no file changes\n"
        "no changes: the working tree synthesizes the same dist/ as HEAD\n"
    )


def test_markdown_has_risks_then_a_table_then_a_collapsible_section_per_cluster() -> None:
    out = markdown(report())
    lines = out.splitlines()
    assert lines[:14] == [
        "## fluxplane diff: `main` (0123456789ab) → working tree",
        "",
        "Base: dist/ as committed at `main`.",
        "",
        "### Risky changes",
        "",
        "- :warning: **platform / east** `cluster`: cluster removed: dist/platform/clusters/east/ is gone",
        "",
        "### Summary",
        "",
        "| Repository | Cluster | Added | Changed | Removed |",
        "|---|---|--:|--:|--:|",
        "| platform | east (removed) | 0 | 0 | 1 |",
        "| platform | hub | 0 | 1 | 1 |",
    ]
    assert out.count("<details>") == 3 and out.count("</details>") == 3
    assert "<summary><b>platform / hub</b>: 0 added, 1 changed, 1 removed</summary>" in lines
    assert "```diff" in lines and "-  v: old 0" in lines
    assert "run `fluxplane diff" not in out


def test_markdown_stays_under_the_limit_and_says_how_to_see_everything() -> None:
    # GIVEN a change whose diff is far longer than the limit
    big = report(value_lines=5000)
    # WHEN rendered for a comment of 4,000 characters
    out = markdown(big, limit=4000)
    # THEN it fits, keeps its structure, and says the diff was cut and how to see it all
    assert len(out) <= 4000
    assert out.count("<details>") == out.count("</details>") == 3
    assert "more lines" in out
    assert "_Diffs cut to fit a pull-request comment: run `fluxplane diff --base main` locally to see them all._" in out
    assert len(markdown(big)) <= 65_536


def test_clusters_leaving_eks_standard_support_are_warned_about_in_both_formats() -> None:
    line = "Kubernetes 1.33 left EKS standard support on 2026-07-29: a runs on paid extended support until ..."
    change = ObjectChange("platform", "a", ("", "ConfigMap", "x", "y"), None, {"kind": "ConfigMap"})
    report = Report(ref="main", commit="0" * 40, sections=[ClusterDiff("platform", "a", [change])], support=[line])
    assert f"warning: {line}\n" in text(report)
    shown = markdown(report)
    assert f"### Kubernetes versions\n\n- :warning: {line}\n\n### Summary" in shown
    assert shown.index("### Risky changes") < shown.index("### Kubernetes versions")
