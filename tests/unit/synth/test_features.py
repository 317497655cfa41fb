"""The hub's features follow the pack that provides them (Pack.provides, Pack.builds_clusters), whatever its name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import Field

from fluxplane.constructs.config_map import ConfigMap
from fluxplane.constructs.kustomization import escaped
from fluxplane.core.layout import PLATFORM, RepositoryLayout
from fluxplane.errors import ConfigError
from fluxplane.packs.api import APP_RESOURCES, AWS_PROVIDERS, Pack, PackConfig, PackContext
from fluxplane.synth import features, load_plan
from fluxplane.synth.app import FleetApp
from fluxplane.synth.features import AppResources, SpokeBootstrap
from fluxplane.synth.plan import FleetPlan
from fluxplane.synth.render import render_app
from tests.conftest import FleetWriter
from tests.support.packs import DEMO_HUB, DEMO_REPOSITORIES, demo_registry


def _kinds_bind(ctx: PackContext, config: PackConfig) -> None:
    ConfigMap(ctx.scope, "kinds", {"name": "kinds", "namespace": "default", "data": {}})


def _providers_bind(ctx: PackContext, config: PackConfig) -> None:
    ConfigMap(ctx.scope, "providers", {"name": "providers", "namespace": "default", "data": {}})


def _agent_bind(ctx: PackContext, config: PackConfig) -> None:
    ConfigMap(ctx.scope, "agent", {"name": "agent", "namespace": "agent", "data": {}})
    ctx.add_pod_identity(
        "agent",
        namespace="agent",
        service_account="agent",
        managed_policies=("arn:aws:iam::aws:policy/ReadOnlyAccess",),
    )


class ProvidersConfig(PackConfig):
    services: list[str] = Field(default_factory=lambda: ["eks", "iam", "sqs"])
    kubernetes: bool = False


#: A third-party pack of the app kinds, one of AWS providers, and an add-on whose pods call AWS.
KINDS = Pack("kinds", "1.0.0", "app kinds", PackConfig, "configs", _kinds_bind, provides=(APP_RESOURCES,))
PROVIDERS = Pack(
    "providers", "1.0.0", "AWS providers", ProvidersConfig, "configs", _providers_bind, provides=(AWS_PROVIDERS,)
)
AGENT = Pack("agent", "1.0.0", "calls AWS", PackConfig, "controllers", _agent_bind)
#: A pack named like the built-in one, which provides nothing.
NAMESAKE = Pack("app-compositions", "1.0.0", "not the app kinds", PackConfig, "configs", _kinds_bind)

APP: dict[str, Any] = {
    "repository": {"url": "https://github.com/example-org/shop.git", "ref": {"branch": "main"}},
    "clusters": ["s1"],
    "aws": {"queues": [{"name": "jobs"}]},
}


def _project(write_fleet: FleetWriter, hub_packs: dict[str, Any], **fleet: Any) -> Path:
    base = {
        "repositories": DEMO_REPOSITORIES,
        "management": {**DEMO_HUB, "packs": {"build": {}, **hub_packs}},
        "packs": fleet.get("packs", {}),
    }
    cluster = {"name": "s1", "region": "us-west-2", **fleet.get("cluster", {})}
    project = write_fleet(base, {"staging": {"clusters": [cluster]}})
    if "app" in fleet:
        (project / "environments" / "apps").mkdir()
        (project / "environments" / "apps" / "shop.yaml").write_text(yaml.safe_dump(fleet["app"]))
    return project


def _plan(project: Path, *extra: Pack) -> FleetPlan:
    return load_plan(project, demo_registry(*extra))


def _documents(files: dict[str, str], path: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(files[path]) if doc]


def _depends_on(files: dict[str, str], path: str, name: str) -> list[dict[str, str]]:
    (found,) = [doc for doc in _documents(files, path) if doc["metadata"]["name"] == name]
    return found["spec"].get("dependsOn", [])  # type: ignore[no-any-return]


def test_a_third_party_pack_of_the_app_kinds_gets_the_add_on_roles(write_fleet: FleetWriter) -> None:
    # GIVEN a hub whose app kinds come from a pack not named app-compositions, and an add-on that calls AWS
    plan = _plan(_project(write_fleet, {"kinds": {}}, packs={"agent": {}}), KINDS, AGENT)
    # WHEN the fleet is rendered
    files = render_app(FleetApp(plan))
    # THEN the hub makes every cluster's roles after that pack: its own with a Kustomization of its own
    assert _depends_on(files, "platform/clusters/hub/infrastructure.yaml", "addon-identities") == [{"name": "kinds"}]
    # AND the workload cluster's in its chain, once the cluster is built
    assert _depends_on(files, "platform/spokes/s1/bootstrap.yaml", "addon-identities") == [
        {"name": "cluster"},
        {"name": "kinds", "namespace": "flux-system"},
    ]


def test_a_pack_named_app_compositions_that_provides_nothing_gets_no_roles(write_fleet: FleetWriter) -> None:
    # GIVEN a hub with a pack named app-compositions that does not provide the app kinds
    plan = _plan(_project(write_fleet, {"app-compositions": {}}, packs={"agent": {}}), NAMESAKE, AGENT)
    # WHEN the fleet is built THEN the roles are refused: nothing on the hub provides their kinds
    with pytest.raises(ConfigError) as caught:
        FleetApp(plan)
    assert caught.value.problems == (
        "environments/base.yaml: management.packs: agent (hub), agent (s1) need IAM roles (EKS Pod Identity), "
        "which the hub makes with a pack that provides 'app-resources'; install and enable one",
    )


def test_the_roles_name_the_installed_pack_of_the_kinds_to_enable(write_fleet: FleetWriter) -> None:
    # GIVEN the pack of the app kinds installed but not enabled on the hub
    plan = _plan(_project(write_fleet, {}, packs={"agent": {}}), KINDS, AGENT)
    # WHEN the fleet is built THEN the message says to enable it
    with pytest.raises(ConfigError, match=r"which the hub makes with the 'kinds' pack; enable it \(kinds: \{\}\)$"):
        FleetApp(plan)


def test_apps_aws_resources_are_made_with_a_third_party_pack_of_the_kinds(write_fleet: FleetWriter) -> None:
    # GIVEN an app that asks for a queue, and third-party packs of the app kinds and of the AWS providers
    project = _project(write_fleet, {"kinds": {}, "providers": {}}, app=APP)
    plan = _plan(project, KINDS, PROVIDERS)
    # WHEN the fleet is rendered
    app = FleetApp(plan)
    files = render_app(app)
    # THEN the hub makes the app's resources in the cluster's hub namespace, applied by its chain after that pack
    assert app.cloud is not None and app.cloud.folders == {"s1": "cloud/s1"}
    assert [doc["kind"] for doc in _documents(files, "platform/cloud/s1/shop.yaml")] == ["AppIdentity", "AppQueue"]
    assert _depends_on(files, "platform/spokes/s1/bootstrap.yaml", "app-resources") == [
        {"name": "cluster"},
        {"name": "kinds", "namespace": "flux-system"},
    ]


def test_app_resources_follow_the_hub_s_provider(write_fleet: FleetWriter) -> None:
    # GIVEN a hub with the third-party pack of the app kinds, and one without
    with_kinds = _plan(_project(write_fleet, {"kinds": {}}), KINDS)
    without = _plan(_project(write_fleet, {}, packs={}), KINDS)
    layout = RepositoryLayout(PLATFORM, with_kinds.fleet.repositories.platform)
    # WHEN their features are set up THEN the pack is the hub's provider, or none
    assert AppResources(with_kinds, layout).pack == "kinds"
    assert AppResources(without, layout).pack is None


def test_the_spoke_bootstrap_follows_the_hub_s_cluster_builder(write_fleet: FleetWriter) -> None:
    # GIVEN a hub whose clusters are built by the demo builder
    plan = _plan(_project(write_fleet, {}))
    layout = RepositoryLayout(PLATFORM, plan.fleet.repositories.platform)
    # WHEN the feature is set up THEN it builds with that pack and its hub config
    feature = SpokeBootstrap(plan, layout)
    assert feature.builder is not None
    assert (feature.builder[0].name, feature.builder[1]) == ("build", plan.hub.packs["build"])
    # AND the app's hub applies the chains with a Kustomization of its own
    app = FleetApp(plan)
    assert app.spokes is not None and app.spokes.directory == "spokes"
    assert list(app.clusters["hub"].pack_kustomizations) == ["spoke-bootstrap"]


def test_the_builder_s_config_is_escaped_once_for_all_the_chains(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a hub that builds three clusters, and what is escaped for their chains recorded
    base = {"repositories": DEMO_REPOSITORIES, "management": {**DEMO_HUB, "packs": {"build": {}}}, "packs": {}}
    clusters = [{"name": f"s{index}", "region": "us-west-2"} for index in range(3)]
    plan = _plan(write_fleet(base, {"staging": {"clusters": clusters}}))
    escaped_values: list[Any] = []

    def recorded(value: Any) -> Any:
        escaped_values.append(value)
        return escaped(value)

    monkeypatch.setattr(features, "escaped", recorded)
    # WHEN the app is built
    app = FleetApp(plan)

    # THEN every cluster has its chain, and the builder's config was escaped once for all of them
    assert app.spokes is not None
    assert sum(1 for value in escaped_values if value is plan.hub.packs["build"]) == 1
    assert len([value for value in escaped_values if value is not plan.hub.packs["build"]]) == 3
