"""fluxplane.review.diff's resolve and run: a base and a working tree in, a Report out, nothing printed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from fluxplane.cli import main
from fluxplane.review import diff
from fluxplane.review.diff import DiffError
from fluxplane.review.diff.fleet import DistSnapshot
from fluxplane.review.diff.report import HEAD_LABEL, text
from tests.conftest import MINIMAL_ENV, FleetWriter
from tests.support.git import git


def _committed(write_fleet: FleetWriter) -> Path:
    """The minimal fleet (hub and staging-1), committed."""
    project = write_fleet()
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "first")
    return project


def test_resolve_names_the_commit_of_the_ref(write_fleet: FleetWriter) -> None:
    project = _committed(write_fleet)
    base = diff.resolve(project, "HEAD")
    assert (base.ref, base.commit) == ("HEAD", git(project, "rev-parse", "HEAD").strip())


def test_resolve_refuses_an_unknown_ref(write_fleet: FleetWriter) -> None:
    project = _committed(write_fleet)
    with pytest.raises(DiffError, match=r"^--base: unknown Git ref 'x'$"):
        diff.resolve(project, "x")


def test_run_reports_a_new_cluster_and_prints_nothing(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a committed fleet, and a second cluster in the working tree
    project = _committed(write_fleet)
    base = diff.resolve(project, "HEAD")
    clusters = [*MINIMAL_ENV["clusters"], {"name": "staging-2", "region": "us-west-2"}]
    write_fleet(envs={"staging": {"clusters": clusters}})

    # WHEN the working tree is compared with HEAD
    report = diff.run(project, base)

    # THEN the report is of HEAD's commit and has the new cluster's section, and nothing was printed
    assert (report.ref, report.commit, report.source) == ("HEAD", base.commit, "synthesized")
    assert [(section.cluster, section.status) for section in report.sections if section.status] == [
        ("staging-2", "added")
    ]
    assert capsys.readouterr() == ("", "")


def test_run_compares_with_the_dist_committed_at_the_base_and_says_so(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a fleet whose dist/ is committed with its definition
    project = write_fleet()
    assert main(["--root", str(project), "synth"]) == 0
    git(project, "init", "-q")
    git(project, "add", "environments", "dist")
    git(project, "commit", "-qm", "first")

    def refused(*args: object) -> None:
        raise AssertionError("the base was synthesized")

    monkeypatch.setattr("fluxplane.review.diff.trees.synthesize", refused)
    # WHEN the working tree, unchanged, is compared with HEAD
    report = diff.run(project, diff.resolve(project, "HEAD"))
    # THEN the base is the committed dist/, which the report's header says, and nothing was built
    assert (report.source, report.sections, report.files) == ("committed", [], [])
    assert text(report).splitlines()[1:3] == ["base: dist/ as committed at HEAD", "read: no file changes"]


class Counted(Mapping[str, str]):
    """A tree's files that count how often all their paths are read."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.reads = 0

    def __getitem__(self, path: str) -> str:
        return self.files[path]

    def __iter__(self) -> Iterator[str]:
        self.reads += 1
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)


def test_compare_reads_each_tree_a_few_times_however_many_clusters_it_has() -> None:
    # GIVEN two trees of 200 clusters, the same
    files = {f"platform/clusters/cluster-{number}/namespace.yaml": "kind: Namespace\n" for number in range(200)}
    before, after = Counted(files), Counted(dict(files))
    # WHEN compared
    report = diff.compare(DistSnapshot("HEAD", before), DistSnapshot(HEAD_LABEL, after), "HEAD", "0" * 40)
    # THEN nothing changes, and each tree's paths were read a few times, not once for each cluster
    assert (report.sections, report.files, report.risks) == ([], [], [])
    assert before.reads <= 3 and after.reads <= 3


def test_compare_counts_the_clusters_of_both_trees_when_one_is_added_and_one_removed() -> None:
    # GIVEN clusters a and b, then a and c: the file maps differ in the files of b and c alone
    before = {
        f"platform/clusters/{name}/namespace.yaml": f"kind: Namespace\nmetadata:\n  name: {name}\n" for name in "ab"
    }
    after = {
        f"platform/clusters/{name}/namespace.yaml": f"kind: Namespace\nmetadata:\n  name: {name}\n" for name in "ac"
    }
    report = diff.compare(DistSnapshot("HEAD", before), DistSnapshot(HEAD_LABEL, after), "HEAD", "0" * 40)
    # THEN the three clusters are counted, b's removal is flagged and c is added
    assert report.scope.endswith("2 of 3 clusters; 0 folders built")
    assert [(risk.cluster, risk.subject) for risk in report.risks if risk.message.startswith("cluster removed")] == [
        ("b", "cluster")
    ]
    assert [(section.cluster, section.status) for section in report.sections] == [("b", "removed"), ("c", "added")]
