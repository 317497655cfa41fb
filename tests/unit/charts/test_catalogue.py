"""CatalogueChart (fluxplane.charts.catalogue): one add-on's catalogue folder, its base in full and each overlay as
the difference from its parent."""

from __future__ import annotations

from typing import Any

import cdk8s

from fluxplane.charts.catalogue import Binder, CatalogueChart
from fluxplane.config.models import Repository
from fluxplane.constructs.config_map import ConfigMap
from fluxplane.constructs.manifest import Manifest
from fluxplane.core.layout import PLATFORM, RepositoryLayout

LAYOUT = RepositoryLayout(PLATFORM, Repository.model_validate({"url": "ssh://git@example.com/org/fleet.git"}))
KUSTOMIZATION = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}


def sized(size: str, *extra: str) -> Binder:
    """An add-on whose settings hold ``size``, with a ConfigMap per ``extra`` name; it declares its size."""

    def bind(manifest: Manifest) -> Any:
        ConfigMap(manifest, "settings", {"name": "settings", "namespace": "metrics", "data": {"size": size}})
        for name in extra:
            ConfigMap(manifest, name, {"name": name, "namespace": "metrics"})
        return {"size": size}

    return bind


def catalogue() -> CatalogueChart:
    return CatalogueChart(cdk8s.App(), "metrics", layout=LAYOUT, layer="controllers", pack="metrics")


def test_the_base_is_the_add_on_in_full_in_its_layer_s_folder() -> None:
    # GIVEN a controllers add-on WHEN its base is written
    chart = catalogue()
    base = chart.emit_base(sized("1"))

    # THEN <layer folder>/<pack>/base/ holds it in full, listed by its kustomization, and the variant says so
    assert (base.directory, base.declared) == ("infrastructure/controllers/metrics/base", {"size": "1"})
    assert {file.path: file.documents() for file in chart.files} == {
        "infrastructure/controllers/metrics/base/metrics.yaml": base.documents,
        "infrastructure/controllers/metrics/base/kustomization.yaml": [
            {**KUSTOMIZATION, "resources": ["metrics.yaml"]}
        ],
    }
    assert [doc["data"] for doc in base.documents] == [{"size": "1"}]


def test_a_configuration_that_renders_alike_needs_no_overlay() -> None:
    chart = catalogue()
    base = chart.emit_base(sized("1"))
    documents, declared = chart.render("staging", sized("1"))
    assert chart.plan(base, documents).empty
    assert declared == {"size": "1"}
    # rendering another configuration writes nothing
    assert [file.path for file in chart.files] == [
        "infrastructure/controllers/metrics/base/metrics.yaml",
        "infrastructure/controllers/metrics/base/kustomization.yaml",
    ]


def test_an_overlay_holds_only_the_difference_from_its_parent() -> None:
    # GIVEN an environment whose configuration changes the size and adds an object
    chart = catalogue()
    base = chart.emit_base(sized("1"))
    documents, _ = chart.render("production", sized("3", "extra"))

    # WHEN its overlay is written over the base
    chart.emit_overlay("production", "infrastructure/controllers/metrics/production", base, chart.plan(base, documents))

    # THEN it lists its parent, the added object in a file of its own, and one patch for the changed value
    written = {file.path: file.documents() for file in chart.files}
    assert written["infrastructure/controllers/metrics/production/metrics.yaml"] == [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra", "namespace": "metrics"}}
    ]
    assert written["infrastructure/controllers/metrics/production/kustomization.yaml"] == [
        {
            **KUSTOMIZATION,
            "resources": ["../base", "metrics.yaml"],
            "patches": [
                {
                    "patch": "- op: replace\n  path: /data/size\n  value: '3'\n",
                    "target": {"version": "v1", "kind": "ConfigMap", "name": "settings", "namespace": "metrics"},
                }
            ],
        }
    ]
