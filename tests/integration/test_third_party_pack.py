"""A pack shipped as a distribution of its own (examples/fluxplane-pack-reloader), installed into an
isolated environment next to fluxplane: found through its entry point, listed, and synthesized."""

from __future__ import annotations

import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, load_documents

EXAMPLE = ROOT / "examples" / "fluxplane-pack-reloader"


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment that sees fluxplane (this project's environment) and the example pack."""
    folder = tmp_path_factory.mktemp("plugin-env")
    venv.EnvBuilder(with_pip=True).create(folder)
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # fluxplane and its dependencies come from this project's environment, read as a site directory
    # (so that its editable install resolves); nothing of the example is installed there.
    (Path(purelib) / "fluxplane-project.pth").write_text(
        "".join(f"import site; site.addsitedir({path!r})\n" for path in site.getsitepackages())
    )
    source = folder / "src"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(source)],
        capture_output=True,
        text=True,
        check=True,
    )
    return folder


def names(path: Path) -> set[str]:
    return {doc["metadata"]["name"] for doc in load_documents(path)}


def fluxplane(environment: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(environment / "bin" / "python"), "-m", "fluxplane", *args], capture_output=True, text=True, check=False
    )


@pytest.mark.slow
def test_the_installed_pack_is_listed_with_the_built_in_ones(environment: Path) -> None:
    result = fluxplane(environment, "packs", "list")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[1:]}
    assert rows["reloader"][:4] == ["reloader", "0.1.0", "controllers", "-"]
    assert {"metrics-server", "crossplane", "reloader"} <= set(rows)
    shown = fluxplane(environment, "packs", "show", "reloader")
    assert "watchGlobally  boolean" in shown.stdout and "HelmRelease flux-system/reloader" in shown.stdout
    assert "namespaces: kube-system (the add-on's: no app runs there)" in shown.stdout


@pytest.mark.slow
def test_the_installed_pack_reaches_synth_output(environment: Path, example_project: Path) -> None:
    staging = example_project / "environments" / "staging.yaml"
    staging.write_text(staging.read_text().replace("packs:\n", "packs:\n  reloader:\n    watchGlobally: false\n", 1))
    outdir = example_project / "out"
    result = fluxplane(environment, "--root", str(example_project), "synth", "--outdir", str(outdir))
    assert result.returncode == 0, result.stderr
    (release,) = [
        doc
        for doc in load_documents(outdir / "platform/infrastructure/controllers/reloader/base/reloader.yaml")
        if doc["kind"] == "HelmRelease"
    ]
    assert release["spec"]["chart"]["spec"]["chart"] == "reloader"
    # The catalogue base has the pack's defaults; staging's value is an overlay patch over it
    assert release["spec"]["values"] == {"reloader": {"watchGlobally": True, "ignoreSecrets": False}}
    (overlay,) = load_documents(outdir / "platform/infrastructure/controllers/reloader/staging/kustomization.yaml")
    (patch,) = overlay["patches"]
    assert yaml.safe_load(patch["patch"]) == [
        {"op": "replace", "path": "/spec/values/reloader/watchGlobally", "value": False}
    ]
    assert "reloader" in names(outdir / "platform/clusters/staging-usw2/infrastructure.yaml")
    assert "reloader" not in names(outdir / "platform/clusters/production-usw2/infrastructure.yaml")


@pytest.mark.slow
def test_without_the_distribution_the_pack_is_unknown(example_project: Path) -> None:
    staging = example_project / "environments" / "staging.yaml"
    staging.write_text(staging.read_text().replace("packs:\n", "packs:\n  reloader: {}\n", 1))
    result = subprocess.run(
        [sys.executable, "-m", "fluxplane", "--root", str(example_project), "synth", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "environments/staging.yaml: packs.reloader: unknown pack 'reloader' (installed: " in result.stderr
