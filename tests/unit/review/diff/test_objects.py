"""Object diffs per cluster and repository, and the files no cluster applies."""

from __future__ import annotations

from typing import Any

from fluxplane.core.tree.objects import key_of
from fluxplane.review.diff.fleet import RepositoryObject
from fluxplane.review.diff.objects import FileChange, compare_clusters, compare_files, label, to_yaml


def config_map(name: str, data: dict[str, str], namespace: str = "apps") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data}


def placed(*docs: dict[str, Any], repository: str = "platform") -> dict[Any, RepositoryObject]:
    return {key_of(doc): RepositoryObject(repository, doc) for doc in docs}


def test_label_names_api_version_kind_and_namespace_or_not() -> None:
    assert label(config_map("a", {})) == "v1 ConfigMap apps/a"
    assert label({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}) == "v1 Namespace apps"


def test_added_changed_and_removed_objects_per_cluster() -> None:
    # GIVEN a cluster where one object changes, one goes and one comes, and one stays the same
    before = {"hub": placed(config_map("same", {}), config_map("edit", {"a": "1"}), config_map("gone", {}))}
    after = {"hub": placed(config_map("same", {}), config_map("edit", {"a": "2"}), config_map("new", {}))}
    # WHEN compared
    [section] = compare_clusters(before, after)
    # THEN the unchanged object is left out, the rest sorted by kind, namespace and name
    assert (section.repository, section.cluster, section.status) == ("platform", "hub", "")
    assert [(change.label, change.status) for change in section.changes] == [
        ("v1 ConfigMap apps/edit", "changed"),
        ("v1 ConfigMap apps/gone", "removed"),
        ("v1 ConfigMap apps/new", "added"),
    ]
    assert section.changes[0].diff("HEAD", "working tree") == (
        "--- HEAD: v1 ConfigMap apps/edit\n"
        "+++ working tree: v1 ConfigMap apps/edit\n"
        "@@ -4,4 +4,4 @@\n"
        "   name: edit\n"
        "   namespace: apps\n"
        " data:\n"
        "-  a: '1'\n"
        "+  a: '2'\n"
    )
    assert section.changes[1].diff("HEAD", "working tree") == ""


def test_a_removed_cluster_is_split_by_repository() -> None:
    before = {"east": {**placed(config_map("a", {})), **placed(config_map("b", {}), repository="workloads")}}
    sections = compare_clusters(before, {})
    assert [(s.repository, s.cluster, s.status, s.count("removed")) for s in sections] == [
        ("platform", "east", "removed", 1),
        ("workloads", "east", "removed", 1),
    ]


def test_an_object_whose_version_changes_is_one_change() -> None:
    old = {"apiVersion": "example.com/v1beta1", "kind": "Widget", "metadata": {"name": "w"}}
    new = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    [section] = compare_clusters({"hub": placed(old)}, {"hub": placed(new)})
    assert [(change.status, change.label) for change in section.changes] == [("changed", "example.com/v1 Widget w")]


def test_multi_line_strings_dump_as_literal_blocks() -> None:
    assert to_yaml(config_map("c", {"conf": "a\nb\n"})) == (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: apps\ndata:\n  conf: |\n    a\n    b\n"
    )


def test_only_files_no_cluster_applies_are_compared_as_files() -> None:
    before = {"CODEOWNERS": "* @a\n", "platform/x.yaml": "a: 1\n", "platform/README.md": "old\n"}
    after = {"CODEOWNERS": "* @b\n", "platform/x.yaml": "a: 2\n", "workloads/README.md": "new\n"}
    changes = compare_files(before, after, applied={"platform/x.yaml"})
    assert [(c.path, c.repository, c.status) for c in changes] == [
        ("CODEOWNERS", ".", "changed"),
        ("platform/README.md", "platform", "removed"),
        ("workloads/README.md", "workloads", "added"),
    ]
    assert FileChange("CODEOWNERS", "* @a\n", "* @b\n").diff("HEAD", "working tree") == (
        "--- HEAD: dist/CODEOWNERS\n+++ working tree: dist/CODEOWNERS\n@@ -1 +1 @@\n-* @a\n+* @b\n"
    )
