"""fluxplane.commands.versions: the report of the project, as text or Markdown."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fluxplane.commands import versions
from fluxplane.review.versions import markdown, project_versions, text
from tests.conftest import FleetWriter
from tests.support.commands import parse


def test_run_prints_the_report_in_either_format(write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_fleet()
    clusters = project_versions(root, datetime.now(UTC).date())
    assert versions.run(parse(versions, "versions", root=root)) == 0
    assert capsys.readouterr().out == text(clusters)
    assert versions.run(parse(versions, "versions", "--format", "markdown", root=root)) == 0
    assert capsys.readouterr().out == markdown(clusters)


def test_versions_writes_nothing() -> None:
    args = parse(versions, "versions")
    assert (versions.LOCKS_PROJECT, versions.stopped(args), args.format) == (False, "nothing written", "text")
