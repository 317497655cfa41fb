"""Where synth writes (one rule for the CLI, the library and cdk8s's app), and writing one file so that a reader
sees the old content or the new, never a part, and never through a link.

Files in the project (the synth cache, the sealing records, the CRD cache) may come from someone else's pull
request: a symlink or hard link left where a temporary file goes must not redirect the write. The temporary
file is made anew (``O_EXCL``, ``O_NOFOLLOW``) beside the target and renamed over it, which replaces a link
there instead of writing through it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

#: The folder cdk8s-cli asks an app to write to (``cdk8s synth``, cdk8s.yaml's ``output``).
CDK8S_OUTDIR = "CDK8S_OUTDIR"


#: Folders listed before, by their path as the walk reached them, with their entries (fluxplane.config.links).
Listed = Mapping[str, list[os.DirEntry[str]]]


def folder_entries(folder: str, listed: Listed | None = None) -> list[os.DirEntry[str]]:
    """The entries of ``folder``: as ``listed`` holds them, else listed now; OSError when it cannot be listed."""
    entries = listed.get(folder) if listed else None
    if entries is None:
        with os.scandir(folder) as scan:
            entries = list(scan)
    return entries


def entries_below(
    root: str, *, hidden: bool = True, hidden_folders: bool | None = None, listed: Listed | None = None
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Each entry below the folder ``root`` that is not a folder itself, with its path below ``root`` (POSIX), in no
    set order. One listing per folder, which tells each entry's type without a stat of each file, or the one
    ``listed`` holds; no link is followed (a link to a folder is an entry, not walked into); a folder that cannot be
    listed holds nothing. Without ``hidden``, names that start with a dot are left out, folders and files;
    ``hidden_folders``, when given, says apart whether folders whose name starts with a dot are walked."""
    walk_hidden = hidden if hidden_folders is None else hidden_folders
    pending = [("", root)]
    while pending:
        prefix, folder = pending.pop()
        try:
            entries = folder_entries(folder, listed)
        except OSError:
            continue
        for entry in entries:
            dot = entry.name.startswith(".")
            if entry.is_dir(follow_symlinks=False):
                if walk_hidden or not dot:
                    pending.append((f"{prefix}{entry.name}/", entry.path))
            elif hidden or not dot:
                yield prefix + entry.name, entry


def output_dir(root: Path, outdir: str | os.PathLike[str] | None = None) -> Path:
    """Where synth writes: ``outdir`` when given, else ``$CDK8S_OUTDIR`` (as ``cdk8s synth`` sets it), else
    ``<root>/dist``."""
    if outdir is not None:
        return Path(outdir)
    value = os.environ.get(CDK8S_OUTDIR)
    return Path(value) if value else root / "dist"


def write_atomic(path: Path | str, data: bytes, *, mode: int = 0o666, sync: bool = False) -> None:
    """Replace ``path`` with ``data`` in one step (``mode`` before the umask; ``sync`` flushes it to disk first).

    Raises OSError, with no temporary file left behind, when it cannot.
    """
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        # a leftover of that name (a link to a file elsewhere, say) goes: the file is made anew
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            if sync:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
