"""The Git side of ``fluxplane diff``: where the project sits in its repository, and the base ref's tree.

The base definition is read from a temporary worktree (``git worktree add --detach``), so the user's
working tree, index and branches are never touched; the worktree is removed and pruned afterwards,
also when synthesis fails or the command is stopped by SIGINT or SIGTERM (which fluxplane.cli turns
into exceptions, so that this cleanup runs).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fluxplane.errors import FluxplaneError
from fluxplane.system import git


class DiffError(FluxplaneError):
    """``fluxplane diff`` cannot compare: not a Git repository, an unknown ref, a base that does not load."""


@dataclass(frozen=True)
class Checkout:
    """The Git repository holding the project: its top folder and the project's folder inside it."""

    toplevel: Path
    #: The project folder relative to ``toplevel``, "" at the top (``git rev-parse --show-prefix``).
    prefix: str


@dataclass(frozen=True)
class DiffBase:
    """The base of a diff: the ref as given, the repository holding the project, and the commit the ref names."""

    ref: str
    checkout: Checkout
    commit: str


_PURPOSE = "fluxplane diff reads the base definition from Git"


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return git.run(args, cwd, purpose=_PURPOSE)


def locate(root: Path, command: str = "fluxplane diff") -> Checkout:
    """The repository holding ``root``; a DiffError, naming ``command``, when there is none."""
    if not root.is_dir():
        raise DiffError(f"{root}: no such project folder")
    top = _git(["rev-parse", "--show-toplevel"], root)
    if top.returncode != 0:
        raise DiffError(f"{root}: not a Git repository ({command} compares with a Git ref)")
    prefix = _git(["rev-parse", "--show-prefix"], root)
    return Checkout(Path(top.stdout.strip()), prefix.stdout.strip().rstrip("/"))


def resolve(checkout: Checkout, ref: str) -> str:
    """The commit ``ref`` names; ``--base: unknown Git ref`` when it names none."""
    found = git.commit_of(checkout.toplevel, ref, purpose=_PURPOSE)
    if found is None:
        raise DiffError(f"--base: unknown Git ref {ref!r}")
    return found


@contextmanager
def worktree(checkout: Checkout, commit: str) -> Iterator[Path]:
    """A detached worktree of ``commit`` in a temporary folder; yields the project folder inside it."""
    holder = Path(tempfile.mkdtemp(prefix="fluxplane-diff-"))
    path = holder / "base"
    try:
        added = _git(["worktree", "add", "--detach", "--quiet", str(path), commit], checkout.toplevel)
        if added.returncode != 0:
            detail = (added.stderr.strip().splitlines() or ["no message"])[-1]
            raise DiffError(f"--base: cannot check out {commit[:12]} into a temporary worktree: {detail}")
        yield path / checkout.prefix if checkout.prefix else path
    finally:
        # Twice --force: a 'worktree add' stopped halfway (the CLI turns SIGTERM and SIGINT into exceptions,
        # and subprocess.run then kills git) leaves its worktree locked as "initializing", which one --force
        # and 'prune' keep; the folder may be gone or half checked out.
        _git(["worktree", "remove", "--force", "--force", str(path)], checkout.toplevel)
        shutil.rmtree(holder, ignore_errors=True)
        _git(["worktree", "prune"], checkout.toplevel)
