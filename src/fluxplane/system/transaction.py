"""Changes to the definition as one transaction: every file of an edit is written, or none is.

The edit commands and ``seal`` change several files of ``environments/`` at once (an app file and its
sealed secrets, a cluster's environment file and the allocations). Each file is replaced atomically,
but a kill between two of them would leave half an edit, which the next synth carries into dist/.
So a change goes through ``<root>/.fluxplane-edit/``, a folder of fluxplane's own beside environments/:

1. every new text is written there (one file per change, numbered), flushed to disk;
2. a journal naming each target, its staged file and the text's SHA-256 is written and renamed into
   place: this is the commit point;
3. each staged file is renamed over its target, and files the edit removes are deleted;
4. the folder is removed.

A run stopped before 2 left nothing but the folder, which the next command removes (the edit did not
happen). A run stopped after 2 is finished by the next command that writes (``synth``, ``seal`` or an
edit command), which applies the journal again; every step is safe to repeat. ``synth --check``,
``seal --stdout`` and ``--dry-run`` write nothing: they refuse to work on a definition with an edit
half applied, and say how to finish it. SIGINT and SIGTERM wait until step 3 is done.

Trust. The folder lies in the project, where a pull request can put files. The journal carries an
HMAC-SHA256 under this user's key (the synth cache's, outside the project) over the project's real
path and the entries, so a journal that was not written here by this user is never applied: the
folder is removed as an unfinished edit. Each entry's target must be a path below environments/ with
no symbolic link on the way, its staged file a plain file of the folder whose digest matches; the
folder itself is never followed when it is a link.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import signal
import stat
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from fluxplane.errors import ConfigError
from fluxplane.system.keys import user_key

ENVIRONMENTS = "environments"
FOLDER = ".fluxplane-edit"
JOURNAL = "journal"
_STAGED = re.compile(r"^[0-9]{1,6}$")
_FORMAT = 1


@dataclass(frozen=True)
class _StagedFile:
    path: str
    staged: str | None  # None: delete the target
    digest: str | None


def check_targets(root: Path, paths: list[str]) -> list[str]:
    """Problems with writing or deleting ``paths`` (POSIX, relative to ``root``): each must lie below
    environments/ with no symbolic link on the way, itself included; a link is neither written through
    nor replaced, whether it leads in or out of the definition."""
    problems: dict[str, str] = {}
    for relative in paths:
        parts = relative.split("/")
        if parts[0] != ENVIRONMENTS or len(parts) < 2 or any(part in ("", ".", "..") for part in parts):
            problems[relative] = f"{relative}: not a path below {ENVIRONMENTS}/; nothing written"
            continue
        for depth in range(1, len(parts) + 1):
            shown = "/".join(parts[:depth])
            if (root / shown).is_symlink():
                problems[shown] = (
                    f"{shown}: a symbolic link (to {os.readlink(root / shown)}); the command writes and deletes only "
                    "files of environments/ itself, never through a link: replace the link with what it points "
                    "to, or make the change by hand; nothing written"
                )
                break
    return list(problems.values())


def commit(root: Path, files: Mapping[str, str | None]) -> None:
    """Write ``files`` (path below ``root`` -> new text, None deletes it) as one transaction.

    Raises ConfigError, with nothing changed, when a path is not a file of environments/ itself;
    OSError from writing the staged files leaves every target as it was.
    """
    problems = check_targets(root, list(files))
    if problems:
        raise ConfigError(problems)
    key = _key()
    folder = root / FOLDER
    _remove_folder(folder)
    os.mkdir(folder, 0o700)
    entries: list[_StagedFile] = []
    try:
        for number, (relative, text) in enumerate(sorted(files.items())):
            if text is None:
                entries.append(_StagedFile(relative, None, None))
                continue
            data = text.encode("utf-8")
            _write_new(folder / str(number), data)
            entries.append(_StagedFile(relative, str(number), hashlib.sha256(data).hexdigest()))
        journal = json.dumps(_signed(root, entries, key), sort_keys=True).encode()
        _write_new(folder / f"{JOURNAL}.new", journal)
        _sync_folder(folder)
    except BaseException:
        _remove_folder(folder)
        raise
    with _signals_held():
        os.replace(folder / f"{JOURNAL}.new", folder / JOURNAL)  # the commit point
        try:
            _sync_folder(folder)
            _apply(root, entries)
            _remove_folder(folder)
        except OSError as exc:
            raise ConfigError(_unfinished(root, exc)) from None


def recover(root: Path, *, write: bool = True) -> str | None:
    """Finish or drop what an interrupted change left; a note for the user when there was something.

    With ``write`` False (``--check``, ``--dry-run``) nothing is changed: an edit half applied is a
    ConfigError that says how to finish it, and a leftover that never reached its commit point is left
    for the next command that writes.
    """
    folder = root / FOLDER
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(mode):
        if write:
            os.unlink(folder)
            return f"{FOLDER}: removed (not a folder fluxplane made)"
        return None
    entries = _read_journal(root, folder)
    if isinstance(entries, str):
        if write:
            _remove_folder(folder)
            return f"{FOLDER}: removed {entries}"
        return None
    if not write:
        raise ConfigError(
            f"{FOLDER}: an earlier command was stopped while changing {ENVIRONMENTS}/, which holds part of its "
            f"change ({', '.join(entry.path for entry in entries)}); run 'fluxplane synth' (or the edit again, "
            "without --dry-run) to finish it first"
        )
    problems = check_targets(root, [entry.path for entry in entries])
    if problems:
        raise ConfigError(problems)
    with _signals_held():
        try:
            _apply(root, entries)
            _remove_folder(folder)
        except OSError as exc:
            raise ConfigError(_unfinished(root, exc)) from None
    return f"finished an edit that was stopped halfway: {', '.join(entry.path for entry in entries)}"


def _unfinished(root: Path, exc: OSError) -> str:
    """One line for a change that failed after its commit point: it is kept, to be finished later."""
    path = Path(exc.filename) if exc.filename else root
    where = path.relative_to(root).as_posix() if path.is_relative_to(root) and path != root else str(path)
    return (
        f"{where}: cannot write ({exc.strerror or exc}); the change is kept in {FOLDER}/ and the next "
        "'fluxplane synth', 'seal' or edit command finishes it once the file system can be written"
    )


# -- steps ----------------------------------------------------------------------------------------


def _apply(root: Path, entries: list[_StagedFile]) -> None:
    """Move each staged file over its target, then delete; safe to run again after a stop."""
    folder = root / FOLDER
    touched: set[Path] = set()
    for entry in entries:
        if entry.staged is None:
            continue
        target = root / entry.path
        staged = folder / entry.staged
        if not _plain_file(staged):
            continue  # moved by the run that was stopped
        _make_folders(root, target.parent)
        os.replace(staged, target)
        touched.add(target.parent)
    stop = root / ENVIRONMENTS
    for entry in entries:
        if entry.staged is not None:
            continue
        target = root / entry.path
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        touched.add(target.parent)
        parent = target.parent
        while parent != stop and _real_folder(parent) and not any(parent.iterdir()):
            parent.rmdir()
            touched.add(parent.parent)
            parent = parent.parent
    for parent in sorted(touched):
        if _real_folder(parent):
            _sync_folder(parent)


def _make_folders(root: Path, folder: Path) -> None:
    """Make ``folder`` below environments/, refusing a link on the way (check_targets ran before, but a
    folder made since could be one)."""
    relative = folder.relative_to(root).parts
    current = root
    for part in relative:
        current = current / part
        try:
            os.mkdir(current, 0o755)
        except FileExistsError:
            if not _real_folder(current):
                raise ConfigError(
                    f"{current.relative_to(root).as_posix()}: not a folder; nothing more written"
                ) from None


def _write_new(path: Path, data: bytes) -> None:
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(handle, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def _sync_folder(folder: Path) -> None:
    handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _remove_folder(folder: Path) -> None:
    """Remove fluxplane's folder: a link or file in its place as itself, never what it leads to."""
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        os.unlink(folder)
        return
    for name in os.listdir(folder):
        path = folder / name
        if _real_folder(path):
            _remove_folder(path)
        else:
            os.unlink(path)
    os.rmdir(folder)


