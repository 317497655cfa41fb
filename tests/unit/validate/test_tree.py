"""Tests for fluxplane.validate.tree: what a fluxplane tree is, and reading its documents."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.validate import kustomize
from fluxplane.validate.findings import Finding
from fluxplane.validate.tree import ValidateError, load_documents, load_tree, tree_files


def _tree(root: Path) -> Path:
    (root / "platform" / "clusters" / "hub").mkdir(parents=True)
    (root / "platform" / "clusters" / "hub" / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- a.yaml\n"
    )
    (root / "platform" / "clusters" / "hub" / "a.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  when: 2024-01-01\n---\n---\nkind: X\n"
    )
    return root


def test_documents_are_numbered_from_one_and_timestamps_stay_strings(tmp_path: Path) -> None:
    # GIVEN a tree with a file of three documents, one empty
    tree = load_tree(_tree(tmp_path / "dist"))
    # THEN the empty one is skipped but counted in the numbering, and dates are strings
    assert [(d.file, d.index, d.kind, d.name) for d in tree.documents] == [
        ("platform/clusters/hub/a.yaml", 1, "ConfigMap", "a"),
        ("platform/clusters/hub/a.yaml", 3, "X", "-"),
        ("platform/clusters/hub/kustomization.yaml", 1, "Kustomization", "-"),
    ]
    assert tree.documents[0].body["data"]["when"] == "2024-01-01"
    assert tree.files == ["platform/clusters/hub/a.yaml", "platform/clusters/hub/kustomization.yaml"]
    assert tree.kustomization_dirs == ["platform/clusters/hub"]


def test_yaml_error_is_a_finding_on_the_broken_document() -> None:
    # GIVEN a file whose second document does not parse
    documents, findings = load_documents("a: 1\n---\nb: [\n", "x.yaml")
    # THEN the first document is read and the second is a finding
    assert [d.index for d in documents] == [1]
    assert len(findings) == 1
    assert findings[0].file == "x.yaml"
    assert findings[0].doc == 2
    assert findings[0].message.startswith("cannot parse YAML: ")


def test_unknown_tags_are_data() -> None:
    documents, findings = load_documents("a: !Ref b\n", "x.yaml")
    assert findings == []
    assert documents[0].body == {"a": "b"}


def test_missing_tree_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValidateError, match=r"nothere: no such folder \(pass the dist/ folder"):
        load_tree(tmp_path / "nothere")


def test_folder_without_cluster_entry_points_is_not_a_tree(tmp_path: Path) -> None:
    with pytest.raises(
        ValidateError, match=r"not a fluxplane tree \(expected platform/clusters/<cluster>/kustomization"
    ):
        load_tree(tmp_path)


def test_finding_of_document() -> None:
    documents, _ = load_documents("kind: A\nmetadata:\n  name: b\n", "f.yaml")
    assert documents[0].finding("spec", "m") == Finding("f.yaml", 1, "A", "b", "spec", "m")


def test_one_walk_lists_the_yaml_validate_reads_and_every_file_a_build_may_read(tmp_path: Path) -> None:
    # GIVEN a tree with hidden files and folders, a link to a file, a link to a folder and a dangling link
    root = _tree(tmp_path / "dist")
    hub = root / "platform" / "clusters" / "hub"
    (hub / ".env").write_text("A=1\n")
    (hub / ".hidden.yaml").write_text("kind: X\n")
    (root / ".git").mkdir()
    (root / ".git" / "config.yaml").write_text("kind: X\n")
    (hub / "linked.yaml").symlink_to(hub / "a.yaml")
    (hub / "folder-link").symlink_to(root / "platform")
    (hub / "dangling.yaml").symlink_to(hub / "missing.yaml")
    (hub / "README.md").write_text("# hub\n")
    # WHEN its files are listed
    yaml_paths, every = tree_files(root)
    # THEN validate reads the YAML files, hidden ones and dangling links left out, a link to a file read through
    prefix = "platform/clusters/hub/"
    assert yaml_paths == [f"{prefix}{name}" for name in ("a.yaml", "kustomization.yaml", "linked.yaml")]
    # AND a build may read any file, hidden ones too, as os.walk finds them (hidden folders and links to folders
    # not walked into): what kustomize reads on disk
    assert sorted(every) == sorted(kustomize._files(root))
    assert sorted(every) == [
        f"{prefix}{name}"
        for name in (
            ".env",
            ".hidden.yaml",
            "README.md",
            "a.yaml",
            "dangling.yaml",
            "kustomization.yaml",
            "linked.yaml",
        )
    ]
    assert load_tree(root).listing is not None
