"""Whole-tree checks: references Flux resolves only at run time are resolved before writing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.config.manifests import ManifestFile
from fluxplane.constructs.base import resources_below
from fluxplane.constructs.helm_repository import HelmRepository
from fluxplane.constructs.kustomization import Kustomization
from fluxplane.constructs.namespace import Namespace
from fluxplane.core.layout import RepositoryLayout
from fluxplane.errors import TreeError
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.synth import checks, load_plan
from fluxplane.synth.app import FleetApp
from fluxplane.synth.cdk8s_charts import CHART_FILES
from fluxplane.synth.checks import check_flux_paths
from fluxplane.synth.render import render_app
from tests.conftest import FleetWriter
from tests.support.packs import DEMO_HUB, DEMO_REPOSITORIES, demo_registry

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


def test_each_repository_folders_flux_prefix_is_worked_out_once(app: FleetApp, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the app's charts, whose Kustomizations name many Flux paths
    charts = [*app.clusters.values()]
    app.finish()
    asked: list[str] = []
    real = RepositoryLayout.flux_path

    def flux_path(self: RepositoryLayout, directory: str) -> str:
        asked.append(self.key)
        return real(self, directory)

    monkeypatch.setattr(RepositoryLayout, "flux_path", flux_path)
    # WHEN their paths are checked THEN each repository folder's prefix is asked for once, not once per path
    assert check_flux_paths(charts, set(), [app.layout, app.workloads])
    assert sorted(asked) == sorted({app.layout.key, app.workloads.key})


def test_a_cluster_s_references_are_checked_in_one_walk_of_its_chart(
    app: FleetApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a finished cluster chart, whose walks are counted
    chart = app.clusters["s1"]
    app.finish()
    walked: list[Any] = []

    def counted(scope: Any) -> Any:
        walked.append(scope)
        return resources_below(scope)

    monkeypatch.setattr(checks, "resources_below", counted)
    # WHEN its references are checked
    # THEN they hold, and its sources and Kustomizations were found in one walk of it
    assert checks.check_cluster(chart) == []
    assert walked == [chart]


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


# -- one writer per object on a cluster ------------------------------------------------------------------------

TWO_CLUSTERS = {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}, {"name": "s2", "region": "us-west-2"}]}}


def _pack(name: str, bind: Any) -> Pack:
    return Pack(name=name, version="1.0.0", description=name, config=PackConfig, layer="controllers", bind=bind)


def _refusals(app: FleetApp) -> list[str]:
    with pytest.raises(TreeError) as caught:
        render_app(app)
    return list(caught.value.problems)


def _with_manifests(project: Path, *files: ManifestFile) -> FleetApp:
    """``project``'s app, its workload clusters given ``files`` as load_plan gives them plain manifests."""
    plan = load_plan(project, demo_registry())
    clusters = tuple(replace(c, manifests=files) if c.name != plan.hub.name else c for c in plan.clusters)
    return FleetApp(replace(plan, clusters=clusters))


def test_an_object_a_manifest_or_cdk8s_chart_writes_with_a_pack_or_the_entry_point_is_refused_with_its_file(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN an environment's plain manifest writing pack ctrl's ConfigMap and the entry point's variables, beside an
    # object of its own, and a cdk8s chart writing pack conf's Namespace
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "data": {}}
    manifest = ManifestFile(
        "configs",
        "environment",
        "mine.yaml",
        "environments/manifests/staging/configs/mine.yaml",
        (
            {**config_map, "metadata": {"name": "settings", "namespace": "ctrl"}},
            {**config_map, "metadata": {"name": "cluster-vars", "namespace": "flux-system"}},
            {**config_map, "metadata": {"name": "mine", "namespace": "ctrl"}},
        ),
    )
    chart = ManifestFile(
        "apps",
        CHART_FILES,
        "extras.yaml",
        "charts/extras.py",
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "conf"}},),
    )
    app = _with_manifests(write_fleet(BASE, TWO_CLUSTERS), manifest, chart)
    # WHEN rendered THEN each object two writers apply is one line, led by the user's file, naming the other writer
    # and the clusters, and what to do
    assert _refusals(app) == [
        "charts/extras.py: Namespace conf is written by pack 'conf' too on clusters 's1', 's2'; remove it from the "
        "chart or give it another name",
        "environments/manifests/staging/configs/mine.yaml: ConfigMap ctrl/settings is written by pack 'ctrl' too on "
        "clusters 's1', 's2'; remove it from the file or give it another name",
        "environments/manifests/staging/configs/mine.yaml: ConfigMap flux-system/cluster-vars is written by the "
        "cluster's entry point too on clusters 's1', 's2'; remove it from the file or give it another name",
    ]


def _helm_release(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": "flux-system"},
        "spec": {"interval": "30m", "chartRef": {"kind": "OCIRepository", "name": name}, **spec},
    }


