"""``fluxplane init [DIR]``: a fleet repository that works at once.

It writes the fluxplane version that runs it pinned in ``pyproject.toml``, ``cdk8s.yaml``, a commented
definition (``environments/``: a hub and one environment with one workload cluster), a cdk8s chart of the
fleet's own (``charts/``), the fleet's own tests
(``tests/test_fleet.py``, through fluxplane's pytest plugin), a ``.gitignore`` for fluxplane's working
state, a CI workflow and a README. The templates are package data (``scaffold/template``).

A file that exists is never overwritten: init refuses, naming each, before writing anything.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from fluxplane.errors import FluxplaneError

#: Template files named otherwise in the repository: dotfiles (package data keeps none), and files that
#: linters of fluxplane's own source would read as its own (``.in``).
_RENAMED = {
    "gitignore": ".gitignore",
    "github/workflows/fluxplane.yaml": ".github/workflows/fluxplane.yaml",
    "charts/fleet_info.py.in": "charts/fleet_info.py",
    "pyproject.toml.in": "pyproject.toml",
    "tests/test_fleet.py.in": "tests/test_fleet.py",
}


class InitError(FluxplaneError):
    """init cannot write the repository: a file is in the way, or the folder cannot be written."""


@dataclass(frozen=True)
class Scaffold:
    """What init writes: {path relative to the repository: text}."""

    files: dict[str, str]


def _templates() -> dict[str, str]:
    found: dict[str, str] = {}
    root = resources.files("fluxplane.scaffold") / "template"

    def walk(folder: object, prefix: str) -> None:
        for entry in sorted(folder.iterdir(), key=lambda each: each.name):  # type: ignore[attr-defined]
            relative = f"{prefix}{entry.name}"
            if entry.is_dir():
                if entry.name != "__pycache__":
                    walk(entry, f"{relative}/")
            else:
                found[relative] = entry.read_text(encoding="utf-8")

    walk(root, "")
    return found


def project_name(folder: Path) -> str:
    """A distribution name for the repository's pyproject.toml, from its folder's name."""
    name = re.sub(r"[^A-Za-z0-9]+", "-", folder.resolve().name).strip("-").lower()
    return name or "fleet"


def scaffold(folder: Path, version: str) -> Scaffold:
    """The files of a new fleet repository in ``folder``, pinning fluxplane ``version``."""
    name = project_name(folder)
    files = {}
    for relative, text in _templates().items():
        files[_RENAMED.get(relative, relative)] = text.replace("@@NAME@@", name).replace("@@VERSION@@", version)
    return Scaffold(files)


def write(folder: Path, plan: Scaffold) -> list[str]:
    """Write ``plan`` under ``folder`` (created when missing); the paths written. Nothing is written when any of
    them exists (InitError naming each) or passes through a symbolic link."""
    in_the_way = sorted(path for path in plan.files if os.path.lexists(folder / path))
    if in_the_way:
        raise InitError(
            [f"{folder / path}: exists; init writes a new repository and never overwrites" for path in in_the_way]
        )
    linked = sorted(
        {
            str(folder.joinpath(*parts[:depth]))
            for parts in (Path(path).parts for path in plan.files)
            for depth in range(1, len(parts))
            if folder.joinpath(*parts[:depth]).is_symlink()
        }
    )
    if linked:
        raise InitError([f"{path}: a symbolic link; init writes only into folders of its own" for path in linked])
    for path, text in sorted(plan.files.items()):
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "x", encoding="utf-8") as out:
            out.write(text)
    return sorted(plan.files)
