"""Parsed definition files: the documents each YAML file of the definition parsed to, kept by the file's text so
that the next run does not parse it again.

Where: ``<root>/.fluxplane-cache/parsed/files.entry``, beside the synth cache and used where it is: ``fluxplane
synth`` reads and writes it, ``synth --check`` and the head tree of ``plan`` and ``diff`` only read it, ``synth
--no-cache`` leaves it alone. It is derived data: delete it at any time, and the next run parses every file.

One signed file (fluxplane.system.keys.Signer, like the synth and validate caches: an HMAC with this user's key, outside
the project; a file that does not verify, does not unmarshal, or is a symlink or a FIFO is ignored, and writes are
atomic), so that a pull request cannot plant parsed documents: what it brings never verifies. It holds, per hash
of a file's text (not its path or its time), the documents parsed from it, each entry marshalled on its own and
loaded anew at every lookup: the loader may change what it reads, and two files can hold the same text. The file
is for one parser: its key is a hash of fluxplane.config.yamlfile's source, PyYAML's version, whether libyaml
parses, and Python's version (marshal's format); the file of another parser is ignored. A text that does not parse
is never kept: it is parsed again and fails with the same error. The file is written when a run parsed a text it
did not hold, with the entries of that run's files only, so it never grows beyond the definition.
"""

from __future__ import annotations

import contextlib
import functools
import marshal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from fluxplane.config import yamlfile
from fluxplane.system.keys import CACHE_DIR, Signer, content_hash, user_key

#: This store's folder in the caches' (fluxplane.system.keys.CACHE_DIR), and its file.
FOLDER = "parsed"
ENTRY = "files.entry"
#: Bumped when what the file holds changes.
FORMAT = 1


@functools.cache
def parser_key() -> str | None:
    """A hash of what a parse depends on besides the text (module docstring); None when the parser's source is
    unknown (no cache then)."""
    try:
        source = Path(yamlfile.__file__).read_bytes()
    except OSError:
        return None
    return content_hash(str(FORMAT), sys.version, yaml.__version__, str(yamlfile.LIBYAML), source)


class ParsedFiles:
    """The parsed files of one project (module docstring), a fluxplane.config.yamlfile.ParseCache; ``key`` signs and
    verifies (None: nothing is read or written), a ``read_only`` store is never written."""

    def __init__(self, folder: Path, key: bytes | None, *, read_only: bool = False) -> None:
        self.signer = Signer(folder, key)
        self.read_only = read_only
        self._code = parser_key()
        self._stored: dict[str, bytes] | None = None
        self._used: dict[str, bytes] = {}
        self._parsed = 0

    @classmethod
    def for_root(cls, root: Path, *, read_only: bool = False) -> ParsedFiles:
        return cls(root / CACHE_DIR / FOLDER, user_key(), read_only=read_only)

    def _entries(self) -> dict[str, bytes]:
        """The entries of the file, read on first use; none when it is missing, does not verify, does not unmarshal
        or is another parser's."""
        if self._stored is None:
            self._stored = {}
            data = self.signer.read_marshalled(ENTRY) if self._code is not None else None
            if data is not None and data.get("code") == self._code and isinstance(data.get("files"), dict):
                self._stored = data["files"]
        return self._stored

    def get(self, text: str) -> list[Any] | None:
        """The documents parsed from ``text``, loaded anew; None when the store does not hold them."""
        if self._code is None:
            return None
        key = content_hash(text)
        entry = self._used.get(key) or self._entries().get(key)
        if entry is None:
            return None
        try:
            documents = marshal.loads(entry)
        except (ValueError, EOFError, TypeError):
            return None
        if not isinstance(documents, list):
            return None
        self._used[key] = entry
        return documents

    def keep(self, text: str, documents: list[Any]) -> None:
        """Keep the documents just parsed from ``text`` (marshalled now, before the caller changes them)."""
        if self._code is None:
            return
        try:
            entry = marshal.dumps(documents)
        except ValueError:  # a value of a type marshal does not take
            return
        self._used[content_hash(text)] = entry
        self._parsed += 1

    def write(self) -> None:
        """Write the entries this run used, when it parsed a text the file did not hold (and is not read only)."""
        if self.read_only or not self._parsed or self._code is None:
            return
        self.signer.write(ENTRY, marshal.dumps({"code": self._code, "files": self._used}))


@contextlib.contextmanager
def parsed_files(root: Path, *, read_only: bool = False) -> Iterator[ParsedFiles]:
    """Read the definition's YAML files under ``root`` through its parsed files inside the ``with`` block, and write
    them when the block ends without an error (a run that stopped early has not read every file)."""
    files = ParsedFiles.for_root(root, read_only=read_only)
    with yamlfile.parsed_from(files):
        yield files
    files.write()