def test_two_helm_releases_installing_one_release_are_refused(write_fleet: FleetWriter) -> None:
    # GIVEN two environment manifests whose HelmReleases a and b name one release: Helm keeps a release by its name
    # in its storage namespace, whatever namespace it installs into
    def file(name: str, *documents: dict[str, Any]) -> ManifestFile:
        return ManifestFile("configs", "environment", name, f"environments/manifests/staging/configs/{name}", documents)

    first = file("a.yaml", _helm_release("a", releaseName="shared", targetNamespace="one"))
    second = file("b.yaml", _helm_release("b", releaseName="shared", targetNamespace="two"))
    # AND a third whose release has the same name, kept in another namespace: another release
    third = file("c.yaml", _helm_release("c", releaseName="shared", storageNamespace="three", targetNamespace="three"))
    app = _with_manifests(write_fleet(BASE, TWO_CLUSTERS), first, second, third)
    # WHEN rendered THEN the clash is one line, naming both HelmReleases, the clusters and what to do
    assert _refusals(app) == [
        "environments/manifests/staging/configs/a.yaml: Helm release shared (stored in flux-system), which HelmRelease "
        "flux-system/a installs, is written by HelmRelease flux-system/b of environments/manifests/staging/configs/"
        "b.yaml too on clusters 's1', 's2'; give HelmRelease flux-system/b another releaseName or storageNamespace"
    ]


def test_an_object_a_kustomization_of_the_users_applies_with_a_pack_is_refused_with_its_file(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN an environment's plain manifest declaring a Flux Kustomization that applies pack ctrl's folder again
    copy = {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "copy", "namespace": "flux-system"},
        "spec": {
            "interval": "10m",
            "path": "./dist/platform/infrastructure/controllers/ctrl/base",
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
        },
    }
    manifest = ManifestFile(
        "apps", "environment", "copy.yaml", "environments/manifests/staging/apps/copy.yaml", (copy,)
    )
    app = _with_manifests(write_fleet(BASE, TWO_CLUSTERS), manifest)
    # WHEN rendered THEN what it applies is refused with the file, which is told to point it elsewhere
    assert _refusals(app) == [
        f"environments/manifests/staging/apps/copy.yaml: {shown} is written by pack 'ctrl' too on clusters 's1', "
        "'s2'; its Kustomization flux-system/copy applies it: point that at a folder of its own"
        for shown in ("ConfigMap ctrl/settings", "Namespace ctrl")
    ]


def test_an_object_a_chart_file_writes_with_a_pack_is_refused_with_the_chart_file(write_fleet: FleetWriter) -> None:
    # GIVEN a chart file installing into pack ctrl's namespace, and a pack that writes a HelmRepository of its name
    project = write_fleet({**BASE, "packs": {"ctrl": {}, "tool": {}, "mirror": {}}}, TWO_CLUSTERS)
    (project / "environments" / "charts").mkdir()
    (project / "environments" / "charts" / "tool.yaml").write_text(
        yaml.safe_dump(
            {"repository": "https://charts.example.com", "chart": "tool", "version": "1.0.0", "namespace": "ctrl"}
        )
    )

    def mirror(ctx: PackContext, config: PackConfig) -> None:
        HelmRepository(ctx.scope, "source", {"name": "tool", "url": "https://mirror.example.com"})

    app = FleetApp(load_plan(project, demo_registry(_pack("mirror", mirror))))
    # WHEN rendered THEN the chart file leads each line, and is told what to change
    assert _refusals(app) == [
        "environments/charts/tool.yaml: HelmRepository flux-system/tool is written by pack 'mirror' too on clusters "
        "'hub', 's1', 's2'; rename the chart file",
        "environments/charts/tool.yaml: Namespace ctrl is written by pack 'ctrl' too on clusters 'hub', 's1', 's2'; "
        "choose another namespace in the file",
    ]


def test_an_object_two_packs_write_is_refused_with_the_file_of_one(write_fleet: FleetWriter) -> None:
    # GIVEN a pack that writes pack ctrl's Namespace
    def copy(ctx: PackContext, config: PackConfig) -> None:
        Namespace(ctx.scope, "namespace", {"name": "ctrl"})

    project = write_fleet({**BASE, "packs": {"ctrl": {}, "copy": {}}})
    app = FleetApp(load_plan(project, demo_registry(_pack("copy", copy))))
    # WHEN rendered THEN the line names the file in dist/ of the first one the cluster applies, and both packs
    assert _refusals(app) == [
        "platform/infrastructure/controllers/copy/base/copy.yaml: Namespace ctrl of pack 'copy' is written by pack "
        "'ctrl' too on clusters 'hub', 'staging-1'; only one of them may apply it",
    ]
