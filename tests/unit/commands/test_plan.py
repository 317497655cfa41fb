"""fluxplane.commands.plan: its options, the formats it prints, and the exit code --fail-on gates with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fluxplane.cli import EXIT_GATED, main
from fluxplane.commands import plan
from fluxplane.review.diff import DiffError
from fluxplane.review.plan.model import Plan, PlanBase, ResourceChange
from tests.conftest import FleetWriter
from tests.support.commands import parse
from tests.support.git import git


def test_defaults_and_what_a_signal_leaves() -> None:
    args = parse(plan, "plan")
    assert (args.base, args.format, args.fail_on) == ("HEAD", "text", [])
    assert (plan.LOCKS_PROJECT, plan.stopped(args)) == (False, "nothing written")
    assert parse(plan, "plan", "--fail-on", "replace, delete").fail_on == ["replace", "delete"]
    assert EXIT_GATED == 3


def test_an_unknown_gate_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["plan", "--fail-on", "replace,explode"])
    assert stopped.value.code == 2
    assert (
        "argument --fail-on: expected a comma-separated list of create, update, replace, delete, manage, data, "
        "destructive, "
        "got 'replace,explode'" in capsys.readouterr().err
    )


def test_a_folder_outside_git_names_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(tmp_path), "plan"]) == 2
    assert capsys.readouterr().err == f"{tmp_path}: not a Git repository (fluxplane plan compares with a Git ref)\n"


def test_an_unknown_base_is_refused_before_anything_prints(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_fleet()
    git(project, "init", "-q")
    with pytest.raises(DiffError, match=r"^--base: unknown Git ref 'nope'$"):
        plan.run(parse(plan, "plan", "--base", "nope", root=project))
    assert capsys.readouterr() == ("", "")


@pytest.fixture
def replacing(monkeypatch: pytest.MonkeyPatch, write_fleet: FleetWriter) -> Path:
    """A committed project whose plan replaces one data-bearing resource (the library's plan stands in)."""
    project = write_fleet()
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "first")
    change = ResourceChange(
        "replace", "1", "us-east-1", "hub", "rds/v1", "Instance", "RDS instance", "db", "src", data=True
    )
    made = Plan(PlanBase("HEAD", "0" * 40, "committed"), [change])
    monkeypatch.setattr("fluxplane.review.plan.run", lambda *args, **kwargs: made)
    return project


def test_fail_on_exits_3_when_the_plan_holds_what_it_names(replacing: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN gated on deletions THEN the plan is printed and the command succeeds
    assert plan.run(parse(plan, "plan", "--fail-on", "delete,create", root=replacing)) == 0
    assert "replaces RDS instance db" in capsys.readouterr().out
    # AND gated on replacements or data THEN it exits 3, after printing the plan, and says why
    assert plan.run(parse(plan, "plan", "--fail-on", "data,replace", root=replacing)) == EXIT_GATED
    out, err = capsys.readouterr()
    assert out.startswith("fluxplane plan: HEAD")
    assert err.splitlines()[-1] == "plan holds what --fail-on names: data, replace"


def test_json_and_markdown_formats(replacing: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert plan.run(parse(plan, "plan", "--format", "json", root=replacing)) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["replace"] == 1
    assert plan.run(parse(plan, "plan", "--format", "markdown", root=replacing)) == 0
    assert capsys.readouterr().out.startswith("## fluxplane plan: `HEAD`")
