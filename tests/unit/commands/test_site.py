"""fluxplane.commands.site: where the pages go, the day EKS support is judged on, and bad input in one line."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

import fluxplane.review.site as library
from fluxplane.cli import EXIT_BAD_INPUT, main
from fluxplane.commands import site
from tests.conftest import ROOT
from tests.support.commands import parse
from tests.support.git import git


def test_the_folder_defaults_below_the_project_and_the_day_to_today() -> None:
    args = parse(site, "site")
    assert (args.folder, args.base, args.as_of) == (None, None, None)
    assert site.DEFAULT_FOLDER == library.DEFAULT_FOLDER
    args = parse(site, "site", "out", "--as-of", "2027-03-01", "--base", "main")
    assert (args.folder, args.base, args.as_of) == (Path("out"), "main", date(2027, 3, 1))
    assert (site.LOCKS_PROJECT, site.NAMES) == (False, ("site",))


def test_a_bad_day_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(site, "site", "--as-of", "March")
    assert "--as-of: expected a date as YYYY-MM-DD, got 'March'" in capsys.readouterr().err


def test_run_writes_the_pages_and_says_where(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(ROOT), "site", str(tmp_path / "pages"), "--as-of", "2026-11-28"]) == 0
    out = capsys.readouterr().out
    assert out == f"wrote 11 files to {tmp_path / 'pages'}; open {tmp_path / 'pages' / 'index.html'}\n"
    assert (tmp_path / "pages" / "clusters" / "hub.html").is_file()


def test_no_dist_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "environments", tmp_path / "environments")
    assert main(["--root", str(tmp_path), "site"]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.splitlines() == [
        f"{tmp_path / 'dist'}: no such folder; run 'fluxplane synth' first, the pages show the dist/ it writes"
    ]
    assert not (tmp_path / "site").exists()


def test_an_unknown_base_is_one_line_and_exit_2_before_anything_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a project in Git with no dist/ (so a load would fail with another line)
    (tmp_path / "environments").mkdir()
    (tmp_path / "environments" / "base.yaml").write_text("a: 1\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "first")
    # WHEN the pages are asked for against a ref that is not there THEN the ref is named, nothing written
    assert main(["--root", str(tmp_path), "site", "--base", "no-such-ref"]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.splitlines() == ["--base: unknown Git ref 'no-such-ref'"]
    assert not (tmp_path / "site").exists()


def test_stopped_says_what_the_folder_may_hold() -> None:
    assert site.stopped(parse(site, "site")) == "the site folder may hold some pages of this run and some of the last"
