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
from collections.abc import Callable
from dataclasses import dataclass
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


#: How much of a file :meth:`Signer.head` reads at first: a synth cache entry's head is mostly far less.
_HEAD_READ = 64 << 10


@dataclass(frozen=True)
class Head:
    """The verified head of a signed file (Signer.write_headed): its ``name`` in the folder, the ``head`` bytes, and
    where its body lies (``offset``, ``body_size``), with the SHA-256 the signed line gives for it."""

    name: str
    head: bytes
    offset: int
    body_size: int
    body_digest: str


class Signer:
    """Signed files in a cache folder of the project, which a pull request can fill: each file is an HMAC-SHA256
    of its payload (with ``key``, this user's) on a line, then the payload; or, for a file whose head is read
    without its body (:meth:`write_headed`), the HMAC of a line that gives the body's size and SHA-256 and of the
    head, then that line, the head and the body. A folder (or its parent) that is a symlink is neither read nor
    written; a file is opened without following a symlink, and only a regular file is read (a FIFO would block); a
    write is atomic and never through a link (fluxplane.system.files.write_atomic). What does not verify reads as
    nothing: a damaged or planted file costs time, never correctness. Without a key (None) nothing is read or
    written."""

    def __init__(self, folder: Path, key: bytes | None) -> None:
        self.folder = folder
        self.key = key

    @functools.cached_property
    def usable(self) -> bool:
        """Whether there is a key, and the folder and its parent are folders themselves (or not there yet)."""
        return self.key is not None and all(
            real_folder(path) is not False for path in (self.folder.parent, self.folder)
        )

    @functools.cached_property
    def _folder(self) -> str:
        return os.fspath(self.folder)

    def mac(self, payload: bytes | memoryview) -> bytes:
        return hmac.new(self.key or b"", payload, hashlib.sha256).hexdigest().encode("ascii")

    def read(self, name: str) -> bytes | None:
        """The payload of the file ``name`` in the folder; None when there is none, or it does not verify."""
        view = self.payload(name)
        return None if view is None else view.tobytes()

    def payload(self, name: str) -> memoryview | None:
        """:meth:`read`'s payload as a view of the bytes read, not a copy of them (the synth cache's entries are
        large, and it decodes them at once)."""
        found = self._read(name, lambda size: (0, size))
        if found is None:
            return None
        raw = found[0]
        newline = raw.find(b"\n")
        if newline < 0:
            return None
        payload = memoryview(raw)[newline + 1 :]
        return payload if hmac.compare_digest(self.mac(payload), raw[:newline]) else None

    def _read(self, name: str, part: Callable[[int], tuple[int, int] | None]) -> tuple[bytes, int] | None:
        """Bytes of the file ``name``, and its size; opened not through a symlink, and only when it is a regular file
        (a FIFO's read would wait for a writer forever). ``part`` gives, for the file's size, where to start and how
        much to read (None: nothing). None when there is no such file or it holds less."""
        if not self.usable:
            return None
        try:
            handle = os.open(f"{self._folder}/{name}", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            stat = os.fstat(handle)
            wanted = part(stat.st_size) if S_ISREG(stat.st_mode) else None
            if wanted is None:
                return None
            offset, size = wanted
            chunks: list[bytes] = []
            while size > 0:
                chunk = os.pread(handle, size, offset)
                if not chunk:
                    return None
                chunks.append(chunk)
                offset, size = offset + len(chunk), size - len(chunk)
            return b"".join(chunks), stat.st_size
        except OSError:
            return None
        finally:
            os.close(handle)

    def write_headed(self, name: str, head: bytes, body: bytes) -> None:
        """Write the file ``name``, atomically: ``head``, signed with a line that gives the size and SHA-256 of
        ``body``, then ``body``. :meth:`head` reads the head alone; :meth:`body` the body, when it is wanted."""
        if not self.usable:
            return
        line = f"{len(head)} {len(body)} {hashlib.sha256(body).hexdigest()}\n".encode("ascii")
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(self.folder / name, self.mac(line + head) + b"\n" + line + head + body)

    def head(self, name: str) -> Head | None:
        """The head of the file ``name`` (:meth:`write_headed`) and where its body lies; None when there is none,
        it does not verify, or the file is not as long as its signed line says."""
        found = self._read(name, lambda size: (0, min(size, _HEAD_READ)))
        if found is None:
            return None
        raw, file_size = found
        mac_end = raw.find(b"\n")
        line_end = raw.find(b"\n", mac_end + 1)
        fields = raw[mac_end + 1 : line_end].split(b" ")
        if mac_end < 0 or line_end < 0 or len(fields) != 3 or not (fields[0].isdigit() and fields[1].isdigit()):
            return None
        offset = line_end + 1 + int(fields[0])
        body_size = int(fields[1])
        if file_size != offset + body_size:
            return None
        if len(raw) < offset:
            rest = self._read(name, lambda size: (len(raw), offset - len(raw)) if size == file_size else None)
            if rest is None:
                return None
            raw += rest[0]
        if not hmac.compare_digest(self.mac(memoryview(raw)[mac_end + 1 : offset]), raw[:mac_end]):
            return None
        return Head(name, raw[line_end + 1 : offset], offset, body_size, fields[2].decode("ascii", "replace"))

    def body(self, head: Head) -> bytes | None:
        """The body of the file :meth:`head` read ``head`` from, when the file still holds it: its size and SHA-256
        are the ones the head's signed line gives; None otherwise."""
        size = head.offset + head.body_size
        found = self._read(head.name, lambda file_size: (head.offset, head.body_size) if file_size == size else None)
        if found is None:
            return None
        data = found[0]
        return data if hmac.compare_digest(hashlib.sha256(data).hexdigest(), head.body_digest) else None

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
