"""Tests for fluxplane.synth.scan: listings of dist/ and its spare, taken here or by a process of their own."""

from __future__ import annotations

import gc
import os
import select
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fluxplane.synth import scan
from fluxplane.synth.scan import Listing, TreeScan, list_tree


def _tree(root: Path) -> None:
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "x.yaml").write_text("x: 1\n")
    (root / "a" / "empty").mkdir()
    (root / "top.yaml").write_text("top: true\n")
    (root / "outside").mkdir()
    (root / "link-to-folder").symlink_to(root / "outside")
    (root / "a" / "link-to-file").symlink_to(root / "top.yaml")
    os.mkfifo(root / "a" / "fifo")


def test_a_listing_has_every_entry_with_its_lstat_and_follows_no_link(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "outside" / "hidden.yaml").write_text("not reached through the link\n")
    found = list_tree(tmp_path)
    assert found is not None
    assert sorted(found.entries) == [
        "a/b/x.yaml",
        "a/fifo",
        "a/link-to-file",
        "link-to-folder",
        "outside/hidden.yaml",
        "top.yaml",
    ]
    mode, size, mtime = found.entries["a/b/x.yaml"]
    lstat = os.lstat(tmp_path / "a" / "b" / "x.yaml")
    assert (stat.S_ISREG(mode), size, mtime) == (True, 5, lstat.st_mtime_ns)
    assert stat.S_ISLNK(found.entries["link-to-folder"][0])
    assert stat.S_ISLNK(found.entries["a/link-to-file"][0])
    assert stat.S_ISFIFO(found.entries["a/fifo"][0])
    assert found.empty == ("a/empty",)
    assert found.folders == {"a", "a/b", "a/empty", "outside"}
    # the regular files alone, with (size, mtime)
    assert sorted(found.files) == ["a/b/x.yaml", "outside/hidden.yaml", "top.yaml"]
    assert found.files["top.yaml"] == (10, os.lstat(tmp_path / "top.yaml").st_mtime_ns)


def test_what_is_not_a_folder_itself_has_no_listing(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("")
    assert list_tree(tmp_path / "link") is None
    assert list_tree(tmp_path / "file") is None
    assert list_tree(tmp_path / "missing") is None


def test_a_folder_that_cannot_be_listed_leaves_the_looking_to_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    real = os.scandir

    def refusing(path: str) -> object:
        if str(path).endswith("/a/b"):
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "scandir", refusing)
    assert list_tree(tmp_path) is None


def test_without_drops_an_entry_or_a_folder_at_the_top() -> None:
    listing = Listing(
        {"m": (0o100644, 1, 1), "m2": (0o100644, 1, 1), "d/m": (0o100644, 1, 1), "n/x": (0o100644, 1, 1)},
        ("n/e",),
        frozenset({"d", "n", "n/e"}),
    )
    assert listing.without("m").entries.keys() == {"m2", "d/m", "n/x"}
    assert listing.without("m").folders == listing.folders and listing.without("m").empty == ("n/e",)
    # AND the listing itself is left as it was
    assert listing.entries.keys() == {"m", "m2", "d/m", "n/x"}
    assert listing.without("absent") == listing
    dropped = listing.without("n")
    assert dropped.entries.keys() == {"m", "m2", "d/m"}
    assert dropped.empty == ()
    assert dropped.folders == {"d"}


def _reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "cores", lambda: 2)


@pytest.mark.usefixtures("two_cores")
def test_a_listing_process_gives_what_a_listing_here_gives_and_is_waited_for(tmp_path: Path) -> None:
    dist, spare = tmp_path / "dist", tmp_path / "spare"
    _tree(dist)
    (spare / "c").mkdir(parents=True)
    (spare / "c" / "y.yaml").write_text("y\n")
    found = TreeScan(dist, spare)
    found.start()
    pid = found._pid
    assert pid > 0
    assert found.dist() == list_tree(dist)
    assert found.spare() == list_tree(spare)
    assert _reaped(pid)
    # AND asked for the spare first, it gives both all the same
    again = TreeScan(dist, spare)
    again.start()
    assert again.spare() == list_tree(spare)
    assert again.dist() == list_tree(dist)
    assert _reaped(again._pid)


@pytest.mark.usefixtures("two_cores")
def test_a_listing_nobody_asks_for_leaves_no_process_behind(tmp_path: Path) -> None:
    _tree(tmp_path / "dist")
    found = TreeScan(tmp_path / "dist", tmp_path / "spare")
    found.start()
    pid = found._pid
    del found
    gc.collect()
    assert _reaped(pid)


