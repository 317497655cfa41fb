"""``fluxplane init [DIR]``: start a fleet repository from the scaffold pinned to this fluxplane."""

from __future__ import annotations

import argparse
from pathlib import Path

from fluxplane import scaffold
from fluxplane.commands import Subcommands, installed_version

NAMES: tuple[str, ...] = ("init",)
LOCKS_PROJECT = False


def register(commands: Subcommands) -> None:
    """Add ``init`` to the CLI."""
    init = commands.add_parser(
        "init",
        help="start a fleet repository: definition, tests, CI and README",
        description="Write a new fleet repository into DIR (default: the current folder): pyproject.toml pinning "
        "this fluxplane, cdk8s.yaml, a commented environments/ (a hub and one environment), the fleet's tests, "
        ".gitignore, a CI workflow and a README. Refuses, writing nothing, when any of these files exists.",
    )
    init.add_argument("dir", nargs="?", type=Path, default=Path("."), metavar="DIR")


def stopped(args: argparse.Namespace) -> str | None:
    return None


def run(args: argparse.Namespace) -> int:
    """Write the scaffold into DIR; a line per file, then what to run next."""
    folder: Path = args.dir
    written = scaffold.write(folder, scaffold.scaffold(folder, installed_version()))
    for path in written:
        print(f"wrote {folder / path}")
    print(
        f"next: cd {folder} && python -m venv .venv && .venv/bin/pip install -e '.[test]' && "
        ".venv/bin/fluxplane synth && .venv/bin/pytest --snapshot-update (see README.md)"
    )
    return 0
