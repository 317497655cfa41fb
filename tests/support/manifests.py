"""Checks the tests run over a synthesized tree with the real tools, when they are there."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import yaml

from tests.conftest import CRDS, VALIDATE_MANIFESTS


def assert_valid_and_built(dist: Path, folders: Iterable[Path]) -> None:
    """``dist`` passes validate-manifests against ../shared/crds, and each of ``folders`` builds with
    ``kubectl kustomize``; each part is skipped when its tool or the CRDs are missing."""
    if VALIDATE_MANIFESTS.exists() and CRDS.is_dir():
        checked = subprocess.run(
            [sys.executable, str(VALIDATE_MANIFESTS), str(dist)], capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
    if shutil.which("kubectl"):
        for folder in folders:
            built = subprocess.run(["kubectl", "kustomize", str(folder)], capture_output=True, text=True, check=False)
            assert built.returncode == 0, built.stderr


def dist_counts(dist: Path) -> tuple[int, int, int]:
    """The YAML documents, files and kustomizations of ``dist``, counted as ``validate`` counts them (a file that
    does not parse holds no document)."""
    files = sorted(dist.rglob("*.yaml"))
    documents = 0
    for path in files:
        try:
            documents += sum(1 for doc in yaml.safe_load_all(path.read_text()) if doc is not None)
        except yaml.YAMLError:
            continue
    return documents, len(files), sum(1 for path in files if path.name == "kustomization.yaml")
