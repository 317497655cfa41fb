"""What the tests of diff share: a Git repository holding a project."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.git import git


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
