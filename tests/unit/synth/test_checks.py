"""Whole-tree checks: references Flux resolves only at run time are resolved before writing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fluxplane.constructs.kustomization import Kustomization
from fluxplane.errors import TreeError
from fluxplane.synth import load_plan
from fluxplane.synth.app import FleetApp
from fluxplane.synth.render import render_app
from tests.conftest import FleetWriter
from tests.unit.synth.packs import DEMO_HUB, DEMO_REPOSITORIES, demo_registry

BASE: dict[str, Any] = {
    "repositories": DEMO_REPOSITORIES,
    "management": DEMO_HUB,
    "packs": {"ctrl": {}, "conf": {}},
}


@pytest.fixture
def app(write_fleet: FleetWriter) -> FleetApp:
    project: Path = write_fleet(BASE, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    return FleetApp(load_plan(project, demo_registry()))


def test_dependency_on_an_unknown_kustomization(app: FleetApp) -> None:
    app.clusters["s1"].pack_kustomizations["conf"].depends_on("missing")
    with pytest.raises(TreeError) as caught:
        render_app(app)
    assert caught.value.problems == (
        "cluster-s1/infrastructure/conf: dependsOn 'missing' does not name a Kustomization on cluster 's1' "
        "(known: conf, ctrl, flux-system)",
    )


def test_dependency_cycle_is_named(app: FleetApp) -> None:
    app.clusters["s1"].pack_kustomizations["ctrl"].depends_on("conf")
    with pytest.raises(TreeError, match=r"^cluster-s1: dependsOn cycle on cluster 's1': conf -> ctrl -> conf$"):
        render_app(app)


def test_source_ref_must_exist_and_flux_path_must_be_in_dist(app: FleetApp) -> None:
    chart = app.clusters["s1"]
    Kustomization(
        chart.files[-1],
        "stray",
        {
            "name": "stray",
            "path": "./dist/platform/nowhere",
            "sourceRef": {"kind": "GitRepository", "name": "other"},
        },
    )
    with pytest.raises(TreeError) as caught:
        render_app(app)
    assert set(caught.value.problems) == {
        "cluster-s1/infrastructure/stray: sourceRef GitRepository/other is not defined on cluster 's1'",
        "cluster-s1/infrastructure/stray: spec.path './dist/platform/nowhere' is not a folder of dist/ with a "
        "kustomization.yaml",
    }


def test_two_files_at_one_path_and_two_objects_with_one_identity(app: FleetApp) -> None:
    chart = app.clusters["s1"]
    manifest = chart.add_manifest("again", "clusters/s1/cluster-vars.yaml")
    Kustomization(
        manifest,
        "a",
        {
            "name": "same",
            "path": "./dist/platform/clusters/s1",
            "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
        },
    )
    Kustomization(
        manifest,
        "b",
        {
            "name": "same",
            "path": "./dist/platform/clusters/s1",
            "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
        },
    )
    with pytest.raises(TreeError) as caught:
        render_app(app)
    assert "cluster-s1/again: writes platform/clusters/s1/cluster-vars.yaml, already written by cluster-s1/vars" in (
        caught.value.problems
    )
    assert (
        "cluster-s1/again/b: Kustomization 'same' is already defined in platform/clusters/s1/cluster-vars.yaml "
        "by cluster-s1/again/a"
    ) in caught.value.problems
