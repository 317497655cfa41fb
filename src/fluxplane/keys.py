"""This user's key for fluxplane's state in a project: the synth cache and an edit in progress.

The project folder holds files a pull request can bring, so fluxplane signs what it leaves there
(HMAC-SHA256) with a key that lives outside it: ``synth.key`` in ``$XDG_CACHE_HOME/fluxplane`` (default
``~/.cache/fluxplane``), 32 random bytes made on first use, mode 0600. State not written on this
machine by this user never verifies.
"""

from __future__ import annotations

import contextlib
import os
import secrets

from fluxplane.files import write_atomic


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
