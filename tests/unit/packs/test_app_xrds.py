"""The app kinds' XRDs (fluxplane.kinds.app.AppKind.xrd_props)."""

from __future__ import annotations

from fluxplane.kinds import APP_KINDS


def test_xrd_schemas_require_what_the_compositions_need() -> None:
    for kind in APP_KINDS:
        spec = APP_KINDS[kind].xrd_props().dump()["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        assert "region" in spec["required"]
        assert set(spec["required"]) <= set(spec["properties"])


def test_a_kinds_xrd_is_namespaced_and_defaults_to_its_composition() -> None:
    # GIVEN the queue kind WHEN its XRD is made
    props = APP_KINDS["AppQueue"].xrd_props().dump()
    (version,) = props.pop("versions")

    # THEN it is named by its plural, namespaced, listed among the apps' kinds and composed by default by its own
    assert props == {
        "name": "appqueues.platform.fluxplane.io",
        "group": "platform.fluxplane.io",
        "names": {"kind": "AppQueue", "plural": "appqueues", "categories": ["crossplane", "composite", "app"]},
        "scope": "Namespaced",
        "defaultCompositionRef": {"name": "appqueue"},
    }
    # AND its one version serves the kind's fields, the shared ones after them, and what status reports
    assert (version["name"], version["served"], version["referenceable"]) == ("v1alpha1", True, True)
    schema = version["schema"]["openAPIV3Schema"]
    assert schema["required"] == ["spec"]
    spec = schema["properties"]["spec"]
    assert spec["required"] == ["region", "app", "queueName"]
    assert list(spec["properties"]) == [
        "app",
        "queueName",
        "fifo",
        "visibilityTimeoutSeconds",
        "messageRetentionSeconds",
        "region",
        "providerConfigName",
        "tags",
    ]
    assert schema["properties"]["status"] == {
        "type": "object",
        "properties": {"arn": {"type": "string"}, "url": {"type": "string"}},
    }


def test_every_kind_takes_a_region_an_account_and_tags_alike() -> None:
    # GIVEN every kind's XRD WHEN the shared fields are read THEN each kind has the same three
    shared = ("region", "providerConfigName", "tags")
    specs = [
        declared.xrd_props().dump()["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        for declared in APP_KINDS.values()
    ]
    first = {field: specs[0]["properties"][field] for field in shared}
    assert first["region"]["pattern"] == "^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$"
    assert first["providerConfigName"]["default"] == "default"
    for spec in specs:
        assert {field: spec["properties"][field] for field in shared} == first
