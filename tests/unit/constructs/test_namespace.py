"""Namespace (v1)."""

from __future__ import annotations

import pytest

from fluxplane.constructs import Namespace, NamespaceProps, Root
from fluxplane.errors import ConstructError


def test_namespace_is_cluster_scoped_and_has_no_spec() -> None:
    # GIVEN / WHEN a Namespace with only a name
    namespace = Namespace(Root(), "ns", {"name": "apps"})

    # THEN it renders header and name only
    assert namespace.to_dict() == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}
    assert namespace.ref == ("v1", "Namespace", None, "apps")


def test_labels_and_annotations_are_sorted_metadata() -> None:
    # GIVEN labels and annotations out of order
    namespace = Namespace(
        Root(),
        "ns",
        {
            "name": "apps",
            "annotations": {"b.io/x": "1", "a.io/y": "2"},
            "labels": {"pod-security.kubernetes.io/enforce": "restricted", "env": "prod"},
        },
    )

    # WHEN / THEN they are written sorted, labels before annotations, and there is still no spec
    assert namespace.to_dict() == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": "apps",
            "labels": {"env": "prod", "pod-security.kubernetes.io/enforce": "restricted"},
            "annotations": {"a.io/y": "2", "b.io/x": "1"},
        },
    }


def test_namespace_of_a_namespace_is_rejected() -> None:
    # GIVEN / WHEN / THEN a cluster-scoped Namespace cannot be given a namespace
    with pytest.raises(ConstructError, match=r"^root/ns: NamespaceProps\.namespace: extra inputs are not permitted$"):
        Namespace(Root(), "ns", {"name": "apps", "namespace": "default"})


@pytest.mark.parametrize("name", ["apps.prod", "Apps", "a" * 64, "-apps"])
def test_name_must_be_a_dns_label(name: str) -> None:
    # GIVEN / WHEN / THEN a dotted, upper-case, too long or dash-first name is refused
    with pytest.raises(ConstructError, match=r"^root/ns: NamespaceProps\.name: string should"):
        Namespace(Root(), "ns", {"name": name})


def test_props_instance_is_accepted() -> None:
    # GIVEN / WHEN / THEN a props model is kept as given
    props = NamespaceProps(name="apps")
    assert Namespace(Root(), "ns", props).props is props
