"""``validate --changed BASE`` (fluxplane.validate.changed): the files of dist/ that differ from a commit, and whether
a definition is among them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fluxplane.validate.changed import ChangedFiles, Comparison, changed_since, is_definition
from fluxplane.validate.tree import ValidateError
from tests.support.git import git

CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
XRD = (
    "apiVersion: apiextensions.crossplane.io/v2\nkind: CompositeResourceDefinition\nmetadata:\n  name: x.example.org\n"
)


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    """dist/ in a repository, committed: a cluster's ConfigMap, an XRD and a file that stays."""
    folder = tmp_path / "dist"
    (folder / "clusters" / "a").mkdir(parents=True)
    (folder / "clusters" / "a" / "cm.yaml").write_text(CONFIG_MAP)
    (folder / "clusters" / "a" / "kept.yaml").write_text(CONFIG_MAP)
    (folder / "xrd.yaml").write_text(XRD)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "first")
    return folder


def test_the_change_is_what_git_sees_modified_deleted_or_untracked(dist: Path) -> None:
    # GIVEN a modified file, a new untracked one, and one untouched
    (dist / "clusters" / "a" / "cm.yaml").write_text(CONFIG_MAP + "data: {b: c}\n")
    (dist / "clusters" / "b.yaml").write_text(CONFIG_MAP)

    # WHEN the change since HEAD is asked for
    change = changed_since(dist, "HEAD")

    # THEN the two changed files, relative to dist/, and no definition among them
    assert (change.base, change.files, change.definitions) == (
        "HEAD",
        frozenset({"clusters/a/cm.yaml", "clusters/b.yaml"}),
        (),
    )
    assert change.commit == git(dist, "rev-parse", "HEAD")


def test_a_deleted_definition_counts_as_a_changed_definition(dist: Path) -> None:
    (dist / "xrd.yaml").unlink()
    assert changed_since(dist, "HEAD").definitions == ("xrd.yaml",)


def test_an_unknown_ref_and_a_folder_outside_git_are_bad_input(
    dist: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with pytest.raises(ValidateError, match=r"^--changed: unknown Git ref 'nope'$"):
        changed_since(dist, "nope")
    outside = tmp_path_factory.mktemp("outside")
    with pytest.raises(ValidateError, match=r"not in a Git repository \(--changed compares with a Git ref\)$"):
        changed_since(outside, "HEAD")


def test_a_build_is_touched_when_it_reads_or_holds_a_changed_file() -> None:
    change = ChangedFiles("HEAD", "0" * 40, frozenset({"clusters/a/cm.yaml"}), ())
    assert change.touches("clusters/a", frozenset())
    assert change.touches("clusters/b", frozenset({"clusters/a/cm.yaml"}))
    assert not change.touches("clusters/b", frozenset({"clusters/b/x.yaml"}))
    assert change.touches(".", frozenset())


@pytest.mark.parametrize(
    ("body", "definition"),
    [
        ({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}, True),
        ({"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition"}, True),
        ({"apiVersion": "pkg.crossplane.io/v1", "kind": "Function"}, True),
        ({"apiVersion": "v1", "kind": "ConfigMap"}, False),
        (["not", "an", "object"], False),
    ],
)
def test_definitions_are_the_kinds_that_give_meaning_to_others(body: object, definition: bool) -> None:
    assert is_definition(body) is definition


def test_leaving_a_comparison_before_its_result_ends_git(dist: Path) -> None:
    # GIVEN Git comparing the tree with HEAD WHEN the caller is stopped before it asks for the change
    with pytest.raises(KeyboardInterrupt), Comparison(dist, "HEAD") as comparison:
        raise KeyboardInterrupt
    # THEN neither of the Git processes it started is left running
    assert all(running._process.returncode is not None for running in (comparison._refreshed, comparison._untracked))


def test_files_written_again_with_the_same_content_are_not_a_change(dist: Path) -> None:
    # GIVEN every file of the tree written anew, as a synth that swaps in its spare tree does (new inodes, new
    # times), one of them with other content
    for path in sorted(dist.rglob("*.yaml")):
        text = path.read_text()
        path.unlink()
        path.write_text(text)
        os.utime(path, (1, 1))
    (dist / "clusters" / "a" / "cm.yaml").write_text(CONFIG_MAP + "data: {b: c}\n")
    # WHEN the change since HEAD is asked for, twice (the first refreshed Git's index)
    # THEN it is the one file whose content changed, each time
    for _ in range(2):
        assert changed_since(dist, "HEAD").files == frozenset({"clusters/a/cm.yaml"})
