"""fluxplane.git: refs resolved without options slipping through, blobs read byte for byte."""

from __future__ import annotations

from pathlib import Path

from fluxplane import git as fgit
from tests.support.git import git

PURPOSE = "testing"


def test_blobs_are_read_byte_for_byte_and_missing_paths_are_none(tmp_path: Path) -> None:
    # GIVEN a commit holding a file with multi-byte characters and a subfolder
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.yaml").write_text("name: grüße 名前\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_bytes(b"x: 1\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "first")
    commit = fgit.commit_of(tmp_path, "HEAD", purpose=PURPOSE)
    assert commit is not None
    # WHEN the files, and one the commit lacks, are read relative to the subfolder
    found = fgit.blobs(tmp_path / "sub", commit, ["a.yaml", "gone.yaml", "../b.yaml"], purpose=PURPOSE)
    # THEN each is its exact bytes, in order, None for the missing one
    assert found == ["name: grüße 名前\n".encode(), None, b"x: 1\n"]
    assert fgit.blobs(tmp_path, commit, [], purpose=PURPOSE) == []


def test_a_ref_that_looks_like_an_option_names_no_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "first")
    assert fgit.commit_of(tmp_path, "HEAD", purpose=PURPOSE) == git(tmp_path, "rev-parse", "HEAD")
    for ref in ("--all", "-h", "nope", "HEAD~3"):
        assert fgit.commit_of(tmp_path, ref, purpose=PURPOSE) is None
