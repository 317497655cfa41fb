"""A pack whose controllers install CRDs and that also emits objects of those kinds: two Kustomizations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fluxplane.packs.api import CONFIGS_SUFFIX, PackContext, split_pack
from fluxplane.synth import load_plan
from fluxplane.synth.app import FleetApp
from fluxplane.synth.render import render_app
from tests.conftest import FleetWriter
from tests.support.packs import DEMO_HUB, DEMO_REPOSITORIES, ISSUER, IssuerConfig, demo_registry

BASE: dict[str, Any] = {
    "repositories": DEMO_REPOSITORIES,
    "management": {**DEMO_HUB, "packs": {"build": {}, "issuer": {"enabled": False}}},
    "packs": {"ctrl": {}, "issuer": {}},
}


def _render(project: Path) -> dict[str, list[dict[str, Any]]]:
    files = render_app(FleetApp(load_plan(project, demo_registry(ISSUER))))
    return {path: list(yaml.safe_load_all(text)) for path, text in files.items() if path.endswith(".yaml")}


def _by_name(files: dict[str, list[dict[str, Any]]], cluster: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in files[f"platform/clusters/{cluster}/infrastructure.yaml"]}


def test_split_pack_keeps_each_half_to_its_objects_gates_and_identities() -> None:
    from fluxplane.constructs import Manifest, Root

    controllers, configs = split_pack(ISSUER)
    assert (controllers.name, controllers.layer, controllers.requires) == ("issuer", "controllers", ())
    assert (configs.name, configs.layer, configs.requires) == ("issuer" + CONFIGS_SUFFIX, "configs", ("issuer",))
    contexts = []
    for half in (controllers, configs):
        ctx = PackContext(Manifest(Root(), "m", path="x.yaml"))
        half.bind(ctx, IssuerConfig(identity=True))
        contexts.append(ctx)
    assert [doc["kind"] for doc in contexts[0].manifest.documents()] == ["Namespace"]
    assert [doc["kind"] for doc in contexts[1].manifest.documents()] == ["Issuer"]
    assert [check.kind for check in contexts[0].health_checks] == ["Namespace"]
    assert [check.kind for check in contexts[1].health_checks] == ["Issuer"]
    assert [identity.name for identity in contexts[0].pod_identities] == ["controller"]
    assert contexts[1].pod_identities == []
    plain = demo_registry().get("ctrl")
    assert split_pack(plain) == (plain,)


def test_custom_resources_are_applied_by_a_configs_kustomization_after_the_pack(write_fleet: FleetWriter) -> None:
    project = write_fleet(BASE, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    files = _render(project)
    kustomizations = _by_name(files, "s1")
    pack, configs = kustomizations["issuer"]["spec"], kustomizations["issuer-configs"]["spec"]
    assert pack["path"] == "./dist/platform/infrastructure/controllers/issuer/base"
    assert configs["path"] == "./dist/platform/infrastructure/configs/issuer-configs/base"
    assert {"name": "issuer"} in configs["dependsOn"]
    assert pack["healthChecks"] == [{"apiVersion": "v1", "kind": "Namespace", "name": "issuer-system"}]
    assert configs["healthChecks"] == [{"apiVersion": "issuer.example.com/v1", "kind": "Issuer", "name": "default"}]
    controllers = files["platform/infrastructure/controllers/issuer/base/issuer.yaml"]
    custom = files["platform/infrastructure/configs/issuer-configs/base/issuer-configs.yaml"]
    assert [doc["kind"] for doc in controllers] == ["Namespace"]
    assert [doc["kind"] for doc in custom] == ["Issuer"]


def test_a_cluster_value_reaches_only_the_half_it_changes(write_fleet: FleetWriter) -> None:
    clusters: list[dict[str, Any]] = [{"name": "s1", "region": "us-west-2"}, {"name": "s2", "region": "us-west-2"}]
    clusters[1]["packs"] = {"issuer": {"email": "team@example.com"}}
    project = write_fleet(BASE, {"staging": {"clusters": clusters}})
    files = _render(project)
    s2 = _by_name(files, "s2")
    assert s2["issuer"]["spec"]["path"] == "./dist/platform/infrastructure/controllers/issuer/base"
    assert s2["issuer-configs"]["spec"]["path"] == "./dist/platform/clusters/s2/overlays/issuer-configs"
    patch = files["platform/clusters/s2/overlays/issuer-configs/kustomization.yaml"][0]["patches"]
    assert "team@example.com" in yaml.safe_dump(patch)
