"""Where the project sits in Git, which commit --base names, and the temporary worktree's cleanup."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.diff.git import Checkout, DiffError, locate, resolve, worktree
from tests.support.git import git


def test_locate_finds_the_top_and_the_project_prefix(repository: Path) -> None:
    assert locate(repository / "fleet") == Checkout(repository.resolve(), "fleet")
    assert locate(repository) == Checkout(repository.resolve(), "")


def test_a_folder_outside_git_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DiffError, match=r"^.*/plain: not a Git repository \(fluxplane diff compares with a Git ref\)$"):
        (tmp_path / "plain").mkdir()
        locate(tmp_path / "plain")


def test_resolve_names_the_commit_or_refuses_the_ref(repository: Path) -> None:
    checkout = locate(repository)
    assert resolve(checkout, "HEAD") == git(repository, "rev-parse", "HEAD")
    for ref in ("nope", "HEAD~5", "--all"):
        with pytest.raises(DiffError, match=rf"^--base: unknown Git ref '{ref}'$"):
            resolve(checkout, ref)


def test_the_worktree_holds_the_base_and_is_removed_afterwards(repository: Path) -> None:
    # GIVEN a working tree that changed since the commit
    checkout = locate(repository / "fleet")
    commit = resolve(checkout, "HEAD")
    (repository / "fleet" / "environments" / "base.yaml").write_text("a: 2\n")
    # WHEN the base is checked out THEN the project folder inside it has the committed content
    with worktree(checkout, commit) as project:
        assert (project / "environments" / "base.yaml").read_text() == "a: 1\n"
        holder = project.parent.parent
    # AND afterwards the temporary folder and Git's record of the worktree are gone
    assert not holder.exists()
    assert git(repository, "worktree", "list").count("\n") == 0


def test_the_worktree_is_removed_when_the_body_fails(repository: Path) -> None:
    checkout = locate(repository)
    with pytest.raises(RuntimeError), worktree(checkout, resolve(checkout, "HEAD")) as project:
        holder = project.parent
        raise RuntimeError("synthesis failed")
    assert not holder.exists()
    assert git(repository, "worktree", "list").count("\n") == 0
