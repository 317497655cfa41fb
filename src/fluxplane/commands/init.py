"""``fluxplane init [DIR]``: start a fleet repository from the scaffold pinned to this fluxplane."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from fluxplane.commands import Subcommands, installed_version, scaffold, warn
from fluxplane.commands.scaffold.pin import Pin, installed_pin
from fluxplane.system import git

NAMES: tuple[str, ...] = ("init",)
LOCKS_PROJECT = False
#: The first branch of the repository init makes: the one the scaffold's base.yaml and CI workflow name.
BRANCH = "main"


def register(commands: Subcommands) -> None:
    """Add ``init`` to the CLI."""
    init = commands.add_parser(
        "init",
        help="start a fleet repository: definition, tests, CI and README",
        description="Write a new fleet repository into DIR (default: the current folder): pyproject.toml pinning "
        "this fluxplane (from where it was installed), cdk8s.yaml, a commented environments/ (a hub and one "
        "environment), the fleet's tests, .gitignore, a CI workflow and a README. Refuses, writing nothing, when "
        f"any of these files exists. Runs `git init` (branch {BRANCH}) unless DIR is in a Git repository already; "
        "commits nothing.",
    )
    init.add_argument("dir", nargs="?", type=Path, default=Path("."), metavar="DIR")


def stopped(args: argparse.Namespace) -> str | None:
    return None


def run(args: argparse.Namespace) -> int:
    """Write the scaffold into DIR and make it a Git repository; a line per file, then what to run next."""
    folder: Path = args.dir
    pin = installed_pin(installed_version())
    written = scaffold.write(folder, scaffold.scaffold(folder, pin.requirement))
    for path in written:
        print(f"wrote {folder / path}")
    _repository(folder)
    warn(f"note: {pin.note}" if pin.note else None)
    print(next_steps(folder, pin))
    return 0


def _repository(folder: Path) -> None:
    """Make ``folder`` a Git repository unless it is in one: diff, validate --changed and the CI workflow need
    one. Nothing is committed: the first commit holds the dist/ that synth writes, and is the user's. Git missing
    or failing is a warning: the files are written."""
    purpose = "diff, validate --changed and the CI workflow need a Git repository"
    try:
        top = git.work_tree(folder, purpose=purpose)
        if top is None:
            git.init(folder, BRANCH, purpose=purpose)
    except git.GitError as exc:
        warn(f"{exc.problems[0]}; `git init --initial-branch={BRANCH}` in {shlex.quote(str(folder))} makes it one")
        return
    if top is None:
        print(f"git: initialized an empty repository in {folder}, branch {BRANCH}; nothing committed")
    else:
        print(f"git: {folder} is in the repository {top} already; nothing committed")


def next_steps(folder: Path, pin: Pin) -> str:
    """The commands that take the new repository to a first green test run, from where this fluxplane came."""
    find_links = f" --find-links {shlex.quote(pin.find_links)}" if pin.find_links else ""
    return (
        f"next: cd {shlex.quote(str(folder))} && python -m venv .venv && "
        f".venv/bin/pip install -e '.[test]'{find_links} && .venv/bin/fluxplane synth && "
        ".venv/bin/pytest, then commit (see README.md)"
    )
