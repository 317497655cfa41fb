"""Write dist/ atomically; comparing it with what synth would write, and the rest of what synth does with the
output folder, is fluxplane.synth.outdir.

One module because the swap, the spare tree and its manifest are one protocol over the same folders beside
dist/: each run trusts, and repairs, what the previous one left there.

The new tree is built beside dist/ and swapped in with one ``renameat2(RENAME_EXCHANGE)`` where the
kernel offers it (Linux), so a reader, an error or a killed process sees the old tree or the new one,
never a mix. On other systems the swap is two renames and an interrupted swap is repaired by the next
run. Files that no longer belong vanish with the old tree. The tree is not fsynced: dist/ is derived
data that synth reproduces byte for byte, and flushing tens of thousands of files would cost more
than the whole synth.

The tree a swap replaces is not deleted: it is kept beside dist/ as ``.dist.spare`` with a manifest
of every file's digest, size and modification time (a cluster's folder, a unit of fluxplane.synth.scan, as one
record of what it holds and of its entries), and the next synth builds its new tree by
updating the spare in place: it writes only the files that differ and removes those that no longer
belong. For a one-cluster change in a fleet of 1,000 clusters that is a few files instead of writing
21,000 and deleting as many, which was half the time of such a synth. The manifest is removed before
the spare is touched; a spare without one (interrupted mid-update, or the first tree synth replaced)
is compared file by file instead. A file whose size or modification time differs from the manifest
is rewritten; a unit found as recorded that holds what synth writes there is kept whole, and any other unit's
files are compared. What the spare holds is listed on every run, never taken from the manifest alone: an
entry the manifest does not name (added by hand, or brought by a pull request) is compared or
removed, so it never passes into dist/. A file is rewritten as a new file, so a symlink, a hard link
to a file elsewhere or a FIFO in the spare is replaced, never written through. The price is a second
copy of dist/ on disk and a listing of it on every run (about 70 ms for 33,000 files on tmpfs). For a large
tree, synth takes that listing, with an lstat of each entry, in a process of its own while it loads and renders
(fluxplane.synth.scan), and :func:`write_tree` reads it instead of looking at each file again.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import hashlib
import operator
import os
import posixpath
import shutil
from collections.abc import Callable, Collection, Iterable, Iterator, KeysView, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG

from fluxplane.errors import CacheChanged, OutputError
from fluxplane.synth.outdir import Staleness, check_outdir, compare_tree, copy_tree, read_kept, regular_files
from fluxplane.synth.scan import (
    Ahead,
    Listing,
    Records,
    TreeScan,
    inside,
    is_unit,
    list_tree,
    record,
    records_digest,
    unit_content,
    unit_holds,
    unit_of,
    unit_record,
    unit_stat,
)

# The output folder's other operations stay importable from here, where synth and its tests have taken them.
__all__ = [
    "MANIFEST",
    "DeferredTexts",
    "Records",
    "Staleness",
    "TreeFiles",
    "check_outdir",
    "compare_tree",
    "copy_tree",
    "forget_text_digests",
    "inside",
    "keep_read",
    "large_tree",
    "read_ahead",
    "read_kept",
    "recorded",
    "recover",
    "regular_files",
    "remember_digests",
    "spare_path",
    "text_digest",
    "units_of",
    "write_tree",
]

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


def spare_path(outdir: Path) -> Path:
    """Where the tree the last swap replaced is kept, for the next synth to update."""
    return outdir.with_name(f".{outdir.name}.spare")


#: The spare's manifest, inside the spare: a line ``tree`` or ``tree unknown``, a line per file of the
#: spare (path, digest, size, mtime_ns, tab-separated: the path and its record, fluxplane.synth.scan.Records), a line
#: ``dist``, a line per file of dist/.
MANIFEST = ".fluxplane-tree"


def _digest(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def _manifest(tree: Records | None, current: Records) -> str:
    def lines(records: Records) -> str:
        return "".join(map("{0[0]}\t{0[1]}\n".format, records.items()))

    head = "tree\n" + lines(tree) if tree is not None else "tree unknown\n"
    return head + "dist\n" + lines(current)


def _read_manifest(text: str) -> tuple[Records | None, Records]:
    """(the spare's files or None when unknown, dist/'s files); ValueError when it is not a manifest.

    A record is kept as its text: one that is not a digest, a size and a time never matches a file (list_tree), so
    that file is looked at as one the manifest does not record."""
    head, separator, rest = text.partition("\n")
    if not separator or head not in ("tree", "tree unknown"):
        raise ValueError(MANIFEST)
    lines = rest.splitlines()
    try:
        middle = lines.index("dist")
    except ValueError:
        raise ValueError(MANIFEST) from None
    sections: list[Records] = []
    for part in (lines[:middle], lines[middle + 1 :]):
        # a line without a tab is no record: dict() raises ValueError
        section: Records = dict(line.split("\t", 1) for line in part)
        for path in section:
            if not inside(path) and not (is_unit(path) and inside(path[:-1])):
                raise ValueError(path)
        sections.append(section)
    return (sections[0] if head == "tree" else None), sections[1]


#: The last manifest read, by (path, size, mtime_ns): the guard and the write of one synth read the same one.
_READ: dict[tuple[str, int, int], tuple[Records | None, Records]] = {}


def _manifest_of(spare: Path) -> tuple[Records | None, Records]:
    """The spare's manifest, parsed (read once per synth); ValueError and OSError as reading it raises them.

    Only a regular file is read: a symlink is not followed, and a FIFO would block the read forever.
    """
    path = spare / MANIFEST
    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(handle, "rb") as reader:
        stat = os.fstat(handle)
        if not S_ISREG(stat.st_mode):
            raise ValueError(MANIFEST)
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        found = _READ.get(key)
        if found is None:
            _READ.clear()
            found = _READ[key] = _read_manifest(reader.read().decode("utf-8"))
    return found


def read_ahead(outdir: Path) -> Ahead:
    """What a listing of dist/ and its spare reads first (fluxplane.synth.scan.TreeScan): the spare's manifest,
    parsed as :func:`recorded` and the write read it, to hand over to :func:`keep_read` in the process that writes,
    and the records of dist/ and of the spare it holds, which the listings are taken against. Nothing when there
    is no readable manifest."""
    spare = spare_path(outdir)
    if spare.is_symlink():
        return None, None, None
    try:
        tree, current = _manifest_of(spare)
    except (OSError, ValueError, UnicodeDecodeError):
        return None, None, None
    return dict(_READ), current, tree


def keep_read(found: object) -> None:
    """Keep the manifest the listing process parsed (:func:`read_ahead`): it is used only while the file's path,
    size and modification time are still those it was read with; otherwise the file is read again."""
    if isinstance(found, dict) and len(found) == 1:
        _READ.clear()
        _READ.update(found)


#: A manifest this large (about 2,000 files, most of them in units of a dozen or more) makes listing the trees in a
#: process of its own worth it (fluxplane.synth.scan).
_LARGE_MANIFEST = 20_000


def large_tree(outdir: Path) -> bool:
    """Whether the last write recorded a large tree (its manifest's size tells): one worth listing, with its spare,
    beside synth's other work (fluxplane.synth.scan)."""
    try:
        return os.stat(spare_path(outdir) / MANIFEST).st_size >= _LARGE_MANIFEST
    except OSError:
        return False


def recorded(outdir: Path) -> Records:
    """dist/'s files as the last write recorded them (digest, size, mtime; a unit's as one record), from the spare's
    manifest.

    Only a hint, to skip reading files that did not change: a file whose size and time differ from its
    entry is read. Empty when there is no readable manifest.
    """
    spare = spare_path(outdir)
    if spare.is_symlink():
        return {}
    try:
        return _manifest_of(spare)[1]
    except (OSError, ValueError, UnicodeDecodeError):
        return {}


#: Digests of output texts by the text's identity, computed by the guard for the write that follows, or known
#: beforehand (remember_digests): the two look at every file of the same output. Each entry holds its text, so an
#: identity is never reused while it is here; the write empties it.
_TEXT_DIGESTS: dict[int, tuple[str, str]] = {}


def text_digest(text: str) -> str:
    """The digest of ``text`` (UTF-8), remembered for the next write_tree."""
    found = _TEXT_DIGESTS.get(id(text))
    if found is not None and found[0] is text:
        return found[1]
    result = _digest(text.encode("utf-8"))
    _TEXT_DIGESTS[id(text)] = (text, result)
    return result


def remember_digests(texts: Collection[str], digests: Iterable[str]) -> None:
    """Texts whose digests (of their UTF-8, as :func:`text_digest` takes them) are known already, in the same order:
    the synth cache's entries, signed, carry their files' digests, so the guard and the write that follow hash only
    the files rendered anew."""
    _TEXT_DIGESTS.update(zip(map(id, texts), zip(texts, digests, strict=True), strict=True))


def forget_text_digests() -> None:
    """Drop the remembered digests, and the files units_of took apart last (and the texts they hold)."""
    _TEXT_DIGESTS.clear()
    _UNITS.clear()


class DeferredTexts:
    """The texts of files whose paths and digests are known before their texts are read (a cluster the synth cache
    gives, fluxplane.synth.cache): ``read`` gives them, in the order of ``paths``, or None when they can no longer be
    had; they are read once, when one is first asked for or :meth:`load` is called. ``source`` names where they come
    from, in the error when they cannot be read."""

    __slots__ = ("_digests", "_read", "_texts", "digests", "paths", "source")

    def __init__(
        self, paths: Sequence[str], digests: Sequence[str], read: Callable[[], list[str] | None], source: str
    ) -> None:
        self.paths = paths
        self.digests = digests
        self.source = source
        self._read = read
        self._texts: dict[str, str] | None = None
        self._digests: dict[str, str] | None = None

    def load(self) -> bool:
        """Read the texts, if they are not yet; whether they could be."""
        if self._texts is None:
            texts = self._read()
            if texts is None or len(texts) != len(self.paths):
                return False
            self._texts = dict(zip(self.paths, texts, strict=True))
        return True

    def text(self, path: str) -> str:
        """The text of the file at ``path``, the texts read (and their digests remembered for the write) when they are
        not yet: CacheChanged when they can no longer be."""
        texts = self._texts
        if texts is None:
            if not self.load():
                raise CacheChanged(f"{self.source}: changed while synth ran, so it was not used; run synth again")
            assert self._texts is not None  # load read them
            texts = self._texts
            remember_digests(texts.values(), self.digests)
        return texts[path]

    def digest(self, path: str) -> str:
        """The digest of the file at ``path`` (text_digest), its text not read."""
        digests = self._digests
        if digests is None:
            digests = self._digests = dict(zip(self.paths, self.digests, strict=True))
        return digests[path]


#: A file's text in TreeFiles: the text, or the DeferredTexts that holds it.
FileText = str | DeferredTexts


class TreeFiles(Mapping[str, str]):
    """A tree's files ({path under dist/: text}, in the order given), some of whose texts are read only when one is
    asked for (DeferredTexts): a one-cluster change of a large fleet takes every other cluster from the synth cache,
    and the guard and the write compare units by digest, so they need the texts of the few files that differ from
    dist/ alone. ``raw`` holds each file's FileText."""

    __slots__ = ("raw",)

    def __init__(self, raw: dict[str, FileText]) -> None:
        self.raw = raw

    @classmethod
    def of(cls, files: Mapping[str, str]) -> TreeFiles:
        """``files`` as TreeFiles: the same object when they are."""
        return files if isinstance(files, TreeFiles) else cls(dict(files))

    @classmethod
    def deferred(cls, texts: DeferredTexts) -> TreeFiles:
        """The files whose texts ``texts`` holds."""
        return cls(dict.fromkeys(texts.paths, texts))

    def __getitem__(self, path: str) -> str:
        found = self.raw[path]
        return found if isinstance(found, str) else found.text(path)

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    def __contains__(self, path: object) -> bool:
        return path in self.raw

    def keys(self) -> KeysView[str]:
        return self.raw.keys()

    def digest(self, path: str) -> str:
        """The digest of the file at ``path`` (text_digest), without reading a deferred text."""
        found = self.raw[path]
        return text_digest(found) if isinstance(found, str) else found.digest(path)

    def merged(self, more: Mapping[str, str]) -> TreeFiles:
        """These files and ``more``, which win where both have a path."""
        return TreeFiles({**self.raw, **(more.raw if isinstance(more, TreeFiles) else more)})

    def as_dict(self) -> dict[str, str]:
        """Every file with its text, deferred ones read (CacheChanged when they can no longer be)."""
        return {path: self[path] for path in self.raw}


@dataclass(frozen=True)
class Units:
    """The files of a tree by unit (fluxplane.synth.scan.unit_of): ``members``, each unit's paths; ``holds``, the
    digest of what each unit holds (fluxplane.synth.scan.unit_content); ``loose``, the paths in no unit."""

    members: dict[str, list[str]]
    holds: dict[str, str]
    loose: list[str]

    def outside(self, units: Collection[str]) -> Iterator[str]:
        """Every path but those of ``units``."""
        yield from self.loose
        for unit, paths in self.members.items():
            if unit not in units:
                yield from paths


#: The last files units_of took apart, and what it found: the guard and the write of one synth take the same files.
_UNITS: list[tuple[list[str], list[FileText], Units]] = []


def units_of(files: Mapping[str, str]) -> Units:
    """``files`` ({path: text}) by unit, each unit with the digest of what it holds (its files' digests: text_digest,
    remembered for the write, or the known digests of TreeFiles' deferred texts, which are not read). The same files
    (each path and text the same object) as the last call's give the same result, found once."""
    raw: Mapping[str, FileText] = files.raw if isinstance(files, TreeFiles) else files
    paths, texts = list(raw), list(raw.values())
    if _UNITS:
        last_paths, last_texts, found = _UNITS[0]
        if (
            len(last_paths) == len(paths)
            and all(map(operator.is_, last_paths, paths))
            and all(map(operator.is_, last_texts, texts))
        ):
            return found
        _UNITS.clear()
    found = _units_of(raw)
    _UNITS.append((paths, texts, found))
    return found


def _units_of(files: Mapping[str, FileText]) -> Units:
    members: dict[str, tuple[list[str], list[FileText]]] = {}
    loose: list[str] = []
    unit: str | None = None
    paths: list[str] = loose
    texts: list[FileText] = []
    for path, text in files.items():
        # a tree's paths come sorted, so mostly a path lies in the unit of the one before
        if unit is None or not path.startswith(unit):
            unit = unit_of(path)
            if unit is None:
                loose.append(path)
                continue
            paths, texts = members.setdefault(unit, ([], []))
        paths.append(path)
        texts.append(text)
    remembered = _TEXT_DIGESTS
    holds: dict[str, str] = {}
    for unit, (paths, texts) in members.items():
        if paths != sorted(paths):
            order = sorted(range(len(paths)), key=paths.__getitem__)
            paths[:], texts[:] = [paths[i] for i in order], [texts[i] for i in order]
        digests = [
            (found[1] if (found := remembered.get(id(text))) is not None and found[0] is text else text_digest(text))
            if isinstance(text, str)
            else text.digest(path)
            for path, text in zip(paths, texts, strict=True)
        ]
        holds[unit] = unit_content(paths, digests)
    return Units({unit: paths for unit, (paths, _) in members.items()}, holds, loose)


def _by_unit(written: Records, kept: Records) -> Records:
    """The records of a tree as its manifest holds them: ``written``, a record per file, with each unit's files'
    records made into the unit's (its content and its entries' lstats: the files and the folders below its own, which
    are those of its files, since the tree holds nothing else); ``kept``, units' records taken as they were."""
    found: Records = dict(kept)
    units: dict[str, list[tuple[str, str]]] = {}
    for path, entry in written.items():
        unit = unit_of(path)
        if unit is None:
            found[path] = entry
        else:
            units.setdefault(unit, []).append((path, entry))
    for unit, entries in units.items():
        parsed = sorted((path, *entry.split("\t")) for path, entry in entries)
        folders: set[str] = set()
        for path, _ in entries:
            folder = posixpath.dirname(path)
            while len(folder) >= len(unit) and folder not in folders:
                folders.add(folder)
                folder = posixpath.dirname(folder)
        found[unit] = unit_record(
            unit_content([path for path, _, _, _ in parsed], [digest for _, digest, _, _ in parsed]),
            unit_stat(((path, int(size), int(mtime)) for path, _, size, mtime in parsed), folders),
        )
    return found


def recover(outdir: Path) -> None:
    """Finish or undo a swap that a crash interrupted, and drop leftovers of an unfinished build."""
    new, old = _staging_paths(outdir)
    if _is_folder(old) and not os.path.lexists(outdir):
        old.rename(outdir)
    for leftover in (new, old):
        _remove(leftover)


def _is_folder(path: Path) -> bool:
    """A folder itself, not a symlink to one."""
    try:
        return S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove(path: Path) -> None:
    """Remove ``path``: a folder with what it holds, anything else (a symlink: the link) by itself."""
    if _is_folder(path):
        shutil.rmtree(path)  # removes the links it holds, never what they point to
    elif os.path.lexists(path):
        os.unlink(path)


def _take_spare(outdir: Path, new: Path, listed: Listing | None = None) -> tuple[Listing, Records | None, Records]:
    """Move the spare to ``new`` for updating: (what it holds, its folders being folders themselves, dist/'s files as
    its manifest records them, the spare's own files as the manifest records them).

    ``listed`` is the spare's listing taken since synth holds its lock (fluxplane.synth.scan), against the records
    of the spare's manifest; without it the spare is listed here, the same way (an OSError when a folder of it
    cannot be listed).

    The manifest is removed first (whatever it is: a folder too). The spare is listed: a unit whose entries are all
    as the manifest records them is one of the ``units``, each entry that is not a folder (a symlink is one, never
    followed) is ``kept`` with its record when the manifest records it with the size and time it has; any other is
    compared or written anew, and removed if synth does not write it. An entry
    the manifest does not record (a spare interrupted mid-update, the first tree a synth replaced, or an entry added
    by hand) has its content compared before it is kept. Empty folders go. An empty listing when there is no spare.
    """
    spare = spare_path(outdir)
    if not _is_folder(spare):
        _remove(spare)  # a symlink or a file in the spare's place is not fluxplane's
        return Listing({}, (), frozenset()), None, {}
    tree: Records | None = None
    current: Records | None = None
    with contextlib.suppress(OSError, ValueError, UnicodeDecodeError):
        tree, current = _manifest_of(spare)
    _remove(spare / MANIFEST)
    spare.rename(new)
    listed = (listed or list_tree(new, strict=True, records=tree) or Listing({}, (), frozenset())).without(MANIFEST)
    # a listing taken against no records, or others, keeps what these record
    listed = listed.against(tree or {}, os.fspath(new))
    folders = set(listed.folders)
    for folder in listed.empty:
        while folder:
            try:
                os.rmdir(f"{new}/{folder}")
            except OSError:  # not empty: its parents are not empty either
                break
            folders.discard(folder)
            folder = os.path.dirname(folder)
    return Listing(listed.entries, (), frozenset(folders), listed.kept, listed.units), current, tree or {}


def _keep_spare(outdir: Path, replaced: Path, tree: Records | None, current: Records) -> None:
    """Keep the tree a swap replaced as the spare, with its manifest: ``tree`` (its files, when
    known) and ``current`` (the files now in dist/)."""
    with contextlib.suppress(OSError):
        # dist/ may have held an entry of that name (a symlink to a file elsewhere, say): it goes first
        _remove(replaced / MANIFEST)
        _write(str(replaced / MANIFEST), _manifest(tree, current).encode("utf-8"))
        replaced.rename(spare_path(outdir))
        return
    shutil.rmtree(replaced, ignore_errors=True)


def _start_spare(outdir: Path, current: Records) -> None:
    """After a first write: an empty spare whose manifest records dist/'s files, so that the next synth,
    building its tree in the spare, knows which files of the tree it replaces are as written."""
    spare = spare_path(outdir)
    with contextlib.suppress(OSError):
        spare.mkdir()
        _write(str(spare / MANIFEST), _manifest({}, current).encode("utf-8"))


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


class _Linked(Exception):
    """The spare holds a symlink, or something else than a folder, where a folder of the tree goes."""


class _Folders:
    """The folders of a tree being filled, each checked once to be a folder itself (or absent); ``listed`` are
    folders a listing of the tree just found to be folders themselves (never links), which need no check."""

    def __init__(self, root: str, listed: Iterable[str] = ()) -> None:
        self.root = root
        self.checked: set[str] = {"", *listed}

    def check(self, folder: str) -> None:
        """Raise _Linked unless every folder on the way to ``folder`` is a folder or absent."""
        if folder in self.checked:
            return
        self.check(os.path.dirname(folder))
        try:
            mode = os.lstat(self.root + folder).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and not S_ISDIR(mode):
            raise _Linked(folder)
        self.checked.add(folder)


def _fill(new: str, files: TreeFiles, spare: Listing, records: Records) -> Records:
    """Make the folder ``new`` hold ``files``: remove what no longer belongs, then write what differs from what it
    holds; the records of the result, as the manifest holds them (a unit's instead of its files').

    ``spare`` is what ``new`` holds (its listing against ``records``, which record its files as the manifest does,
    fluxplane.synth.scan.list_tree): a unit found as recorded that holds what synth writes there stays as it is,
    whole; a file kept there with a record of the same digest stays as it is; an entry the records do not name (a
    unit's file, when the unit holds something else) is compared, and kept when its content is the same. Nothing is
    written, read or removed through a symlink: a folder of the tree that is not a folder raises _Linked (the spare
    is then not used); a file that differs is removed and written anew, so a symlink, a hard link or a FIFO there is
    replaced, never written through.
    """
    units = units_of(files)
    whole = {unit: entry for unit, entry in spare.units.items() if units.holds.get(unit) == unit_holds(entry)}
    spare = spare.expand(new[:-1], spare.units.keys() - whole.keys())
    guard = _Folders(new, spare.folders)
    kept, entries = spare.kept, spare.entries
    folders: set[str] = set()
    for relative in (kept.keys() | entries.keys()) - files.keys():
        guard.check(os.path.dirname(relative))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(new + relative)  # a symlink itself goes, never what it points to
        folders.add(os.path.dirname(relative))
    for folder in sorted(folders, key=lambda name: -name.count("/")):
        while folder:
            try:
                os.rmdir(new + folder)
            except OSError:  # not empty (or gone): its parents are not empty either
                break
            folder = os.path.dirname(folder)
    written: Records = {}
    made: set[str] = set()
    checked, remembered, raw = guard.checked, _TEXT_DIGESTS, files.raw
    for relative in units.outside(whole):
        text = raw[relative]
        # encoded only when needed: a file kept from the spare whose digest is known (remember_digests, the guard's,
        # or a deferred text's) needs no bytes, nor its text read
        data: bytes | None = None
        if not isinstance(text, str):
            digest = text.digest(relative)
        elif (found := remembered.get(id(text))) is not None and found[0] is text:
            digest = found[1]
        else:
            data = text.encode("utf-8")
            digest = _digest(data)
        folder = relative.rpartition("/")[0]  # the same as os.path.dirname for the relative paths of a tree
        if folder not in checked:
            guard.check(folder)
        entry = kept.get(relative)
        if entry is not None and records_digest(entry, digest):
            # the common case: a regular file whose record, size and time are as recorded
            written[relative] = entry
            continue
        path = new + relative  # string paths: Path joins cost a third of writing a large tree
        stat = entries.get(relative)
        if stat is not None and relative not in records:  # not in the manifest: compare the content
            mode, size, mtime = stat
            if data is None:
                data = files[relative].encode("utf-8")
            if S_ISREG(mode) and size == len(data):
                with contextlib.suppress(OSError), open(path, "rb") as handle:
                    if handle.read() == data:
                        written[relative] = record(digest, size, mtime)
                        continue
        if folder not in made:
            os.makedirs(new + folder, exist_ok=True)
            made.add(folder)
        if entry is not None or stat is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)  # a link goes, never what it points to; a hard link's other names keep their data
        written[relative] = record(digest, *_write(path, files[relative].encode("utf-8") if data is None else data))
    return _by_unit(written, whole)


