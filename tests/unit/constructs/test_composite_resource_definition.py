"""Crossplane CompositeResourceDefinition (apiextensions.crossplane.io/v2)."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.constructs import Manifest, Root
from fluxplane.constructs.composite_resource_definition import CompositeResourceDefinition
from fluxplane.errors import ConstructError

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"spec": {"type": "object"}}}


def _props(**changes: Any) -> dict[str, Any]:
    return {
        "name": "widgets.example.org",
        "group": "example.org",
        "names": {"kind": "Widget", "plural": "widgets"},
        "versions": [{"name": "v1alpha1", "schema": {"openAPIV3Schema": SCHEMA}}],
        **changes,
    }


def _xrd(props: dict[str, Any]) -> CompositeResourceDefinition:
    return CompositeResourceDefinition(Manifest(Root(), "m", path="x.yaml"), "xrd", props)


def test_a_small_xrd_is_namespaced_with_one_served_referenceable_version() -> None:
    # GIVEN / WHEN an XRD with one version and only the required fields
    xrd = _xrd(_props())

    # THEN it is cluster-scoped itself, defines namespaced composites, and its version is served and referenceable
    assert xrd.to_dict() == {
        "apiVersion": "apiextensions.crossplane.io/v2",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": "widgets.example.org"},
        "spec": {
            "group": "example.org",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1alpha1", "served": True, "referenceable": True, "schema": {"openAPIV3Schema": SCHEMA}}
            ],
        },
    }
    assert (xrd.composite_api_version, xrd.composite_kind) == ("example.org/v1alpha1", "Widget")


def test_upstream_names_of_names_printer_columns_and_versions() -> None:
    # GIVEN an XRD with optional fields given by their Python names
    xrd = _xrd(
        _props(
            labels={"team": "platform"},
            names={"kind": "Widget", "plural": "widgets", "list_kind": "WidgetList", "short_names": ["wdg"]},
            scope="Cluster",
            versions=[
                {"name": "v1alpha1", "referenceable": False, "deprecated": True, "schema": {"openAPIV3Schema": {}}},
                {
                    "name": "v1beta1",
                    "additional_printer_columns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                    "schema": {"openAPIV3Schema": SCHEMA},
                },
            ],
        )
    )

    # WHEN rendered THEN every field takes its upstream spelling, and the referenceable version wins
    spec = xrd.to_dict()["spec"]
    assert spec["names"] == {"kind": "Widget", "plural": "widgets", "listKind": "WidgetList", "shortNames": ["wdg"]}
    assert spec["scope"] == "Cluster"
    assert spec["versions"] == [
        {
            "name": "v1alpha1",
            "served": True,
            "referenceable": False,
            "deprecated": True,
            "schema": {"openAPIV3Schema": {}},
        },
        {
            "name": "v1beta1",
            "served": True,
            "referenceable": True,
            "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
            "schema": {"openAPIV3Schema": SCHEMA},
        },
    ]
    assert xrd.to_dict()["metadata"] == {"name": "widgets.example.org", "labels": {"team": "platform"}}
    assert xrd.composite_api_version == "example.org/v1beta1"


@pytest.mark.parametrize(
    ("name", "group", "plural"),
    [("widget.example.org", "example.org", "widgets"), ("widgets.example.com", "example.org", "widgets")],
)
def test_an_xrd_is_named_plural_dot_group(name: str, group: str, plural: str) -> None:
    # GIVEN / WHEN / THEN a name other than <plural>.<group> is refused, saying which name is expected
    with pytest.raises(
        ConstructError,
        match=rf"^root/m/xrd: CompositeResourceDefinitionProps\.\(props\): an XRD must be named <plural>\.<group>, "
        rf"'{plural}\.{group}', got '{name}'$",
    ):
        _xrd(_props(name=name, group=group, names={"kind": "Widget", "plural": plural}))


@pytest.mark.parametrize(
    "versions",
    [
        [
            {"name": "v1alpha1", "schema": {"openAPIV3Schema": {}}},
            {"name": "v1beta1", "schema": {"openAPIV3Schema": {}}},
        ],
        [{"name": "v1alpha1", "referenceable": False, "schema": {"openAPIV3Schema": {}}}],
    ],
    ids=["two", "none"],
)
def test_exactly_one_version_is_referenceable(versions: list[dict[str, Any]]) -> None:
    with pytest.raises(
        ConstructError, match=r"^root/m/xrd: CompositeResourceDefinitionProps\.\(props\): exactly one version must be"
    ):
        _xrd(_props(versions=versions))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"versions": []}, r"versions: tuple should have at least 1 item"),
        ({"namespace": "crossplane-system"}, r"namespace: extra inputs are not permitted"),
        ({"scope": "Namespace"}, r"scope: input should be 'Namespaced' or 'Cluster'"),
        ({"names": {"kind": "widget", "plural": "widgets"}}, r"names\.kind: string should match pattern"),
        (
            {"versions": [{"name": "alpha", "schema": {"openAPIV3Schema": {}}}]},
            r"versions\.0\.name: string should match pattern",
        ),
    ],
)
def test_malformed_xrds_are_refused(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConstructError, match=rf"^root/m/xrd: CompositeResourceDefinitionProps\.{message}"):
        _xrd(_props(**changes))
