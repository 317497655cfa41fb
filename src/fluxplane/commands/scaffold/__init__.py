"""``fluxplane init [DIR]``: a fleet repository that works at once.

It writes ``pyproject.toml`` pinning the fluxplane that runs it, from where it was installed
(fluxplane.commands.scaffold.pin), ``cdk8s.yaml``, a commented definition (``environments/``: a hub and one environment
with one workload cluster), a cdk8s chart of the fleet's own (``charts/``), the fleet's own tests
(``tests/test_fleet.py``, through fluxplane's pytest plugin), a ``.gitignore`` for fluxplane's working state, a
CI workflow and a README. The templates are package data (``scaffold/template``).

A file that exists is never overwritten: init refuses, naming each, before writing anything. A write that
fails (a folder it may not write, a full disk) removes what init had written, and is one line too.
"""

from __future__ import annotations

import json
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
    root = resources.files("fluxplane.commands.scaffold") / "template"

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


def scaffold(folder: Path, requirement: str) -> Scaffold:
    """The files of a new fleet repository in ``folder``, depending on fluxplane through ``requirement`` (PEP 508)."""
    name = project_name(folder)
    # A TOML basic string: JSON's escapes are TOML's
    values = {"@@NAME@@": name, "@@FLUXPLANE@@": json.dumps(requirement)}
    files = {}
    for relative, text in _templates().items():
        for placeholder, value in values.items():
            text = text.replace(placeholder, value)
        files[_RENAMED.get(relative, relative)] = text
    return Scaffold(files)


def write(folder: Path, plan: Scaffold) -> list[str]:
    """Write ``plan`` under ``folder`` (created when missing); the paths written. Nothing is written when any of
    them exists (InitError naming each), when ``folder`` or a folder they go in is a file, when they pass through
    a symbolic link, or when one cannot be written (what was written is removed again)."""
    standing = _first_existing(folder)
    if not standing.is_dir():
        raise InitError(f"{standing}: not a folder; init writes a new repository into a folder (DIR)")
    folders = {
        folder.joinpath(*parts[:depth])
        for parts in (Path(path).parts for path in plan.files)
        for depth in range(1, len(parts))
    }
    in_the_way = sorted(
        [folder / path for path in plan.files if os.path.lexists(folder / path)]
        + [path for path in folders if os.path.lexists(path) and not path.is_symlink() and not path.is_dir()]
    )
    if in_the_way:
        raise InitError([f"{path}: exists; init writes a new repository and never overwrites" for path in in_the_way])
    linked = sorted(str(path) for path in folders if path.is_symlink())
    if linked:
        raise InitError([f"{path}: a symbolic link; init writes only into folders of its own" for path in linked])
    made: list[Path] = []
    try:
        for path, text in sorted(plan.files.items()):
            target = folder / path
            _make_folders(target.parent, made)
            with open(target, "x", encoding="utf-8") as out:
                made.append(target)
                out.write(text)
    except OSError as exc:
        _remove(made)
        failed = exc.filename if exc.filename is not None else folder
        raise InitError(f"{failed}: cannot write ({exc.strerror or exc}); nothing was written") from None
    return sorted(plan.files)


def _first_existing(path: Path) -> Path:
    """``path``, or the nearest folder above it that exists (what init writes into first)."""
    while not os.path.lexists(path) and path.parent != path:
        path = path.parent
    return path


def _make_folders(folder: Path, made: list[Path]) -> None:
    """Create ``folder`` and the folders above it that are missing, adding each to ``made``."""
    missing = []
    while not os.path.lexists(folder):
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        each.mkdir()
        made.append(each)


def _remove(made: list[Path]) -> None:
    """Remove the files and folders init made, the last made first: a failed init leaves nothing behind."""
    for path in reversed(made):
        try:
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
        except OSError:
            continue  # what cannot be removed stays; the error about the write is the one to report