@pytest.mark.usefixtures("two_cores")
def test_a_listing_process_that_fails_leaves_the_listing_to_this_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path / "dist")

    def failing(dist: str, spare: str, ahead: object) -> Iterator[object]:
        raise OSError("the listing process failed")

    monkeypatch.setattr(scan, "_parts", failing)  # the process forked after this fails; this one does not call it
    found = TreeScan(tmp_path / "dist", tmp_path / "spare")
    found.start()
    assert found._pid > 0
    assert found.dist() == list_tree(tmp_path / "dist")
    assert found.spare() is None


@pytest.mark.usefixtures("two_cores")
def test_a_listing_the_process_did_not_hand_over_is_taken_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist, spare = tmp_path / "dist", tmp_path / "spare"
    _tree(dist)
    (spare / "c").mkdir(parents=True)

    def first_only(dist: str, spare: str, ahead: object) -> Iterator[object]:
        yield scan.list_tree(dist), None
        raise OSError("the listing process failed after its first part")

    # GIVEN a listing process that ends after handing over dist/'s listing
    monkeypatch.setattr(scan, "_parts", first_only)
    found = TreeScan(dist, spare)
    found.start()
    # THEN dist/'s listing is its, and the spare, which it never listed, is listed here: a folder, not "no spare"
    assert found.dist() == list_tree(dist)
    assert found.spare() == list_tree(spare) is not None


def test_on_one_core_nothing_is_started_and_each_tree_is_listed_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "cores", lambda: 1)
    _tree(tmp_path / "dist")
    found = TreeScan(tmp_path / "dist", tmp_path / "spare")
    found.start()
    assert found._pid == 0
    assert found.dist() == list_tree(tmp_path / "dist")


@pytest.mark.usefixtures("two_cores")
def test_the_listing_process_hands_over_what_it_read_ahead(tmp_path: Path) -> None:
    _tree(tmp_path / "dist")
    found = TreeScan(tmp_path / "dist", tmp_path / "spare", lambda: ({"read": os.getpid()}, None, None))
    found.start()
    pid = found._pid
    assert found.ahead() == {"read": pid}  # done by the listing process, not this one
    assert TreeScan(tmp_path / "dist", tmp_path / "spare", lambda: ("here", None, None)).ahead() is None  # no process


def _records(root: Path, *paths: str) -> scan.Records:
    """Records of ``paths`` below ``root`` as they are now, with a digest of their own."""
    found: scan.Records = {}
    for path in paths:
        lstat = os.lstat(root / path)
        found[path] = scan.record(f"digest-of-{path}", lstat.st_size, lstat.st_mtime_ns)
    return found


def test_a_file_recorded_with_its_size_and_time_is_kept_with_its_record_and_any_other_is_an_entry(
    tmp_path: Path,
) -> None:
    _tree(tmp_path)
    (tmp_path / "a" / "b" / "y.yaml").write_text("y: 1\n")
    (tmp_path / "a" / "b" / "z.yaml").write_text("z: 1\n")
    records = _records(tmp_path, "top.yaml", "a/b/x.yaml", "a/b/y.yaml")
    # GIVEN a file changed since its record (same size, another time), a link and a FIFO the records name as files,
    # a record that is not one, and a file no record names
    os.utime(tmp_path / "a" / "b" / "y.yaml", ns=(1, 1))
    lstat = os.lstat(tmp_path / "a" / "link-to-file")
    records["a/link-to-file"] = scan.record("d", lstat.st_size, lstat.st_mtime_ns)
    lstat = os.lstat(tmp_path / "a" / "fifo")
    records["a/fifo"] = scan.record("d", lstat.st_size, lstat.st_mtime_ns)
    lstat = os.lstat(tmp_path / "a" / "b" / "x.yaml")
    records["a/b/x.yaml"] = f"d\tnot\t{lstat.st_size}\t{lstat.st_mtime_ns}"
    found = list_tree(tmp_path, records=records)
    assert found is not None
    # THEN only the file as recorded is kept, with its record; every other entry has its lstat, as without records
    assert found.kept == {"top.yaml": records["top.yaml"]}
    plain = list_tree(tmp_path)
    assert plain is not None
    assert found.entries.keys() == plain.entries.keys() - {"top.yaml"}
    assert found.files == plain.files
    assert found.regular == set(plain.files)
    assert found.without("top.yaml").kept == {}
    assert found.without("a").regular == {"top.yaml"}
    # AND a listing taken against no records, checked against them, is the same
    assert plain.against(records, str(tmp_path)) == found


