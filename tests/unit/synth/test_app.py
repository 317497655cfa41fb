"""FleetApp: synth's construct tree as a cdk8s App, for constructs built with cdk8s itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cdk8s
import pytest
import yaml

from fluxplane.charts.base import FleetChart
from fluxplane.errors import TreeError
from fluxplane.synth import load_plan
from fluxplane.synth.app import FleetApp
from fluxplane.synth.render import render_app
from fluxplane.synth.tree import FleetTree
from tests.conftest import FleetWriter
from tests.support.packs import DEMO_HUB, DEMO_REPOSITORIES, demo_registry

BASE: dict[str, Any] = {
    "repositories": DEMO_REPOSITORIES,
    "management": {**DEMO_HUB, "packs": {"build": {}, "web": {"enabled": False}}},
    "packs": {"ctrl": {}, "conf": {}, "web": {}},
}


def _charts(tree: FleetTree) -> list[FleetChart]:
    spokes = [tree.spokes] if tree.spokes is not None else []
    return [*tree.clusters.values(), *tree.catalogue.values(), *tree.tenants.values(), *spokes]


def test_a_fleet_app_is_synth_s_tree_with_cdk8s_charts(example_project: Path) -> None:
    plan = load_plan(example_project)
    # GIVEN the example as synth builds it and as the library's FleetApp builds it
    tree, app = FleetTree(plan), FleetApp(plan)
    # THEN every chart of the app is a cdk8s Chart of it, of the same kind as synth's chart, and none of synth's is
    assert [type(chart).__name__ for chart in _charts(app)] == [type(chart).__name__ for chart in _charts(tree)]
    assert all(isinstance(chart, cdk8s.Chart) for chart in _charts(app))
    assert not any(isinstance(chart, cdk8s.Chart) for chart in _charts(tree))
    assert set(_charts(app)) <= set(app.node.children)
    # AND both render the same files, byte for byte
    assert render_app(app) == render_app(tree)


def test_cdk8s_constructs_under_a_cluster_chart_are_written_and_listed(write_fleet: FleetWriter) -> None:
    project = write_fleet(BASE, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    app = FleetApp(load_plan(project, demo_registry()))
    # GIVEN a user adds a plain cdk8s ApiObject to a cluster chart
    cdk8s.ApiObject(app.clusters["s1"], "team-quota", api_version="v1", kind="Namespace", metadata={"name": "team-a"})
    files = render_app(app)
    # THEN cdk8s synthesizes it into custom.yaml, which the entry point lists
    assert yaml.safe_load(files["platform/clusters/s1/custom.yaml"]) == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team-a"},
    }
    assert "custom.yaml" in yaml.safe_load(files["platform/clusters/s1/kustomization.yaml"])["resources"]


def test_cdk8s_constructs_outside_a_cluster_chart_are_refused(write_fleet: FleetWriter) -> None:
    project = write_fleet(BASE, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    app = FleetApp(load_plan(project, demo_registry()))
    stray = cdk8s.Chart(app, "stray")
    cdk8s.ApiObject(stray, "thing", api_version="v1", kind="Namespace", metadata={"name": "x"})
    with pytest.raises(TreeError, match=r"^stray: cdk8s constructs are written only under a cluster chart"):
        render_app(app)


def test_app_synth_writes_outdir_like_fluxplane_synth(write_fleet: FleetWriter, tmp_path: Path) -> None:
    # GIVEN a FleetApp built in Python (as a cdk8s program would) WHEN app.synth() is called
    project = write_fleet(BASE, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    plan = load_plan(project, demo_registry())
    FleetApp(plan, outdir=tmp_path / "out").synth()
    # THEN outdir holds exactly what render_app renders
    out = tmp_path / "out"
    written = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*") if p.is_file()}
    assert written == render_app(FleetApp(plan))


def test_cdk8s_constructs_are_found_under_the_chart_they_are_in(write_fleet: FleetWriter) -> None:
    project = write_fleet(
        {"repositories": DEMO_REPOSITORIES, "management": DEMO_HUB},
        {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}},
    )
    app = FleetApp(load_plan(project, demo_registry()))
    # GIVEN cdk8s objects under a cluster chart, and under a plain cdk8s Chart of the app
    quota = cdk8s.ApiObject(app.clusters["s1"], "quota", api_version="v1", kind="Namespace", metadata={"name": "a"})
    stray = cdk8s.Chart(app, "stray")
    thing = cdk8s.ApiObject(stray, "thing", api_version="v1", kind="Namespace", metadata={"name": "x"})
    # WHEN the app's cdk8s constructs are grouped by chart
    found = app.cdk8s_children()
    # THEN the cluster chart holds its object, the plain Chart and what it holds are under None, and charts
    # with no cdk8s objects are not listed
    assert found == {app.clusters["s1"]: [quota], None: [stray, thing]}
