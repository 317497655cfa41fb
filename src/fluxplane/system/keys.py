"""This user's key for fluxplane's state in a project (the synth and validate caches, an edit in progress), and
the signed files those caches are made of.

The project folder holds files a pull request can bring, so fluxplane signs what it leaves there
(HMAC-SHA256) with a key that lives outside it: ``synth.key`` in ``$XDG_CACHE_HOME/fluxplane`` (default
``~/.cache/fluxplane``), 32 random bytes made on first use, mode 0600. State not written on this
machine by this user never verifies.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import marshal
import os
import secrets
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import Any

from fluxplane.system.files import write_atomic

#: The folder of fluxplane's caches below the project root (the synth cache's, the validate cache's, parsed files').
CACHE_DIR = ".fluxplane-cache"


def content_hash(*parts: str | bytes) -> str:
    """The SHA-256 of ``parts``, each with its length before it (so that ``("ab", "c")`` and ``("a", "bc")``
    differ): the keys the caches file their entries under."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def user_key() -> bytes | None:
    """This user's key, made on first use; None when it can neither be read nor made."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "fluxplane")
    path = os.path.join(folder, "synth.key")
    with contextlib.suppress(OSError):
        with open(path, "rb") as reader:
            key = reader.read()
        if len(key) >= 32:
            return key
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        key = secrets.token_bytes(32)
        write_atomic(path, key, mode=0o600)
    except OSError:
        return None
    return key


def real_folder(path: Path) -> bool | None:
    """True for a folder itself, None when nothing is there, False for anything else (a symlink too)."""
    try:
        return S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None
    except OSError:
        return False


class Signer:
    """Signed files in a cache folder of the project, which a pull request can fill: each file is an HMAC-SHA256
    of its payload (with ``key``, this user's) on a line, then the payload. A folder (or its parent) that is a
    symlink is neither read nor written; a file is opened without following a symlink, and only a regular file is
    read (a FIFO would block); a write is atomic and never through a link (fluxplane.system.files.write_atomic). What
    does not verify reads as nothing: a damaged or planted file costs time, never correctness. Without a key
    (None) nothing is read or written."""

    def __init__(self, folder: Path, key: bytes | None) -> None:
        self.folder = folder
        self.key = key

    @functools.cached_property
    def usable(self) -> bool:
        """Whether there is a key, and the folder and its parent are folders themselves (or not there yet)."""
        return self.key is not None and all(
            real_folder(path) is not False for path in (self.folder.parent, self.folder)
        )

    def mac(self, payload: bytes | memoryview) -> bytes:
        return hmac.new(self.key or b"", payload, hashlib.sha256).hexdigest().encode("ascii")

    def read(self, name: str) -> bytes | None:
        """The payload of the file ``name`` in the folder; None when there is none, or it does not verify."""
        view = self.payload(name)
        return None if view is None else view.tobytes()

    def payload(self, name: str) -> memoryview | None:
        """:meth:`read`'s payload as a view of the bytes read, not a copy of them (the synth cache's entries are
        large, and it decodes them at once)."""
        if not self.usable:
            return None
        try:
            # not through a symlink, and not from a FIFO, whose read would wait for a writer forever
            handle = os.open(self.folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(handle, "rb") as reader:
                if not S_ISREG(os.fstat(handle).st_mode):
                    return None
                raw = reader.read()
        except OSError:
            return None
        newline = raw.find(b"\n")
        if newline < 0:
            return None
        payload = memoryview(raw)[newline + 1 :]
        return payload if hmac.compare_digest(self.mac(payload), raw[:newline]) else None

    def read_marshalled(self, name: str) -> dict[Any, Any] | None:
        """The mapping the file ``name`` holds, marshalled; None when it is missing, does not verify, does not
        unmarshal or is no mapping."""
        payload = self.read(name)
        if payload is None:
            return None
        try:
            data = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):
            return None
        return data if isinstance(data, dict) else None

    def write(self, name: str, payload: bytes) -> None:
        """Write the file ``name`` signed, atomically; a folder that cannot be written is skipped."""
        if not self.usable:
            return
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(self.folder / name, self.mac(payload) + b"\n" + payload)
