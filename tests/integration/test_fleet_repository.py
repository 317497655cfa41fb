"""A fleet repository of one's own, as a new user makes it (docs/getting-started.md): fluxplane built as a wheel and
installed into a fresh venv, ``fluxplane init``, the repository installed as init says (the wheel's folder
standing in for the package index), ``fluxplane synth``, ``validate`` with no CRD folder, the repository's own
tests green at the first run, ``aws-setup`` passing cfn-lint, a new sealing key pair and one ``seal`` for two
clusters; with no network and no Node.js but the one fluxplane installs (a ``node`` first on PATH fails if it is
ever run); and ``fluxplane cdk8s synth`` there, which fetches cdk8s-cli from the npm registry once."""

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
    python = _venv(venv, env)
    _run([*pip, "--python", str(python), "install", "--quiet", "--no-deps", str(wheel)], work, env)
    return venv


def _venv(path: Path, env: dict[str, str]) -> Path:
    """A venv at ``path`` that reads fluxplane's dependencies, pytest and syrupy from this one (no network); its
    python."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(path)], path.parent, env)
    python = path / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], path, env).strip())
    # where this interpreter finds fluxplane's dependencies (its site-packages, and any folder PYTHONPATH adds),
    # but a source tree of fluxplane
    found = [sysconfig.get_path("purelib"), *(entry for entry in sys.path if Path(entry).is_dir())]
    folders = dict.fromkeys(entry for entry in found if not (Path(entry) / "fluxplane" / "__init__.py").is_file())
    (site / "dependencies.pth").write_text("".join(f"{entry}\n" for entry in folders))
    return python


def _user(tmp_path: Path) -> dict[str, str]:
    """A user's environment: no Python or fluxplane settings, no JSII_NODE, an empty cache folder, no index, and a
    ``node`` first on PATH that fails whenever it runs: only the Node.js fluxplane installs may."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "PYTEST", "FLUXPLANE", "JSII_")) and key != "CDK8S_OUTDIR"
    }
    stub = tmp_path / "no-node"
    stub.mkdir(exist_ok=True)
    (stub / "node").write_text("#!/bin/sh\necho 'the node on PATH ran' >&2\nexit 1\n")
    (stub / "node").chmod(0o755)
    env.update(
        PIP_NO_INDEX="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        PATH=f"{stub}{os.pathsep}{env['PATH']}",
    )
    return env


