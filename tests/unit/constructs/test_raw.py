"""RawObject: a manifest carried as plain data and written as given."""

from __future__ import annotations

from typing import Any

from fluxplane.constructs import Manifest, Root
from fluxplane.constructs.raw import RawObject


def secret() -> dict[str, Any]:
    return {
        "kind": "Secret",
        "apiVersion": "v1",
        "metadata": {"name": "token", "namespace": "apps", "labels": {"z": "1", "a": "2"}},
        "stringData": {"token": "abc"},
        "x-unknown": [1, 2],
    }


def test_raw_object_is_written_exactly_as_given() -> None:
    # GIVEN a document with unusual key order and fields no construct models
    document = secret()

    # WHEN it is carried as a RawObject
    raw = RawObject(Root(), "raw", document)

    # THEN to_dict returns the same data in the same key order (labels not re-sorted)
    assert raw.to_dict() == secret()
    assert list(raw.to_dict()) == ["kind", "apiVersion", "metadata", "stringData", "x-unknown"]
    assert list(raw.to_dict()["metadata"]["labels"]) == ["z", "a"]


def test_raw_object_identity_comes_from_the_document() -> None:
    # GIVEN / WHEN a RawObject
    raw = RawObject(Root(), "raw", secret())

    # THEN apiVersion, kind, namespace and name come from the document
    assert raw.ref == ("v1", "Secret", "apps", "token")


def test_raw_object_without_namespace_is_cluster_scoped() -> None:
    # GIVEN / WHEN a document without metadata.namespace
    raw = RawObject(Root(), "raw", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}})

    # THEN it is treated as cluster-scoped, without error
    assert raw.namespace is None
    assert raw.namespaced is False


def test_scope_of_one_raw_object_does_not_leak_to_another() -> None:
    # GIVEN a cluster-scoped raw object
    root = Root()
    RawObject(root, "ns", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}})

    # WHEN a namespaced one is created next
    raw = RawObject(root, "secret", secret())

    # THEN it is namespaced, and the class default is untouched
    assert raw.namespaced is True
    assert RawObject.namespaced is True


def test_later_changes_to_the_source_document_do_not_change_the_output() -> None:
    # GIVEN a RawObject built from a document
    document = secret()
    raw = RawObject(Root(), "raw", document)

    # WHEN the caller changes the document, deep inside
    document["metadata"]["labels"]["a"] = "changed"
    document["stringData"]["token"] = "changed"

    # THEN the RawObject still renders the original
    assert raw.to_dict() == secret()


def test_changing_the_output_does_not_change_the_object() -> None:
    # GIVEN the rendered document of a RawObject
    raw = RawObject(Root(), "raw", secret())
    first = raw.to_dict()

    # WHEN the caller changes it
    first["metadata"]["name"] = "changed"

    # THEN the next rendering is unaffected
    assert raw.to_dict() == secret()


def test_raw_objects_are_documents_of_their_manifest() -> None:
    # GIVEN a manifest with a raw object
    manifest = Manifest(Root(), "m", path="added.yaml")
    RawObject(manifest, "object-0", secret())

    # WHEN / THEN it is one of the manifest's documents
    assert manifest.documents() == [secret()]
