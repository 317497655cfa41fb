"""Checks the tests run over a synthesized tree with the real tools, when they are there."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

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
