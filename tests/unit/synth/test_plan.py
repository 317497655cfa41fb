"""Tests for fluxplane.synth.plan: resolving every cluster's packs before any construct exists."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import Field

from fluxplane.config import awsdata
from fluxplane.config.compatibility import compatibility, unsupported
from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError
from fluxplane.packs.api import APP_RESOURCES, AWS_PROVIDERS, Pack, PackConfig, PackContext
from fluxplane.packs.app_compositions import AppCompositionsConfig
from fluxplane.packs.crossplane import CrossplaneConfig
from fluxplane.packs.crossplane_provider_configs import CrossplaneProviderConfigsConfig
from fluxplane.packs.crossplane_providers import CrossplaneProvidersConfig
from fluxplane.packs.eks_compositions import EksCompositionsConfig
from fluxplane.packs.metrics_server import MetricsServerConfig
from fluxplane.packs.podinfo import PodinfoConfig
from fluxplane.packs.registry import PackRegistry
from fluxplane.packs.workload_clusters import WorkloadClustersConfig
from fluxplane.synth.allocations import recorded_text
from fluxplane.synth.plan import MANAGEMENT_ENVIRONMENT, ClusterPlan, FleetPlan, pack_versions, plan_fleet
from tests.conftest import HUB_PACKS, MINIMAL_BASE, FleetWriter
from tests.support.packs import DEMO_HUB, DEMO_REPOSITORIES, demo_builder, demo_registry

#: A fleet of the demo registries: their builder on the hub, a public repository.
DEMO_BASE: dict[str, Any] = {"repositories": DEMO_REPOSITORIES, "management": DEMO_HUB}

#: The installed packs, as messages list them.
INSTALLED = ", ".join(PackRegistry.from_entry_points().names)


@pytest.fixture(scope="module")
def registry() -> PackRegistry:
    return PackRegistry.from_entry_points()


def cluster(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "region": "us-west-2", **fields}


def plan(root: Path, registry: PackRegistry) -> FleetPlan:
    return plan_fleet(load_fleet(root), registry)


def problems_of(root: Path, registry: PackRegistry) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        plan(root, registry)
    return list(exc.value.problems)


def by_name(fleet_plan: FleetPlan) -> dict[str, ClusterPlan]:
    return {c.name: c for c in fleet_plan.clusters}


# -- the example fleet ---------------------------------------------------------------------------


def test_example_fleet_clusters_management_first_then_definition_order(
    example_project: Path, registry: PackRegistry
) -> None:
    # GIVEN the example fleet WHEN planned
    fleet_plan = plan(example_project, registry)

    # THEN the hub comes first, then each environment's clusters in order
    assert [(c.name, c.environment) for c in fleet_plan.clusters] == [
        ("hub", None),
        ("production-usw2", "production"),
        ("production-use1", "production"),
        ("production-euc1", "production"),
        ("production-euw1", "production"),
        ("staging-usw2", "staging"),
        ("staging-euw1", "staging"),
    ]
    assert fleet_plan.registry is registry
    assert fleet_plan.fleet.management.name == "hub"


def test_the_hub_is_the_management_cluster_s_plan(example_project: Path, registry: PackRegistry) -> None:
    # GIVEN the example fleet WHEN planned
    fleet_plan = plan(example_project, registry)
    # THEN its hub is the management cluster's plan, one of its clusters
    assert fleet_plan.hub.name == "hub"
    assert fleet_plan.hub.environment is None
    assert fleet_plan.hub is by_name(fleet_plan)["hub"]
    # AND it stays the hub when the clusters are listed in another order
    reordered = replace(fleet_plan, clusters=fleet_plan.clusters[::-1])
    assert reordered.hub is fleet_plan.hub
    assert reordered.clusters[0].name == "staging-euw1"


def test_a_plan_without_the_management_cluster_is_refused(example_project: Path, registry: PackRegistry) -> None:
    # GIVEN the example fleet's plan
    fleet_plan = plan(example_project, registry)
    # WHEN its clusters lose the management cluster THEN the plan is refused
    with pytest.raises(ValueError, match=r"^the management cluster 'hub' has no plan among the clusters$"):
        replace(fleet_plan, clusters=fleet_plan.clusters[1:])


def test_the_hub_follows_replaced_clusters(example_project: Path, registry: PackRegistry) -> None:
    # GIVEN the example fleet's plan WHEN its clusters are replaced by changed copies (as load_plan adds manifests)
    fleet_plan = plan(example_project, registry)
    changed = tuple(replace(cluster, manifests=()) for cluster in fleet_plan.clusters)
    replaced = replace(fleet_plan, clusters=changed)
    # THEN its hub is the new management cluster's plan, not the old one
    assert replaced.hub is next(cluster for cluster in changed if cluster.name == "hub")
    assert replaced.hub is not fleet_plan.hub


def test_example_fleet_variables(example_project: Path, registry: PackRegistry) -> None:
    # GIVEN the example fleet WHEN planned
    clusters = by_name(plan(example_project, registry))

    # THEN each cluster carries its name, region, environment and Kubernetes version
    assert clusters["hub"].variables == {
        "cluster_name": "hub",
        "cluster_region": "us-west-2",
        "environment": "management",
        "kubernetes_version": "1.35",
    }
    assert clusters["production-use1"].variables == {
        "cluster_name": "production-use1",
        "cluster_region": "us-east-1",
        "environment": "production",
        "kubernetes_version": "1.35",
    }
    assert clusters["staging-usw2"].variables == {
        "cluster_name": "staging-usw2",
        "cluster_region": "us-west-2",
        "environment": "staging",
        "kubernetes_version": "1.35",
    }
    assert MANAGEMENT_ENVIRONMENT == "management"


def test_example_fleet_pack_configs(example_project: Path, registry: PackRegistry) -> None:
    # GIVEN the example fleet WHEN planned
    fleet_plan = plan(example_project, registry)
    clusters = by_name(fleet_plan)

    # THEN each cluster's packs are base, then environment, then its own entry
    added = ("cert-manager", "kyverno", "fluent-bit")
    assert {name: config for name, config in clusters["hub"].packs.items() if name not in added} == {
        "metrics-server": MetricsServerConfig(),
        "crossplane": CrossplaneConfig(),
        "crossplane-providers": CrossplaneProvidersConfig.model_validate(
            {
                "roleArn": "arn:aws:iam::111122223333:role/fleet-crossplane-providers",
                "services": ["ec2", "eks", "iam", "dynamodb", "sqs", "s3", "rds"],
            }
        ),
        "crossplane-provider-configs": CrossplaneProviderConfigsConfig(),
        "eks-compositions": EksCompositionsConfig(),
        "app-compositions": AppCompositionsConfig(),
        "workload-clusters": WorkloadClustersConfig(),
    }
    # Workload clusters: the base's packs (which the hub has too), then their environment's, then their own
    shared = {"metrics-server", "cert-manager", "kyverno", "fluent-bit"}
    workload = {"podinfo", "prometheus", "aws-load-balancer-controller", "external-dns", "envoy-gateway"}
    workload |= {"karpenter", "aws-ebs-csi-driver"}
    assert shared <= set(clusters["hub"].packs) and not workload & set(clusters["hub"].packs)
    # production-usw2 makes its apps' resources: Crossplane, its providers and the app kinds run there too
    spoke = {"crossplane", "crossplane-providers", "crossplane-provider-configs", "app-compositions"}
    assert set(clusters["production-usw2"].packs) == shared | workload | spoke
    for name in ("production-use1", "staging-usw2"):
        assert set(clusters[name].packs) == shared | workload, name
    usw2, use1, staging = (clusters[name].packs for name in ("production-usw2", "production-use1", "staging-usw2"))
    assert usw2["metrics-server"] == MetricsServerConfig(replicas=2)
    assert (usw2["podinfo"], use1["podinfo"], staging["podinfo"]) == (
        PodinfoConfig(replicas=3),
        PodinfoConfig(replicas=4),
        PodinfoConfig(replicas=1),
    )
    assert usw2["kyverno"].model_dump(by_alias=True)["failureAction"] == "Enforce"
    assert staging["kyverno"].model_dump(by_alias=True)["failureAction"] == "Audit"
    assert usw2["fluent-bit"].model_dump(by_alias=True)["retentionDays"] == 90
    assert staging["fluent-bit"].model_dump(by_alias=True)["retentionDays"] == 30
    assert (
        usw2["prometheus"].model_dump(by_alias=True)["workspaceId"]
        != (staging["prometheus"].model_dump(by_alias=True)["workspaceId"])
    )
    # AND the base and environment configs are kept for the shared catalogue and overlays
    # crossplane-providers has no complete defaults (roleArn) and no base section: the hub's values
    base = fleet_plan.base_configs
    assert set(base) == set(clusters["hub"].packs) | workload
    assert base["metrics-server"] == MetricsServerConfig()
    assert base["podinfo"] == PodinfoConfig()
    assert base["crossplane-providers"] == clusters["hub"].packs["crossplane-providers"]
    # prometheus has no complete defaults (workspaceId) and no base section: the first cluster's values
    assert base["prometheus"] == clusters["production-usw2"].packs["prometheus"]
    environments = fleet_plan.environment_configs
    assert environments[("production", "metrics-server")] == MetricsServerConfig(replicas=2)
    assert environments[("production", "podinfo")] == PodinfoConfig(replicas=3)
    assert environments[("staging", "metrics-server")] == MetricsServerConfig()
    assert environments[("staging", "podinfo")] == PodinfoConfig(replicas=1)
    assert {env for env, _ in environments} == {"production", "staging"}


# -- small fleets --------------------------------------------------------------------------------


def test_cluster_overrides_environment_overrides_base(write_fleet: FleetWriter, registry: PackRegistry) -> None:
    # GIVEN podinfo set in the base, changed by the environment and again by one cluster
    base = {**MINIMAL_BASE, "packs": {"podinfo": {"replicas": 2, "message": "base", "namespace": "web"}}}
    env = {
        "packs": {"podinfo": {"replicas": 3}},
        "clusters": [cluster("a", packs={"podinfo": {"message": "mine"}}), cluster("b")],
    }

    # WHEN planned
    clusters = by_name(plan(write_fleet(base=base, envs={"staging": env}), registry))

    # THEN each field comes from the most specific level that sets it
    assert clusters["a"].packs == {"podinfo": PodinfoConfig(replicas=3, message="mine", namespace="web")}
    assert clusters["b"].packs == {"podinfo": PodinfoConfig(replicas=3, message="base", namespace="web")}


def test_pack_values_mappings_merge_across_levels(write_fleet: FleetWriter, registry: PackRegistry) -> None:
    # GIVEN podinfo Helm values at base and cluster level
    base = {
        **MINIMAL_BASE,
        "packs": {"podinfo": {"values": {"ui": {"color": "blue"}, "hpa": {"enabled": True}}}},
    }
    env = {"clusters": [cluster("a", packs={"podinfo": {"values": {"ui": {"logo": "x"}, "hpa": None}}})]}

    # WHEN planned THEN mappings merge key by key and null replaces
    clusters = by_name(plan(write_fleet(base=base, envs={"staging": env}), registry))
    assert clusters["a"].packs["podinfo"] == PodinfoConfig(values={"ui": {"color": "blue", "logo": "x"}, "hpa": None})


def test_a_cluster_can_switch_a_pack_off_and_another_back_on(write_fleet: FleetWriter, registry: PackRegistry) -> None:
    # GIVEN metrics-server on in the base, off in staging and back on for one cluster
    env = {
        "packs": {"metrics-server": {"enabled": False}},
        "clusters": [cluster("a"), cluster("b", packs={"metrics-server": {"enabled": True}})],
    }

    # WHEN planned
    fleet_plan = plan(write_fleet(envs={"staging": env}), registry)
    clusters = by_name(fleet_plan)

    # THEN the disabled pack is absent, and the re-enabled one present
    assert clusters["a"].packs == {}
    assert clusters["b"].packs == {"metrics-server": MetricsServerConfig()}
    assert fleet_plan.environment_configs == {}
    assert fleet_plan.base_configs["metrics-server"] == MetricsServerConfig()
    assert set(fleet_plan.base_configs) == {"metrics-server", *HUB_PACKS}


def test_management_gets_base_packs_merged_with_its_own(write_fleet: FleetWriter, registry: PackRegistry) -> None:
    # GIVEN base packs and management packs that change one and add one
    base = {
        **MINIMAL_BASE,
        "packs": {"metrics-server": {"version": "3.12.1"}},
        "management": {
            "region": "eu-west-1",
            "kubernetesVersion": "1.31",
            "packs": {**HUB_PACKS, "metrics-server": {"replicas": 2}, "podinfo": {"message": "hub"}},
        },
    }

    # WHEN planned
    fleet_plan = plan(write_fleet(base=base), registry)
    hub, staging = fleet_plan.clusters

    # THEN the hub has both, merged field by field; workload clusters only see the base's packs
    assert {name: hub.packs[name] for name in ("metrics-server", "podinfo")} == {
        "metrics-server": MetricsServerConfig(replicas=2, version="3.12.1"),
        "podinfo": PodinfoConfig(message="hub"),
    }
    assert set(hub.packs) == {"metrics-server", "podinfo", *HUB_PACKS}
    assert hub.variables == {
        "cluster_name": "hub",
        "cluster_region": "eu-west-1",
        "environment": "management",
        "kubernetes_version": "1.31",
    }
    assert staging.packs == {"metrics-server": MetricsServerConfig(version="3.12.1")}
    # AND the base configs cover every pack used anywhere, from the base's own sections
    assert {name: fleet_plan.base_configs[name] for name in ("metrics-server", "podinfo")} == {
        "metrics-server": MetricsServerConfig(version="3.12.1"),
        "podinfo": PodinfoConfig(),
    }


def test_management_can_switch_a_base_pack_off(write_fleet: FleetWriter, registry: PackRegistry) -> None:
    # GIVEN metrics-server in the base and switched off for the management cluster
    base = {
        **MINIMAL_BASE,
        "management": {"region": "us-west-2", "packs": {**HUB_PACKS, "metrics-server": {"enabled": False}}},
    }

    # WHEN planned THEN the hub has only its own packs and the workload cluster keeps it
    hub, staging = plan(write_fleet(base=base), registry).clusters
    assert (set(hub.packs), staging.packs) == (set(HUB_PACKS), {"metrics-server": MetricsServerConfig()})


def test_base_configs_are_enabled_even_when_the_base_switches_a_pack_off(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN podinfo off in the base (with a setting) and on for one cluster
    base = {**MINIMAL_BASE, "packs": {"podinfo": {"enabled": False, "replicas": 2}}}
    env = {"clusters": [cluster("a", packs={"podinfo": {"enabled": True}})]}

    # WHEN planned THEN the base config is the base's settings, enabled
    fleet_plan = plan(write_fleet(base=base, envs={"staging": env}), registry)
    assert fleet_plan.base_configs["podinfo"] == PodinfoConfig(replicas=2)
    assert by_name(fleet_plan)["a"].packs["podinfo"] == PodinfoConfig(replicas=2)


def test_an_environment_without_clusters_still_has_its_configs(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN an environment with packs and no clusters WHEN planned THEN its configs are still resolved
    fleet_plan = plan(write_fleet(envs={"dev": {"packs": {"podinfo": {}}}}), registry)
    assert [c.name for c in fleet_plan.clusters] == ["hub"]
    assert fleet_plan.environment_configs == {
        ("dev", "metrics-server"): MetricsServerConfig(),
        ("dev", "podinfo"): PodinfoConfig(),
    }


# -- problems ------------------------------------------------------------------------------------


def test_pack_problems_are_reported_where_they_were_written(write_fleet: FleetWriter, registry: PackRegistry) -> None:
    # GIVEN bad pack values in the base, the management section, an environment and a cluster entry
    base = {
        **MINIMAL_BASE,
        "packs": {"metrics-server": {"replicas": 0}},
        "management": {"region": "us-west-2", "packs": {**HUB_PACKS, "podinfo": {"namespace": "Hub"}}},
    }
    env = {
        "packs": {"podinfo": {"replicas": 51}},
        "clusters": [cluster("a", packs={"podinfo": {"replicas": 2, "message": 7}})],
    }

    # WHEN planned
    problems = problems_of(write_fleet(base=base, envs={"staging": env}), registry)

    # THEN each is one line naming its file and the path written there, each once
    assert problems == [
        "environments/base.yaml: packs.metrics-server.replicas: expected an integer >= 1, got 0",
        "environments/base.yaml: management.packs.podinfo.namespace: expected a DNS-1123 label "
        "(lower-case letters, digits and '-', starting and ending with a letter or digit), got \"Hub\"",
        "environments/staging.yaml: packs.podinfo.replicas: expected an integer <= 50, got 51",
        "environments/staging.yaml: clusters[0].packs.podinfo.message: expected a string, got 7",
    ]


def test_problems_of_all_clusters_are_reported_together_and_once(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN a bad environment value shared by two clusters, and bad values in clusters of two files
    production = {
        "packs": {"podinfo": {"replicas": 0}},
        "clusters": [cluster("p-1"), cluster("p-2", packs={"metrics-server": {"replica": 2}})],
    }
    staging = {"clusters": [cluster("s-1", packs={"istio": {}}), cluster("s-2", packs={"podinfo": True})]}

    # WHEN planned
    problems = problems_of(write_fleet(envs={"production": production, "staging": staging}), registry)

    # THEN every problem of every cluster is listed, the shared one only once
    assert problems == [
        "environments/production.yaml: packs.podinfo.replicas: expected an integer >= 1, got 0",
        "environments/production.yaml: clusters[1].packs.metrics-server.replica: unknown field; did you mean "
        '"replicas"? allowed: enabled, releaseName, storageNamespace, replicas, version, values',
        f"environments/staging.yaml: clusters[0].packs.istio: unknown pack 'istio' (installed: {INSTALLED})",
        "environments/staging.yaml: clusters[1].packs.podinfo: expected a mapping, got true",
    ]


def test_an_unknown_pack_in_the_base_is_reported_once(write_fleet: FleetWriter, registry: PackRegistry) -> None:
    # GIVEN an unknown pack in the base, inherited by the hub and two clusters
    base = {**MINIMAL_BASE, "packs": {"metrics-server": {}, "metrics": {}}}
    env = {"clusters": [cluster("a"), cluster("b")]}

    # WHEN planned THEN it is one line against base.yaml
    assert problems_of(write_fleet(base=base, envs={"staging": env}), registry) == [
        f"environments/base.yaml: packs.metrics: unknown pack 'metrics' (installed: {INSTALLED})"
    ]


def test_a_bad_base_value_overridden_everywhere_is_still_reported(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN a bad base value that the only environment overrides (the base is rendered as the shared base)
    base = {**MINIMAL_BASE, "packs": {"podinfo": {"replicas": 0}}}
    env = {"packs": {"podinfo": {"replicas": 1}}, "clusters": [cluster("a")]}

    # WHEN planned THEN the base's value is reported against base.yaml
    assert problems_of(write_fleet(base=base, envs={"staging": env}), registry) == [
        "environments/base.yaml: packs.podinfo.replicas: expected an integer >= 1, got 0"
    ]


# -- requirements between packs ------------------------------------------------------------------


def _no_bind(ctx: PackContext, config: Any) -> None:
    """Test packs add nothing."""


def _pack(name: str, *requires: str) -> Pack:
    return Pack(
        name=name,
        version="0.0.1",
        description=name,
        config=PackConfig,
        layer="apps",
        bind=_no_bind,
        requires=requires,
    )


@pytest.fixture
def requiring_registry() -> PackRegistry:
    """A registry where web requires db (and the demo pack that builds clusters)."""
    return PackRegistry([_pack("web", "db"), _pack("db"), demo_builder()])


def test_requirements_enabled_together_plan_cleanly(write_fleet: FleetWriter, requiring_registry: PackRegistry) -> None:
    # GIVEN web and db in the base WHEN planned THEN every cluster has both
    base = {**DEMO_BASE, "packs": {"web": {}, "db": {}}}
    clusters = plan(write_fleet(base=base), requiring_registry).clusters
    assert [sorted(c.packs) for c in clusters] == [["build", "db", "web"], ["db", "web"]]


def test_a_requirement_missing_for_one_cluster_is_reported_against_that_cluster(
    write_fleet: FleetWriter, requiring_registry: PackRegistry
) -> None:
    # GIVEN web enabled by one cluster's entry without db
    base = {**DEMO_BASE, "packs": {}}
    env = {"clusters": [cluster("a"), cluster("b", packs={"web": {}})]}

    # WHEN planned THEN the cluster entry that enabled web is named
    assert problems_of(write_fleet(base=base, envs={"staging": env}), requiring_registry) == [
        "environments/staging.yaml: clusters[1].packs.web: pack 'web' requires 'db', which is not enabled "
        "here; add 'db' to packs"
    ]


def test_a_requirement_switched_off_by_a_cluster_is_reported_against_that_cluster(
    write_fleet: FleetWriter, requiring_registry: PackRegistry
) -> None:
    # GIVEN web and db on in the base and db switched off by staging's second cluster
    base = {**DEMO_BASE, "packs": {"web": {}, "db": {}}}
    env = {"clusters": [cluster("a"), cluster("b", packs={"db": {"enabled": False}})]}

    # WHEN planned
    problems = problems_of(write_fleet(base=base, envs={"staging": env}), requiring_registry)

    # THEN the one line points into staging.yaml's clusters[1], where the user has to act
    assert len(problems) == 1
    assert problems == [
        "environments/staging.yaml: clusters[1].packs.db.enabled: pack 'db' is switched off here, "
        "but pack 'web' requires it"
    ]


def test_a_pack_without_complete_defaults_starts_its_catalogue_from_the_first_cluster(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN crossplane-providers (roleArn required) enabled only on the hub, with no base section
    base = {
        **MINIMAL_BASE,
        "management": {
            "name": "hub",
            "region": "us-west-2",
            "packs": {**HUB_PACKS, "crossplane-providers": {"roleArn": "arn:aws:iam::111122223333:role/r"}},
        },
    }
    fleet_plan = plan(write_fleet(base=base), PackRegistry.from_entry_points())
    # THEN its base configuration is the hub's
    assert fleet_plan.base_configs["crossplane-providers"] == CrossplaneProvidersConfig.model_validate(
        {"roleArn": "arn:aws:iam::111122223333:role/r"}
    )


def test_workload_clusters_without_a_pack_that_builds_them_are_refused(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN workload clusters and a hub without workload-clusters: they would never be built
    base = {**MINIMAL_BASE, "management": {"name": "hub", "region": "us-west-2"}}
    env = {"clusters": [cluster("a"), cluster("b")]}
    # WHEN planned THEN one line says so, naming the pack to enable and where
    assert problems_of(write_fleet(base=base, envs={"staging": env}), registry) == [
        "environments/base.yaml: management.packs: workload clusters 'a', 'b' would never be built: no pack on the "
        "management cluster builds clusters; enable 'workload-clusters' there (workload-clusters: {})"
    ]
    # AND a hub without workload clusters needs none
    assert plan(write_fleet(base=base, envs={"staging": {"clusters": []}}), registry).fleet.clusters == ()


def test_two_packs_that_build_clusters_are_refused(write_fleet: FleetWriter, requiring_registry: PackRegistry) -> None:
    # GIVEN a second cluster builder beside the demo one
    from dataclasses import replace

    other = replace(demo_builder(), name="other-build")
    registry = PackRegistry([*requiring_registry, other])
    base = {**DEMO_BASE, "management": {**DEMO_HUB, "packs": {"build": {}, "other-build": {}}}}
    # WHEN planned THEN both are named
    assert problems_of(write_fleet(base=base), registry) == [
        "environments/base.yaml: management.packs: 'build', 'other-build' both build the workload clusters; "
        "enable one of them"
    ]


# -- add-on namespaces ---------------------------------------------------------------------------

APP = {"repository": {"url": "https://github.com/example-org/shop.git", "ref": {"tag": "v1"}}, "clusters": ["a"]}


def write_apps(root: Path, apps: dict[str, dict[str, Any]]) -> Path:
    folder = root / "environments" / "apps"
    folder.mkdir(exist_ok=True)
    for name, app in apps.items():
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(app))
    return root


@pytest.mark.parametrize(("name", "pack"), [("cert-manager", "cert-manager"), ("external-dns", "external-dns")])
def test_an_app_named_after_an_add_ons_namespace_is_refused(
    write_fleet: FleetWriter, registry: PackRegistry, name: str, pack: str
) -> None:
    # GIVEN an app named after the namespace a pack installs into, on a cluster that does not enable the pack
    root = write_apps(write_fleet(envs={"staging": {"clusters": [cluster("a")]}}), {name: APP})
    # WHEN planned THEN it is refused at its namespace, naming the pack
    assert problems_of(root, registry) == [
        f"environments/apps/{name}.yaml: namespace: app {name!r} would run in namespace {name!r}, which pack "
        f"{pack!r} installs into; set namespace: to another name"
    ]


def test_an_app_asking_for_an_add_ons_namespace_is_refused(write_fleet: FleetWriter, registry: PackRegistry) -> None:
    # GIVEN an app that names kyverno's namespace as its own
    root = write_apps(
        write_fleet(envs={"staging": {"clusters": [cluster("a")]}}), {"shop": {**APP, "namespace": "kyverno"}}
    )
    # WHEN planned THEN one located line refuses it
    assert problems_of(root, registry) == [
        "environments/apps/shop.yaml: namespace: app 'shop' would run in namespace 'kyverno', which pack 'kyverno' "
        "installs into; set namespace: to another name"
    ]


def test_an_app_is_refused_once_however_many_clusters_it_runs_on(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN an app in fluent-bit's namespace on two clusters
    env = {"clusters": [cluster("a"), cluster("b")]}
    root = write_apps(
        write_fleet(envs={"staging": env}), {"shop": {**APP, "namespace": "logging", "clusters": ["a", "b"]}}
    )
    # THEN one line
    assert problems_of(root, registry) == [
        "environments/apps/shop.yaml: namespace: app 'shop' would run in namespace 'logging', which pack "
        "'fluent-bit' installs into; set namespace: to another name"
    ]


def test_a_namespace_two_packs_install_into_names_both(write_fleet: FleetWriter) -> None:
    # GIVEN two installed packs that share a namespace, neither enabled
    registry = PackRegistry(
        [replace(_pack("one"), namespaces=("tools",)), replace(_pack("two"), namespaces=("tools",)), demo_builder()]
    )
    root = write_apps(
        write_fleet(base={**DEMO_BASE, "packs": {}}, envs={"staging": {"clusters": [cluster("a")]}}),
        {"tools": APP},
    )
    # THEN the line names both
    assert problems_of(root, registry) == [
        "environments/apps/tools.yaml: namespace: app 'tools' would run in namespace 'tools', which packs 'one', "
        "'two' install into; set namespace: to another name"
    ]


def test_a_workload_cluster_named_after_an_add_ons_namespace_is_refused(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN a cluster named cert-manager: its hub namespace would be cert-manager's
    root = write_fleet(envs={"staging": {"clusters": [cluster("a"), cluster("cert-manager")]}})
    # WHEN planned THEN it is refused at its name
    assert problems_of(root, registry) == [
        "environments/staging.yaml: clusters[1].name: cluster 'cert-manager' would have namespace 'cert-manager' "
        "on the hub, which pack 'cert-manager' installs into; rename the cluster"
    ]


def test_apps_and_clusters_beside_the_add_ons_namespaces_plan(write_fleet: FleetWriter, registry: PackRegistry) -> None:
    # GIVEN an app named like a pack (not its namespace) and one in a namespace of its own
    root = write_apps(
        write_fleet(envs={"staging": {"clusters": [cluster("a")]}}),
        {"kyverno-reports": APP, "prometheus": {**APP, "namespace": "prometheus-app"}},
    )
    # THEN both are placed
    assert [(p.app.name, p.app.target_namespace) for p in plan(root, registry).apps] == [
        ("kyverno-reports", "kyverno-reports"),
        ("prometheus", "prometheus-app"),
    ]


# -- where packs can run -------------------------------------------------------------------------


def test_a_pack_that_needs_fluxplanes_network_is_left_off_the_hub_with_a_note(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN karpenter in base.yaml's packs, meant for every cluster: on the hub it would look for the node role
    # and discovery tags fluxplane's composition makes only for workload clusters
    base = {**MINIMAL_BASE, "packs": {"metrics-server": {}, "karpenter": {}}}
    # WHEN planned
    fleet_plan = plan(write_fleet(base=base), registry)
    hub, staging = fleet_plan.clusters
    # THEN the hub goes without it, saying why, and the workload cluster has it
    assert "karpenter" not in hub.packs and "karpenter" in staging.packs
    assert fleet_plan.notes == (
        "environments/base.yaml: packs.karpenter: pack 'karpenter' is left off the management cluster: it needs "
        "fluxplane-network: the VPC, subnets, security group and node role that fluxplane's EKS composition makes, "
        "tagged for discovery (karpenter.sh/discovery, the VPC's Name), which only the workload clusters the hub "
        "builds have",
    )


def test_a_pack_that_requires_one_left_off_the_hub_is_refused_there(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN karpenter, which needs fluxplane's network, and a pack that requires it, both in base.yaml's packs
    needing = replace(_pack("needs-karpenter", "karpenter"), runs_on="any")
    packs = PackRegistry([*registry, needing])
    base = {**MINIMAL_BASE, "packs": {"karpenter": {}, "needs-karpenter": {}}}
    # WHEN planned THEN karpenter is left off the hub, and the pack that requires it is refused there, once
    assert problems_of(write_fleet(base=base), packs) == [
        "environments/base.yaml: packs.needs-karpenter: pack 'needs-karpenter' requires 'karpenter', which cannot "
        "work here"
    ]


def test_a_workload_only_pack_enabled_on_the_hub_is_refused(write_fleet: FleetWriter, registry: PackRegistry) -> None:
    # GIVEN the load balancer controller enabled under management.packs, on purpose
    base = {
        **MINIMAL_BASE,
        "management": {**MINIMAL_BASE["management"], "packs": {**HUB_PACKS, "aws-load-balancer-controller": {}}},
    }
    # WHEN planned THEN it is refused where it was enabled
    (line,) = problems_of(write_fleet(base=base), registry)
    assert line.startswith(
        "environments/base.yaml: management.packs.aws-load-balancer-controller: pack 'aws-load-balancer-controller' "
        "cannot work on the management cluster: it needs fluxplane-network: "
    )
    assert line.endswith("; remove it here")


@pytest.mark.parametrize(
    ("where", "located"),
    [
        ("base", "environments/base.yaml: packs.eks-compositions"),
        ("cluster", "environments/staging.yaml: clusters[0].packs.eks-compositions"),
    ],
)
def test_the_hubs_machinery_on_a_workload_cluster_is_refused(
    write_fleet: FleetWriter, registry: PackRegistry, where: str, located: str
) -> None:
    # GIVEN the cluster shapes' compositions enabled for workload clusters (in base.yaml's packs, or in a cluster's
    # entry); Crossplane itself may run there, for a cluster that makes its apps' resources
    base = {**MINIMAL_BASE, "packs": {"eks-compositions": {}}} if where == "base" else MINIMAL_BASE
    packs = {} if where == "base" else {"eks-compositions": {}}
    # (on a cluster that runs Crossplane, which the compositions require)
    env = {"clusters": [cluster("a", packs=packs, appResources="spoke")]}
    # WHEN planned THEN it is refused once, where it was enabled, saying where it belongs
    assert (
        f"{located}: pack 'eks-compositions' cannot work on workload clusters: it runs on the management cluster only; "
        "enable it under management.packs in environments/base.yaml"
    ) in problems_of(write_fleet(base=base, envs={"staging": env}), registry)


def test_clusters_with_the_same_packs_are_each_refused_in_their_own_file(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN the hub's compositions in the entries of clusters of two files, the same packs mapping for each, and a
    # clean cluster with that mapping before them
    packs = {"eks-compositions": {}}
    staging = {"clusters": [cluster("a", packs=packs, appResources="spoke")]}
    production = {"clusters": [cluster("b", packs=packs, appResources="spoke")]}

    # WHEN planned THEN each file's cluster is refused where it enables the pack
    found = problems_of(write_fleet(envs={"staging": staging, "production": production}), registry)
    refused = [line.split(": pack ")[0] for line in found if "cannot work on workload clusters" in line]
    assert refused == [
        "environments/production.yaml: clusters[0].packs.eks-compositions",
        "environments/staging.yaml: clusters[0].packs.eks-compositions",
    ]


def test_clusters_with_the_same_packs_get_equal_configs_of_their_own(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN four clusters, three of which have the same packs mapping
    env = {
        "clusters": [
            cluster("a", packs={"podinfo": {"replicas": 2}}),
            cluster("b", packs={"podinfo": {"replicas": 3}}),
            cluster("c", packs={"podinfo": {"replicas": 2}}),
            cluster("d", packs={"podinfo": {"replicas": 2}}),
        ]
    }

    # WHEN planned THEN each has its own packs mapping, with the values of its own entry
    clusters = by_name(plan(write_fleet(envs={"staging": env}), registry))
    assert [clusters[name].packs["podinfo"].replicas for name in "abcd"] == [2, 3, 2, 2]
    assert clusters["a"].packs == clusters["c"].packs == clusters["d"].packs
    assert len({id(clusters[name].packs) for name in "acd"}) == 3


def test_every_built_in_pack_says_where_it_runs(registry: PackRegistry) -> None:
    # GIVEN the installed packs THEN the hub's machinery runs on the hub, what needs fluxplane's network on
    # workload clusters, the rest anywhere
    hub_only = {"eks-compositions", "workload-clusters"}
    assert {pack.name for pack in registry if pack.placement() == "the management cluster only"} == hub_only
    assert {pack.name for pack in registry if not pack.can_run_on("management")} - hub_only == {
        "aws-load-balancer-controller",
        "karpenter",
    }


# -- the Kubernetes version a new cluster starts on ------------------------------------------------


def test_a_new_cluster_starts_on_the_newest_version_every_controller_on_it_supports(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN a new fleet whose definition names no Kubernetes version, with a cluster that runs Crossplane too
    clusters = [cluster("staging-1"), cluster("staging-2", appResources="spoke")]
    fleet_plan = plan(write_fleet(envs={"staging": {"clusters": clusters}}), registry)
    offered = awsdata.shipped().supported_versions
    for planned in fleet_plan.clusters:
        version, on_it = planned.variables["kubernetes_version"], fleet_plan.running(planned)
        # THEN every controller on it supports the version it starts on: Flux, and Crossplane, External Secrets and
        # Sealed Secrets where they run
        assert unsupported(version, on_it) == [], planned.name
        assert {"flux", "crossplane"} <= set(on_it) if planned.name != "staging-1" else "crossplane" not in on_it
        # AND none of the newer versions EKS offers is one they all support
        assert all(unsupported(newer, on_it) for newer in offered if awsdata.minor(newer) > awsdata.minor(version))
    assert {"flux", "external-secrets", "sealed-secrets"} <= set(fleet_plan.running(by_name(fleet_plan)["staging-1"]))
    # AND the fleet holds it, so synth records it
    fleet = fleet_plan.fleet
    assert {c.name: c.kubernetes_version for c in (fleet.management, *fleet.clusters)} == {
        planned.name: planned.variables["kubernetes_version"] for planned in fleet_plan.clusters
    }
    assert 'staging-2: "1.36"' in recorded_text(fleet_plan)
    # AND held back from the newest EKS offers, it says by what
    assert fleet_plan.held_back["staging-1"] == (
        "staging-1: kubernetesVersion 1.36, the newest every controller on it supports (external-secrets 2.14.0 and "
        "flux 2.9 support up to 1.36; EKS offers 1.37)"
    )
    assert fleet_plan.held_back["staging-1"] not in fleet_plan.notes  # said by synth once it has recorded it


def test_a_recorded_or_named_version_is_kept_whatever_its_controllers_support(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN a cluster recorded on 1.37 (the default before), and one whose definition names 1.37
    clusters = [cluster("staging-1"), cluster("staging-2", kubernetesVersion="1.37")]
    root = write_fleet(envs={"staging": {"clusters": clusters}})
    (root / "environments" / "allocations.yaml").write_text(
        'clusters: {}\nkubernetesVersions:\n  hub: "1.37"\n  staging-1: "1.37"\n  staging-2: "1.37"\n'
    )
    # THEN both stay there: a recorded version is a contract, and a named one the definition's choice
    fleet_plan = plan(root, registry)
    assert {planned.name: planned.variables["kubernetes_version"] for planned in fleet_plan.clusters} == {
        "hub": "1.37",
        "staging-1": "1.37",
        "staging-2": "1.37",
    }
    assert fleet_plan.held_back == {}


def test_a_new_cluster_whose_controllers_share_no_version_is_refused(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN Envoy Gateway 1.6 (Kubernetes 1.30 to 1.33) on a new workload cluster, whose Flux supports 1.34 to 1.36
    env = {"clusters": [cluster("staging-1", packs={"envoy-gateway": {"version": "v1.6.0"}})]}
    problems = problems_of(write_fleet(envs={"staging": env}), registry)
    # THEN no version fits: the cluster's entry is named, with every range that leaves out a version EKS offers
    table = compatibility()
    assert [line for line in problems if "no Kubernetes version" in line] == [
        "environments/staging.yaml: clusters[0].kubernetesVersion: no Kubernetes version EKS offers is supported by "
        f"every controller cluster 'staging-1' runs (envoy-gateway v1.6.0 supports Kubernetes 1.30 to 1.33 "
        f"({table['envoy-gateway'].source}); flux 2.9 supports Kubernetes 1.34 to 1.36 ({table['flux'].source}); "
        f"external-secrets 2.14.0 supports Kubernetes 1.19 to 1.36 ({table['external-secrets'].source})); set "
        "kubernetesVersion, or versions of the packs whose ranges meet"
    ]


# -- EKS Auto Mode -------------------------------------------------------------------------------------

#: A cluster in EKS Auto Mode.
AUTO = {"autoMode": {"enabled": True}}


def test_every_pack_auto_mode_stands_in_for_says_what_auto_mode_does(registry: PackRegistry) -> None:
    assert {pack.name for pack in registry if pack.replaced_by_auto_mode} == {
        "aws-ebs-csi-driver",
        "aws-load-balancer-controller",
        "karpenter",
    }


@pytest.mark.parametrize(
    ("pack", "what"),
    [
        ("karpenter", "node autoscaling (nodes for pending pods, consolidated when underused)"),
        ("aws-ebs-csi-driver", "block storage (EBS volumes for PersistentVolumeClaims)"),
        ("aws-load-balancer-controller", "load balancing (ALBs for Ingresses, NLBs for Services)"),
    ],
)
def test_a_pack_auto_mode_does_is_refused_where_an_auto_mode_cluster_enables_it(
    write_fleet: FleetWriter, registry: PackRegistry, pack: str, what: str
) -> None:
    # GIVEN an Auto Mode cluster whose own entry enables a pack whose work EKS Auto Mode does
    env = {"clusters": [cluster("a", packs={pack: {}}, **AUTO)]}
    # WHEN planned THEN it is refused, where the cluster enables it
    assert problems_of(write_fleet(envs={"staging": env}), registry) == [
        f"environments/staging.yaml: clusters[0].packs.{pack}: pack {pack!r} is not for Auto Mode cluster 'a': EKS "
        f"Auto Mode does its work itself, {what}; remove it here"
    ]


def test_a_pack_auto_mode_does_is_left_off_an_auto_mode_cluster_that_inherits_it(
    write_fleet: FleetWriter, registry: PackRegistry
) -> None:
    # GIVEN karpenter for every cluster of the environment, one of them in Auto Mode, which also switches the EBS
    # CSI driver off itself
    env = {
        "packs": {"karpenter": {}, "aws-ebs-csi-driver": {}},
        "clusters": [cluster("a", packs={"aws-ebs-csi-driver": {"enabled": False}}, **AUTO), cluster("b")],
    }
    # WHEN planned
    fleet_plan = plan(write_fleet(envs={"staging": env}), registry)
    clusters = by_name(fleet_plan)
    # THEN the Auto Mode cluster goes without both, the other cluster has them, and a note says why for karpenter
    assert not {"karpenter", "aws-ebs-csi-driver"} & set(clusters["a"].packs)
    assert {"karpenter", "aws-ebs-csi-driver"} <= set(clusters["b"].packs)
    assert fleet_plan.notes == (
        "environments/staging.yaml: packs.karpenter: pack 'karpenter' is left off Auto Mode cluster 'a': EKS Auto "
        "Mode does node autoscaling (nodes for pending pods, consolidated when underused)",
    )


# --------------------------------------------------------------------------------------------------------------
# Planning apps: their sealed credentials, and what the hub must offer for their AWS resources.


ENVS = {"staging": {"clusters": [{"name": "staging-1", "region": "us-west-2"}]}}
APP_ON_STAGING: dict[str, Any] = {
    "repository": {"url": "https://github.com/example-org/shop.git", "ref": {"branch": "main"}},
    "clusters": ["staging-1"],
}
#: A hub that builds clusters and offers the app kinds.
APP_HUB_PACKS = {
    **HUB_PACKS,
    "crossplane-providers": {"roleArn": "arn:aws:iam::111122223333:role/providers", "services": ["ec2", "eks", "iam"]},
    "app-compositions": {},
}


def plan_with_app(write_fleet: FleetWriter, app: dict[str, Any], hub_packs: dict[str, Any]) -> FleetPlan:
    base = {
        **MINIMAL_BASE,
        "repositories": {"platform": {"url": "ssh://git@example.com/org/fleet.git", "secretRef": None}},
        "management": {**MINIMAL_BASE["management"], "packs": {**HUB_PACKS, **hub_packs}},
    }
    project: Path = write_fleet(base=base, envs=ENVS)
    (project / "environments" / "apps").mkdir(exist_ok=True)
    (project / "environments" / "apps" / "shop.yaml").write_text(yaml.safe_dump(app))
    return plan_fleet(load_fleet(project), PackRegistry.from_entry_points())


def problems(write_fleet: FleetWriter, app: dict[str, Any], hub_packs: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        plan_with_app(write_fleet, app, hub_packs)
    return list(caught.value.problems)


def test_an_app_without_aws_needs_nothing_on_the_hub(write_fleet: FleetWriter) -> None:
    fleet_plan = plan_with_app(write_fleet, APP_ON_STAGING, {})
    assert [(p.app.name, p.cluster) for p in fleet_plan.apps] == [("shop", "staging-1")]


def test_an_app_with_aws_needs_the_app_compositions_pack(write_fleet: FleetWriter) -> None:
    app = {**APP_ON_STAGING, "aws": {"queues": [{"name": "jobs"}]}}
    assert problems(write_fleet, app, {}) == [
        "environments/base.yaml: management.packs: apps shop need AWS resources, which the hub builds in each "
        "cluster's hub namespace; enable 'app-compositions' on the management cluster (app-compositions: {})"
    ]


def test_an_app_with_aws_needs_the_provider_family_members_of_its_kinds(write_fleet: FleetWriter) -> None:
    app = {**APP_ON_STAGING, "aws": {"queues": [{"name": "jobs"}], "tables": [{"name": "t", "hashKey": "id"}]}}
    assert problems(write_fleet, app, APP_HUB_PACKS) == [
        "environments/base.yaml: management.packs.crossplane-providers.services: the apps' AWS resources need the "
        "provider family members dynamodb, sqs; add them (services: [dynamodb, ec2, eks, iam, sqs])"
    ]
    with_services = {
        **APP_HUB_PACKS,
        "crossplane-providers": {
            **APP_HUB_PACKS["crossplane-providers"],
            "services": ["ec2", "eks", "iam", "sqs", "dynamodb"],
        },
    }
    assert plan_with_app(write_fleet, app, with_services).apps


def test_sealed_credentials_of_an_app_are_required_on_every_cluster(write_fleet: FleetWriter) -> None:
    app = {**APP_ON_STAGING, "repository": {**APP_ON_STAGING["repository"], "secretRef": "shop-git"}}
    assert problems(write_fleet, app, {}) == [
        "environments/secrets/staging-1/shop/shop-git.yaml: missing; app 'shop' reads its repository with it "
        "(repository.secretRef 'shop-git') on cluster 'staging-1': fluxplane seal --cluster staging-1 "
        "--namespace shop --name shop-git --from-file identity=<deploy key> --from-file known_hosts=<known_hosts>"
    ]


def test_a_workloads_repository_of_its_own_needs_its_credentials_on_clusters_with_apps(
    write_fleet: FleetWriter,
) -> None:
    base = {
        **MINIMAL_BASE,
        "repositories": {
            "platform": {"url": "ssh://git@example.com/org/fleet.git", "secretRef": None},
            "workloads": {"url": "ssh://git@example.com/org/workloads.git", "secretRef": "workloads-git"},
        },
    }
    project: Path = write_fleet(base=base, envs=ENVS)
    (project / "environments" / "apps").mkdir()
    (project / "environments" / "apps" / "shop.yaml").write_text(yaml.safe_dump(APP_ON_STAGING))
    with pytest.raises(ConfigError) as caught:
        plan_fleet(load_fleet(project), PackRegistry.from_entry_points())
    assert list(caught.value.problems) == [
        "environments/secrets/staging-1/flux-system/workloads-git.yaml: missing; cluster 'staging-1' reads its "
        "tenants from the workloads repository with it (repositories.workloads.secretRef 'workloads-git'): "
        "fluxplane seal --cluster staging-1 --namespace flux-system --name workloads-git "
        "--from-file identity=<deploy key> --from-file known_hosts=<known_hosts>"
    ]


def test_the_hub_needs_an_apps_credentials_to_read_its_requests(write_fleet: FleetWriter) -> None:
    app = {
        **APP_ON_STAGING,
        "repository": {**APP_ON_STAGING["repository"], "secretRef": "shop-git"},
        "aws": {"path": "deploy/aws"},
    }
    found = problems(write_fleet, app, APP_HUB_PACKS)
    assert found[0] == (
        "environments/secrets/hub/staging-1/shop-git.yaml: missing; the hub reads the requests of app 'shop' "
        "(aws.path) for cluster 'staging-1' with it: fluxplane seal --cluster hub --namespace staging-1 "
        "--name shop-git --from-file identity=<deploy key> --from-file known_hosts=<known_hosts>"
    )
    assert found[1].startswith("environments/secrets/staging-1/shop/shop-git.yaml: missing;")


def _kinds(name: str, capability: str, config: type[PackConfig] = PackConfig) -> Pack:
    """A third-party pack that provides ``capability`` and renders nothing."""
    return Pack(
        name, "1.0.0", f"provides {capability}", config, "configs", lambda ctx, config: None, provides=(capability,)
    )


class ProvidersConfig(PackConfig):
    services: list[str] = Field(default_factory=lambda: ["eks", "iam", "sqs"])


def _demo_plan(write_fleet: FleetWriter, hub_packs: dict[str, Any], *extra: Pack) -> FleetPlan:
    base = {"repositories": DEMO_REPOSITORIES, "management": {**DEMO_HUB, "packs": {"build": {}, **hub_packs}}}
    project: Path = write_fleet(base=base, envs=ENVS)
    (project / "environments" / "apps").mkdir(exist_ok=True)
    (project / "environments" / "apps" / "shop.yaml").write_text(
        yaml.safe_dump({**APP_ON_STAGING, "aws": {"queues": [{"name": "jobs"}]}})
    )
    return plan_fleet(load_fleet(project), demo_registry(*extra))


def test_third_party_packs_that_provide_the_app_kinds_and_providers_satisfy_the_hub(write_fleet: FleetWriter) -> None:
    # GIVEN apps with AWS resources, and a hub whose app kinds and providers come from packs of other names
    kinds, providers = _kinds("kinds", APP_RESOURCES), _kinds("providers", AWS_PROVIDERS, ProvidersConfig)
    # WHEN planned THEN the hub offers what the apps need, and the packs are the hub's providers
    fleet_plan = _demo_plan(write_fleet, {"kinds": {}, "providers": {}}, kinds, providers)
    assert fleet_plan.provider(fleet_plan.hub, APP_RESOURCES) == "kinds"
    assert fleet_plan.provider(fleet_plan.hub, AWS_PROVIDERS) == "providers"
    assert fleet_plan.provider(fleet_plan.clusters[1], APP_RESOURCES) is None


def test_the_providers_a_third_party_pack_installs_are_checked(write_fleet: FleetWriter) -> None:
    # GIVEN a third-party pack of the AWS providers that installs no SQS provider
    kinds, providers = _kinds("kinds", APP_RESOURCES), _kinds("providers", AWS_PROVIDERS, ProvidersConfig)
    with pytest.raises(ConfigError) as caught:
        _demo_plan(write_fleet, {"kinds": {}, "providers": {"services": ["eks", "iam"]}}, kinds, providers)
    # THEN the message names that pack's services
    assert caught.value.problems == (
        "environments/base.yaml: management.packs.providers.services: the apps' AWS resources need the provider "
        "family members sqs; add them (services: [eks, iam, sqs])",
    )


def test_without_an_installed_pack_of_the_app_kinds_the_message_names_the_capability(write_fleet: FleetWriter) -> None:
    # GIVEN apps with AWS resources, and no installed pack that provides the app kinds
    with pytest.raises(ConfigError) as caught:
        _demo_plan(write_fleet, {})
    # THEN the message says what the hub needs
    assert caught.value.problems == (
        "environments/base.yaml: management.packs: apps shop need AWS resources, which the hub builds in each "
        "cluster's hub namespace; enable a pack that provides 'app-resources' on the management cluster",
    )


def test_two_packs_that_provide_the_app_kinds_on_one_cluster_are_refused(write_fleet: FleetWriter) -> None:
    # GIVEN the built-in pack of the app kinds and a third-party one, both on the hub
    kinds = _kinds("kinds", APP_RESOURCES)
    base = {
        **MINIMAL_BASE,
        "management": {**MINIMAL_BASE["management"], "packs": {**APP_HUB_PACKS, "kinds": {}}},
    }
    project = write_fleet(base=base, envs=ENVS)
    # WHEN planned THEN the hub may have one of them
    with pytest.raises(ConfigError) as caught:
        plan_fleet(load_fleet(project), PackRegistry([*PackRegistry.from_entry_points(), kinds]))
    assert caught.value.problems == (
        "environments/base.yaml: management.packs.kinds: packs 'app-compositions', 'kinds' all provide "
        "'app-resources' on cluster 'hub', which one pack does; enable only one of them",
    )


def test_an_app_left_off_a_registered_cluster_is_said_in_the_plans_notes(write_fleet: FleetWriter) -> None:
    # GIVEN a registered cluster, whose subnets the hub does not know, and an app with a database on its environment
    existing = {"mode": "registered", "externalSecretsRoleArn": "arn:aws:iam::111122223333:role/old-eso"}
    envs = {
        "staging": {
            "clusters": [
                {
                    "name": "staging-1",
                    "region": "us-west-2",
                    "kubernetesVersion": "1.34",
                    "network": {"cidr": "10.64.0.0/16"},
                    "hubAccess": "keyless",
                    "existing": {**existing, "clusterArn": "arn:aws:eks:us-west-2:111122223333:cluster/staging-1"},
                }
            ]
        }
    }
    base = {
        **MINIMAL_BASE,
        "management": {
            **MINIMAL_BASE["management"],
            "fluxRoleArn": "arn:aws:iam::111122223333:role/hub-flux",
            "packs": {
                **APP_HUB_PACKS,
                "crossplane-providers": {
                    **APP_HUB_PACKS["crossplane-providers"],
                    "kubernetes": True,
                    "services": ["ec2", "eks", "iam", "rds"],
                },
            },
        },
    }
    project: Path = write_fleet(base=base, envs=envs)
    (project / "environments" / "apps").mkdir(exist_ok=True)
    app = {
        **APP_ON_STAGING,
        "clusters": [],
        "environments": ["staging"],
        "aws": {"databases": [{"name": "main", "engine": "postgres", "engineVersion": "17"}]},
    }
    (project / "environments" / "apps" / "shop.yaml").write_text(yaml.safe_dump(app))
    # WHEN planned THEN the app runs nowhere, and the plan says why, with the notes synth prints
    planned = plan_fleet(load_fleet(project), PackRegistry.from_entry_points())
    assert planned.apps == ()
    assert planned.notes == (
        "environments/apps/shop.yaml: environments[0]: app 'shop' is left off cluster 'staging-1' of environment "
        "'staging': it has a database, and the cluster is registered, so the hub knows nothing of its subnets",
    )


# --------------------------------------------------------------------------------------------------------------
# Planning checks of the hub's reach into workload clusters: keyless access and sealed Git credentials.


ROLE = "arn:aws:iam::111122223333:role/hub-flux"


def problems_with_installed_packs(root: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        plan_fleet(load_fleet(root), PackRegistry.from_entry_points())
    return list(caught.value.problems)


def base(**extra: Any) -> dict[str, Any]:
    return {**MINIMAL_BASE, **extra}


def test_keyless_on_a_flux_without_it_is_refused(write_fleet: FleetWriter) -> None:
    # GIVEN a keyless cluster and a hub Flux 2.6 WHEN planned THEN the field and the version are named
    root = write_fleet(
        base=base(
            flux={"version": "2.6"},
            management={**MINIMAL_BASE["management"], "fluxRoleArn": ROLE, "kubernetesVersion": "1.33"},
        ),
        envs={
            "staging": {
                "clusters": [{"name": "a", "region": "us-west-2", "hubAccess": "keyless", "kubernetesVersion": "1.33"}]
            }
        },
    )
    assert problems_with_installed_packs(root) == [
        "environments/staging.yaml: clusters[0].hubAccess: keyless needs Flux 2.7 or newer on the hub, "
        "flux.version is '2.6'; upgrade Flux and set flux.version, or use kubeconfig"
    ]


def test_keyless_without_the_hubs_flux_role_is_refused(write_fleet: FleetWriter) -> None:
    root = write_fleet(
        base=base(), envs={"staging": {"clusters": [{"name": "a", "region": "us-west-2", "hubAccess": "keyless"}]}}
    )
    (line,) = problems_with_installed_packs(root)
    assert line.startswith("environments/staging.yaml: clusters[0].hubAccess: keyless needs management.fluxRoleArn")


def test_keyless_with_a_recent_flux_and_a_role_plans(write_fleet: FleetWriter) -> None:
    root = write_fleet(
        base=base(flux={"version": "2.7"}, management={**MINIMAL_BASE["management"], "fluxRoleArn": ROLE}),
        envs={"staging": {"clusters": [{"name": "a", "region": "us-west-2", "hubAccess": "keyless"}]}},
    )
    plan = plan_fleet(load_fleet(root), PackRegistry.from_entry_points())
    assert plan.fleet.clusters[0].hub_access == "keyless"


def test_an_unquoted_or_malformed_flux_version_is_refused(write_fleet: FleetWriter) -> None:
    root = write_fleet(
        base=base(flux={"version": "v2.7"}), envs={"staging": {"clusters": [{"name": "a", "region": "us-west-2"}]}}
    )
    with pytest.raises(ConfigError, match=r"environments/base.yaml: flux.version"):
        load_fleet(root)


def test_a_hub_that_bootstraps_spokes_needs_their_sealed_git_credentials(write_fleet: FleetWriter) -> None:
    # GIVEN a hub with the workload-clusters pack and a platform repository read with a deploy key
    management = {
        **MINIMAL_BASE["management"],
        "packs": {
            "crossplane": {},
            "crossplane-providers": {"roleArn": "arn:aws:iam::111122223333:role/providers"},
            "crossplane-provider-configs": {},
            "eks-compositions": {},
            "workload-clusters": {},
        },
    }
    repositories = {"platform": {"url": "ssh://git@example.com/org/fleet.git"}}
    root = write_fleet(
        base=base(management=management, repositories=repositories),
        envs={"staging": {"clusters": [{"name": "a", "region": "us-west-2"}]}},
    )
    # WHEN planned without environments/secrets/a/flux-system/flux-system.yaml THEN the command is given
    (line,) = problems_with_installed_packs(root)
    assert line.startswith("environments/secrets/a/flux-system/flux-system.yaml: missing;")
    assert "fluxplane seal --cluster a --namespace flux-system --name flux-system" in line


def test_a_spoke_that_runs_its_own_flux_has_its_git_credentials_from_its_own_bootstrap(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN the same hub, and a cluster whose Flux `flux bootstrap` installed (with its own deploy key)
    management = {**MINIMAL_BASE["management"], "packs": HUB_PACKS}
    repositories = {"platform": {"url": "ssh://git@example.com/org/fleet.git"}}
    root = write_fleet(
        base=base(management=management, repositories=repositories),
        envs={"staging": {"clusters": [{"name": "a", "region": "us-west-2", "bootstrap": "flux"}]}},
    )
    # WHEN planned without sealed Git credentials for it THEN none are asked for: the hub hands it no sync
    plan = plan_fleet(load_fleet(root), PackRegistry.from_entry_points())
    assert plan.fleet.clusters[0].bootstrap == "flux"


def test_a_registered_cluster_needs_the_kubeconfig_the_hub_reaches_it_with(write_fleet: FleetWriter) -> None:
    # GIVEN a registered cluster the hub reaches with a kubeconfig, and another keyless
    existing = {"mode": "registered", "externalSecretsRoleArn": "arn:aws:iam::111122223333:role/old-eso"}
    clusters = [
        {
            "name": "old",
            "region": "us-west-2",
            "kubernetesVersion": "1.34",
            "network": {"cidr": "10.64.0.0/16"},
            "existing": existing,
        },
        {
            "name": "keyless",
            "region": "us-west-2",
            "kubernetesVersion": "1.34",
            "network": {"cidr": "10.65.0.0/16"},
            "hubAccess": "keyless",
            "existing": {**existing, "clusterArn": "arn:aws:eks:us-west-2:111122223333:cluster/keyless"},
        },
    ]
    management = {**MINIMAL_BASE["management"], "packs": HUB_PACKS, "fluxRoleArn": ROLE}
    root = write_fleet(base=base(management=management), envs={"staging": {"clusters": clusters}})
    # WHEN planned without it THEN the first one's is asked for, with the command that seals it; the keyless one
    # needs none
    assert problems_with_installed_packs(root) == [
        "environments/secrets/hub/old/old-kubeconfig.yaml: missing; the hub reaches registered cluster 'old' with it "
        "(or set hubAccess: keyless): fluxplane seal --cluster hub --namespace old --name old-kubeconfig "
        "--from-file value=<kubeconfig>"
    ]


class _NoVersion(PackConfig):
    pass


class _VersionField(PackConfig):
    version: str = "2.0.0"


class _VersionProperty(PackConfig):
    @property
    def version(self) -> str:
        return "3.0.0"


def test_pack_versions_reads_a_version_field_or_property_without_asking_pydantic_for_a_missing_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN configs without a version, with a version field, and with a version property
    registry = PackRegistry([_pack("a"), _pack("b"), _pack("c")])
    asked: list[str] = []
    for config in (_NoVersion, _VersionField, _VersionProperty):
        monkeypatch.setattr(
            config,
            "__getattr__",
            lambda self, name: asked.append(name) or PackConfig.__getattr__(self, name),
            raising=False,
        )
    # WHEN their versions are read
    found = pack_versions({"a": _NoVersion(), "b": _VersionField(), "c": _VersionProperty()}, registry)
    # THEN each has its own, the pack's when it gives none, and pydantic was never asked for a missing attribute
    # (it raises an exception it formats, for each of a thousand clusters' packs)
    assert found == {"a": registry.get("a").version, "b": "2.0.0", "c": "3.0.0"}
    assert asked == []
