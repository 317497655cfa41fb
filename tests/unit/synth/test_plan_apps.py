"""Planning apps: their sealed credentials, and what the hub must offer for their AWS resources."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import Field

from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError
from fluxplane.packs.api import APP_RESOURCES, AWS_PROVIDERS, Pack, PackConfig
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth.plan import FleetPlan, plan_fleet
from tests.conftest import HUB_PACKS as BUILDING_HUB
from tests.conftest import MINIMAL_BASE, FleetWriter
from tests.support.packs import DEMO_HUB, DEMO_REPOSITORIES, demo_registry

ENVS = {"staging": {"clusters": [{"name": "staging-1", "region": "us-west-2"}]}}
APP: dict[str, Any] = {
    "repository": {"url": "https://github.com/example-org/shop.git", "ref": {"branch": "main"}},
    "clusters": ["staging-1"],
}
#: A hub that builds clusters and offers the app kinds.
HUB_PACKS = {
    **BUILDING_HUB,
    "crossplane-providers": {"roleArn": "arn:aws:iam::111122223333:role/providers", "services": ["ec2", "eks", "iam"]},
    "app-compositions": {},
}


def plan(write_fleet: FleetWriter, app: dict[str, Any], hub_packs: dict[str, Any]) -> FleetPlan:
    base = {
        **MINIMAL_BASE,
        "repositories": {"platform": {"url": "ssh://git@example.com/org/fleet.git", "secretRef": None}},
        "management": {**MINIMAL_BASE["management"], "packs": {**BUILDING_HUB, **hub_packs}},
    }
    project: Path = write_fleet(base=base, envs=ENVS)
    (project / "environments" / "apps").mkdir(exist_ok=True)
    (project / "environments" / "apps" / "shop.yaml").write_text(yaml.safe_dump(app))
    return plan_fleet(load_fleet(project), PackRegistry.from_entry_points())


def problems(write_fleet: FleetWriter, app: dict[str, Any], hub_packs: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        plan(write_fleet, app, hub_packs)
    return list(caught.value.problems)


def test_an_app_without_aws_needs_nothing_on_the_hub(write_fleet: FleetWriter) -> None:
    fleet_plan = plan(write_fleet, APP, {})
    assert [(p.app.name, p.cluster) for p in fleet_plan.apps] == [("shop", "staging-1")]


def test_an_app_with_aws_needs_the_app_compositions_pack(write_fleet: FleetWriter) -> None:
    app = {**APP, "aws": {"queues": [{"name": "jobs"}]}}
    assert problems(write_fleet, app, {}) == [
        "environments/base.yaml: management.packs: apps shop need AWS resources, which the hub builds in each "
        "cluster's hub namespace; enable 'app-compositions' on the management cluster (app-compositions: {})"
    ]


def test_an_app_with_aws_needs_the_provider_family_members_of_its_kinds(write_fleet: FleetWriter) -> None:
    app = {**APP, "aws": {"queues": [{"name": "jobs"}], "tables": [{"name": "t", "hashKey": "id"}]}}
    assert problems(write_fleet, app, HUB_PACKS) == [
        "environments/base.yaml: management.packs.crossplane-providers.services: the apps' AWS resources need the "
        "provider family members dynamodb, sqs; add them (services: [dynamodb, ec2, eks, iam, sqs])"
    ]
    with_services = {
        **HUB_PACKS,
        "crossplane-providers": {
            **HUB_PACKS["crossplane-providers"],
            "services": ["ec2", "eks", "iam", "sqs", "dynamodb"],
        },
    }
    assert plan(write_fleet, app, with_services).apps


def test_sealed_credentials_of_an_app_are_required_on_every_cluster(write_fleet: FleetWriter) -> None:
    app = {**APP, "repository": {**APP["repository"], "secretRef": "shop-git"}}
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
    (project / "environments" / "apps" / "shop.yaml").write_text(yaml.safe_dump(APP))
    with pytest.raises(ConfigError) as caught:
        plan_fleet(load_fleet(project), PackRegistry.from_entry_points())
    assert list(caught.value.problems) == [
        "environments/secrets/staging-1/flux-system/workloads-git.yaml: missing; cluster 'staging-1' reads its "
        "tenants from the workloads repository with it (repositories.workloads.secretRef 'workloads-git'): "
        "fluxplane seal --cluster staging-1 --namespace flux-system --name workloads-git "
        "--from-file identity=<deploy key> --from-file known_hosts=<known_hosts>"
    ]


def test_the_hub_needs_an_apps_credentials_to_read_its_requests(write_fleet: FleetWriter) -> None:
    app = {**APP, "repository": {**APP["repository"], "secretRef": "shop-git"}, "aws": {"path": "deploy/aws"}}
    found = problems(write_fleet, app, HUB_PACKS)
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
        yaml.safe_dump({**APP, "aws": {"queues": [{"name": "jobs"}]}})
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
        "management": {**MINIMAL_BASE["management"], "packs": {**HUB_PACKS, "kinds": {}}},
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
                **HUB_PACKS,
                "crossplane-providers": {
                    **HUB_PACKS["crossplane-providers"],
                    "kubernetes": True,
                    "services": ["ec2", "eks", "iam", "rds"],
                },
            },
        },
    }
    project: Path = write_fleet(base=base, envs=envs)
    (project / "environments" / "apps").mkdir(exist_ok=True)
    app = {
        **APP,
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
