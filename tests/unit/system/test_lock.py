"""One changing command at a time per project: the lock synth, seal and the edit commands take."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fluxplane.errors import ConfigError
from fluxplane.system.lock import project_lock


def test_a_second_holder_waits_until_the_first_is_done(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    order: list[str] = []
    with project_lock(tmp_path):
        second = threading.Thread(target=lambda: _hold(tmp_path, order))
        second.start()
        time.sleep(0.3)
        order.append("first done")
    second.join(timeout=10)
    assert order == ["first done", "second"]
    assert capsys.readouterr().err == f"{tmp_path}: waiting for another fluxplane command in this project to finish\n"


def _hold(root: Path, order: list[str]) -> None:
    with project_lock(root):
        order.append("second")


def test_taking_the_lock_creates_nothing(tmp_path: Path) -> None:
    with project_lock(tmp_path):
        pass
    assert list(tmp_path.iterdir()) == []


def test_an_edit_command_waits_for_the_command_that_holds_the_project(example_project: Path) -> None:
    # GIVEN a project locked by a running command
    with project_lock(example_project):
        # WHEN an edit command starts
        command = [sys.executable, "-m", "fluxplane", "--root", str(example_project)]
        process = subprocess.Popen(
            [*command, "new-cluster", "late-1", "--env", "staging", "--region", "us-east-2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # THEN it waits, saying so, and changes nothing while the lock is held
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        assert process.poll() is None, process.communicate()
        assert "late-1" not in (example_project / "environments" / "staging.yaml").read_text()
    # WHEN the lock is released THEN it makes its change
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert err.startswith(f"{example_project}: waiting for another fluxplane command")
    assert "- name: late-1" in (example_project / "environments" / "staging.yaml").read_text()


def test_a_root_that_is_a_file_or_missing_is_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "fleet.yaml").write_text("mine\n")
    for root, what in ((tmp_path / "fleet.yaml", "not a folder"), (tmp_path / "missing", "no such project folder")):
        with pytest.raises(ConfigError) as refused, project_lock(root):
            raise AssertionError("the command ran")
        assert refused.value.problems == (
            f"{root}: {what}; --root names the project folder, the one holding environments/",
        )
