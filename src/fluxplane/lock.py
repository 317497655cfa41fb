"""One changing command at a time per project.

``fluxplane synth`` (``--check`` too: it reads what the others write), ``seal`` and the edit commands
take an exclusive ``flock`` on ``<root>/.fluxplane.lock`` for as long as they run. A second one waits,
saying so once on standard error; the kernel releases the lock when the holder exits, however it exits,
so a killed run never leaves the project locked. The file is never written or removed (it may be
tracked by Git), and one that is a symlink is refused rather than followed.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from fluxplane.errors import ConfigError

#: The lock file, in the project folder.
LOCK_FILE = ".fluxplane.lock"


@contextlib.contextmanager
def project_lock(root: Path) -> Iterator[None]:
    """Hold the project's lock for the ``with`` block, waiting for another command that holds it."""
    path = root / LOCK_FILE
    if not root.is_dir():  # nothing to protect: the command reports the missing project itself
        yield
        return
    try:
        handle = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"{path}: a symbolic link; fluxplane does not follow it: delete it") from None
        raise ConfigError(f"{path}: cannot take the project's lock: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"{path}: waiting for another fluxplane command in this project to finish", file=sys.stderr)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock
