"""Tests for fluxplane.synth.writer: atomic writes of dist/ and the spare tree they keep."""

from __future__ import annotations

import builtins
import functools
import hashlib
import os
import shutil
import stat
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fluxplane.errors import OutputError
from fluxplane.synth import writer
from fluxplane.synth.scan import TreeScan
from fluxplane.synth.writer import MANIFEST, compare_tree, read_ahead, recover, spare_path, write_tree

_write_tree = write_tree


@pytest.fixture(autouse=True, params=["listed here", "listed beforehand"])
def listing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs twice: the write lists the spare itself, and the write reads a listing of dist/ and the
    spare taken just before it (fluxplane.synth.scan), as synth's own writes of a large tree do."""
    if request.param == "listed beforehand":

        def listed_first(files: dict[str, str], outdir: Path) -> None:
            _write_tree(files, outdir, TreeScan(outdir, spare_path(outdir), functools.partial(read_ahead, outdir)))

        monkeypatch.setattr(sys.modules[__name__], "write_tree", listed_first)
    return str(request.param)


def _writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files opened for writing from now on."""
    opened: list[str] = []
    real_open = builtins.open

    def recording(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "w" in mode:
            opened.append(Path(path).name)
        return real_open(path, mode, *args, **kwargs)

    real_os_open = os.open

    def recording_os(path: Any, flags: int, *args: Any, **kwargs: Any) -> Any:
        if flags & (os.O_WRONLY | os.O_RDWR) and path != os.devnull:
            opened.append(Path(path).name)
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", recording)
    monkeypatch.setattr(os, "open", recording_os)
    return opened


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_write_creates_then_replaces_and_drops_files_that_no_longer_belong(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    write_tree({"a/x.yaml": "one\n", "b.yaml": "two\n"}, dist)
    assert _tree(dist) == {"a/x.yaml": "one\n", "b.yaml": "two\n"}
    write_tree({"a/y.yaml": "three\n"}, dist)
    assert _tree(dist) == {"a/y.yaml": "three\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dist.spare", "dist"]


def test_write_without_exchange_falls_back_to_renames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "_exchange", lambda a, b: False)
    dist = tmp_path / "dist"
    write_tree({"a.yaml": "1\n"}, dist)
    write_tree({"b.yaml": "2\n"}, dist)
    assert _tree(dist) == {"b.yaml": "2\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dist.spare", "dist"]


def test_failed_write_leaves_the_old_tree_and_no_leftovers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN an existing dist/ and a disk that fills up on the second file
    dist = tmp_path / "dist"
    write_tree({"old.yaml": "old\n"}, dist)
    real_open = os.open
    calls = {"n": 0}

    def full_disk(path: Any, *args: Any, **kwargs: Any) -> Any:
        if str(path).startswith(str(tmp_path / ".dist.new")):
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError(28, "No space left on device", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", full_disk)
    # WHEN synth writes a new tree
    with pytest.raises(OutputError, match=r"No space left on device; dist/ was left as it was$"):
        write_tree({"a.yaml": "a\n", "b.yaml": "b\n"}, dist)
    monkeypatch.undo()
    # THEN dist/ is the old tree and the staging folder is gone
    assert _tree(dist) == {"old.yaml": "old\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist"]


def test_recover_restores_a_tree_moved_aside_by_an_interrupted_swap(tmp_path: Path) -> None:
    # GIVEN a crash between the two renames of the fallback swap
    (tmp_path / ".dist.old").mkdir()
    (tmp_path / ".dist.old" / "a.yaml").write_text("old\n")
    (tmp_path / ".dist.new").mkdir()
    recover(tmp_path / "dist")
    assert _tree(tmp_path / "dist") == {"a.yaml": "old\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist"]


def test_the_replaced_tree_is_kept_and_the_next_write_updates_only_what_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN two writes, so that the first tree is kept as the spare with a manifest
    dist = tmp_path / "dist"
    first = {"same.yaml": "s\n", "changes.yaml": "1\n", "goes/away.yaml": "g\n"}
    write_tree(first, dist)
    write_tree({"same.yaml": "s\n", "changes.yaml": "2\n"}, dist)
    spare = spare_path(dist)
    assert _tree(spare) == {**first, MANIFEST: (spare / MANIFEST).read_text()}
    writes = _writes(monkeypatch)
    # WHEN a third tree is written
    write_tree({"same.yaml": "s\n", "changes.yaml": "3\n", "new.yaml": "n\n"}, dist)
    # THEN dist/ is exactly that tree, built from the spare: the unchanged file was not rewritten
    assert _tree(dist) == {"same.yaml": "s\n", "changes.yaml": "3\n", "new.yaml": "n\n"}
    assert sorted(writes) == sorted(["changes.yaml", "new.yaml", MANIFEST])
    assert not (dist / "goes").exists() and not (dist / MANIFEST).exists()
    # AND the second tree is now the spare
    assert _tree(spare_path(dist)) == {
        "same.yaml": "s\n",
        "changes.yaml": "2\n",
        MANIFEST: (spare / MANIFEST).read_text(),
    }


def test_from_the_second_write_on_the_spare_knows_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a first write, which leaves an empty spare recording dist/'s files
    dist = tmp_path / "dist"
    tree = {"same.yaml": "s\n", "changes.yaml": "1\n"}
    write_tree(tree, dist)
    assert _tree(spare_path(dist)) == {MANIFEST: (spare_path(dist) / MANIFEST).read_text()}
    # AND a second write of the same tree
    write_tree(tree, dist)
    assert (spare_path(dist) / MANIFEST).read_text().startswith("tree\nsame.yaml\t")
    writes = _writes(monkeypatch)
    reads: list[str] = []
    real_open = builtins.open

    def recording(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "r" in mode and Path(path).name != MANIFEST:
            reads.append(Path(path).name)
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", recording)
    # WHEN the third write changes one file
    write_tree({"same.yaml": "s\n", "changes.yaml": "2\n"}, dist)
    # THEN only that file is written, and no file's content is read to compare it
    assert _tree(dist) == {"same.yaml": "s\n", "changes.yaml": "2\n"}
    assert sorted(writes) == sorted(["changes.yaml", MANIFEST])
    assert reads == []


def test_the_spares_folders_are_checked_by_its_listing_not_once_more_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a tree of many folders written twice: the spare holds them all
    dist = tmp_path / "dist"
    tree = {f"platform/clusters/c{index}/flux-system/kustomization.yaml": "k\n" for index in range(20)}
    write_tree(tree, dist)
    write_tree(tree, dist)
    looked: list[str] = []
    real_lstat = os.lstat

    def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        found = real_lstat(path, *args, **kwargs)
        if stat.S_ISDIR(found.st_mode):
            looked.append(os.fspath(path))
        return found

    monkeypatch.setattr(os, "lstat", lstat)
    # WHEN a write changes one file
    write_tree({**tree, "platform/clusters/c0/flux-system/kustomization.yaml": "changed\n"}, dist)
    # THEN the folders the spare's listing found (each a folder itself, no link) are not looked at once more, one by
    # one: a fleet's 20,000 folders cost no 20,000 more system calls. Only the folder of the one cluster whose files
    # change may be looked at, when it is listed again, file by file
    assert {Path(path).relative_to(dist.parent) for path in looked if "/platform/" in path} <= {
        Path(".dist.new/platform/clusters/c0")
    }
    assert _tree(dist) == {**tree, "platform/clusters/c0/flux-system/kustomization.yaml": "changed\n"}


def test_a_spare_file_changed_behind_its_manifest_is_rewritten(tmp_path: Path) -> None:
    # GIVEN three synths, so that the spare's manifest records its files, and one of them edited
    # (same size, other content and time)
    dist = tmp_path / "dist"
    for text in ("one\n", "two\n", "one\n"):
        write_tree({"a.yaml": text}, dist)
    assert (spare_path(dist) / MANIFEST).read_text().startswith("tree\na.yaml\t")
    edited = spare_path(dist) / "a.yaml"
    edited.write_text("owt\n")
    os.utime(edited, ns=(1, 1))
    # WHEN the spare's tree is written again THEN dist/ holds it, not the edit
    write_tree({"a.yaml": "two\n"}, dist)
    assert _tree(dist) == {"a.yaml": "two\n"}


@pytest.mark.parametrize("manifest", [None, "", "{", '{"tree": 1, "dist": {}}', '{"dist": {}}'])
def test_a_spare_without_a_readable_manifest_is_rebuilt(tmp_path: Path, manifest: str | None) -> None:
    # GIVEN a spare interrupted mid-update (no manifest) or with a damaged one
    dist = tmp_path / "dist"
    write_tree({"a.yaml": "one\n"}, dist)
    write_tree({"a.yaml": "two\n"}, dist)
    spare = spare_path(dist)
    (spare / "stray.yaml").write_text("x\n")
    if manifest is None:
        (spare / MANIFEST).unlink()
    else:
        (spare / MANIFEST).write_text(manifest)
    # WHEN synth writes THEN dist/ is exactly the new tree
    write_tree({"a.yaml": "three\n"}, dist)
    assert _tree(dist) == {"a.yaml": "three\n"}


@pytest.mark.parametrize("mangle", ["extra field", "no time", "not numbers"])
def test_a_record_that_is_not_a_digest_a_size_and_a_time_is_never_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mangle: str
) -> None:
    # GIVEN a spare whose manifest records its file damaged, with the digest of what synth writes next and the
    # file's size and time among its fields
    dist = tmp_path / "dist"
    for text in ("one\n", "two\n"):
        write_tree({"a.yaml": text}, dist)
    manifest = spare_path(dist) / MANIFEST
    lines = manifest.read_text().splitlines()
    path, _, size, mtime = lines[1].split("\t")
    assert path == "a.yaml"
    wanted = hashlib.sha1(b"six\n").hexdigest()  # the same size as the file: only its content tells
    lines[1] = {
        "extra field": f"{path}\t{wanted}\tx\t{size}\t{mtime}",
        "no time": f"{path}\t{wanted}\t{size}",
        "not numbers": f"{path}\t{wanted}\t{size}.0\t{mtime}",
    }[mangle]
    manifest.write_text("\n".join(lines) + "\n")
    writes = _writes(monkeypatch)
    # WHEN synth writes a file of that digest THEN the spare's file is written anew: dist/ holds what synth wrote
    write_tree({"a.yaml": "six\n"}, dist)
    assert _tree(dist) == {"a.yaml": "six\n"}
    assert "a.yaml" in writes


_PATHS = st.sampled_from(["a", "a/b", "a/b/c", "b", "c/d", "c/e/f"])
_TREES = st.dictionaries(_PATHS, st.sampled_from(["x\n", "y\n", "zz\n", ""]), min_size=1)


def _consistent(tree: dict[str, str]) -> bool:
    """No path is both a file and a folder."""
    return not any(other.startswith(path + "/") for path in tree for other in tree)


@given(trees=st.lists(_TREES.filter(_consistent), min_size=2, max_size=6))
def test_any_sequence_of_writes_leaves_exactly_the_last_tree(
    tmp_path_factory: pytest.TempPathFactory, trees: list[dict[str, str]]
) -> None:
    # GIVEN any sequence of trees, files becoming folders and back WHEN each is written
    dist = tmp_path_factory.mktemp("seq") / "dist"
    for tree in trees:
        write_tree(tree, dist)
        # THEN dist/ is exactly that tree, and the spare never leaks its manifest into it
        assert _tree(dist) == tree


@pytest.mark.parametrize("size", [10, 8191, 8193, 300_000])
def test_unchanged_files_of_any_size_are_kept_from_the_spare(
    tmp_path: Path, size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a file of this size written by three synths (so the spare's manifest recorded it)
    dist = tmp_path / "dist"
    text = "x" * (size - 1) + "\n"
    for version in "123":
        write_tree({"big.yaml": text, "v.yaml": f"{version}\n"}, dist)
    assert (spare_path(dist) / MANIFEST).read_text().startswith("tree\n")
    writes = _writes(monkeypatch)
    # WHEN another synth changes another file THEN the big file is the spare's, not written again
    write_tree({"big.yaml": text, "v.yaml": "4\n"}, dist)
    assert writes == ["v.yaml", MANIFEST]
    assert (dist / "big.yaml").read_text() == text


# -- a tree fluxplane did not leave: nothing outside it is written, read or removed ------------------


def _outside(tmp_path: Path) -> Path:
    """A folder beside the project with a file that must survive every write."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious\n")
    return outside


