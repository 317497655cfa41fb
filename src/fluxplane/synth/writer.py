"""Write dist/ atomically, and compare it with what synth would write.

The new tree is built beside dist/ and swapped in with one ``renameat2(RENAME_EXCHANGE)`` where the
kernel offers it (Linux), so a reader, an error or a killed process sees the old tree or the new one,
never a mix. On other systems the swap is two renames and an interrupted swap is repaired by the next
run. Files that no longer belong vanish with the old tree. The tree is not fsynced: dist/ is derived
data that synth reproduces byte for byte, and flushing tens of thousands of files would cost more
than the whole synth.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from fluxplane.errors import OutputError

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths; False when the platform cannot."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result != 0:
        code = ctypes.get_errno()
        if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # the file system or kernel cannot exchange
            return False
        raise OSError(code, os.strerror(code), str(a))
    return True


def _staging_paths(outdir: Path) -> tuple[Path, Path]:
    return outdir.with_name(f".{outdir.name}.new"), outdir.with_name(f".{outdir.name}.old")


def recover(outdir: Path) -> None:
    """Finish or undo a swap that a crash interrupted, and drop leftovers of an unfinished build."""
    new, old = _staging_paths(outdir)
    if old.exists() and not outdir.exists():
        old.rename(outdir)
    for leftover in (new, old):
        if leftover.exists():
            shutil.rmtree(leftover)


#: What to do about the OS errors a user can fix, by errno; anything else gets the generic advice.
_ADVICE = {
    errno.ENOSPC: "free space on its file system, then run synth again",
    errno.EDQUOT: "free space within your disk quota, then run synth again",
    errno.EACCES: "make {parent} writable for this user, then run synth again",
    errno.EPERM: "make {parent} writable for this user, then run synth again",
    errno.EROFS: "the file system is read-only: remount it read-write or pass --outdir",
    errno.ENOTDIR: "a file stands where a folder should be: move it away",
    errno.EEXIST: "a file stands where a folder should be: move it away",
    errno.EISDIR: "a folder stands where a file should be: move it away",
}


def _output_error(exc: OSError, outdir: Path, new: Path) -> OutputError:
    """One line: the path in dist/ that failed, what to do, the OS error, and that dist/ is unchanged."""
    where = Path(exc.filename) if exc.filename else outdir
    if where == new or new in where.parents:
        where = outdir / where.relative_to(new)  # the staging folder is gone: name the path in dist/
    advice = _ADVICE.get(exc.errno or 0, "check that path, then run synth again").format(parent=outdir.parent)
    return OutputError(f"{where}: cannot write dist/ ({advice}): {exc.strerror or exc}; dist/ was left as it was")


def _abandon(outdir: Path, new: Path, old: Path) -> None:
    """Undo an unfinished write: the old tree back in place (if it was moved aside), no staging folder."""
    if old.exists() and not outdir.exists():
        with contextlib.suppress(OSError):
            old.rename(outdir)
    shutil.rmtree(new, ignore_errors=True)


def write_tree(files: dict[str, str], outdir: Path) -> None:
    """Make ``outdir`` hold exactly ``files`` ({relative path: text}), atomically.

    Any failure before the swap removes the staging folder and leaves ``outdir`` as it was; an OS
    error becomes one OutputError line.
    """
    new, old = _staging_paths(outdir)
    try:
        outdir.parent.mkdir(parents=True, exist_ok=True)
        recover(outdir)
        if outdir.exists() and not outdir.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(outdir))
        made: set[str] = set()
        staging = f"{new}/"  # string paths: Path joins cost a third of writing a large tree
        for relative, text in files.items():
            folder = os.path.dirname(relative)
            if folder not in made:
                os.makedirs(staging + folder, exist_ok=True)
                made.add(folder)
            with open(staging + relative, "wb") as handle:
                handle.write(text.encode("utf-8"))
        if not outdir.exists():
            new.rename(outdir)
            return
        if _exchange(new, outdir):
            old = new  # the old tree now sits in the staging folder
        else:
            outdir.rename(old)
            new.rename(outdir)
    except BaseException as exc:
        _abandon(outdir, new, old)
        if isinstance(exc, OSError):
            raise _output_error(exc, outdir, new) from None
        raise
    # dist/ is complete; whatever of the old tree this cannot remove, the next run's recover() does
    shutil.rmtree(old, ignore_errors=True)


@dataclass
class Staleness:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def stale(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def compare_tree(files: dict[str, str], outdir: Path) -> Staleness:
    """What writing ``files`` would change in ``outdir``."""
    result = Staleness()
    existing: set[str] = set()
    if outdir.is_dir():
        existing = {p.relative_to(outdir).as_posix() for p in outdir.rglob("*") if p.is_file()}
    for relative, text in files.items():
        if relative not in existing:
            result.added.append(relative)
        elif (outdir / relative).read_bytes() != text.encode("utf-8"):
            result.changed.append(relative)
    result.removed = sorted(existing - set(files))
    return result
