"""``fluxplane diff`` on bad input: one clear line and exit 2."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fluxplane.cli import main
from tests.conftest import FleetWriter
from tests.support.git import git


def test_a_folder_outside_git_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(tmp_path), "diff"]) == 2
    assert capsys.readouterr().err == f"{tmp_path}: not a Git repository (fluxplane diff compares with a Git ref)\n"


def test_an_unknown_base_exits_2(write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]) -> None:
    project = write_fleet()
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "first")
    assert main(["--root", str(project), "diff", "--base", "x"]) == 2
    assert capsys.readouterr().err == "--base: unknown Git ref 'x'\n"


def test_a_base_that_does_not_load_names_the_ref(write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a committed definition whose cluster has a bad region, fixed in the working tree
    project = write_fleet(envs={"staging": {"clusters": [{"name": "staging-1", "region": "mars"}]}})
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "broken")
    write_fleet()
    # WHEN diffed against it THEN each problem is prefixed with the ref, and the worktree is gone
    assert main(["--root", str(project), "diff"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err and all(line.startswith("HEAD: environments/staging.yaml: clusters[0].region: ") for line in err)
    listed = subprocess.run(["git", "worktree", "list"], cwd=project, capture_output=True, text=True, check=True)
    assert listed.stdout.count("\n") == 1
