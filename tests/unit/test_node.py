"""use_project_node: cdk8s runs on the project's pinned Node when it is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.node import use_project_node


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
