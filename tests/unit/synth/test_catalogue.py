"""Catalogue: the folder a cluster applies a pack from, made once, and only where it renders differently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cdk8s
import pytest

from fluxplane.constructs.config_map import ConfigMap
from fluxplane.core.layout import PLATFORM, RepositoryLayout
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.synth import catalogue as catalogue_module
from fluxplane.synth import load_plan
from fluxplane.synth.catalogue import Catalogue, config_key
from fluxplane.synth.plan import FleetPlan
from tests.conftest import FleetWriter
from tests.support.packs import DEMO_HUB, DEMO_REPOSITORIES, DemoConfig, demo_registry

BASE: dict[str, Any] = {
    "repositories": DEMO_REPOSITORIES,
    "management": {**DEMO_HUB, "packs": {"build": {}, "web": {"enabled": False}}},
    "packs": {"web": {}},
}


class NoteConfig(PackConfig):
    note: str = ""


def _note_pack() -> Pack:
    """A pack whose ``note`` changes its config but not what it renders."""

    def bind(ctx: PackContext, config: NoteConfig) -> None:
        ConfigMap(ctx.scope, "settings", {"name": "settings", "namespace": "default", "data": {}})

    return Pack(name="note", version="1.0.0", description="note", config=NoteConfig, layer="apps", bind=bind)


def _catalogue(project: Path, *extra: Pack) -> tuple[Catalogue, FleetPlan]:
    plan = load_plan(project, demo_registry(*extra))
    return Catalogue(cdk8s.App(), plan, RepositoryLayout(PLATFORM, plan.fleet.repositories.platform)), plan


def test_a_cluster_with_the_fleet_wide_values_applies_the_base(write_fleet: FleetWriter) -> None:
    # GIVEN one cluster without overrides
    project = write_fleet(BASE, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    catalogue, plan = _catalogue(project)
    s1 = plan.clusters[1]
    # WHEN its web folder is asked for
    variant = catalogue.variant(plan.registry.get("web"), s1, s1.packs["web"])
    # THEN it is the base folder, the only chart of the catalogue, written in full
    assert variant.directory == "apps/web/base"
    assert list(catalogue) == ["web"]
    assert [manifest.path for manifest in catalogue["web"].files] == [
        "apps/web/base/web.yaml",
        "apps/web/base/kustomization.yaml",
    ]


def test_an_environment_overlay_is_made_once_for_all_its_clusters(write_fleet: FleetWriter) -> None:
    # GIVEN two production clusters, production setting web.size
    clusters = [{"name": "p1", "region": "us-east-1"}, {"name": "p2", "region": "us-east-1"}]
    project = write_fleet(BASE, {"production": {"packs": {"web": {"size": 3}}, "clusters": clusters}})
    catalogue, plan = _catalogue(project)
    web = plan.registry.get("web")
    # WHEN both clusters ask for their web folder
    folders = [catalogue.variant(web, cluster, cluster.packs["web"]).directory for cluster in plan.clusters[1:]]
    # THEN both apply the production overlay, written once over the base
    assert folders == ["apps/web/production", "apps/web/production"]
    assert [manifest.path for manifest in catalogue["web"].files] == [
        "apps/web/base/web.yaml",
        "apps/web/base/kustomization.yaml",
        "apps/web/production/kustomization.yaml",
    ]


def test_a_cluster_override_becomes_an_overlay_of_its_own(write_fleet: FleetWriter) -> None:
    # GIVEN a cluster that turns on web's extra object
    cluster = {"name": "s1", "region": "us-west-2", "packs": {"web": {"extra": True}}}
    project = write_fleet(BASE, {"staging": {"clusters": [cluster]}})
    catalogue, plan = _catalogue(project)
    s1 = plan.clusters[1]
    # WHEN its web folder is asked for
    variant = catalogue.variant(plan.registry.get("web"), s1, s1.packs["web"])
    # THEN it is the cluster's overlay, holding the added object
    assert variant.directory == "clusters/s1/overlays/web"
    assert [doc["metadata"]["name"] for doc in variant.documents] == ["web", "settings", "extra"]


def test_an_override_that_renders_alike_applies_the_parent(write_fleet: FleetWriter) -> None:
    # GIVEN a cluster whose note differs from the fleet-wide one, which changes nothing rendered
    base = {**BASE, "packs": {"note": {}}}
    cluster = {"name": "s1", "region": "us-west-2", "packs": {"note": {"note": "mine"}}}
    project = write_fleet(base, {"staging": {"clusters": [cluster]}})
    catalogue, plan = _catalogue(project, _note_pack())
    s1 = plan.clusters[1]
    assert config_key(s1.packs["note"]) != config_key(plan.base_configs["note"])
    # WHEN its folder is asked for
    variant = catalogue.variant(plan.registry.get("note"), s1, s1.packs["note"])
    # THEN it is the base, and no overlay is written
    assert variant.directory == "apps/note/base"
    assert [manifest.path for manifest in catalogue["note"].files] == [
        "apps/note/base/note.yaml",
        "apps/note/base/kustomization.yaml",
    ]


def test_each_config_s_key_is_worked_out_once(write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN production clusters sharing the environment's web config, and a catalogue whose config keys are counted
    clusters = [{"name": f"p{index}", "region": "us-east-1"} for index in range(3)]
    project = write_fleet(BASE, {"production": {"packs": {"web": {"size": 3}}, "clusters": clusters}})
    catalogue, plan = _catalogue(project)
    web = plan.registry.get("web")
    keyed: list[PackConfig] = []

    def counted(config: PackConfig) -> str:
        keyed.append(config)
        return config_key(config)

    monkeypatch.setattr(catalogue_module, "config_key", counted)
    # WHEN each cluster asks for its web folder, twice
    folders = [catalogue.variant(web, cluster, cluster.packs["web"]).directory for cluster in plan.clusters[1:] * 2]

    # THEN every cluster applies the environment's overlay, and each config's key was worked out once
    assert folders == ["apps/web/production"] * 6
    assert len(keyed) == len({id(config) for config in keyed})


def test_config_key_ignores_enabled() -> None:
    # GIVEN two configs that differ only in enabled THEN they render alike
    assert config_key(DemoConfig(enabled=True)) == config_key(DemoConfig(enabled=False))
    assert config_key(DemoConfig(size=2)) != config_key(DemoConfig(size=3))


def test_start_makes_the_shared_folders_a_reused_cluster_starts_from(write_fleet: FleetWriter) -> None:
    # GIVEN a production cluster with an override of its own
    cluster = {"name": "p1", "region": "us-east-1", "packs": {"web": {"extra": True}}}
    project = write_fleet(BASE, {"production": {"packs": {"web": {"size": 3}}, "clusters": [cluster]}})
    catalogue, plan = _catalogue(project)
    p1 = plan.clusters[1]
    # WHEN it is started (its own files reused)
    catalogue.start(p1)
    # THEN the base and the environment overlay are written, not the cluster's own overlay
    assert [manifest.path for manifest in catalogue["web"].files] == [
        "apps/web/base/web.yaml",
        "apps/web/base/kustomization.yaml",
        "apps/web/production/kustomization.yaml",
    ]
    # AND they are the folders its files are drawn against
    assert catalogue.prefixes(p1) == ("platform/apps/web/base/", "platform/apps/web/production/")


def test_parts_of_a_split_pack_take_the_pack_s_config(write_fleet: FleetWriter) -> None:
    # GIVEN a pack whose custom resources are applied after its controllers (crd_groups)
    project = write_fleet(BASE, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    catalogue, _ = _catalogue(project)
    split = Pack(
        name="crds",
        version="1.0.0",
        description="crds",
        config=PackConfig,
        layer="controllers",
        bind=lambda ctx, config: None,
        crd_groups=("example.com",),
    )
    # WHEN it is split THEN each part takes the pack's config; another pack takes its own
    assert [part.name for part in catalogue.parts(split)] == ["crds", "crds-configs"]
    assert (catalogue.source("crds-configs"), catalogue.source("crds"), catalogue.source("web")) == (
        "crds",
        "crds",
        "web",
    )
