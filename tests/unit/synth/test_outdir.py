"""Tests for fluxplane.synth.outdir: where the output folder may lie, the staleness check, the files other tools
keep in it, and the copy for cdk8s-cli."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fluxplane.errors import OutputError
from fluxplane.synth.outdir import check_outdir, compare_tree
from fluxplane.synth.writer import write_tree


def _outside(tmp_path: Path) -> Path:
    """A folder beside the project with a file that must survive every write."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious\n")
    return outside


def test_compare_tree_lists_added_changed_removed(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    write_tree({"same.yaml": "s\n", "changed.yaml": "old\n", "removed.yaml": "r\n"}, dist)
    result = compare_tree({"same.yaml": "s\n", "changed.yaml": "new\n", "added.yaml": "a\n"}, dist)
    assert (result.added, result.changed, result.removed, result.stale) == (
        ["added.yaml"],
        ["changed.yaml"],
        ["removed.yaml"],
        True,
    )
    assert not compare_tree({"same.yaml": "s\n", "changed.yaml": "old\n", "removed.yaml": "r\n"}, dist).stale


@pytest.mark.parametrize("outdir", [".", "..", "environments", "environments/out"])
def test_an_outdir_that_holds_the_project_or_lies_in_its_definition_is_refused(tmp_path: Path, outdir: str) -> None:
    project = tmp_path / "project"
    with pytest.raises(OutputError, match=r"synth replaces the whole output folder; pass an --outdir of its own"):
        check_outdir(project / outdir, project)
    check_outdir(project / "dist", project)
    check_outdir(tmp_path / "elsewhere", project)


def test_check_counts_a_symlinked_file_as_changed(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    dist = tmp_path / "dist"
    write_tree({"keep.txt": "precious\n"}, dist)
    (dist / "keep.txt").unlink()
    (dist / "keep.txt").symlink_to(outside / "keep.txt")
    assert compare_tree({"keep.txt": "precious\n"}, dist).changed == ["keep.txt"]


class TestReadKept:
    """Files another tool owns in dist/ (flux bootstrap's flux-system/) are read back byte for byte, or refused."""

    FOLDER = "platform/clusters/hub/flux-system/"

    def test_files_are_kept_exactly_and_a_missing_folder_is_nothing(self, tmp_path: Path) -> None:
        from fluxplane.synth.outdir import read_kept

        folder = tmp_path / self.FOLDER
        (folder / "sub").mkdir(parents=True)
        (folder / "gotk-sync.yaml").write_bytes(b"kind: GitRepository\r\nname: caf\xc3\xa9\r\n")
        (folder / "sub" / "x.yaml").write_text("a: 1\n")
        assert read_kept(tmp_path, (self.FOLDER,)) == {
            f"{self.FOLDER}gotk-sync.yaml": "kind: GitRepository\r\nname: café\r\n",
            f"{self.FOLDER}sub/x.yaml": "a: 1\n",
        }
        assert read_kept(tmp_path / "nothing", (self.FOLDER,)) == {}
        assert read_kept(tmp_path, ()) == {}

    @pytest.mark.parametrize("plant", ["link", "fifo", "binary", "linked-folder"])
    def test_what_is_not_a_plain_text_file_is_refused(self, tmp_path: Path, plant: str) -> None:
        from fluxplane.errors import OutputError
        from fluxplane.synth.outdir import read_kept

        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "secret.yaml").write_text("token: s3cr3t\n")
        dist = tmp_path / "dist"
        folder = dist / self.FOLDER
        if plant == "linked-folder":
            folder.parent.mkdir(parents=True)
            folder.symlink_to(outside)
        else:
            folder.mkdir(parents=True)
        if plant == "link":
            (folder / "x.yaml").symlink_to(outside / "secret.yaml")
        elif plant == "fifo":
            os.mkfifo(folder / "x.yaml")
        elif plant == "binary":
            (folder / "x.yaml").write_bytes(b"\xff\xfe")
        with pytest.raises(OutputError) as refused:
            read_kept(dist, (self.FOLDER,))
        assert "s3cr3t" not in str(refused.value)


class TestCopyTree:
    """The copy for cdk8s-cli is made in a folder of its own, never through a link or over other files."""

    def test_copies_every_file(self, tmp_path: Path) -> None:
        from fluxplane.synth.outdir import copy_tree

        copy_tree({"a/b/c.yaml": "x: 1\n", "a/d.yaml": "é\n", "e.yaml": ""}, tmp_path / "out")
        assert {
            p.relative_to(tmp_path / "out").as_posix(): p.read_bytes() for p in (tmp_path / "out").rglob("*.yaml")
        } == {
            "a/b/c.yaml": b"x: 1\n",
            "a/d.yaml": "é\n".encode(),
            "e.yaml": b"",
        }

    @pytest.mark.parametrize("plant", ["link", "files"])
    def test_refuses_a_link_or_a_folder_holding_files(self, tmp_path: Path, plant: str) -> None:
        from fluxplane.errors import OutputError
        from fluxplane.synth.outdir import copy_tree

        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        out = tmp_path / "out"
        if plant == "link":
            out.symlink_to(elsewhere)
        else:
            out.mkdir()
            (out / "mine.txt").write_text("keep\n")
        with pytest.raises(OutputError, match="not an empty folder"):
            copy_tree({"a.yaml": "x: 1\n"}, out)
        assert list(elsewhere.iterdir()) == []
        if plant == "files":
            assert [p.name for p in out.iterdir()] == ["mine.txt"]
