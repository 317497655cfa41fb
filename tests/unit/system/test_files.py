"""fluxplane.system.files: where synth writes, one rule for all; and write_atomic, the old content or the new, never
through a link, nothing left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fluxplane.synth import load_plan, synthesize
from fluxplane.synth.app import FleetApp
from fluxplane.system.files import output_dir, write_atomic
from tests.conftest import FleetWriter


def test_it_writes_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "entry"
    write_atomic(target, b"one")
    write_atomic(target, b"two", mode=0o600)
    assert target.read_bytes() == b"two"
    assert os.listdir(tmp_path) == ["entry"]


def test_a_link_at_the_target_is_replaced_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"keep")
    target = tmp_path / "entry"
    target.symlink_to(elsewhere)
    write_atomic(target, b"new")
    assert not target.is_symlink() and target.read_bytes() == b"new"
    assert elsewhere.read_bytes() == b"keep"


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_a_link_left_at_the_temporary_name_does_not_redirect_the_write(tmp_path: Path, link: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"keep")
    target = tmp_path / "entry"
    temporary = tmp_path / f".entry.{os.getpid()}.tmp"
    if link == "symlink":
        temporary.symlink_to(elsewhere)
    else:
        os.link(elsewhere, temporary)
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new" and elsewhere.read_bytes() == b"keep"


def test_a_failure_raises_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "entry"
    target.mkdir()  # a folder cannot be replaced by a file
    (target / "inside").write_bytes(b"x")
    with pytest.raises(OSError):
        write_atomic(target, b"new")
    assert sorted(os.listdir(tmp_path)) == ["entry"]


def test_synth_writes_where_asked_else_where_cdk8s_asks_else_to_dist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CDK8S_OUTDIR", raising=False)
    assert output_dir(tmp_path) == tmp_path / "dist"
    monkeypatch.setenv("CDK8S_OUTDIR", str(tmp_path / "out"))
    assert output_dir(tmp_path) == tmp_path / "out"
    assert output_dir(tmp_path, tmp_path / "mine") == tmp_path / "mine"


def test_the_library_the_command_and_the_cdk8s_app_follow_the_one_rule(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_fleet()
    out = root / "elsewhere"
    monkeypatch.setenv("CDK8S_OUTDIR", str(out))
    assert synthesize(root).outdir == out and (out / "platform" / "clusters" / "hub" / "README.md").is_file()
    assert FleetApp(load_plan(root)).outdir == str(out)
    monkeypatch.delenv("CDK8S_OUTDIR")
    monkeypatch.chdir(root)
    assert FleetApp(load_plan(root)).outdir == "dist"


def test_entries_below_list_every_entry_but_folders_and_follow_no_link(tmp_path: Path) -> None:
    from fluxplane.system.files import entries_below

    # GIVEN files at two depths, a hidden file and folder, a link to a file and one to a folder outside
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "x.yaml").write_text("x: 1\n")
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "top.yaml").write_text("")
    (root / "a" / "b" / "deep.yaml").write_text("")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.yaml").write_text("")
    (root / "a" / ".h.yaml").write_text("")
    (root / "a" / "file-link.yaml").symlink_to(root / "top.yaml")
    (root / "a" / "folder-link").symlink_to(outside, target_is_directory=True)
    # THEN each entry that is not a folder comes with its path below the root; a link to a folder is an entry, not
    # walked into
    found = {relative: entry for relative, entry in entries_below(str(root))}
    assert sorted(found) == [
        ".hidden/h.yaml",
        "a/.h.yaml",
        "a/b/deep.yaml",
        "a/file-link.yaml",
        "a/folder-link",
        "top.yaml",
    ]
    assert found["a/folder-link"].is_symlink()
    # AND without hidden names, those that start with a dot are left out, folders and files
    assert sorted(relative for relative, _ in entries_below(str(root), hidden=False)) == [
        "a/b/deep.yaml",
        "a/file-link.yaml",
        "a/folder-link",
        "top.yaml",
    ]
