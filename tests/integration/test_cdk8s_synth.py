"""``cdk8s synth`` (cdk8s-cli through cdk8s.yaml, run by ``fluxplane cdk8s``) and ``fluxplane synth`` write the same
tree. cdk8s-cli comes from the npm registry the first time, then from npm's cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.files import read_tree

CDK8S = [sys.executable, "-m", "fluxplane", "cdk8s"]


@pytest.mark.slow
def test_cdk8s_synth_and_fluxplane_synth_write_identical_trees(tmp_path: Path) -> None:
    # GIVEN two copies of the project: the definition and cdk8s.yaml
    env = {key: value for key, value in os.environ.items() if key != "CDK8S_OUTDIR"}
    copies = []
    for name in ("cdk8s", "fluxplane"):
        project = tmp_path / name
        shutil.copytree(ROOT / "environments", project / "environments")
        shutil.copy(ROOT / "cdk8s.yaml", project / "cdk8s.yaml")
        copies.append(project)
    # WHEN one is synthesized by cdk8s-cli and the other by fluxplane
    subprocess.run([*CDK8S, "synth"], cwd=copies[0], env=env, check=True, capture_output=True)
    subprocess.run(
        [sys.executable, "-m", "fluxplane", "synth"], cwd=copies[1], env=env, check=True, capture_output=True
    )
    # THEN the trees are byte for byte the same, and the same as the committed dist/
    cdk8s_tree = read_tree(copies[0] / "dist")
    assert cdk8s_tree == read_tree(copies[1] / "dist")
    assert cdk8s_tree == read_tree(ROOT / "dist")


@pytest.mark.slow
def test_cdk8s_synth_never_loses_dist(tmp_path: Path) -> None:
    # GIVEN a project with its dist/ written, run through cdk8s.yaml
    env = {key: value for key, value in os.environ.items() if key != "CDK8S_OUTDIR"}
    project = tmp_path / "project"
    shutil.copytree(ROOT / "environments", project / "environments")
    shutil.copy(ROOT / "cdk8s.yaml", project / "cdk8s.yaml")
    subprocess.run([*CDK8S, "synth"], cwd=project, env=env, check=True, capture_output=True)
    written = read_tree(project / "dist")
    assert written == read_tree(ROOT / "dist")
    # (cdk8s-cli lists the manifests from its own folder, a copy)
    assert read_tree(project / ".cdk8s.out") == written
    # WHEN `cdk8s synth --stdout` runs THEN it prints the manifests and dist/ is as it was
    printed = subprocess.run(
        [*CDK8S, "synth", "--stdout"], cwd=project, env=env, check=True, capture_output=True, text=True
    )
    assert "kind: Kustomization" in printed.stdout
    assert "name: staging-usw2" in printed.stdout
    assert read_tree(project / "dist") == written
    # WHEN a broken definition is synthesized through cdk8s-cli THEN it fails and dist/ is still there, whole
    staging = project / "environments" / "staging.yaml"
    staging.write_text(staging.read_text() + "bad: [\n")
    failed = subprocess.run([*CDK8S, "synth"], cwd=project, env=env, capture_output=True, text=True)
    assert failed.returncode != 0
    assert "environments/staging.yaml" in failed.stderr + failed.stdout
    assert read_tree(project / "dist") == written
