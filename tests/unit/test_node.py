"""use_project_node and require_node: cdk8s runs on the project's pinned Node when it is installed, or says why not."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from fluxplane.node import NodeError, require_node, use_project_node
from tests.conftest import FleetWriter


def test_points_jsii_at_the_project_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    node = tmp_path / "node_modules" / ".bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_text("")
    monkeypatch.delenv("JSII_NODE", raising=False)
    use_project_node(tmp_path)
    import os

    assert os.environ["JSII_NODE"] == str(node.resolve())


def test_keeps_a_choice_already_made_and_does_nothing_without_node_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.setenv("JSII_NODE", "/opt/node/bin/node")
    (tmp_path / "node_modules" / ".bin").mkdir(parents=True)
    (tmp_path / "node_modules" / ".bin" / "node").write_text("")
    use_project_node(tmp_path)
    assert os.environ["JSII_NODE"] == "/opt/node/bin/node"
    monkeypatch.delenv("JSII_NODE")
    use_project_node(tmp_path / "elsewhere")
    assert "JSII_NODE" not in os.environ


def _fake_node(folder: Path, version: str) -> Path:
    node = folder / "node"
    node.write_text(f"#!/bin/sh\necho {version}\n")
    node.chmod(node.stat().st_mode | stat.S_IEXEC)
    return node


@pytest.fixture
def bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder without node_modules, no JSII_NODE, and a PATH holding only an empty folder."""
    for name in (
        "JSII_NODE",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION",
        "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION",
    ):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    return tmp_path


def test_no_node_is_one_clear_error(bare: Path) -> None:
    with pytest.raises(
        NodeError, match=r"^Node.js not found: cdk8s runs its JavaScript on Node.js; install Node.js 22"
    ):
        require_node(bare)


def test_an_end_of_life_node_is_one_warning_and_silences_the_banner(bare: Path) -> None:
    node = _fake_node(bare / "bin", "v20.20.2")
    warning = require_node(bare)
    assert warning is not None
    assert warning.startswith(
        f"warning: Node.js v20.20.2 ({node}) is past its end of life for cdk8s's runtime (jsii); "
    )
    assert os.environ["JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"] == "20"


def test_a_supported_node_says_nothing(bare: Path) -> None:
    _fake_node(bare / "bin", "v22.11.0")
    assert require_node(bare) is None
    assert "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION" not in os.environ


def test_a_node_that_does_not_start_is_refused(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JSII_NODE", str(bare / "no-such-node"))
    with pytest.raises(NodeError, match=r"^Node.js JSII_NODE=.*/no-such-node does not start \(FileNotFoundError"):
        require_node(bare)


def test_synth_without_node_exits_2_with_one_line(bare: Path, write_fleet: FleetWriter) -> None:
    root = write_fleet()
    env = {**os.environ, "PATH": str(bare / "bin")}
    done = subprocess.run(
        [sys.executable, "-m", "fluxplane", "--root", str(root), "synth"],
        cwd=bare,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("Node.js not found: ")
    assert done.stderr.count("\n") == 1
    assert not (root / "dist").exists()