def test_a_record_names_the_digest_it_starts_with_and_nothing_else() -> None:
    entry = scan.record("abc", 5, 7)
    assert scan.records_digest(entry, "abc")
    assert not scan.records_digest(entry, "ab")
    assert not scan.records_digest(entry, "abcd")
    assert scan.records_stat(entry, 5, 7)
    assert not scan.records_stat(entry, 15, 7)
    assert not scan.records_stat("x\t" + entry, 5, 7)


@pytest.mark.parametrize("cores", [1, 2])
def test_each_tree_is_listed_against_its_records_wherever_it_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cores: int
) -> None:
    monkeypatch.setattr(scan, "cores", lambda: cores)
    dist, spare = tmp_path / "dist", tmp_path / "spare"
    _tree(dist)
    (spare / "c").mkdir(parents=True)
    (spare / "c" / "y.yaml").write_text("y\n")
    dist_records, spare_records = _records(dist, "top.yaml"), _records(spare, "c/y.yaml")
    found = TreeScan(dist, spare, lambda: (None, dist_records, spare_records))
    found.start()
    assert (found._pid > 0) == (cores > 1)
    assert found.dist() == list_tree(dist, records=dist_records)
    assert found.dist().kept == dist_records  # type: ignore[union-attr]
    assert found.spare() == list_tree(spare, records=spare_records)
    assert found.spare().kept == spare_records  # type: ignore[union-attr]


@pytest.mark.usefixtures("two_cores")
def test_the_listing_process_keeps_no_descriptor_another_thread_had_open(tmp_path: Path) -> None:
    # GIVEN a pipe open when the listing process starts, as a thread's Popen holds one while it starts Node.js (it
    # waits for the write end to close), and a tree whose listing does not fit in a pipe's buffer, so that the
    # process waits until its listing is read
    for number in range(3000):
        (tmp_path / "dist" / f"folder-{number // 100}").mkdir(parents=True, exist_ok=True)
        (tmp_path / "dist" / f"folder-{number // 100}" / f"file-{number}.yaml").write_text("a: 1\n")
    reader, writer = os.pipe()
    found = TreeScan(tmp_path / "dist", tmp_path / "spare")
    found.start()
    # WHEN the pipe's owner closes its write end
    os.close(writer)
    try:
        # THEN the read end reaches its end at once: the listing process holds no copy of the write end
        ready, _, _ = select.select([reader], [], [], 5)
        assert ready and os.read(reader, 1) == b""
    finally:
        os.close(reader)
        assert found.dist() == list_tree(tmp_path / "dist")


def _unit(root: Path, unit: str) -> None:
    """A unit's folder with a file of its own and one in a folder below."""
    (root / unit / "sub").mkdir(parents=True)
    (root / unit / "x.yaml").write_text("x: 1\n")
    (root / unit / "sub" / "y.yaml").write_text("y: 1\n")


def _unit_record(root: Path, unit: str) -> scan.Records:
    """A record of the unit ``unit`` (``a/b/c/``) below ``root`` as it is now, holding what it calls "holds"."""
    files: list[tuple[str, int, int]] = []
    folders: list[str] = []
    for current, _, names in os.walk(root / unit):
        relative = Path(current).relative_to(root).as_posix()
        if relative != unit[:-1]:
            folders.append(relative)
        for name in names:
            lstat = os.lstat(Path(current) / name)
            files.append((f"{relative}/{name}", lstat.st_size, lstat.st_mtime_ns))
    return {unit: scan.unit_record("holds", scan.unit_stat(files, folders))}


def test_a_unit_found_as_recorded_is_one_record_not_its_entries(tmp_path: Path) -> None:
    # GIVEN two units (folders three levels down) recorded as they are, and a file above them
    for unit in ("p/c/a", "p/c/b"):
        _unit(tmp_path, unit)
    (tmp_path / "p" / "top.yaml").write_text("top: 1\n")
    records = {**_unit_record(tmp_path, "p/c/a/"), **_unit_record(tmp_path, "p/c/b/")}
    found = list_tree(tmp_path, records=records)
    assert found is not None
    # THEN each unit is one record: its files and the folders below its own are not listed
    assert found.units == records
    assert found.regular == {"p/top.yaml"}
    assert found.folders == {"p", "p/c", "p/c/a", "p/c/b"}
    # AND listed entry by entry, the units give what a listing without records gives
    plain = list_tree(tmp_path)
    assert plain is not None
    assert found.expand(str(tmp_path), ["p/c/a/", "p/c/b/"]) == plain
    # AND a listing taken without records, checked against them, is the one taken against them
    assert plain.against(records, str(tmp_path)) == found
    # AND a listing checked against records that record a unit otherwise lists that unit entry by entry
    other = {**records, "p/c/a/": scan.unit_record("holds", "another")}
    assert found.against(other, str(tmp_path)).units == {"p/c/b/": records["p/c/b/"]}
    assert "p/c/a/x.yaml" in found.against(other, str(tmp_path)).regular


