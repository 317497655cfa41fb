"""What a cluster's Kustomizations wait for: what they require and the installers of the kinds they apply."""

from __future__ import annotations

from typing import Any

from fluxplane.synth.order import Folder, applied_kinds, defined_kinds, dependencies, layer_below


def obj(api_version: str, kind: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": kind.lower()}, "spec": spec}


NAMESPACE = obj("v1", "Namespace")
RELEASE = obj("helm.toolkit.fluxcd.io/v2", "HelmRelease")
WIDGET = obj("widgets.example.com/v1", "Widget")


def controllers() -> list[Folder]:
    """Three controllers: one installs the widgets.example.com CRDs, one a family under example.net, one none."""
    return [
        Folder("logs", "controllers", [NAMESPACE, RELEASE]),
        Folder("widgets", "controllers", [NAMESPACE, RELEASE], crds=("widgets.example.com",)),
        Folder("family", "controllers", [RELEASE], crds=("*.example.net",)),
    ]


def test_a_folder_waits_only_for_the_installers_of_the_kinds_it_applies() -> None:
    # GIVEN configs that apply a Widget, a member of the example.net family, and core and Flux kinds only
    folders = [
        *controllers(),
        Folder("widget-config", "configs", [WIDGET, NAMESPACE]),
        Folder("member-config", "configs", [obj("queues.example.net/v1", "Queue")]),
        Folder("quota", "configs", [NAMESPACE, obj("v1", "ResourceQuota"), RELEASE]),
    ]
    # WHEN ordered
    found = dependencies(folders)
    # THEN each waits for the controller that installs its kinds, and for no other; the controllers for nothing
    assert found["widget-config"] == ["widgets"]
    assert found["member-config"] == ["family"]
    assert found["quota"] == []
    assert found["logs"] == found["widgets"] == found["family"] == []


def test_a_pattern_covers_the_groups_under_it_not_the_group_itself() -> None:
    folders = [*controllers(), Folder("family-config", "configs", [obj("example.net/v1", "Config")])]
    # the family's own example.net group is no member of *.example.net: unknown, so every controller
    assert dependencies(folders)["family-config"] == ["logs", "widgets", "family"]


def test_what_it_requires_comes_first_then_the_rest_in_the_clusters_order() -> None:
    folders = [*controllers(), Folder("widget-config", "configs", [WIDGET], requires=("logs", "family"))]
    assert dependencies(folders)["widget-config"] == ["logs", "family", "widgets"]


def test_a_kind_no_one_is_known_to_install_waits_for_every_layer_below() -> None:
    # GIVEN an apps folder applying a kind no folder of the cluster declares or defines
    folders = [
        *controllers(),
        Folder("widget-config", "configs", [WIDGET]),
        Folder("mystery", "apps", [obj("things.example.org/v1", "Thing")]),
    ]
    # THEN it waits for every Kustomization below it, as all did before
    assert dependencies(folders)["mystery"] == ["logs", "widgets", "family", "widget-config"]


def test_a_kind_a_folder_defines_waits_for_that_folder_kind_by_kind() -> None:
    # GIVEN a folder applying a CRD and a Crossplane XRD, another an XRD of the same group, and users of the kinds
    crd = obj(
        "apiextensions.k8s.io/v1", "CustomResourceDefinition", group="platform.example.com", names={"kind": "Gadget"}
    )
    xrd = obj(
        "apiextensions.crossplane.io/v2",
        "CompositeResourceDefinition",
        group="platform.example.com",
        names={"kind": "Bucket"},
    )
    folders = [
        Folder("crossplane", "controllers", [RELEASE], crds=("apiextensions.crossplane.io",)),
        Folder("definitions", "configs", [crd, xrd]),
        Folder("tables", "configs", [{**xrd, "spec": {"group": "platform.example.com", "names": {"kind": "Table"}}}]),
        Folder("gadgets", "configs", [obj("platform.example.com/v1", "Gadget")]),
        Folder("buckets", "configs", [obj("platform.example.com/v1", "Bucket")]),
    ]
    assert defined_kinds([crd, xrd]) == {("platform.example.com", "Gadget"), ("platform.example.com", "Bucket")}
    found = dependencies(folders)
    # THEN the XRDs wait for Crossplane, and each user of a kind for the folder that defines that kind alone
    assert found["definitions"] == found["tables"] == ["crossplane"]
    assert found["gadgets"] == found["buckets"] == ["definitions"]


def test_the_apps_layer_waits_for_the_layer_below_as_a_whole() -> None:
    # GIVEN an app of core kinds, with configs on one cluster and without on another
    app = Folder("web", "apps", [NAMESPACE, RELEASE])
    with_configs = [*controllers(), Folder("widget-config", "configs", [WIDGET]), app]
    without = [*controllers(), app]
    # THEN it waits for the configs, or for the controllers where there are none
    assert dependencies(with_configs)["web"] == ["widget-config"]
    assert dependencies(without)["web"] == ["logs", "widgets", "family"]
    assert layer_below(with_configs, "apps") == ["widget-config"]
    assert layer_below(with_configs, "controllers") == []


def test_plain_manifests_wait_for_the_layer_below_as_a_whole() -> None:
    # GIVEN plain manifests of core kinds in the configs layer, and of a Widget in the controllers layer
    folders = [
        *controllers(),
        Folder("manifests-controllers", "controllers", [WIDGET], whole_layer=True),
        Folder("manifests-configs", "configs", [NAMESPACE], whole_layer=True),
    ]
    found = dependencies(folders)
    # THEN the configs' wait for every controller (where they are put is what they come after), the controllers'
    # for the installer of the kinds they apply
    assert found["manifests-configs"] == ["logs", "widgets", "family", "manifests-controllers"]
    assert found["manifests-controllers"] == ["widgets"]


def test_applied_kinds_are_group_and_kind() -> None:
    assert applied_kinds([NAMESPACE, WIDGET, WIDGET]) == {("", "Namespace"), ("widgets.example.com", "Widget")}