_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _write(path: str, data: bytes) -> tuple[int, int]:
    """Write ``data`` to a new file at ``path``: whatever stands there (a symlink, a hard link to a file
    elsewhere, a FIFO) is removed first, never written through; its size and modification time."""
    try:
        handle = os.open(path, _WRITE_FLAGS, 0o666)
    except FileExistsError:
        os.unlink(path)
        handle = os.open(path, _WRITE_FLAGS, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view) :]  # a short write continues where it stopped
        stat = os.fstat(handle)
    finally:
        os.close(handle)
    return stat.st_size, stat.st_mtime_ns


def _check_target(outdir: Path, files: Mapping[str, str]) -> None:
    """Refuse to replace anything but a tree of fluxplane's: a symlink, or a folder that holds none of
    what synth writes (nor what the last write recorded) is not one."""
    try:
        mode = os.lstat(outdir).st_mode
    except FileNotFoundError:
        return
    if S_ISLNK(mode):
        raise OutputError(
            f"{outdir}: a symbolic link (to {os.readlink(outdir)}); synth writes its output as a folder of its "
            "own and does not follow links out of it: remove the link, or pass --outdir; nothing written"
        )
    if not S_ISDIR(mode):
        return  # write_tree's own error: a file stands where the folder should be
    held = set(os.listdir(outdir))
    if held and not _meets(held, files) and not _meets(held, recorded(outdir)):
        shown = ", ".join(sorted(held)[:3]) + (", …" if len(held) > 3 else "")
        raise OutputError(
            f"{outdir}: holds {shown}, none of which synth writes, and synth replaces the whole folder; "
            "pass an --outdir that is empty, new, or written by synth; nothing written"
        )


