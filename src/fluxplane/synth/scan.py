"""What dist/ and the spare tree beside it hold, as a write sees them: every entry below each folder, with its lstat.

A write looks at both trees entry by entry. The guard compares dist/'s files with what synth writes (their size and
time against the writer's manifest, fluxplane.synth.writer) and walks, in the old tree, the clusters a change
reaches (every file of it counts, one added by hand included); the writer updates the spare into the new tree (an
entry whose size and time match the manifest is kept, any other is compared or removed). At 1,000 clusters that is
66,000 entries: more than a second of one core, the same whatever the change.

So synth lists both trees in a process of its own as soon as it knows it will write (:meth:`TreeScan.start`), while
it loads and renders on the other core. The process hands dist/'s listing over first, which the guard needs, then
lists the spare, which the write needs only after the guard. What that process found is what a listing here would
find at that time: synth holds the project's lock from before the listing until the swap, and the listing is only
read, never trusted for content (a file's bytes are always read from the file). On a machine of one core, where
``fork`` is missing, or for a small tree, each folder is listed here when first asked for.

Each tree is listed against what the last write recorded of it (the writer's manifest, parsed once, by whichever
process lists): a regular file whose record has the size and time its lstat gives is kept with that record, a line
of the manifest's text, and only every other entry carries its lstat. The guard and the write then compare a
file's record with its new digest, and write a kept file's record back as it was read.

Most of a large tree lies in **units**: the folders three levels down (``platform/clusters/<cluster>/``,
``platform/spokes/<cluster>/``), each written from one cluster. The manifest records each unit instead of its files:
a digest of its files' paths and digests (what it holds) and one of every entry below it as an lstat gives it (its
files' paths, sizes and times, and its folders). A listing against those records compares each unit's entries, every
one of them lstat'd, with its record: a unit found exactly as recorded (no entry more or less, none of another kind,
size or time) is handed over as one record instead of its files. The guard and the write take such a unit as a
whole when what synth writes there has the same digest, and look at its files one by one otherwise, comparing their
content (:meth:`Listing.expand`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import signal
import threading
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import chain
from pathlib import Path
from stat import S_IFREG, S_ISDIR, S_ISREG

from fluxplane.system.processes import cores

#: An entry's lstat as a listing keeps it: (st_mode, st_size, st_mtime_ns).
Stat = tuple[int, int, int]

#: What the last write recorded of each file of a tree (fluxplane.synth.writer's manifest), by path below it: a record
#: ``digest<TAB>size<TAB>mtime_ns``, kept as the manifest's text holds it, so that a file recorded and found as
#: recorded is handed on and written back without being taken apart.
Records = dict[str, str]


def record(digest: str, size: int, mtime: int) -> str:
    """The record of a file of ``digest``, ``size`` bytes and modification time ``mtime`` (ns)."""
    return f"{digest}\t{size}\t{mtime}"


def records_digest(entry: str, digest: str) -> bool:
    """Whether the record ``entry`` names the file's digest as ``digest``."""
    return entry.startswith(digest) and entry.startswith("\t", len(digest))


def records_stat(entry: str, size: int, mtime: int) -> bool:
    """Whether the record ``entry`` names a file of ``size`` bytes and modification time ``mtime`` (and is a record:
    a digest, a size and a time)."""
    return entry.endswith(f"\t{size}\t{mtime}") and entry.count("\t") == 2


def inside(path: str) -> bool:
    """Whether ``path`` names a file below a tree: relative, with no empty, ``.`` or ``..`` segment."""
    # every segment between slashes: an empty, "." or ".." one shows as one of these (a leading or trailing slash too)
    wrapped = f"/{path}/"
    return bool(path) and "\0" not in path and "//" not in wrapped and "/./" not in wrapped and "/../" not in wrapped


#: A unit's folder is this many folders down the tree.
UNIT_DEPTH = 3


def unit_of(path: str) -> str | None:
    """The unit the file at ``path`` lies in: its first UNIT_DEPTH folders, with a final slash; None for a file
    higher up."""
    parts = path.split("/", UNIT_DEPTH)
    return "/".join(parts[:UNIT_DEPTH]) + "/" if len(parts) > UNIT_DEPTH else None


