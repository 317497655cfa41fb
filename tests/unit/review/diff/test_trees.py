"""Tests for fluxplane.review.diff.trees: where the base tree comes from, and the head rendered without writing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fluxplane.cli import main
from fluxplane.config import yamlfile
from fluxplane.review import diff
from fluxplane.review.diff.trees import base_tree, committed, committed_blobs, head_tree
from fluxplane.system.keys import CACHE_DIR
from tests.conftest import FleetWriter
from tests.support.files import read_tree
from tests.support.git import git


@pytest.fixture
def project(write_fleet: FleetWriter) -> Path:
    root = write_fleet()
    git(root, "init", "-q")
    return root


def test_a_committed_dist_is_the_base_byte_for_byte(project: Path) -> None:
    # GIVEN dist/ synthesized and committed, then a file of it changed in the working tree
    assert main(["--root", str(project), "synth"]) == 0
    git(project, "add", ".")
    git(project, "commit", "-qm", "first")
    committed = read_tree(project / "dist")
    (project / "dist" / "CODEOWNERS").write_text("changed\n")
    tree, source = base_tree(project, diff.resolve(project, "HEAD"))
    # THEN the base is what the commit holds, not the working tree
    assert source == "committed"
    assert {path: text.encode() for path, text in tree.files.items()} == committed


def test_a_committed_base_takes_the_heads_unchanged_files_and_reads_the_others(project: Path) -> None:
    # GIVEN dist/ synthesized and committed, and a head that changes one file, adds one and lacks one
    assert main(["--root", str(project), "synth"]) == 0
    git(project, "add", ".")
    git(project, "commit", "-qm", "first")
    committed_files = {path: data.decode() for path, data in read_tree(project / "dist").items()}
    head = {path: str(text) for path, text in committed_files.items()}
    changed, gone = sorted(head)[:2]
    head[changed] += "# changed\n"
    del head[gone]
    head["platform/new.yaml"] = "new: 1\n"
    base = diff.resolve(project, "HEAD")
    blobs = committed_blobs(base, project / "dist")
    assert blobs is not None
    tree = committed(base, blobs, head)
    # THEN the base is what the commit holds, the unchanged files the head's own texts
    assert dict(tree.files) == committed_files
    unchanged = sorted(set(head) - {changed, "platform/new.yaml"})
    assert all(tree.files[path] is head[path] for path in unchanged)
    assert tree.files[changed] is not head[changed]


def test_a_base_without_dist_is_synthesized_and_one_without_a_definition_is_empty(project: Path) -> None:
    git(project, "add", "environments")
    git(project, "commit", "-qm", "definition only")
    tree, source = base_tree(project, diff.resolve(project, "HEAD"))
    assert source == "synthesized"
    assert "platform/clusters/staging-1/kustomization.yaml" in tree.files
    assert tree.repositories
    # AND a commit with neither is an empty base
    git(project, "rm", "-rq", "--cached", "environments")
    git(project, "commit", "-qm", "nothing")
    tree, source = base_tree(project, diff.resolve(project, "HEAD"))
    assert (source, dict(tree.files)) == ("empty", {})


def test_the_head_is_what_synth_would_write_and_nothing_is_written(project: Path) -> None:
    before = read_tree(project)
    tree = head_tree(project)
    assert read_tree(project) == before
    assert tree.hub == "hub"
    assert main(["--root", str(project), "synth"]) == 0
    assert {path: text.encode() for path, text in tree.files.items()} == read_tree(project / "dist")


def test_the_head_reads_the_files_synth_parsed_and_writes_none(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a synth, which keeps the files it parsed (twice: the first writes environments/allocations.yaml)
    for _ in range(2):
        assert main(["--root", str(project), "synth"]) == 0
    store = project / CACHE_DIR / "parsed" / "files.entry"
    assert store.is_file()
    before = read_tree(project)

    # WHEN the head is rendered with parsing refused THEN every file comes from the store, and nothing is written
    def refuse(text: str) -> list[Any]:
        raise AssertionError(f"parsed again: {text[:40]!r}")

    monkeypatch.setattr(yamlfile, "_load", refuse)
    tree = head_tree(project)
    assert read_tree(project) == before
    assert {path: text.encode() for path, text in tree.files.items()} == read_tree(project / "dist")


def test_the_head_writes_no_store_of_parsed_files(project: Path) -> None:
    # GIVEN a synth whose store of parsed files was removed WHEN the head is rendered THEN none is written
    assert main(["--root", str(project), "synth"]) == 0
    (project / CACHE_DIR / "parsed" / "files.entry").unlink()
    head_tree(project)
    assert not (project / CACHE_DIR / "parsed" / "files.entry").exists()
