"""fluxplane.commands.diff: its options, and the report it prints."""

from __future__ import annotations

import pytest

from fluxplane.commands import diff
from fluxplane.review.diff import DiffError
from tests.conftest import FleetWriter
from tests.support.commands import parse
from tests.support.git import git


def test_defaults_and_what_a_signal_leaves() -> None:
    args = parse(diff, "diff")
    assert (args.base, args.format) == ("HEAD", "text")
    assert (diff.LOCKS_PROJECT, diff.stopped(args)) == (False, "nothing written")


def test_an_unknown_base_is_refused_before_anything_prints(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_fleet()
    git(project, "init", "-q")
    with pytest.raises(DiffError, match=r"^--base: unknown Git ref 'nope'$"):
        diff.run(parse(diff, "diff", "--base", "nope", root=project))
    assert capsys.readouterr() == ("", "")


def test_markdown_report_of_no_change(write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a committed fleet, unchanged
    project = write_fleet()
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "first")
    commit = git(project, "rev-parse", "HEAD").strip()
    # WHEN diffed as Markdown THEN the report opens with the base
    assert diff.run(parse(diff, "diff", "--format", "markdown", root=project)) == 0
    assert commit[:12] in capsys.readouterr().out.splitlines()[0]
