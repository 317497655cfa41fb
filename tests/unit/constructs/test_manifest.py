"""Manifest: a construct that owns one YAML file of dist/."""

from __future__ import annotations

import pytest

from fluxplane.constructs import ConfigMap, Construct, Manifest, Namespace, Root
from fluxplane.errors import ConstructError


@pytest.mark.parametrize(
    "path",
    [
        "podinfo.yaml",
        "clusters/hub/flux-system/gotk-sync.yaml",
        "infra/cert-manager.v1.yaml",
        "a_b/c-d.yaml",
        "0/1.yaml",
    ],
)
def test_relative_lower_case_yaml_paths_are_accepted(path: str) -> None:
    # GIVEN / WHEN a manifest with a well-formed relative path
    manifest = Manifest(Root(), "m", path=path)

    # THEN the path is kept as given
    assert manifest.path == path


@pytest.mark.parametrize(
    "path",
    [
        "/etc/podinfo.yaml",
        "../podinfo.yaml",
        "apps/../podinfo.yaml",
        "./podinfo.yaml",
        "apps//podinfo.yaml",
        "apps/podinfo.yml",
        "apps/podinfo.json",
        "apps/podinfo",
        "Apps/podinfo.yaml",
        "apps/pod info.yaml",
        "apps/.hidden.yaml",
        "apps/",
        "",
    ],
)
def test_bad_output_paths_are_rejected(path: str) -> None:
    # GIVEN a root
    root = Root()

    # WHEN / THEN a path that is absolute, climbs out, is not normalised, or is not a lower-case .yaml
    # file is refused, naming the construct and quoting the path
    with pytest.raises(ConstructError, match=r"^root/m: output path .* must be a relative, kebab-case \.yaml path$"):
        Manifest(root, "m", path=path)


def test_bad_path_error_quotes_the_path() -> None:
    # GIVEN / WHEN / THEN the bad value is shown in the message
    with pytest.raises(ConstructError, match=r"output path '/abs\.yaml'"):
        Manifest(Root(), "m", path="/abs.yaml")


def test_directory_is_the_folder_part_of_the_path() -> None:
    # GIVEN / WHEN / THEN a nested path has its folder, a top-level path has ""
    assert Manifest(Root(), "m", path="clusters/hub/sync.yaml").directory == "clusters/hub"
    assert Manifest(Root(), "m", path="sync.yaml").directory == ""


def test_documents_are_the_resources_below_in_creation_order() -> None:
    # GIVEN a manifest with a Namespace, then a group holding a ConfigMap, then another ConfigMap
    manifest = Manifest(Root(), "m", path="apps.yaml")
    Namespace(manifest, "ns", {"name": "apps"})
    group = Construct(manifest, "group")
    ConfigMap(group, "first", {"name": "first", "namespace": "apps"})
    ConfigMap(manifest, "second", {"name": "second", "namespace": "apps"})

    # WHEN its documents are listed
    documents = manifest.documents()

    # THEN they are the rendered resources, nested ones included, in creation order
    assert [(doc["kind"], doc["metadata"]["name"]) for doc in documents] == [
        ("Namespace", "apps"),
        ("ConfigMap", "first"),
        ("ConfigMap", "second"),
    ]
    assert documents[0] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}


def test_resources_lists_the_constructs_behind_the_documents() -> None:
    # GIVEN a manifest with two resources
    manifest = Manifest(Root(), "m", path="apps.yaml")
    ns = Namespace(manifest, "ns", {"name": "apps"})
    cm = ConfigMap(manifest, "cm", {"name": "c", "namespace": "apps"})

    # WHEN / THEN resources() gives the constructs in the same order
    assert manifest.resources() == [ns, cm]


def test_manifest_does_not_include_resources_of_a_sibling_manifest() -> None:
    # GIVEN two manifests under one root
    root = Root()
    a = Manifest(root, "a", path="a.yaml")
    b = Manifest(root, "b", path="b.yaml")
    Namespace(a, "ns", {"name": "a"})
    Namespace(b, "ns", {"name": "b"})

    # WHEN / THEN each lists only its own documents
    assert [doc["metadata"]["name"] for doc in a.documents()] == ["a"]
    assert [doc["metadata"]["name"] for doc in b.documents()] == ["b"]


def test_empty_manifest_has_no_documents() -> None:
    # GIVEN / WHEN / THEN a manifest without resources renders nothing
    assert Manifest(Root(), "m", path="empty.yaml").documents() == []
