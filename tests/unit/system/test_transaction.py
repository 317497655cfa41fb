"""fluxplane.system.transaction: the files of one change are all written or none, and its state is not trusted."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
from pathlib import Path

import pytest

from fluxplane.errors import ConfigError
from fluxplane.system import transaction

OLD = {"environments/a.yaml": "a: old\n", "environments/apps/b.yaml": "b: old\n", "environments/s/c/d.yaml": "d\n"}
NEW: dict[str, str | None] = {
    "environments/a.yaml": "a: new\n",
    "environments/apps/new.yaml": "n: 1\n",
    "environments/s/c/d.yaml": None,
}


@pytest.fixture(autouse=True)
def _own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    transaction._key()  # made before any test counts renames


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for relative, text in OLD.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def _files(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): path.read_text()
        for path in sorted(root.rglob("*"))
        if path.is_file() or path.is_symlink()
    }


def _expected_new() -> dict[str, str]:
    files = {**OLD, **{k: v for k, v in NEW.items() if v is not None}}
    return {k: v for k, v in sorted(files.items()) if NEW.get(k, "") is not None}


def test_commit_writes_every_file_deletes_and_leaves_no_state(tmp_path: Path) -> None:
    root = _project(tmp_path)
    transaction.commit(root, NEW)
    assert _files(root) == _expected_new()
    assert not (root / "environments/s").exists()  # the folders a deletion empties go too
    assert not (root / transaction.FOLDER).exists()


def test_a_failure_before_the_commit_point_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)
    real = transaction._write_new
    calls = []

    def failing(path: Path, data: bytes) -> None:
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(transaction, "_write_new", failing)
    with pytest.raises(OSError):
        transaction.commit(root, NEW)
    assert _files(root) == OLD
    assert not (root / transaction.FOLDER).exists()


def _stopped_after_commit(root: Path, monkeypatch: pytest.MonkeyPatch, moves: int) -> None:
    """Run a commit that is stopped (as by a kill) after ``moves`` renames past the journal's."""
    real = os.replace
    count = []

    class Killed(BaseException):
        pass

    def replace(source: object, target: object) -> None:
        if str(target).endswith(f"{transaction.FOLDER}/{transaction.JOURNAL}"):
            real(source, target)  # type: ignore[arg-type]
            return
        if len(count) == moves:
            raise Killed
        count.append(target)
        real(source, target)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(transaction.os, "replace", replace)
        with pytest.raises(Killed):
            transaction.commit(root, NEW)


@pytest.mark.parametrize("moves", [0, 1])
def test_a_change_stopped_after_its_commit_point_is_finished_by_the_next_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moves: int
) -> None:
    root = _project(tmp_path)
    _stopped_after_commit(root, monkeypatch, moves)
    assert _files(root) != _expected_new()
    # a command that writes nothing refuses, naming the files and how to finish
    with pytest.raises(ConfigError, match=r"stopped while changing environments/.*environments/a\.yaml.*synth"):
        transaction.recover(root, write=False)
    note = transaction.recover(root)
    assert note is not None and "environments/a.yaml" in note
    assert _files(root) == _expected_new()
    assert transaction.recover(root) is None


def test_a_journal_signed_by_someone_else_is_never_applied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a change stopped after its commit point, whose folder then arrives on another user's machine
    root = _project(tmp_path)
    _stopped_after_commit(root, monkeypatch, 0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other-user"))
    # THEN it is removed as something this user's fluxplane did not write, and nothing of it applied
    assert transaction.recover(root, write=False) is None
    note = transaction.recover(root)
    assert note is not None and "did not write" in note
    assert _files(root) == OLD


def test_a_journal_with_a_recomputed_digest_is_never_applied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)
    _stopped_after_commit(root, monkeypatch, 0)
    folder = root / transaction.FOLDER
    journal = json.loads((folder / transaction.JOURNAL).read_text())
    staged = journal["files"][0][1]
    (folder / staged).write_text("a: forged\n")
    journal["files"][0][2] = hashlib.sha256(b"a: forged\n").hexdigest()
    (folder / transaction.JOURNAL).write_text(json.dumps(journal))
    transaction.recover(root)
    assert _files(root) == OLD


@pytest.mark.parametrize("path", ["environments/../../victim.txt", "/tmp/x", "dist/x.yaml", "environments/link/x"])
def test_a_signed_journal_that_leads_out_of_environments_writes_nothing(tmp_path: Path, path: str) -> None:
    # GIVEN a journal signed with this user's key (the worst case) whose target is not a file of environments/
    root = _project(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (root / "environments/link").symlink_to(victim)
    folder = root / transaction.FOLDER
    folder.mkdir()
    (folder / "0").write_text("owned\n")
    entries = [transaction._StagedFile(path, "0", hashlib.sha256(b"owned\n").hexdigest())]
    key = transaction._key()
    (folder / transaction.JOURNAL).write_text(json.dumps(transaction._signed(root, entries, key)))
    # THEN recovery refuses with a located line and writes nothing anywhere
    with pytest.raises(ConfigError):
        transaction.recover(root)
    assert list(victim.iterdir()) == []
    assert not (tmp_path / "victim.txt").exists()
    assert (root / "environments/a.yaml").read_text() == "a: old\n"


def test_a_state_folder_that_is_a_link_is_removed_as_a_link(tmp_path: Path) -> None:
    root = _project(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    (root / transaction.FOLDER).symlink_to(victim)
    transaction.commit(root, NEW)
    assert _files(root) == _expected_new()
    assert (victim / "keep.txt").read_text() == "mine"


def test_a_target_behind_a_link_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    root = _project(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (root / "environments/apps").rename(tmp_path / "apps-moved")
    (root / "environments/apps").symlink_to(victim)
    with pytest.raises(ConfigError, match=r"environments/apps: a symbolic link"):
        transaction.commit(root, NEW)
    assert list(victim.iterdir()) == []
    assert (root / "environments/a.yaml").read_text() == "a: old\n"
    assert not (root / transaction.FOLDER).exists()


def test_a_signal_while_the_change_is_applied_waits_until_it_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN Ctrl-C pressed while the first staged file is moved into place, and taken by another thread
    # (as jsii's reader threads take it during synth)
    root = _project(tmp_path)
    real = os.replace
    pressed: list[object] = []
    press = threading.Event()
    other = threading.Thread(target=lambda: press.wait() and os.kill(os.getpid(), signal.SIGINT), daemon=True)
    other.start()

    def replace(source: object, target: object) -> None:
        real(source, target)  # type: ignore[arg-type]
        if not pressed and str(target).endswith("a.yaml"):
            pressed.append(target)
            press.set()
            other.join()

    monkeypatch.setattr(transaction.os, "replace", replace)
    # WHEN the change is committed THEN the interrupt comes once every file is in place, and nothing is left
    with pytest.raises(KeyboardInterrupt):
        transaction.commit(root, NEW)
    assert pressed
    assert _files(root) == _expected_new()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
