"""Where the project sits in Git, which commit --base names, and the temporary worktree's cleanup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fluxplane.review.diff.git import Checkout, DiffError, locate, resolve, worktree
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


# --------------------------------------------------------------------------------------------------------------
# SIGTERM and SIGINT during ``fluxplane diff``: the temporary worktree is removed and unregistered.
#
# ``fluxplane diff`` runs in a child process (a signal handler belongs to a process) through a driver
# whose synthesis of the base sends the signal to its own process while the worktree exists, so no
# JavaScript runtime starts. The child's temporary folder is one of the test's, to see that it is left
# empty.


#: argv: project folder, signal name, "once" or "twice" (again while the worktree is being removed),
#: and a file to record the base's project folder in.
DRIVER = r"""
import os, signal, sys
from pathlib import Path

import fluxplane.review.diff.trees
from fluxplane.review.diff import git
from fluxplane.cli import main

root, name, times, record = sys.argv[1:5]
send = lambda: os.kill(os.getpid(), getattr(signal, name))

def synthesize(project, label):
    Path(record).write_text(str(project))
    send()
    raise AssertionError("the signal did not stop synthesis")

run = git._git

def second_signal_on_remove(args, cwd):
    if times == "twice" and args[:2] == ["worktree", "remove"]:
        send()
    return run(args, cwd)

fluxplane.review.diff.trees.synthesize = synthesize
git._git = second_signal_on_remove
sys.exit(main(["--root", root, "diff"]))
"""


@pytest.mark.parametrize(("name", "code", "word"), [("SIGTERM", 143, "terminated"), ("SIGINT", 130, "interrupted")])
@pytest.mark.parametrize("times", ["once", "twice"])
def test_a_signal_during_diff_removes_the_worktree(
    repository: Path, tmp_path: Path, name: str, code: int, word: str, times: str
) -> None:
    # GIVEN a diff whose base is being synthesized in a temporary worktree
    temporary, record = tmp_path / "tmp", tmp_path / "base-project"
    temporary.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "JSII_NODE"}
    # WHEN the signal comes (and, "twice", again while the worktree is being removed)
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(repository / "fleet"), name, times, str(record)],
        capture_output=True,
        text=True,
        env={**env, "TMPDIR": str(temporary)},
        timeout=60,
        check=False,
    )
    # THEN the worktree was there, and is gone: its folder, the temporary folder, and Git's record of it
    assert Path(record.read_text()).parts[-2:] == ("base", "fleet")
    assert not Path(record.read_text()).exists()
    assert list(temporary.iterdir()) == []
    assert git(repository, "worktree", "list").count("\n") == 0
    assert not (repository / ".git" / "worktrees").exists() or not any((repository / ".git" / "worktrees").iterdir())
    # AND diff exits 128 + the signal's number with one line
    assert (done.returncode, done.stderr) == (code, f"{word}; nothing written\n")


def test_sigterm_while_git_checks_out_the_base(tmp_path: Path) -> None:
    # GIVEN a repository whose checkout of one file takes a while (a smudge filter: 'worktree add' runs it
    # while the new worktree is still locked as "initializing")
    top, marker = tmp_path / "repo", tmp_path / "checking-out"
    (top / "environments").mkdir(parents=True)
    (top / "environments" / "base.yaml").write_text("a: 1\n")
    (top / ".gitattributes").write_text("*.yaml filter=slow\n")
    git(top, "init", "-q")
    git(top, "config", "filter.slow.clean", "cat")
    git(top, "config", "filter.slow.smudge", f"touch '{marker}'; sleep 3 </dev/null >/dev/null 2>&1; cat")
    git(top, "add", ".")
    git(top, "commit", "-qm", "first")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "JSII_NODE"}
    child = subprocess.Popen(
        [sys.executable, "-m", "fluxplane", "--root", str(top), "diff"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "TMPDIR": str(temporary), "FLUXPLANE_PROGRESS": "off"},
    )
    # WHEN SIGTERM comes from outside while git checks the base out
    deadline = time.monotonic() + 30
    while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert marker.exists(), child.communicate()
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=30)
    # THEN the half-made worktree is gone, registration and folder, and diff said so in one line
    assert git(top, "worktree", "list").count("\n") == 0
    assert list(temporary.iterdir()) == []
    assert (child.returncode, stderr) == (143, "terminated; nothing written\n")