def _real_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _plain_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


# -- the journal ----------------------------------------------------------------------------------


def _key() -> bytes:
    key = user_key()
    if key is None:
        raise ConfigError(
            "cannot read or make this user's fluxplane key ($XDG_CACHE_HOME/fluxplane/synth.key, default "
            "~/.cache/fluxplane/synth.key), which signs an edit in progress; nothing written"
        )
    return key


def _signed(root: Path, entries: list[_StagedFile], key: bytes) -> dict[str, object]:
    body = {
        "format": _FORMAT,
        "files": [[entry.path, entry.staged, entry.digest] for entry in entries],
    }
    return {**body, "mac": _mac(root, body, key)}


def _mac(root: Path, body: Mapping[str, object], key: bytes) -> str:
    message = json.dumps({"root": os.path.realpath(root), **body}, sort_keys=True).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _read_journal(root: Path, folder: Path) -> list[_StagedFile] | str:
    """The journal's entries when it was written here by this user and every entry is well formed,
    else why it is not applied."""
    try:
        handle = os.open(folder / JOURNAL, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return "what an edit stopped before it changed anything left behind"
    with os.fdopen(handle, "rb") as reader:
        raw = reader.read(1 << 20)
    foreign = "a journal this user's fluxplane did not write (nothing of it applied)"
    try:
        document = json.loads(raw)
        files = document["files"]
        mac = document["mac"]
        body = {"format": document["format"], "files": files}
    except (ValueError, KeyError, TypeError):
        return foreign
    key = user_key()
    if key is None or not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(root, body, key)):
        return foreign
    if body["format"] != _FORMAT or not isinstance(files, list):
        return foreign
    entries: list[_StagedFile] = []
    for item in files:
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str)):
            return foreign
        path, staged, digest = item
        if staged is not None and not (isinstance(staged, str) and _STAGED.match(staged) and isinstance(digest, str)):
            return foreign
        if staged is not None and _plain_file(folder / staged) and _digest(folder / staged) != digest:
            return "a journal whose staged files changed since (nothing of it applied)"
        entries.append(_StagedFile(path, staged, digest))
    return entries


def _digest(path: Path) -> str:
    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(handle, "rb") as reader:
        return hashlib.sha256(reader.read()).hexdigest()


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block is done: a change half applied is finished first.

    Python runs signal handlers in the main thread whichever thread the kernel delivers to (jsii's reader
    threads among them), so the handlers themselves are swapped for ones that only record the signal,
    which is raised again, to the handlers the block found, when it ends.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    for number in previous:
        signal.signal(number, lambda received, _frame: held.append(received))
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
        for received in dict.fromkeys(held):
            signal.raise_signal(received)


def note(message: str | None) -> None:
    """Print what :func:`recover` did, when it did something."""
    if message:
        print(f"note: {message}", file=sys.stderr)
