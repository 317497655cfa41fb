"""One changing command at a time per project.

``fluxplane synth`` (``--check`` too: it reads what the others write), ``seal`` and the edit commands
take an exclusive ``flock`` on the project folder itself for as long as they run. A second one waits,
saying so once on standard error; the kernel releases the lock when the holder exits, however it exits,
so a killed run never leaves the project locked. Locking a folder creates no file: a command that
writes nothing (``synth --check``, a refused change) leaves the project exactly as it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from fluxplane.errors import ConfigError


@contextlib.contextmanager
def project_lock(root: Path) -> Iterator[None]:
    """Hold the lock of the project in ``root`` for the ``with`` block, waiting while another command holds it.

    A ``root`` that is missing or not a folder (``--root`` naming a file) is a ConfigError: the project the
    command would change is not there. One that cannot be opened otherwise (no read permission) is not
    locked: the command then reports what it cannot read itself.
    """
    try:
        handle = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError) as exc:
        what = "no such project folder" if isinstance(exc, FileNotFoundError) else "not a folder"
        raise ConfigError(f"{root}: {what}; --root names the project folder, the one holding environments/") from None
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"{root}: waiting for another fluxplane command in this project to finish", file=sys.stderr)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock
