"""A fleet repository of one's own, as a new user makes it: fluxplane built as a wheel and installed into a fresh
venv, ``fluxplane init``, ``fluxplane synth``, then the new repository's own tests, with no network, on the
Node.js and the CRD schemas the installation brings; and ``fluxplane cdk8s synth`` there, which fetches cdk8s-cli
from the npm registry once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.files import read_tree

pytestmark = pytest.mark.slow


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding only fluxplane's wheel; its dependencies are read from this venv (there is no network)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    pip = [sys.executable, "-m", "pip"]
    _run(
        [*pip, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(work / "wheels"), str(source)],
        work,
        env,
    )
    [wheel] = (work / "wheels").glob("fluxplane-*.whl")
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], work, env)
    python = venv / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], work, env).strip())
    # where this interpreter finds fluxplane's dependencies (its site-packages, and any folder PYTHONPATH adds),
    # but a source tree of fluxplane
    found = [sysconfig.get_path("purelib"), *(path for path in sys.path if Path(path).is_dir())]
    folders = dict.fromkeys(path for path in found if not (Path(path) / "fluxplane" / "__init__.py").is_file())
    (site / "dependencies.pth").write_text("".join(f"{path}\n" for path in folders))
    _run([*pip, "--python", str(python), "install", "--quiet", "--no-deps", str(wheel)], work, env)
    return venv


def _user(tmp_path: Path) -> dict[str, str]:
    """A user's environment: no Python or fluxplane settings, no JSII_NODE, an empty cache folder, no index."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "PYTEST", "FLUXPLANE", "JSII_")) and key != "CDK8S_OUTDIR"
    }
    env.update(PIP_NO_INDEX="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    return env


def test_init_synth_and_the_new_repository_tests_pass_from_the_wheel(fresh: Path, tmp_path: Path) -> None:
    env = _user(tmp_path)
    python = str(fresh / "bin" / "python")
    # the fluxplane that runs is the wheel's, not this source tree's
    where = _run([python, "-c", "import fluxplane; print(fluxplane.__file__)"], tmp_path, env)
    assert where.startswith(str(fresh)), where
    repository = tmp_path / "fleet"
    _run([str(fresh / "bin" / "fluxplane"), "init", str(repository)], tmp_path, env)
    _run([str(fresh / "bin" / "fluxplane"), "synth"], repository, env)
    cluster = repository / "dist" / "platform" / "clusters" / "staging-usw2"
    assert (cluster / "kustomization.yaml").is_file()
    # the repository's own cdk8s chart ran in the wheel's cdk8s, for the cluster that names it
    assert "cluster: staging-usw2" in (cluster / "manifests" / "configs" / "charts" / "fleet-info.yaml").read_text()
    # the repository's tests: snapshots written once, then everything passes against them
    pytest_ = [python, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    _run([*pytest_, "--snapshot-update"], repository, env)
    out = _run(pytest_, repository, env)
    files = sum(1 for path in (repository / "dist").rglob("*") if path.is_file())
    # (every test ran: the schema test too, against the CRDs the wheel ships)
    assert f"{files + 3} passed in" in out, out
    assert f"{files} snapshots passed" in out, out
    # AND a change to the definition fails the snapshot and the up-to-date tests until synth and review
    staging = repository / "environments" / "staging.yaml"
    staging.write_text(staging.read_text() + "packs:\n  metrics-server:\n    replicas: 3\n")
    done = subprocess.run(pytest_, cwd=repository, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "FAILED tests/test_fleet.py::test_dist_is_synthesized_from_environments" in done.stdout
    assert "FAILED tests/test_fleet.py::test_every_synthesized_file_matches_its_snapshot[" in done.stdout


def test_the_wheel_ships_the_packs_iam_policies(fresh: Path, tmp_path: Path) -> None:
    # GIVEN fluxplane installed from its wheel WHEN its packs' IAM policies (package data) are listed and loaded
    code = (
        "from importlib.resources import files; from fluxplane.packs.policies import load_policy; "
        "names = sorted(p.name for p in files('fluxplane.packs.policies').iterdir() if p.name.endswith('.json')); "
        "[load_policy(name.removesuffix('.json')) for name in names]; print(names)"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "PYTEST", "FLUXPLANE"))}
    shipped = _run([str(fresh / "bin" / "python"), "-c", code], tmp_path, env).strip()
    # THEN every policy of the source tree is there, and each reads as JSON
    source = sorted(path.name for path in (ROOT / "src" / "fluxplane" / "packs" / "policies").glob("*.json"))
    assert shipped == repr(source)


def test_cdk8s_synth_in_the_new_repository_writes_what_fluxplane_synth_writes(fresh: Path, tmp_path: Path) -> None:
    # GIVEN a new repository, and a `node` first on PATH that must not run
    env = _user(tmp_path)
    path = tmp_path / "path"
    path.mkdir()
    (path / "node").write_text("#!/bin/sh\necho 'not this node' >&2\nexit 1\n")
    (path / "node").chmod(0o755)
    env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    repository = tmp_path / "fleet"
    _run([str(fresh / "bin" / "fluxplane"), "init", str(repository)], tmp_path, env)
    # WHEN `fluxplane cdk8s synth` runs there, as its README says, and `fluxplane synth` in a copy
    copy = tmp_path / "copy"
    shutil.copytree(repository, copy)
    _run([str(fresh / "bin" / "fluxplane"), "cdk8s", "synth"], repository, env)
    _run([str(fresh / "bin" / "fluxplane"), "synth"], copy, env)
    # THEN cdk8s-cli ran the repository's app (the wheel's fluxplane, cdk8s.yaml's app) into the same dist/
    assert read_tree(repository / "dist") == read_tree(copy / "dist")
    assert (repository / ".cdk8s.out").is_dir()
