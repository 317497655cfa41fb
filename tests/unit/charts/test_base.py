"""FleetChart (fluxplane.charts.base): a cdk8s Chart that owns a group of dist/ files, in creation order."""

from __future__ import annotations

import cdk8s

from fluxplane.charts.base import FleetChart
from fluxplane.config.models import Repository
from fluxplane.constructs.base import node_of
from fluxplane.constructs.config_map import ConfigMap
from fluxplane.core.layout import PLATFORM, RepositoryLayout

LAYOUT = RepositoryLayout(PLATFORM, Repository.model_validate({"url": "ssh://git@example.com/org/fleet.git"}))


def test_a_chart_lists_its_files_in_the_order_they_were_made() -> None:
    # GIVEN a chart of the folder clusters/a
    chart = FleetChart(cdk8s.App(), "cluster-a", layout=LAYOUT, directory="clusters/a")

    # WHEN a manifest, then a kustomization.yaml listing it, are added
    manifest = chart.add_manifest("vars", "clusters/a/vars.yaml")
    ConfigMap(manifest, "vars", {"name": "vars", "namespace": "flux-system", "data": {"a": "1"}})
    listing = chart.add_kustomization_file("kustomization", "clusters/a")
    listing.config.add_resource("vars.yaml")

    # THEN both are its files, in that order, each at its path, with what was put in it
    assert [file.path for file in chart.files] == ["clusters/a/vars.yaml", "clusters/a/kustomization.yaml"]
    assert chart.files[1].documents() == [
        {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["vars.yaml"]}
    ]
    # AND cdk8s's own objects under it would go to the folder's custom.yaml
    assert chart.custom_path == "clusters/a/custom.yaml"


def test_a_chart_s_node_is_named_after_its_place_in_the_app() -> None:
    chart = FleetChart(cdk8s.App(), "cluster-a", layout=LAYOUT, directory="clusters/a")
    manifest = chart.add_manifest("vars", "clusters/a/vars.yaml")
    assert node_of(chart).path == "cluster-a"
    assert node_of(manifest).path == "cluster-a/vars"
