"""``fluxplane cdk8s ARGS`` (fluxplane.commands.cdk8s): cdk8s-cli run in the project folder, its exit code the
command's."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from fluxplane.commands import cdk8s
from fluxplane.errors import ConfigError
from tests.support.commands import parse


def test_everything_after_cdk8s_is_cdk8s_cli_s(tmp_path: Path) -> None:
    args = parse(cdk8s, "cdk8s", "synth", "--stdout", root=tmp_path)
    assert (args.command, args.args, args.root) == ("cdk8s", ["synth", "--stdout"], tmp_path)


def test_cdk8s_cli_runs_in_the_project_and_its_exit_code_is_the_command_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN cdk8s-cli's command line, and a cdk8s-cli that exits 3
    monkeypatch.setattr(cdk8s, "cdk8s_command", lambda args: (["cdk8s", *args], {"PATH": "/node/bin"}))
    runs: list[dict[str, Any]] = []

    def run(command: list[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
        runs.append({"command": command, **options})
        return subprocess.CompletedProcess(command, 3)

    monkeypatch.setattr(subprocess, "run", run)

    # WHEN `fluxplane cdk8s synth` runs THEN cdk8s-cli ran once, in the project, on fluxplane's Node.js
    assert cdk8s.run(parse(cdk8s, "cdk8s", "synth", root=tmp_path)) == 3
    assert runs == [{"command": ["cdk8s", "synth"], "cwd": tmp_path, "env": {"PATH": "/node/bin"}, "check": False}]


@pytest.mark.parametrize(("make", "what"), [(False, "no such project folder"), (True, "not a folder")])
def test_a_root_that_is_no_folder_is_bad_input(tmp_path: Path, make: bool, what: str) -> None:
    root = tmp_path / "project"
    if make:
        root.write_text("")
    with pytest.raises(ConfigError) as caught:
        cdk8s.run(parse(cdk8s, "cdk8s", "synth", root=root))
    assert caught.value.problems == (f"{root}: {what}; --root names the project folder, the one holding cdk8s.yaml",)


def test_the_command_says_nothing_of_what_it_leaves() -> None:
    # the app cdk8s-cli runs is fluxplane synth, which says it
    assert cdk8s.stopped(parse(cdk8s, "cdk8s", "synth")) is None
