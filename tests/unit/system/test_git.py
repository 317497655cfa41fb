"""fluxplane.system.git: refs resolved without options slipping through, blobs read byte for byte, the repository a
folder is in, and a new one made."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import pytest

from fluxplane.system import git as fgit
from tests.support.git import git

PURPOSE = "testing"


def test_blobs_are_read_byte_for_byte_and_missing_paths_are_none(tmp_path: Path) -> None:
    # GIVEN a commit holding a file with multi-byte characters and a subfolder
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.yaml").write_text("name: grüße 名前\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_bytes(b"x: 1\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "first")
    commit = fgit.commit_of(tmp_path, "HEAD", purpose=PURPOSE)
    assert commit is not None
    # WHEN the files, and one the commit lacks, are read relative to the subfolder
    found = fgit.blobs(tmp_path / "sub", commit, ["a.yaml", "gone.yaml", "../b.yaml"], purpose=PURPOSE)
    # THEN each is its exact bytes, in order, None for the missing one
    assert found == ["name: grüße 名前\n".encode(), None, b"x: 1\n"]
    assert fgit.blobs(tmp_path, commit, [], purpose=PURPOSE) == []


def test_a_ref_that_looks_like_an_option_names_no_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "first")
    assert fgit.commit_of(tmp_path, "HEAD", purpose=PURPOSE) == git(tmp_path, "rev-parse", "HEAD")
    for ref in ("--all", "-h", "nope", "HEAD~3"):
        assert fgit.commit_of(tmp_path, ref, purpose=PURPOSE) is None


def test_work_tree_is_the_top_of_the_repository_or_none_outside_one(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    assert fgit.work_tree(tmp_path / "outside", purpose=PURPOSE) is None
    (tmp_path / "repo" / "sub").mkdir(parents=True)
    git(tmp_path / "repo", "init", "-q")
    assert fgit.work_tree(tmp_path / "repo" / "sub", purpose=PURPOSE) == tmp_path / "repo"


def test_work_tree_where_git_cannot_tell_is_git_s_line(tmp_path: Path) -> None:
    # GIVEN a folder inside a repository's .git folder (in a repository, but no work tree)
    git(tmp_path, "init", "-q")
    with pytest.raises(fgit.GitError, match=r"/\.git: fatal: .*work tree"):
        fgit.work_tree(tmp_path / ".git", purpose=PURPOSE)


def test_init_makes_an_empty_repository_on_the_branch_named(tmp_path: Path) -> None:
    fgit.init(tmp_path, "main", purpose=PURPOSE)
    assert git(tmp_path, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git(tmp_path, "rev-list", "--all") == ""


def test_init_that_git_refuses_is_git_s_line(tmp_path: Path) -> None:
    line = f"{tmp_path}: git init: fatal: invalid initial branch name: 'no..such'"
    with pytest.raises(fgit.GitError, match=f"^{re.escape(line)}$"):
        fgit.init(tmp_path, "no..such", purpose=PURPOSE)


def test_without_git_installed_it_says_what_needs_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(fgit.GitError, match=r"^git is not installed: testing$"):
        fgit.work_tree(tmp_path, purpose=PURPOSE)


def test_the_files_of_a_folder_at_a_commit_are_read_byte_for_byte(tmp_path: Path) -> None:
    # GIVEN a commit with a folder holding a file, a nested file, an executable and a symlink, and a later change
    (tmp_path / "dist" / "sub").mkdir(parents=True)
    (tmp_path / "dist" / "a.yaml").write_text("name: grüße\n", encoding="utf-8")
    (tmp_path / "dist" / "sub" / "b.yaml").write_bytes(b"x: 1\r\n")
    (tmp_path / "dist" / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "dist" / "run.sh").chmod(0o755)
    (tmp_path / "dist" / "link.yaml").symlink_to("a.yaml")
    (tmp_path / "distant.yaml").write_text("y: 2\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "first")
    commit = fgit.commit_of(tmp_path, "HEAD", purpose=PURPOSE)
    assert commit is not None
    (tmp_path / "dist" / "a.yaml").write_text("changed\n")
    # WHEN the folder is read at the commit THEN its regular files are, by their path below it, as committed
    assert fgit.files_at(tmp_path, commit, "dist", purpose=PURPOSE) == {
        "a.yaml": "name: grüße\n".encode(),
        "run.sh": b"#!/bin/sh\n",
        "sub/b.yaml": b"x: 1\r\n",
    }
    # AND a folder the commit does not hold is None
    assert fgit.files_at(tmp_path, commit, "missing", purpose=PURPOSE) is None


def test_blobs_whose_content_the_caller_holds_are_not_read_again(tmp_path: Path) -> None:
    # GIVEN a commit with two files, and the caller's copies: one the same, one changed, one the commit lacks
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "same.yaml").write_text("a: 1\n")
    (tmp_path / "dist" / "other.yaml").write_text("b: 1\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "first")
    commit = fgit.commit_of(tmp_path, "HEAD", purpose=PURPOSE)
    assert commit is not None
    blobs = fgit.blobs_at(tmp_path, commit, "dist", purpose=PURPOSE)
    assert blobs is not None
    known = {"same.yaml": b"a: 1\n", "other.yaml": b"b: 2\n", "new.yaml": b"c: 1\n"}
    found = fgit.read_blobs(tmp_path, blobs, purpose=PURPOSE, known=known)
    # THEN the files are as committed, the one the caller holds unchanged taken from its copy
    assert found == {"other.yaml": b"b: 1\n", "same.yaml": b"a: 1\n"}
    assert found["same.yaml"] is known["same.yaml"]
    assert fgit.blob_name(b"a: 1\n", "0" * 40) == dict(blobs)["same.yaml"]


def test_a_running_git_gives_its_exit_code_and_output_as_run_does(tmp_path: Path) -> None:
    # GIVEN a repository WHEN Git is started and its result waited for
    git(tmp_path, "init", "-q")
    with fgit.Running(["rev-parse", "--show-toplevel"], tmp_path, purpose=PURPOSE) as running:
        found = running.result()
    # THEN it is what run gives for the same command
    expected = fgit.run(["rev-parse", "--show-toplevel"], tmp_path, purpose=PURPOSE)
    assert (found.returncode, found.stdout, found.stderr) == (0, expected.stdout, "")
    with fgit.Running(["rev-parse", "--verify", "nope"], tmp_path, purpose=PURPOSE) as running:
        failed = running.result()
    assert failed.returncode != 0
    assert failed.stderr.startswith("fatal:")


def test_a_running_git_is_ended_when_the_caller_stops(tmp_path: Path) -> None:
    # GIVEN Git blocked reading a FIFO no one writes to
    git(tmp_path, "init", "-q")
    os.mkfifo(tmp_path / "pipe")
    # WHEN the caller is stopped while Git runs
    with pytest.raises(KeyboardInterrupt), fgit.Running(["hash-object", "pipe"], tmp_path, purpose=PURPOSE) as running:
        assert running._process.poll() is None
        raise KeyboardInterrupt
    # THEN Git has ended: nothing outlives the command
    # AND it was asked to stop (SIGTERM), which lets Git remove its lock files, not killed
    assert running._process.returncode == -signal.SIGTERM


def test_a_stopped_refresh_of_the_index_leaves_no_lock_behind(tmp_path: Path) -> None:
    # GIVEN a repository whose index no longer vouches for its files, and Git refreshing it (it holds the
    # index's lock while it hashes them)
    for index in range(5000):
        (tmp_path / f"f{index}.yaml").write_text(f"n: {index}\n" * 200)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    for path in tmp_path.glob("*.yaml"):
        os.utime(path, (1, 1))
    running = fgit.Running(["update-index", "-q", "--refresh"], tmp_path, purpose=PURPOSE)
    with running:
        while running._process.poll() is None and not (tmp_path / ".git" / "index.lock").exists():
            pass
    # WHEN it is ended while it runs
    assert running._process.returncode == -signal.SIGTERM
    # THEN the lock is gone: the user's next Git command is not refused
    assert not (tmp_path / ".git" / "index.lock").exists()
    git(tmp_path, "update-index", "-q", "--refresh")