def test_a_manifest_that_names_a_path_outside_the_spare_removes_nothing_there(tmp_path: Path) -> None:
    # GIVEN a spare whose manifest lists ../../victim (as a pull request could bring it)
    project = tmp_path / "project"
    dist = project / "dist"
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    for text in ("1\n", "2\n"):
        write_tree({"p/a.yaml": text}, dist)
    manifest = spare_path(dist) / MANIFEST
    manifest.write_text(manifest.read_text().replace("tree\n", "tree\n../../victim\tx\t9\t1\n", 1))
    # WHEN synth writes a tree without that path
    write_tree({"p/b.yaml": "3\n"}, dist)
    # THEN the file outside is still there, and dist/ is the new tree
    assert victim.read_text() == "precious\n"
    assert _tree(dist) == {"p/b.yaml": "3\n"}


def test_a_spare_that_is_a_symlink_is_dropped_without_touching_its_target(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    dist = tmp_path / "project" / "dist"
    write_tree({"a.yaml": "1\n"}, dist)
    spare = spare_path(dist)
    shutil.rmtree(spare)
    spare.symlink_to(outside, target_is_directory=True)
    write_tree({"a.yaml": "2\n"}, dist)
    assert _tree(outside) == {"keep.txt": "precious\n"}
    assert not dist.is_symlink() and _tree(dist) == {"a.yaml": "2\n"}
    assert not spare.is_symlink()


@pytest.mark.parametrize("manifest", [True, False], ids=["with-manifest", "without-manifest"])
def test_a_symlinked_folder_in_the_spare_is_never_written_through(tmp_path: Path, manifest: bool) -> None:
    # GIVEN a spare whose platform/ folder is a symlink to a folder outside the project
    outside = _outside(tmp_path)
    (outside / "x.yaml").write_text("theirs\n")
    dist = tmp_path / "project" / "dist"
    for text in ("1\n", "2\n"):
        write_tree({"platform/x.yaml": text, "platform/gone.yaml": "g\n"}, dist)
    spare = spare_path(dist)
    shutil.rmtree(spare / "platform")
    (spare / "platform").symlink_to(outside, target_is_directory=True)
    if not manifest:
        (spare / MANIFEST).unlink()
    # WHEN synth writes over it, changing one file of the folder and dropping the other
    write_tree({"platform/x.yaml": "3\n", "platform/keep.txt": "ours\n"}, dist)
    # THEN nothing outside changed, and dist/ holds the new tree in real folders
    assert _tree(outside) == {"keep.txt": "precious\n", "x.yaml": "theirs\n"}
    assert not (dist / "platform").is_symlink()
    assert _tree(dist) == {"platform/x.yaml": "3\n", "platform/keep.txt": "ours\n"}


def test_a_symlinked_file_in_the_spare_is_replaced_not_written_through(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    dist = tmp_path / "project" / "dist"
    for text in ("1\n", "2\n"):
        write_tree({"a.yaml": text}, dist)
    spare = spare_path(dist)
    (spare / "a.yaml").unlink()
    (spare / "a.yaml").symlink_to(outside / "keep.txt")
    write_tree({"a.yaml": "3\n"}, dist)
    assert _tree(outside) == {"keep.txt": "precious\n"}
    assert not (dist / "a.yaml").is_symlink() and _tree(dist) == {"a.yaml": "3\n"}


def test_a_dist_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    dist = tmp_path / "project" / "dist"
    dist.parent.mkdir()
    dist.symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputError, match=r"dist: a symbolic link \(to .*outside\); .*nothing written$"):
        write_tree({"a.yaml": "1\n"}, dist)
    with pytest.raises(OutputError, match=r"dist: a symbolic link"):
        compare_tree({"a.yaml": "1\n"}, dist)
    assert dist.is_symlink() and _tree(outside) == {"keep.txt": "precious\n"}
    assert sorted(p.name for p in dist.parent.iterdir()) == ["dist"]


def test_recover_never_moves_a_symlink_into_place(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    dist = tmp_path / "project" / "dist"
    dist.parent.mkdir()
    (dist.parent / ".dist.old").symlink_to(outside, target_is_directory=True)
    (dist.parent / ".dist.new").symlink_to(outside, target_is_directory=True)
    recover(dist)
    assert not os.path.lexists(dist)
    assert sorted(p.name for p in dist.parent.iterdir()) == []
    assert _tree(outside) == {"keep.txt": "precious\n"}


def test_a_folder_that_holds_nothing_synth_writes_is_not_replaced(tmp_path: Path) -> None:
    folder = _outside(tmp_path)
    with pytest.raises(OutputError, match=r"outside: holds keep.txt, none of which synth writes, .*nothing written$"):
        write_tree({"platform/a.yaml": "1\n"}, folder)
    assert _tree(folder) == {"keep.txt": "precious\n"}
    # a folder synth wrote, even with a file added by hand, is replaced
    dist = tmp_path / "dist"
    write_tree({"platform/a.yaml": "1\n"}, dist)
    (dist / "notes.txt").write_text("mine\n")
    write_tree({"platform/a.yaml": "2\n"}, dist)
    assert _tree(dist) == {"platform/a.yaml": "2\n"}


def _finishes(action: Any, seconds: float = 20) -> None:
    """Run ``action`` in a thread; fail if it is still blocked (on a FIFO, say) after ``seconds``."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            action()
        except BaseException as exc:  # reported in the test's thread
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    if failure:
        raise failure[0]


@pytest.mark.parametrize("replaced", ["dist", ".dist.old"])
def test_a_manifest_symlink_in_the_replaced_tree_is_not_written_through(tmp_path: Path, replaced: str) -> None:
    # GIVEN a dist/ (committed, so a pull request can bring it) or a tree moved aside by an interrupted
    # swap, holding .fluxplane-tree as a symlink to a file outside the project
    outside = _outside(tmp_path)
    dist = tmp_path / "project" / "dist"
    write_tree({"a.yaml": "1\n"}, dist)
    if replaced != "dist":
        dist.rename(dist.with_name(replaced))
    (dist.with_name(replaced) / MANIFEST).symlink_to(outside / "keep.txt")
    # WHEN synth replaces that tree, keeping it as the spare with a manifest
    write_tree({"a.yaml": "2\n"}, dist)
    # THEN the file outside is as it was, and the spare's manifest is a file of its own
    assert _tree(outside) == {"keep.txt": "precious\n"}
    assert _tree(dist) == {"a.yaml": "2\n"}
    manifest = spare_path(dist) / MANIFEST
    assert not manifest.is_symlink() and manifest.read_text().startswith("tree")


@pytest.mark.parametrize("manifest", [True, False], ids=["with-manifest", "without-manifest"])
def test_what_the_spare_holds_beyond_its_manifest_never_reaches_dist(
    tmp_path: Path, manifest: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a spare (its manifest valid, or gone) holding entries synth did not leave: a file, a symlink to a
    # folder outside, a dangling symlink, an empty folder, a folder where a file of the tree goes
    outside = _outside(tmp_path)
    dist = tmp_path / "project" / "dist"
    for text in ("1\n", "2\n"):
        write_tree({"p/a.yaml": text, "b.yaml": text}, dist)
    spare = spare_path(dist)
    (spare / "p" / "planted.yaml").write_text("theirs\n")
    (spare / "p" / "elsewhere").symlink_to(outside, target_is_directory=True)
    (spare / "dangling").symlink_to(tmp_path / "nothing")
    (spare / "empty" / "deeper").mkdir(parents=True)
    (spare / "b.yaml").unlink()
    (spare / "b.yaml" / "inside").mkdir(parents=True)
    if not manifest:
        (spare / MANIFEST).unlink()
    # WHEN synth writes the same tree (built in the spare) THEN dist/ holds exactly that tree, nothing else
    write_tree({"p/a.yaml": "2\n", "b.yaml": "2\n"}, dist)
    assert sorted(str(p.relative_to(dist)) for p in dist.rglob("*")) == ["b.yaml", "p", "p/a.yaml"]
    assert _tree(dist) == {"p/a.yaml": "2\n", "b.yaml": "2\n"}
    assert _tree(outside) == {"keep.txt": "precious\n"}


def test_a_spare_whose_manifest_is_a_folder_or_names_a_folder_is_updated(tmp_path: Path) -> None:
    # GIVEN a spare whose manifest names a folder of the tree as a file
    dist = tmp_path / "dist"
    for text in ("1\n", "2\n"):
        write_tree({"p/a.yaml": text}, dist)
    manifest = spare_path(dist) / MANIFEST
    manifest.write_text(manifest.read_text().replace("tree\n", "tree\np\tx\t9\t1\n", 1))
    # WHEN synth writes THEN it succeeds with exactly the new tree
    write_tree({"p/a.yaml": "3\n"}, dist)
    assert _tree(dist) == {"p/a.yaml": "3\n"}
    # GIVEN a spare whose manifest is a folder WHEN synth writes THEN it succeeds too
    manifest.unlink()
    (manifest / "inside").mkdir(parents=True)
    write_tree({"p/a.yaml": "4\n"}, dist)
    assert _tree(dist) == {"p/a.yaml": "4\n"}


def test_a_hard_link_in_the_spare_is_replaced_not_written_through(tmp_path: Path) -> None:
    # GIVEN a spare whose file is a hard link to a file outside the project (a `cp -al` copy of it, say)
    outside = _outside(tmp_path)
    dist = tmp_path / "project" / "dist"
    for text in ("1\n", "2\n"):
        write_tree({"a.yaml": text}, dist)
    (spare_path(dist) / "a.yaml").unlink()
    os.link(outside / "keep.txt", spare_path(dist) / "a.yaml")
    # WHEN synth writes a tree with that file THEN the file outside keeps its content
    write_tree({"a.yaml": "3\n"}, dist)
    assert _tree(outside) == {"keep.txt": "precious\n"}
    assert _tree(dist) == {"a.yaml": "3\n"}


def test_a_fifo_in_the_spare_or_as_its_manifest_blocks_nothing(tmp_path: Path) -> None:
    # GIVEN a spare holding a FIFO where a file of the tree goes, and one as its manifest
    dist = tmp_path / "dist"
    for text in ("1\n", "2\n"):
        write_tree({"a.yaml": text, "b.yaml": text}, dist)
    spare = spare_path(dist)
    (spare / "a.yaml").unlink()
    os.mkfifo(spare / "a.yaml")
    # WHEN synth writes THEN it neither waits for a reader nor writes into the FIFO
    _finishes(lambda: write_tree({"a.yaml": "3\n", "b.yaml": "3\n"}, dist))
    assert _tree(dist) == {"a.yaml": "3\n", "b.yaml": "3\n"}
    (spare / MANIFEST).unlink()
    os.mkfifo(spare / MANIFEST)
    _finishes(lambda: write_tree({"a.yaml": "4\n", "b.yaml": "4\n"}, dist))
    assert _tree(dist) == {"a.yaml": "4\n", "b.yaml": "4\n"}


def test_a_manifest_read_ahead_is_used_only_while_the_file_is_as_it_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = tmp_path / "dist"
    write_tree({"a.yaml": "1\n", "b.yaml": "2\n"}, dist)
    write_tree({"a.yaml": "1\n", "b.yaml": "3\n"}, dist)
    found, dist_records, spare_records = writer.read_ahead(dist)
    assert found is not None
    # the records the listings are taken against: dist/'s files and the spare's, as the manifest has them
    assert dist_records is not None and sorted(dist_records) == ["a.yaml", "b.yaml"]
    assert spare_records is not None and sorted(spare_records) == ["a.yaml", "b.yaml"]
    digests = {path: (dist_records[path][:40], spare_records[path][:40]) for path in dist_records}
    assert digests["a.yaml"][0] == digests["a.yaml"][1] and digests["b.yaml"][0] != digests["b.yaml"][1]
    writer._READ.clear()
    parses: list[int] = []
    real = writer._read_manifest
    monkeypatch.setattr(writer, "_read_manifest", lambda text: parses.append(1) or real(text))
    writer.keep_read(found)
    assert sorted(writer.recorded(dist)) == ["a.yaml", "b.yaml"]
    assert parses == []  # the manifest read ahead was used
    # WHEN the manifest changes after it was read ahead THEN it is read again
    manifest = spare_path(dist) / MANIFEST
    text = manifest.read_text()
    manifest.write_text(text.replace("a.yaml", "c.yaml"))
    writer.keep_read(found)
    assert sorted(writer.recorded(dist)) == ["b.yaml", "c.yaml"]
    assert parses == [1]


def test_nothing_is_read_ahead_without_a_readable_manifest(tmp_path: Path) -> None:
    assert writer.read_ahead(tmp_path / "dist") == (None, None, None)
    write_tree({"a.yaml": "1\n"}, tmp_path / "dist")
    (spare_path(tmp_path / "dist") / MANIFEST).write_text("not a manifest\n")
    assert writer.read_ahead(tmp_path / "dist") == (None, None, None)


def test_a_digest_known_beforehand_is_taken_instead_of_hashing_the_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a tree with one text whose digest is known already (as the synth cache's entries carry them)
    dist = tmp_path / "dist"
    known, fresh = "known: 1\n", "fresh: 1\n"
    writer.remember_digests([known], [writer.text_digest(known)])
    hashed: list[bytes] = []
    real_digest = writer._digest

    def recording(data: bytes) -> str:
        hashed.append(data)
        return real_digest(data)

    monkeypatch.setattr(writer, "_digest", recording)
    # WHEN the tree is written twice (the second write records its files in the spare's manifest)
    write_tree({"known.yaml": known, "fresh.yaml": fresh}, dist)
    writer.remember_digests([known], [real_digest(known.encode())])
    write_tree({"known.yaml": known, "fresh.yaml": fresh}, dist)
    # THEN only the other text was hashed, and the manifest records the known digest for the file
    assert known.encode() not in hashed and fresh.encode() in hashed
    assert f"known.yaml\t{real_digest(known.encode())}\t" in (spare_path(dist) / MANIFEST).read_text()


#: A fleet's tree in small: each cluster's files in a folder three levels down (a unit), and a file above them.
CLUSTERS = {
    **{
        f"platform/clusters/c{index}/{name}": f"{index} {name}\n"
        for index in range(4)
        for name in ("a.yaml", "b/c.yaml")
    },
    "platform/top.yaml": "top\n",
}


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths (below their tree) of the files opened for reading from now on, the manifest's aside."""
    opened: list[str] = []
    real_open = builtins.open

    def recording(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "r" in mode and Path(path).name != MANIFEST:
            opened.append(Path(path).as_posix().split("/platform/", 1)[-1])
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", recording)
    return opened


def test_the_manifest_records_each_cluster_folder_as_one_unit_and_a_write_keeps_the_others_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a tree of clusters written three times: the spare holds it, and its manifest records it
    dist = tmp_path / "dist"
    for _ in range(3):
        write_tree(CLUSTERS, dist)
    manifest = (spare_path(dist) / MANIFEST).read_text()
    # THEN each cluster's folder is one line of the manifest, not a line per file; a file above them has its own
    assert "platform/clusters/c0/\t" in manifest and "platform/top.yaml\t" in manifest
    assert "platform/clusters/c0/a.yaml" not in manifest
    # WHEN a write changes one file of one cluster
    writes, reads = _writes(monkeypatch), _reads(monkeypatch)
    changed = {**CLUSTERS, "platform/clusters/c1/b/c.yaml": "changed\n"}
    write_tree(changed, dist)
    # THEN only that file is written, and only that cluster's files are read to compare them: the other clusters'
    # folders stay whole, as the spare held them
    assert _tree(dist) == changed
    assert sorted(writes) == sorted(["c.yaml", MANIFEST])
    assert set(reads) <= {"clusters/c1/a.yaml", "clusters/c1/b/c.yaml"}
    # AND the next write, of the tree before, which the spare holds now, writes no file and reads none
    writes.clear()
    reads.clear()
    write_tree(CLUSTERS, dist)
    assert _tree(dist) == CLUSTERS
    assert writes == [MANIFEST]
    assert reads == []


@pytest.mark.parametrize(
    "plant",
    ["a file", "an empty folder", "a file made a symlink", "a file edited, same size", "a folder made a file"],
)
def test_what_a_cluster_folder_of_the_spare_holds_beyond_its_record_never_reaches_dist(
    tmp_path: Path, plant: str
) -> None:
    # GIVEN a tree of clusters written three times, then something planted in a cluster's folder of the spare
    outside = _outside(tmp_path)
    dist = tmp_path / "project" / "dist"
    for _ in range(3):
        write_tree(CLUSTERS, dist)
    unit = spare_path(dist) / "platform/clusters/c2"
    if plant == "a file":
        (unit / "planted.yaml").write_text("theirs\n")
    elif plant == "an empty folder":
        (unit / "b" / "empty").mkdir()
    elif plant == "a file made a symlink":
        (unit / "a.yaml").unlink()
        (unit / "a.yaml").symlink_to(outside / "keep.txt")
    elif plant == "a file edited, same size":
        (unit / "a.yaml").write_text("2 a.yaml\n")
    else:
        shutil.rmtree(unit / "b")
        (unit / "b").write_text("a file\n")
    # WHEN synth writes the same tree (built in the spare) THEN dist/ holds exactly that tree, nothing else
    write_tree(CLUSTERS, dist)
    assert _tree(dist) == CLUSTERS
    assert sorted(
        str(p.relative_to(dist / "platform/clusters/c2")) for p in (dist / "platform/clusters/c2").rglob("*")
    ) == [
        "a.yaml",
        "b",
        "b/c.yaml",
    ]
    assert _tree(outside) == {"keep.txt": "precious\n"}


def _deferred(files: dict[str, str], read: list[str]) -> writer.TreeFiles:
    """``files`` as TreeFiles whose clusters' texts are deferred, each cluster's apart (as the synth cache gives
    them); ``read`` gets the name of each cluster whose texts are read."""
    clusters: dict[str, dict[str, str]] = {}
    raw: dict[str, writer.FileText] = {}
    for path, text in files.items():
        parts = path.split("/")
        if parts[:2] == ["platform", "clusters"] and len(parts) > 3:
            clusters.setdefault(parts[2], {})[path] = text
        else:
            raw[path] = text
    for name, held in clusters.items():

        def texts(name: str = name, held: dict[str, str] = held) -> list[str]:
            read.append(name)
            return list(held.values())

        digests = [hashlib.sha1(text.encode()).hexdigest() for text in held.values()]
        raw.update(dict.fromkeys(held, writer.DeferredTexts(list(held), digests, texts, name)))
    return writer.TreeFiles(dict(sorted(raw.items())))


def test_a_tree_whose_texts_are_deferred_reads_those_of_the_units_the_spare_does_not_hold_alone(
    tmp_path: Path,
) -> None:
    # GIVEN a tree of clusters written three times: the spare holds it
    dist = tmp_path / "dist"
    for _ in range(3):
        write_tree(CLUSTERS, dist)
    changed = {**CLUSTERS, "platform/clusters/c1/b/c.yaml": "changed\n"}
    read: list[str] = []
    # THEN its units are those of the same tree with every text, and finding them reads no text
    assert writer.units_of(_deferred(changed, read)) == writer.units_of(changed)
    assert read == []
    # WHEN a tree whose clusters' texts are deferred, one file of one cluster changed, is written
    write_tree(_deferred(changed, read), dist)
    # THEN dist/ holds it, and only that cluster's texts were read
    assert _tree(dist) == changed
    assert read == ["c1"]
    # AND the tree before, which the spare holds now, is written without reading a text
    read.clear()
    write_tree(_deferred(CLUSTERS, read), dist)
    assert _tree(dist) == CLUSTERS
    assert read == []


def test_deferred_texts_that_cannot_be_read_when_needed_leave_dist_as_it_was(tmp_path: Path) -> None:
    # GIVEN a tree written, then a tree of another content whose texts can no longer be read
    dist = tmp_path / "dist"
    write_tree(CLUSTERS, dist)
    texts = writer.DeferredTexts(["platform/clusters/c0/a.yaml"], ["0" * 40], lambda: None, "the-entry")
    files = writer.TreeFiles({**CLUSTERS, "platform/clusters/c0/a.yaml": texts})
    # WHEN it is written THEN it is an error that names where the texts come from, and dist/ is as it was
    with pytest.raises(OutputError, match="the-entry: changed while synth ran"):
        write_tree(files, dist)
    assert _tree(dist) == CLUSTERS
    assert not (tmp_path / ".dist.new").exists() and not (tmp_path / ".dist.old").exists()


def test_tree_files_read_deferred_texts_once_and_merge_as_dicts_do() -> None:
    read: list[str] = []
    files = _deferred(CLUSTERS, read)
    # a path, its digest and the count are known without a text read
    assert len(files) == len(CLUSTERS) and "platform/clusters/c0/a.yaml" in files
    assert files.digest("platform/clusters/c0/a.yaml") == hashlib.sha1(b"0 a.yaml\n").hexdigest()
    assert read == []
    # each cluster's texts are read once, when one is first asked for
    assert files["platform/clusters/c0/a.yaml"] == "0 a.yaml\n" and files.get("platform/clusters/c0/b/c.yaml")
    assert read == ["c0"]
    assert files.as_dict() == CLUSTERS and sorted(read) == ["c0", "c1", "c2", "c3"]
    # merged, the other files win, as in a dict
    merged = files.merged({"platform/top.yaml": "mine\n", "platform/new.yaml": "new\n"})
    assert merged == {**CLUSTERS, "platform/top.yaml": "mine\n", "platform/new.yaml": "new\n"}
    assert writer.TreeFiles.of(merged) is merged