def is_unit(key: str) -> bool:
    """Whether ``key`` names a unit (a record's path that stands for the files below a unit's folder)."""
    return key.endswith("/") and unit_of(key + "x") == key


def _digest(parts: Iterable[str]) -> str:
    # a path holds no NUL: "path NUL value NUL" lines cannot run into each other, whatever the names
    return hashlib.sha1("".join(sorted(parts)).encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()


def unit_content(paths: Sequence[str], digests: Iterable[str]) -> str:
    """The digest of what a unit holds: its files' paths (``paths``, sorted) with their digests, in the same order."""
    # a path holds no NUL and a digest is hex: path NUL digest NUL path ... cannot be read two ways
    joined = "\0".join(chain.from_iterable(zip(paths, digests, strict=True)))
    return hashlib.sha1(joined.encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()


def unit_stat(files: Iterable[tuple[str, int, int]], folders: Iterable[str]) -> str:
    """The digest of every entry below a unit's folder as an lstat gives it: each regular file's path, size and time
    (ns), and each folder's path."""
    return _digest([*(f"{path}\0{size}\0{mtime}\0" for path, size, mtime in files), *(f"{f}/\0" for f in folders)])


def unit_record(content: str, stat: str) -> str:
    """The record of a unit (kept under its path, which ends with a slash)."""
    return f"{content}\t{stat}"


def unit_holds(entry: str) -> str:
    """The digest of what the unit of record ``entry`` holds (unit_content)."""
    return entry.partition("\t")[0]


def _kept(records: Records, path: str, stat: Stat) -> str | None:
    """The record of ``path`` when it names the regular file of lstat ``stat`` as it is, else None."""
    entry = records.get(path)
    mode, size, mtime = stat
    return entry if entry is not None and S_ISREG(mode) and records_stat(entry, size, mtime) else None


@dataclass(frozen=True)
class Listing:
    """What a folder holds, by path below it (POSIX): ``entries``, every entry that is not a folder itself (a link
    to a folder is one: no link is followed), with its lstat, but those in ``kept`` and ``units``; ``kept``, the
    regular files the records a tree was listed against (list_tree) name with the size and time the file has, with
    their record; ``units``, the units found exactly as those records record them, with their record, whose entries
    and folders are not listed one by one (but each unit's own folder); ``empty``, the folders that hold nothing;
    ``folders``, every folder below it."""

    entries: dict[str, Stat]
    empty: tuple[str, ...]
    folders: frozenset[str]
    kept: Records = field(default_factory=dict)
    units: Records = field(default_factory=dict)

    @cached_property
    def files(self) -> dict[str, tuple[int, int]]:
        """The regular files among the entries (no link, no FIFO), with (size, mtime_ns); not those of ``units``."""
        found = {path: (size, mtime) for path, (mode, size, mtime) in self.entries.items() if S_ISREG(mode)}
        for path, entry in self.kept.items():
            _, size, mtime = entry.split("\t")
            found[path] = (int(size), int(mtime))
        return found

    @cached_property
    def regular(self) -> set[str]:
        """The path of each regular file (:attr:`files` without their size and time, which a record holds)."""
        found = set(self.kept)
        found.update(path for path, (mode, _, _) in self.entries.items() if S_ISREG(mode))
        return found

    def against(self, records: Records, root: str) -> Listing:
        """This listing as one taken against ``records`` (list_tree): for a listing taken against none, or against
        other records. Each regular file ``records`` names with the size and time it has is ``kept``; a unit
        ``records`` record as the listing found it is one of the ``units``, and one they record otherwise is listed
        entry by entry (:meth:`expand`, ``root`` the folder listed)."""
        moved = {
            path: entry for path, stat in self.entries.items() if (entry := _kept(records, path, stat)) is not None
        }
        listing = self
        if moved:
            entries = {path: stat for path, stat in self.entries.items() if path not in moved}
            listing = replace(self, entries=entries, kept={**self.kept, **moved})
        listing = listing._units_against(records)
        return listing.expand(root, [unit for unit, entry in listing.units.items() if records.get(unit) != entry])

    def _units_against(self, records: Records) -> Listing:
        """This listing with each unit ``records`` record as it found the unit's entries made one of the ``units``."""
        tracked = {
            unit
            for unit in records
            if unit.endswith("/") and unit not in self.units and unit[:-1] in self.folders and is_unit(unit)
        }
        if not tracked:
            return self
        below: dict[str, dict[str, Stat]] = {unit: {} for unit in tracked}
        for path, stat in self.entries.items():
            unit = unit_of(path)
            if unit in below:
                below[unit][path] = stat
        for path, entry in self.kept.items():
            unit = unit_of(path)
            if unit in below:
                _, size, mtime = entry.split("\t")
                below[unit][path] = (S_IFREG, int(size), int(mtime))
        inner: dict[str, list[str]] = {unit: [] for unit in tracked}
        for folder in self.folders:
            unit = unit_of(folder + "/")
            if unit in inner and folder != unit[:-1]:
                inner[unit].append(folder)
        hollow = {unit_of(folder + "/") for folder in self.empty}
        matched = {
            unit for unit in tracked if unit not in hollow and _as_recorded(records[unit], below[unit], inner[unit])
        }
        if not matched:
            return self
        return Listing(
            {path: stat for path, stat in self.entries.items() if unit_of(path) not in matched},
            self.empty,
            frozenset(folder for folder in self.folders if unit_of(folder) not in matched),
            {path: entry for path, entry in self.kept.items() if unit_of(path) not in matched},
            {**self.units, **{unit: records[unit] for unit in sorted(matched)}},
        )

    def expand(self, root: str, units: Collection[str]) -> Listing:
        """This listing with ``units`` listed entry by entry below ``root``, the folder listed: their files as entries,
        with their lstat, whose content whoever reads the listing compares; an OSError when a folder of theirs cannot
        be listed (it was a moment ago, under the same lock)."""
        if not units:
            return self
        entries, empty, folders = dict(self.entries), list(self.empty), set(self.folders)
        for unit in sorted(units):
            found = list_tree(f"{root}/{unit[:-1]}", strict=True)  # no final slash: it would follow a link
            if found is None:  # no longer a folder itself: nothing below it is the tree's
                continue
            entries.update((unit + path, stat) for path, stat in found.entries.items())
            empty.extend(unit + path for path in found.empty)
            folders.update(unit + path for path in found.folders)
            if not found.entries and not found.folders:
                empty.append(unit[:-1])
        others = {unit: entry for unit, entry in self.units.items() if unit not in units}
        return Listing(entries, tuple(empty), frozenset(folders), self.kept, others)

    def without(self, name: str) -> Listing:
        """This listing without the entry ``name`` at its top, or the folder ``name`` with what it holds."""
        if name not in self.folders:
            # an entry: a copy without it, not a walk of every path (a listing of dist/ holds tens of thousands)
            entries, kept = dict(self.entries), dict(self.kept)
            entries.pop(name, None)
            kept.pop(name, None)
            return replace(self, entries=entries, kept=kept)
        below = name + "/"
        return Listing(
            {path: stat for path, stat in self.entries.items() if path != name and not path.startswith(below)},
            tuple(path for path in self.empty if path != name and not path.startswith(below)),
            frozenset(path for path in self.folders if path != name and not path.startswith(below)),
            {path: entry for path, entry in self.kept.items() if path != name and not path.startswith(below)},
            {path: entry for path, entry in self.units.items() if not path.startswith(below)},
        )


def _as_recorded(entry: str, below: Mapping[str, Stat], inner: Iterable[str]) -> bool:
    """Whether a unit that holds ``below`` (every entry below its folder but the folders, with their lstat) and the
    folders ``inner`` (below its own) is as its record ``entry`` says: regular files only, the same entries."""
    if not below or not all(S_ISREG(mode) for mode, _, _ in below.values()):
        return False
    found = unit_stat(((path, size, mtime) for path, (_, size, mtime) in below.items()), inner)
    return entry.count("\t") == 1 and entry.endswith(f"\t{found}")


def list_tree(root: str | os.PathLike[str], *, strict: bool = False, records: Records | None = None) -> Listing | None:
    """What the folder ``root`` holds (Listing), one listing per folder and one lstat per entry; None when ``root``
    is not a folder itself, or a folder below it cannot be listed (whoever needs the listing then looks for
    itself; ``strict`` raises the OSError instead). An entry gone between the listing and its lstat is left out.

    A regular file whose record in ``records`` has the size and modification time its lstat gives is ``kept`` with
    that record, not among the entries. A unit ``records`` records whose entries are all as its record says is one of
    the ``units``; any other unit's entries are listed as the rest are."""
    top = os.fspath(root)
    try:
        if not S_ISDIR(os.lstat(top).st_mode):
            return None
    except OSError:
        return None
    entries: dict[str, Stat] = {}
    kept: Records = {}
    known = records or {}
    tracked = {key for key in known if key.endswith("/") and is_unit(key)}
    empty: list[str] = []
    folders: set[str] = set()
    # per recorded unit: its entries with their lstat, its folders below its own, those of them that hold nothing
    found_units: dict[str, tuple[dict[str, Stat], list[str], list[str]]] = {}
    pending: list[tuple[str, str, str | None]] = [("", top, None)]
    while pending:
        prefix, folder, unit = pending.pop()
        if unit is None and prefix in tracked:
            unit = prefix
            found_units[unit] = ({}, [], [])
            folders.add(prefix[:-1])
        elif unit is not None:
            found_units[unit][1].append(prefix[:-1])
        elif prefix:
            folders.add(prefix[:-1])
        try:
            found = list(os.scandir(folder))
        except OSError:
            if strict:
                raise
            return None
        if prefix and not found:
            (found_units[unit][2] if unit is not None else empty).append(prefix[:-1])
        for entry in found:
            if entry.is_dir(follow_symlinks=False):
                pending.append((f"{prefix}{entry.name}/", entry.path, unit))
                continue
            try:
                stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            path = prefix + entry.name
            lstat = (stat.st_mode, stat.st_size, stat.st_mtime_ns)
            if unit is not None:
                found_units[unit][0][path] = lstat
                continue
            recorded = _kept(known, path, lstat)
            if recorded is not None:
                kept[path] = recorded
            else:
                entries[path] = lstat
    units: Records = {}
    for unit, (below, inner, hollow) in found_units.items():
        if not hollow and _as_recorded(known[unit], below, inner):
            units[unit] = known[unit]
            continue
        for path, lstat in below.items():
            recorded = _kept(known, path, lstat)
            if recorded is not None:
                kept[path] = recorded
            else:
                entries[path] = lstat
        folders.update(inner)
        empty.extend(hollow)
    return Listing(entries, tuple(empty), frozenset(folders), kept, units)


#: What a listing reads first (:class:`TreeScan`'s ``ahead``): what it hands over as it is, and the records dist/'s
#: listing and the spare's are taken against (list_tree), each None when there are none.
Ahead = tuple[object, Records | None, Records | None]


def _parts(dist: str, spare: str, ahead: Callable[[], Ahead] | None) -> Iterator[object]:
    """What the listing process hands over, in the order a write needs it: dist/'s listing with what ``ahead`` gives
    to hand over (None without it), which the guard reads first; then the spare's listing, which the write reads
    after the guard. Each tree is listed against the records ``ahead`` gives of it."""
    found, dist_records, spare_records = ahead() if ahead is not None else (None, None, None)
    yield list_tree(dist, records=dist_records), found
    yield list_tree(spare, records=spare_records)


#: The bytes before each part the listing process hands over: the length of its pickle.
_LENGTH = 8


def _send(out: int, data: bytes) -> None:
    """Write one part to the pipe ``out``: its length, then its pickle; nothing more once the reader is gone."""
    try:
        for chunk in (len(data).to_bytes(_LENGTH, "big"), data):
            left = memoryview(chunk)
            while left:
                left = left[os.write(out, left) :]
    except OSError:  # the write reads nothing more (EPIPE): the process is about to be ended
        return


def _hand_over(out: int, parts: Iterator[object]) -> None:
    """Send each of ``parts`` down the pipe ``out`` while the next one is made: the first waits in the pipe until
    the write reads it, which would hold up the listing of the spare."""
    sending: threading.Thread | None = None
    for part in parts:
        data = pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
        if sending is not None:
            sending.join()
        sending = threading.Thread(target=_send, args=(out, data))
        sending.start()
    if sending is not None:
        sending.join()


#: A part the listing process did not hand over (it ended early).
_MISSING = object()


def _read_exactly(reader: int, size: int) -> bytes | None:
    """``size`` bytes from the pipe ``reader``; None when it ends before."""
    chunks: list[bytes] = []
    while size:
        chunk = os.read(reader, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _end(pid: int, reader: int) -> None:
    """End a listing process whose result is not wanted (or was read): its pipe closed, the process ended and
    waited for, so that none is left behind."""
    with contextlib.suppress(OSError):
        os.close(reader)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(OSError):
        os.waitpid(pid, 0)


class TreeScan:
    """The listings of ``dist`` and ``spare`` for one write: taken by a process of its own once :meth:`start` says
    so, else here when first asked for. ``ahead`` is what a listing reads first (:data:`Ahead`): the writer's
    manifest, parsed, which :meth:`ahead` hands over, and the records each tree is listed against, wherever it is
    listed."""

    def __init__(self, dist: Path, spare: Path, ahead: Callable[[], Ahead] | None = None) -> None:
        self._paths = (os.fspath(dist), os.fspath(spare))
        self._ahead = ahead
        self._read_ahead: object = None
        #: What ``ahead`` gave here, for a listing taken here
        self._ahead_here: Ahead | None = None
        self._found: dict[int, Listing | None] = {}
        self._process: weakref.finalize[..., TreeScan] | None = None
        self._pid = 0
        self._reader = -1
        #: How many of the process's parts were read (_parts)
        self._received = 0

    def start(self) -> None:
        """List both trees in a process of its own, beside the caller's work, on a machine of more than one core
        with ``fork``. The caller starts it for a large tree only: for a small one the process costs more than it
        saves."""
        if self._process is not None or self._found or cores() < 2 or not hasattr(os, "fork"):
            return
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the listing process: list, hand the result over, end without the parent's exit handlers
            code = 1
            try:
                os.close(reader)
                # Only its own pipe stays open: a descriptor another thread had open at the fork (the pipes of a
                # Popen starting Node.js for cdk8s, whose owner waits for them to close) is that thread's
                os.closerange(3, writer)
                os.closerange(writer + 1, os.sysconf("SC_OPEN_MAX"))
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _hand_over(writer, _parts(*self._paths, self._ahead))
                code = 0
            finally:
                os._exit(code)
        os.close(writer)
        self._pid, self._reader = pid, reader
        self._process = weakref.finalize(self, _end, pid, reader)

    def _receive(self, part: int) -> None:
        """Read the started process's parts (_parts) up to ``part`` (0: dist/'s listing and what was read ahead, 1:
        the spare's listing), each as soon as it is asked for; once all are read, or the process failed (a listing
        it did not hand over is then taken here), the process is ended."""
        while self._process is not None and self._received <= part:
            found: object = _MISSING  # not None, which is a listing: the spare is not a folder
            try:
                head = _read_exactly(self._reader, _LENGTH)
                data = _read_exactly(self._reader, int.from_bytes(head, "big")) if head is not None else None
                if data is not None:
                    found = pickle.loads(data)  # the output of our own child
            except (OSError, pickle.UnpicklingError, EOFError):
                found = _MISSING
            if self._received == 0 and isinstance(found, tuple) and len(found) == 2:
                self._found[0], self._read_ahead = found
            elif self._received == 1 and (found is None or isinstance(found, Listing)):
                self._found[1] = found
            else:  # ended early, or handed over something else: nothing more comes from it
                self._end_process()
                return
            self._received += 1
        if self._received == 2:
            self._end_process()

    def _end_process(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process()

    def _listing(self, index: int) -> Listing | None:
        self._receive(index)
        if index not in self._found:
            if self._ahead_here is None:
                self._ahead_here = self._ahead() if self._ahead is not None else (None, None, None)
            _, dist_records, spare_records = self._ahead_here
            self._found[index] = list_tree(self._paths[index], records=spare_records if index else dist_records)
        return self._found[index]

    def ahead(self) -> object:
        """What ``ahead`` gave in the listing process; None when no process ran it (the caller then reads for
        itself)."""
        self._receive(0)
        return self._read_ahead

    def dist(self) -> Listing | None:
        """What dist/ holds; None when it is not a folder itself."""
        return self._listing(0)

    def spare(self) -> Listing | None:
        """What the spare holds; None when it is not a folder itself."""
        return self._listing(1)