def _meets(names: Collection[str], paths: Iterable[str]) -> bool:
    """Whether one of ``paths`` starts with one of ``names`` (its first segment is one): mostly the first path does,
    so a tree of tens of thousands of files is not gone through to say so."""
    return any(path.partition("/")[0] in names for path in paths)


def write_tree(files: Mapping[str, str], outdir: Path, scan: TreeScan | None = None) -> None:
    """Make ``outdir`` hold exactly ``files`` ({relative path: text}), atomically; of TreeFiles, only the texts of
    files that differ from what the spare holds are read.

    Any failure before the swap removes the staging folder and leaves ``outdir`` as it was; an OS
    error becomes one OutputError line. ``outdir`` must be a folder of fluxplane's (see _check_target).
    ``scan`` gives the spare's listing when synth took it beside its other work (fluxplane.synth.scan).
    """
    files = TreeFiles.of(files)
    _check_target(outdir, files)
    new, old = _staging_paths(outdir)
    try:
        outdir.parent.mkdir(parents=True, exist_ok=True)
        recover(outdir)
        if outdir.exists() and not outdir.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(outdir))
        spare, current, records = _take_spare(outdir, new, scan.spare() if scan is not None else None)
        new.mkdir(exist_ok=True)
        try:
            try:
                written = _fill(f"{new}/", files, spare, records)
            except _Linked:  # not a tree fluxplane left: start from an empty folder
                shutil.rmtree(new)
                new.mkdir()
                current = None
                written = _fill(f"{new}/", files, Listing({}, (), frozenset()), {})
        finally:
            forget_text_digests()
        if not outdir.exists():
            new.rename(outdir)
            _start_spare(outdir, written)
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
    # dist/ is complete; the tree it replaced becomes the spare (its files are what dist/ held
    # before, as the last run recorded them, unless dist/ was not written by fluxplane)
    _keep_spare(outdir, old, current, written)
