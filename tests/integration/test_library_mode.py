"""fluxplane constructs in an ordinary cdk8s app: app.synth() writes them, and one written nowhere is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

cdk8s = pytest.importorskip("cdk8s")

from fluxplane.constructs.helm_release import HelmRelease  # noqa: E402
from fluxplane.constructs.helm_repository import HelmRepository  # noqa: E402
from fluxplane.constructs.kustomization import Kustomization  # noqa: E402
from fluxplane.errors import ConstructError  # noqa: E402
from fluxplane.validate.tree import load_documents  # noqa: E402


def test_fluxplane_constructs_in_a_plain_chart_are_in_its_output(tmp_path: Path) -> None:
    # GIVEN a plain cdk8s app whose chart holds fluxplane constructs, one inside a construct of the user's,
    # beside a cdk8s ApiObject
    app = cdk8s.App(outdir=str(tmp_path))
    chart = cdk8s.Chart(app, "platform")
    repository = HelmRepository(chart, "repo", {"name": "podinfo", "url": "https://stefanprodan.github.io/podinfo"})
    group = cdk8s.Chart(chart, "group")
    HelmRelease(
        group,
        "release",
        {
            "name": "podinfo",
            "targetNamespace": "podinfo",
            "chart": {
                "spec": {
                    "chart": "podinfo",
                    "version": "6.7.1",
                    "sourceRef": {"kind": "HelmRepository", "name": repository.name},
                }
            },
            "values": {"account": "012345678912"},
        },
    )
    Kustomization(
        chart,
        "apps",
        {"name": "apps", "path": "./apps", "sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
    )
    cdk8s.ApiObject(chart, "cm", api_version="v1", kind="ConfigMap", metadata={"name": "plain"})
    # WHEN synthesized by cdk8s
    app.synth()
    # THEN every object is in the output, fluxplane's as fluxplane renders them
    documents = [doc for path in sorted(tmp_path.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text())]
    kinds = sorted((doc["kind"], doc["metadata"]["name"]) for doc in documents)
    assert kinds == [
        ("ConfigMap", "plain"),
        ("HelmRelease", "podinfo"),
        ("HelmRepository", "podinfo"),
        ("Kustomization", "apps"),
    ]
    release = next(doc for doc in documents if doc["kind"] == "HelmRelease")
    assert release["spec"]["chart"]["spec"]["sourceRef"] == {"kind": "HelmRepository", "name": "podinfo"}
    assert release["spec"]["values"]["account"] == "012345678912"
    # (and so does a reader of YAML 1.2, as the controllers are)
    for path in tmp_path.glob("*.yaml"):
        assert load_documents(path.read_text(), path.name)[1] == []
    # AND synthesizing again gives the same output
    before = {path.name: path.read_text() for path in tmp_path.glob("*.yaml")}
    app.synth()
    assert {path.name: path.read_text() for path in tmp_path.glob("*.yaml")} == before


def test_a_construct_no_chart_would_write_is_refused(tmp_path: Path) -> None:
    app = cdk8s.App(outdir=str(tmp_path))
    with pytest.raises(ConstructError, match=r"directly under the app would be written nowhere"):
        HelmRepository(app, "repo", {"name": "podinfo", "url": "https://stefanprodan.github.io/podinfo"})


def test_a_construct_outside_a_fleet_charts_files_is_refused(write_fleet: Any) -> None:
    from fluxplane.errors import TreeError
    from fluxplane.synth import load_plan
    from fluxplane.synth.app import FleetApp
    from fluxplane.synth.render import render_app

    # GIVEN a FleetApp, and a fluxplane object put directly in a cluster's chart, in none of its files
    app = FleetApp(load_plan(write_fleet()))
    HelmRepository(app.clusters["hub"], "stray", {"name": "stray", "url": "https://example.com/charts"})
    # WHEN rendered THEN it is refused with its path, not dropped
    with pytest.raises(TreeError, match=r"cluster-hub/stray: not in any of the chart's files, so it would be written"):
        render_app(app)
    # AND one directly under the FleetApp is refused when it is created
    with pytest.raises(ConstructError, match=r"directly under the app would be written nowhere"):
        Kustomization(
            app, "loose", {"name": "loose", "path": "./x", "sourceRef": {"kind": "GitRepository", "name": "a"}}
        )


# -- FleetApp.synth() writes through the one pipeline ---------------------------------------------------------


def _fleet_app(project: Path) -> Any:
    from fluxplane.synth import load_plan
    from fluxplane.synth.app import FleetApp

    return FleetApp(load_plan(project), outdir=project / "dist")


def test_fleet_app_synth_refuses_a_replacement_as_synth_does(example_project: Path) -> None:
    from fluxplane.errors import ConfigError

    # GIVEN the example's dist/, and a cluster's VPC range changed in its definition
    staging = example_project / "environments" / "staging.yaml"
    staging.write_text(
        staging.read_text().replace(
            "  - name: staging-usw2\n", "  - name: staging-usw2\n    network:\n      cidr: 10.50.0.0/16\n"
        )
    )
    before = {path: path.read_bytes() for path in (example_project / "dist").rglob("*") if path.is_file()}
    # WHEN the library's FleetApp synthesizes THEN the replacement is refused, and dist/ is as it was
    with pytest.raises(ConfigError) as refused:
        _fleet_app(example_project).synth()
    assert any("--replace 'EKSCluster/staging-usw2/staging-usw2'" in line for line in refused.value.problems)
    assert {path: path.read_bytes() for path in (example_project / "dist").rglob("*") if path.is_file()} == before


def test_fleet_app_synth_keeps_flux_bootstraps_files_and_records_allocations(example_project: Path) -> None:
    # GIVEN a hub that flux bootstrap wrote over, and no allocations recorded yet
    base = example_project / "environments" / "base.yaml"
    base.write_text(
        base.read_text().replace("management:\n  name: hub\n", "management:\n  name: hub\n  bootstrap: flux\n")
    )
    components = example_project / "dist/platform/clusters/hub/flux-system/gotk-components.yaml"
    components.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n")
    allocations = example_project / "environments" / "allocations.yaml"
    recorded = allocations.read_text()
    allocations.unlink()
    # WHEN the library's FleetApp synthesizes
    _fleet_app(example_project).synth()
    # THEN flux bootstrap's file is kept, and the allocations are recorded as `fluxplane synth` records them
    assert components.read_text() == "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n"
    assert allocations.read_text() == recorded
