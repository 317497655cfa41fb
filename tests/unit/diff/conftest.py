"""What the tests of diff share: a Git repository holding a project, and running git in it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A repository whose project lives in fleet/, with one commit."""
    top = tmp_path / "repo"
    (top / "fleet" / "environments").mkdir(parents=True)
    (top / "fleet" / "environments" / "base.yaml").write_text("a: 1\n")
    git(top, "init", "-q")
    git(top, "add", ".")
    git(top, "commit", "-qm", "first")
    return top