def test_the_journey_from_the_wheel_to_a_green_pull_request(fresh: Path, tmp_path: Path) -> None:
    env = _user(tmp_path)
    python = str(fresh / "bin" / "python")
    # the fluxplane that runs is the wheel's, not this source tree's, and the wheel, built without Git, says
    # its version is unknown
    where = _run([python, "-c", "import fluxplane; print(fluxplane.__file__)"], tmp_path, env)
    assert where.startswith(str(fresh)), where
    assert _run([str(fresh / "bin" / "fluxplane"), "--version"], tmp_path, env) == "fluxplane 0.0.0\n"
    # WHEN init writes a repository
    repository = tmp_path / "fleet"
    done = subprocess.run(
        [str(fresh / "bin" / "fluxplane"), "init", str(repository)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    # THEN it pins that fluxplane, found beside the wheel it was installed from, and makes a Git repository
    wheels = fresh.parent / "wheels"
    assert 'dependencies = ["fluxplane==0.0.0"]' in (repository / "pyproject.toml").read_text()
    assert done.stderr.startswith(f"note: fluxplane was installed from {wheels}/fluxplane-0.0.0-py3-none-any.whl")
    assert (repository / ".git").is_dir()
    next_line = done.stdout.splitlines()[-1]
    assert f".venv/bin/pip install -e '.[test]' --find-links {wheels} && " in next_line
    # AND the repository installs as the next line says (offline here: no index, no build isolation)
    venv = _venv(repository / ".venv", env)
    pip = [sys.executable, "-m", "pip", "--python", str(venv), "install", "--quiet", "--no-build-isolation"]
    _run([*pip, "-e", ".[test]", "--find-links", str(wheels)], repository, env)
    fluxplane = str(repository / ".venv" / "bin" / "fluxplane")
    assert _run([fluxplane, "--version"], repository, env) == "fluxplane 0.0.0\n"
    _run([fluxplane, "synth"], repository, env)
    cluster = repository / "dist" / "platform" / "clusters" / "staging-usw2"
    assert (cluster / "kustomization.yaml").is_file()
    # the repository's own cdk8s chart ran in the wheel's cdk8s, for the cluster that names it
    assert "cluster: staging-usw2" in (cluster / "manifests" / "configs" / "charts" / "fleet-info.yaml").read_text()
    # AND validate checks it against the CRDs the wheel ships (no CRD folder, no network)
    checked = _run([fluxplane, "validate"], repository, env)
    assert checked.endswith(": valid\n") and "no schema" not in checked, checked
    # AND the repository's first test run passes with no other step (its schema test too, not skipped), recording
    # a small snapshot per cluster
    pytest_ = [str(venv), "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    first = _run(pytest_, repository, env)
    assert "5 passed" in first and "2 snapshots generated" in first and "skipped" not in first, first
    snapshots = repository / "tests" / "__snapshots__" / "test_fleet"
    assert sorted(path.name for path in snapshots.iterdir()) == [
        "test_what_each_cluster_runs[hub].yaml",
        "test_what_each_cluster_runs[staging-usw2].yaml",
    ]
    recorded = (snapshots / "test_what_each_cluster_runs[staging-usw2].yaml").read_text()
    assert "HelmRelease flux-system/metrics-server: metrics-server " in recorded
    assert "- ConfigMap kube-public/fleet-info" in recorded
    lines = sum(len(path.read_text().splitlines()) for path in snapshots.iterdir())
    dist_lines = sum(len(path.read_text().splitlines()) for path in (repository / "dist").rglob("*") if path.is_file())
    assert lines * 10 < dist_lines, (lines, dist_lines)
    # AND the next run compares with them
    assert "2 snapshots passed" in _run(pytest_, repository, env)
    # AND a change of what a cluster runs fails its snapshot and the up-to-date test until synth and review
    staging = repository / "environments" / "staging.yaml"
    staging.write_text(staging.read_text() + "packs:\n  metrics-server:\n    version: 3.12.0\n")
    done = subprocess.run(pytest_, cwd=repository, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    failed = sorted(line for line in done.stdout.splitlines() if line.startswith("FAILED"))
    assert [line.split(" ")[1] for line in failed] == [
        "tests/test_fleet.py::test_dist_is_synthesized_from_environments",
        "tests/test_fleet.py::test_what_each_cluster_runs[staging-usw2]",
    ], done.stdout
    _run([fluxplane, "synth"], repository, env)
    _run([*pytest_, "--snapshot-update"], repository, env)
    assert (
        "HelmRelease flux-system/metrics-server: metrics-server 3.12.0"
        in (snapshots / "test_what_each_cluster_runs[staging-usw2].yaml").read_text()
    )
    # AND the AWS setup the definition needs passes cfn-lint
    _run([fluxplane, "aws-setup"], repository, env)
    templates = sorted((repository / "aws-setup").glob("*.yaml"))
    assert templates
    lint = subprocess.run(
        [str(Path(sys.executable).with_name("cfn-lint")), *map(str, templates)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    # AND a new key pair (its private key kept out of the project), then one seal for two clusters
    key = tmp_path / "sealing.key"
    _run([fluxplane, "sealing-key", "--private-key-out", str(key)], repository, env)
    assert key.is_file() and b"PRIVATE KEY" not in b"".join(
        path.read_bytes() for path in repository.rglob("*") if path.is_file() and ".git" not in path.parts
    )
    sealed = ["--cluster", "hub", "--cluster", "staging-usw2", "--namespace", "default", "--name", "api-token"]
    _run([fluxplane, "seal", *sealed, "--from-literal", "token=s3cr3t"], repository, env)
    for cluster in ("hub", "staging-usw2"):
        text = (repository / "environments" / "secrets" / cluster / "default" / "api-token.yaml").read_text()
        assert "kind: SealedSecret" in text and "s3cr3t" not in text


def test_the_wheel_ships_the_packs_iam_policies(fresh: Path, tmp_path: Path) -> None:
    # GIVEN fluxplane installed from its wheel WHEN its packs' IAM policies (package data) are listed and loaded
    code = (
        "from importlib.resources import files; from fluxplane.packs.policies import load_policy; "
        "names = sorted(f'{d.name}/{p.name}' for d in files('fluxplane.packs').iterdir() if d.is_dir() "
        "for p in d.iterdir() if p.name.endswith('.json')); "
        "[load_policy(n.split('/')[1].removesuffix('.json'), 'fluxplane.packs.' + n.split('/')[0]) for n in names]; "
        "print(names)"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "PYTEST", "FLUXPLANE"))}
    shipped = _run([str(fresh / "bin" / "python"), "-c", code], tmp_path, env).strip()
    # THEN every policy of the source tree's packs is there, each in its pack's folder, and each reads as JSON
    packs = ROOT / "src" / "fluxplane" / "packs"
    source = sorted(path.relative_to(packs).as_posix() for path in packs.glob("*/*.json"))
    assert source and shipped == repr(source)


def test_cdk8s_synth_in_the_new_repository_writes_what_fluxplane_synth_writes(fresh: Path, tmp_path: Path) -> None:
    # GIVEN a new repository, and a `node` first on PATH that must not run
    env = _user(tmp_path)
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