def _resize(path: Path) -> None:
    """Another content of another size, with the time the file had."""
    before = os.lstat(path)
    path.write_text("x: 22\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _replace_with_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _replace_with_link(path: Path) -> None:
    path.unlink()
    path.symlink_to(path.parent / "sub" / "y.yaml")


#: Changes below a unit's folder: every one makes the unit differ from its record.
UNIT_CHANGES: dict[str, Callable[[Path], object]] = {
    "a file added": lambda unit: (unit / "planted.yaml").write_text("x: 2\n"),
    "a file removed": lambda unit: (unit / "x.yaml").unlink(),
    "a file of another size, with its time": lambda unit: _resize(unit / "x.yaml"),
    "a file of another time": lambda unit: os.utime(unit / "x.yaml", ns=(1, 1)),
    "an empty folder": lambda unit: (unit / "sub" / "empty").mkdir(),
    "a folder renamed": lambda unit: (unit / "sub").rename(unit / "other"),
    "a file made a symlink": lambda unit: _replace_with_link(unit / "x.yaml"),
    "a file made a FIFO": lambda unit: _replace_with_fifo(unit / "x.yaml"),
}


@pytest.mark.parametrize("change", UNIT_CHANGES)
def test_a_unit_that_differs_from_its_record_is_listed_entry_by_entry(tmp_path: Path, change: str) -> None:
    # GIVEN two recorded units, and one of them changed after it was recorded
    for unit in ("p/c/a", "p/c/b"):
        _unit(tmp_path, unit)
    records = {**_unit_record(tmp_path, "p/c/a/"), **_unit_record(tmp_path, "p/c/b/")}
    UNIT_CHANGES[change](tmp_path / "p/c/a")
    found = list_tree(tmp_path, records=records)
    assert found is not None
    plain = list_tree(tmp_path)
    assert plain is not None
    # THEN the changed unit's entries, folders and empty folders are listed one by one, as without records
    assert found.units == {"p/c/b/": records["p/c/b/"]}
    assert {path for path in found.entries if path.startswith("p/c/a/")} == {
        path for path in plain.entries if path.startswith("p/c/a/")
    }
    assert {path for path in found.folders if path.startswith("p/c/a")} == {
        path for path in plain.folders if path.startswith("p/c/a")
    }
    assert found.empty == plain.empty
    assert plain.against(records, str(tmp_path)) == found


def test_a_unit_whose_folder_is_a_symlink_is_never_followed(tmp_path: Path) -> None:
    # GIVEN a recorded unit whose folder is then replaced with a link to a folder that holds the same
    _unit(tmp_path, "p/c/a")
    records = _unit_record(tmp_path, "p/c/a/")
    (tmp_path / "p/c/a").rename(tmp_path / "elsewhere")
    (tmp_path / "p/c/a").symlink_to(tmp_path / "elsewhere")
    found = list_tree(tmp_path, records=records)
    assert found is not None
    # THEN it is no unit: the link is an entry, and what it points to is not listed
    assert found.units == {}
    assert stat.S_ISLNK(found.entries["p/c/a"][0])
    assert not any(path.startswith("p/c/a/") for path in found.entries)
    # AND listing it entry by entry (as the guard and the write do) never goes through the link
    assert found.expand(str(tmp_path), ["p/c/a/"]).entries.keys() == found.entries.keys()


def test_a_units_digests_tell_apart_what_names_could_run_together() -> None:
    # a path that holds what would be the next line never gives the digest of two files
    one = scan.unit_stat([("a/b/c/x\t1\t2\nq", 3, 9)], [])
    two = scan.unit_stat([("a/b/c/x", 1, 2), ("q", 3, 9)], [])
    assert one != two
    assert scan.unit_content(["a/b/c/x"], ["d1"]) != scan.unit_content(["a/b/c/x", "d1"], ["", ""])
    assert scan.unit_of("a/b/c/d.yaml") == scan.unit_of("a/b/c/e/f.yaml") == "a/b/c/"
    assert scan.unit_of("a/b/c.yaml") is None
    assert scan.is_unit("a/b/c/") and not scan.is_unit("a/b/") and not scan.is_unit("a/b/c/d/")
