"""Shared fixtures: the project root and a fleet builder in tmp_path."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import settings

# No deadline: a loaded CI machine makes one example slow without anything being wrong.
settings.register_profile("quick", max_examples=20, derandomize=True, deadline=None)
settings.register_profile("long", max_examples=1000)
settings.load_profile("quick")

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CRDS = SHARED / "crds"
VALIDATE_MANIFESTS = SHARED / "tools" / "validate-manifests"


def skipped_kinds(stdout: str) -> set[str]:
    """The apiVersions validate-manifests reports as skipped (no schema)."""
    lines = [line for line in stdout.splitlines() if line.startswith("skipped kinds:")]
    return {item.split()[0] for item in lines[0].removeprefix("skipped kinds: ").split(", ")} if lines else set()


# Commands' progress lines on standard error would mix with the messages tests compare
# (tests/unit/system/test_progress.py checks them).
os.environ["FLUXPLANE_PROGRESS"] = "off"


#: The packs a hub needs to build workload clusters (workload-clusters and what it requires).
HUB_PACKS: dict[str, Any] = {
    "crossplane": {},
    "crossplane-providers": {"roleArn": "arn:aws:iam::111122223333:role/crossplane-providers"},
    "crossplane-provider-configs": {},
    "eks-compositions": {},
    "workload-clusters": {},
}
#: The smallest fleet that builds its workload clusters: a public repository (no Git credentials to seal).
MINIMAL_BASE: dict[str, Any] = {
    "repositories": {"platform": {"url": "ssh://git@example.com/org/fleet.git", "secretRef": None}},
    "management": {"name": "hub", "region": "us-west-2", "packs": HUB_PACKS},
    "packs": {"metrics-server": {}},
}
MINIMAL_ENV: dict[str, Any] = {"clusters": [{"name": "staging-1", "region": "us-west-2"}]}

FleetWriter = Callable[..., Path]


@pytest.fixture
def write_fleet(tmp_path: Path) -> FleetWriter:
    """Write environments/ under a fresh project folder; returns the folder.

    ``base`` is the base file's data, ``envs`` maps environment names to data; a value that is a
    string is written as-is (for YAML syntax tests).
    """

    def write(base: Any = None, envs: dict[str, Any] | None = None, root: Path | None = None) -> Path:
        project = root or tmp_path / "project"
        env_dir = project / "environments"
        env_dir.mkdir(parents=True, exist_ok=True)
        files = {
            "base": MINIMAL_BASE if base is None else base,
            **(envs if envs is not None else {"staging": MINIMAL_ENV}),
        }
        for name, data in files.items():
            text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
            (env_dir / f"{name}.yaml").write_text(text)
        return project

    return write


@pytest.fixture
def example_project(tmp_path: Path) -> Path:
    """A copy of the project's example fleet (environments/ and dist/) to change freely."""
    project = tmp_path / "example"
    shutil.copytree(ROOT / "environments", project / "environments")
    if (ROOT / "dist").exists():
        shutil.copytree(ROOT / "dist", project / "dist")
    return project


def load_documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]
