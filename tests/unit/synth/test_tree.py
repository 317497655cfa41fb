"""FleetTree: catalogue bases, environment and cluster overlays, dependsOn and health gates."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.constructs.raw import RawObject
from fluxplane.packs.api import Layer, Pack, PackConfig, PackContext
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import load_plan, order
from fluxplane.synth.render import render_app
from fluxplane.synth.tree import FleetTree
from tests.conftest import HUB_PACKS, MINIMAL_BASE, FleetWriter
from tests.support.packs import DEMO_HUB, DEMO_REPOSITORIES, demo_registry
from tests.support.sealing import put, sealed

BASE: dict[str, Any] = {
    "repositories": DEMO_REPOSITORIES,
    "management": {**DEMO_HUB, "packs": {"build": {}, "web": {"enabled": False}}},
    "packs": {"ctrl": {}, "conf": {}, "web": {}},
}


def _render(project: Path, registry: PackRegistry | None = None) -> dict[str, Any]:
    files = render_app(FleetTree(load_plan(project, registry or demo_registry())))
    return {path: list(yaml.safe_load_all(text)) for path, text in files.items() if path.endswith(".yaml")}


def _kustomization(files: dict[str, Any], cluster: str, name: str) -> dict[str, Any]:
    for path in (
        f"platform/clusters/{cluster}/infrastructure.yaml",
        f"platform/clusters/{cluster}/apps.yaml",
    ):
        for doc in files.get(path, []):
            if doc["metadata"]["name"] == name:
                return doc  # type: ignore[no-any-return]
    raise AssertionError(f"no Kustomization {name} on {cluster}")


def test_same_values_everywhere_use_the_catalogue_base(write_fleet: FleetWriter) -> None:
    # GIVEN a fleet without overrides
    project = write_fleet(BASE, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    # WHEN rendered
    files = _render(project)
    # THEN every cluster applies the base folder, and no overlay exists
    assert _kustomization(files, "s1", "web")["spec"]["path"] == "./dist/platform/apps/web/base"
    assert not [path for path in files if "/overlays/" in path or path.endswith("/staging/kustomization.yaml")]


def test_what_a_catalogue_folder_applies_and_defines_is_read_once_for_all_its_clusters(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN three clusters applying the same catalogue folders, and the reads of what a folder applies counted
    clusters = [{"name": f"s{index}", "region": "us-west-2"} for index in range(3)]
    project = write_fleet(BASE, {"staging": {"clusters": clusters}})
    read: dict[str, list[Any]] = {"applied": [], "defined": []}
    for name, real in (("applied", order.applied_kinds), ("defined", order.defined_kinds)):

        def counted(documents: Any, real: Any = real, seen: list[Any] = read[name]) -> Any:
            seen.append(documents)
            return real(documents)

        monkeypatch.setattr(order, f"{name}_kinds", counted)
    # WHEN the fleet is built
    app = FleetTree(load_plan(project, demo_registry()))

    # THEN the clusters wait for their packs as before, and each folder's documents were read once
    assert app.clusters["s2"].pack_kustomizations["web"].dependencies == (
        app.clusters["s0"].pack_kustomizations["web"].dependencies
    )
    assert app.clusters["s2"].pack_kustomizations["web"].dependencies
    for seen in read.values():
        assert seen
        assert len({id(documents) for documents in seen}) == len(seen)


def test_environment_override_becomes_an_environment_overlay(write_fleet: FleetWriter) -> None:
    # GIVEN production sets web.size to 3
    project = write_fleet(
        BASE,
        {
            "production": {
                "packs": {"web": {"size": 3}},
                "clusters": [{"name": "p1", "region": "us-east-1"}],
            },
            "staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]},
        },
    )
    files = _render(project)
    # THEN production clusters apply the production overlay, staging the base
    assert _kustomization(files, "p1", "web")["spec"]["path"] == "./dist/platform/apps/web/production"
    assert _kustomization(files, "s1", "web")["spec"]["path"] == "./dist/platform/apps/web/base"
    (overlay,) = files["platform/apps/web/production/kustomization.yaml"]
    assert overlay["resources"] == ["../base"]
    assert yaml.safe_load(overlay["patches"][0]["patch"]) == [{"op": "replace", "path": "/data/size", "value": "3"}]
    assert overlay["patches"][0]["target"]["kind"] == "ConfigMap"


def test_cluster_override_over_environment_overlay_and_added_object(write_fleet: FleetWriter) -> None:
    # GIVEN one production cluster that also turns on an extra object
    project = write_fleet(
        BASE,
        {
            "production": {
                "packs": {"web": {"size": 3}},
                "clusters": [
                    {"name": "p1", "region": "us-east-1"},
                    {"name": "p2", "region": "us-east-1", "packs": {"web": {"extra": True}}},
                ],
            }
        },
    )
    files = _render(project)
    # THEN p2 has its own overlay over the production one, holding the added object
    assert _kustomization(files, "p2", "web")["spec"]["path"] == "./dist/platform/clusters/p2/overlays/web"
    (overlay,) = files["platform/clusters/p2/overlays/web/kustomization.yaml"]
    assert overlay == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["../../../../apps/web/production", "web.yaml"],
    }
    assert [doc["metadata"]["name"] for doc in files["platform/clusters/p2/overlays/web/web.yaml"]] == ["extra"]
    assert _kustomization(files, "p1", "web")["spec"]["path"] == "./dist/platform/apps/web/production"


def test_disabled_pack_is_not_applied(write_fleet: FleetWriter) -> None:
    project = write_fleet(BASE, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    files = _render(project)
    with pytest.raises(AssertionError, match="no Kustomization web on hub"):
        _kustomization(files, "hub", "web")
    assert "platform/clusters/hub/apps.yaml" not in files
    assert files["platform/clusters/hub/kustomization.yaml"][0]["resources"] == [
        "flux-system",
        "cluster-vars.yaml",
        "infrastructure.yaml",
    ]


def test_dependencies_follow_requires_and_layers(write_fleet: FleetWriter) -> None:
    project = write_fleet(BASE, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    files = _render(project)
    # THEN configs wait for controllers (requires and layer), apps for configs; controllers for nothing
    assert "dependsOn" not in _kustomization(files, "s1", "ctrl")["spec"]
    assert _kustomization(files, "s1", "conf")["spec"]["dependsOn"] == [{"name": "ctrl"}]
    assert _kustomization(files, "s1", "web")["spec"]["dependsOn"] == [{"name": "conf"}]


def _applying(name: str, layer: Layer, *kinds: tuple[str, str], crds: tuple[str, ...] = ()) -> Pack:
    """A pack that applies one object of each (apiVersion, kind) and installs the CRDs of ``crds``."""

    def bind(ctx: PackContext, config: PackConfig) -> None:
        for api_version, kind in kinds:
            RawObject(ctx.scope, kind, {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}})

    return Pack(name=name, version="1.0.0", description=name, config=PackConfig, layer=layer, bind=bind, crds=crds)


def test_an_add_on_holds_up_only_what_requires_it_or_applies_its_kinds(write_fleet: FleetWriter) -> None:
    # GIVEN controllers that install no CRDs (ctrl, logs) and one that installs the widgets.example.com CRDs, and
    # configs that apply a Widget, only core kinds, and a kind no pack declares
    registry = demo_registry(
        _applying("logs", "controllers", ("v1", "Namespace")),
        _applying("widgets", "controllers", ("v1", "Namespace"), crds=("widgets.example.com",)),
        _applying("widget-config", "configs", ("widgets.example.com/v1", "Widget")),
        _applying("quota", "configs", ("v1", "ResourceQuota")),
        _applying("mystery", "configs", ("things.example.org/v1", "Thing")),
    )
    packs = {name: {} for name in ("ctrl", "conf", "web", "logs", "widgets", "widget-config", "quota", "mystery")}
    project = write_fleet({**BASE, "packs": packs}, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    # WHEN synthesized
    files = _render(project, registry)
    depends = {
        name: [item["name"] for item in _kustomization(files, "s1", name)["spec"].get("dependsOn", [])]
        for name in packs
    }
    # THEN each configs Kustomization waits for what it requires and the installer of its kinds, and for no other
    # controller; one applying a kind no pack declares waits for them all, as before; apps for the configs
    assert depends["widget-config"] == ["widgets"]
    assert depends["quota"] == []
    assert depends["conf"] == ["ctrl"]
    assert depends["mystery"] == ["ctrl", "logs", "widgets"]
    assert depends["web"] == ["conf", "mystery", "quota", "widget-config"]
    assert depends["ctrl"] == depends["logs"] == depends["widgets"] == []


def test_health_gates_come_from_the_pack(write_fleet: FleetWriter) -> None:
    project = write_fleet(BASE, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    files = _render(project)
    ctrl = _kustomization(files, "s1", "ctrl")["spec"]
    conf = _kustomization(files, "s1", "conf")["spec"]
    web = _kustomization(files, "s1", "web")["spec"]
    assert ctrl["healthChecks"] == [{"apiVersion": "v1", "kind": "Namespace", "name": "ctrl"}]
    assert conf["healthCheckExprs"][0]["current"].startswith("status.?conditions.orValue([]).exists(")
    # A pack that declares no gate is waited for as a whole
    assert web["wait"] is True and "healthChecks" not in web


def test_cluster_entry_point_and_sync(write_fleet: FleetWriter) -> None:
    # GIVEN a repository read with credentials, sealed for the cluster
    base = {**BASE, "repositories": {"platform": {"url": "ssh://git@example.com/org/fleet.git"}}}
    project = write_fleet(base, {"staging": {"clusters": [{"name": "s1", "region": "eu-west-1"}]}})
    put(project, "s1/flux-system/flux-system.yaml", sealed("flux-system", "flux-system"))
    files = _render(project)
    source, sync = files["platform/clusters/s1/flux-system/gotk-sync.yaml"]
    assert source["spec"]["url"] == "ssh://git@example.com/org/fleet.git"
    assert source["spec"]["secretRef"] == {"name": "flux-system"}
    assert sync["spec"]["path"] == "./dist/platform/clusters/s1"
    (variables,) = files["platform/clusters/s1/cluster-vars.yaml"]
    assert variables["data"] == {
        "cluster_name": "s1",
        "cluster_region": "eu-west-1",
        "environment": "staging",
        # the version planning starts the new cluster on, which synth records
        "kubernetes_version": load_plan(project, demo_registry()).fleet.clusters[0].kubernetes_version,
    }
    assert _kustomization(files, "s1", "ctrl")["spec"]["postBuild"] == {
        "substituteFrom": [{"kind": "ConfigMap", "name": "cluster-vars"}]
    }


def test_the_hub_s_sealed_secrets_come_from_the_hub_whatever_the_clusters_order(write_fleet: FleetWriter) -> None:
    # GIVEN an app whose AWS requests the hub reads from its repository, with credentials sealed for the hub
    hub_packs = {
        **HUB_PACKS,
        "crossplane-providers": {"roleArn": "arn:aws:iam::111122223333:role/providers", "services": ["eks", "iam"]},
        "app-compositions": {},
    }
    base = {**MINIMAL_BASE, "management": {**MINIMAL_BASE["management"], "packs": hub_packs}}
    project = write_fleet(base, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    app = {
        "repository": {"url": "ssh://git@example.com/org/shop.git", "ref": {"branch": "main"}, "secretRef": "shop-git"},
        "clusters": ["s1"],
        "aws": {"path": "deploy/aws"},
    }
    (project / "environments" / "apps").mkdir()
    (project / "environments" / "apps" / "shop.yaml").write_text(yaml.safe_dump(app))
    put(project, "hub/s1/shop-git.yaml", sealed("shop-git", "s1"))
    put(project, "s1/shop/shop-git.yaml", sealed("shop-git", "shop"))
    plan = load_plan(project)
    # WHEN the plan lists the workload cluster before the hub
    fleet_app = FleetTree(replace(plan, clusters=plan.clusters[::-1]))
    # THEN the hub's folder for the cluster reads the app's requests with the hub's sealed credentials
    assert fleet_app.cloud is not None
    (credentials,) = [m for m in fleet_app.cloud.files if m.path == "cloud/s1/shop-git.yaml"]
    assert [(doc["kind"], doc["metadata"]) for doc in credentials.documents()] == [
        ("SealedSecret", {"name": "shop-git", "namespace": "s1"})
    ]
