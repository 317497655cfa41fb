"""Tests for fluxplane.config.apps.files: reading environments/apps/ and placing each app on the fleet."""

from __future__ import annotations

import pytest
import yaml

from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError
from tests.conftest import FleetWriter
from tests.support.config import APP, ENVS, load, problems, write_apps


def test_no_apps_folder_is_no_apps(write_fleet: FleetWriter) -> None:
    assert load_fleet(write_fleet(envs=ENVS)).apps == ()


def test_an_app_is_placed_on_its_clusters_and_every_cluster_of_its_environments(write_fleet: FleetWriter) -> None:
    # GIVEN an app on one cluster and one environment
    loaded = load(write_fleet, {"shop": {**APP, "clusters": ["staging-1"], "environments": ["production"]}})
    # THEN it runs on the three clusters, in the order named, with each cluster's environment and region
    placed = [(p.app.name, p.cluster, p.environment, p.region) for p in loaded.apps]
    assert placed == [
        ("shop", "staging-1", "staging", "us-west-2"),
        ("shop", "prod-1", "production", "us-west-2"),
        ("shop", "prod-2", "production", "us-east-1"),
    ]


def test_a_cluster_named_twice_is_placed_once(write_fleet: FleetWriter) -> None:
    loaded = load(write_fleet, {"shop": {**APP, "clusters": ["prod-1"], "environments": ["production"]}})
    assert [p.cluster for p in loaded.apps] == ["prod-1", "prod-2"]


def test_unknown_clusters_and_environments_list_what_exists(write_fleet: FleetWriter) -> None:
    found = problems(write_fleet, {"shop": {**APP, "clusters": ["staging-1", "nope"], "environments": ["qa"]}})
    assert list(found) == [
        "environments/apps/shop.yaml: clusters[1]: unknown workload cluster 'nope' "
        "(clusters: prod-1, prod-2, staging-1)",
        "environments/apps/shop.yaml: environments[0]: unknown environment 'qa' (environments: production, staging)",
    ]


def test_the_hub_is_no_workload_cluster_for_apps(write_fleet: FleetWriter) -> None:
    found = problems(write_fleet, {"shop": {**APP, "clusters": ["hub"]}})
    assert list(found) == [
        "environments/apps/shop.yaml: clusters[0]: unknown workload cluster 'hub' (clusters: prod-1, prod-2, staging-1)"
    ]


def test_two_apps_may_not_share_a_namespace_on_one_cluster(write_fleet: FleetWriter) -> None:
    found = problems(
        write_fleet,
        {
            "cart": {**APP, "namespace": "shop", "environments": ["production"], "clusters": []},
            "shop": {**APP, "clusters": ["staging-1", "prod-2"]},
        },
    )
    assert list(found) == [
        "environments/apps/shop.yaml: namespace: app 'shop' and app 'cart' both claim namespace 'shop' "
        "on cluster 'prod-2'; give one of them its own namespace"
    ]


def test_two_apps_may_share_a_namespace_name_on_different_clusters(write_fleet: FleetWriter) -> None:
    loaded = load(write_fleet, {"cart": {**APP, "namespace": "shop", "clusters": ["prod-1"]}, "shop": APP})
    assert [(p.app.name, p.cluster) for p in loaded.apps] == [("cart", "prod-1"), ("shop", "staging-1")]


@pytest.mark.parametrize(
    ("filename", "message"),
    [
        ("Shop.yaml", 'app name "Shop" must be a DNS-1123 label'),
        ("shop.yml", "use the .yaml extension"),
        ("notes.txt", "not an app file"),
    ],
)
def test_bad_app_file_names(write_fleet: FleetWriter, filename: str, message: str) -> None:
    project = write_fleet(envs=ENVS)
    folder = project / "environments" / "apps"
    folder.mkdir()
    (folder / filename).write_text(yaml.safe_dump(APP))
    with pytest.raises(ConfigError) as caught:
        load_fleet(project)
    (line,) = caught.value.problems
    assert line.startswith(f"environments/apps/{filename}: {message}"), line


def test_invalid_yaml_and_non_mappings_are_reported_with_the_others(write_fleet: FleetWriter) -> None:
    found = problems(write_fleet, {"a": "key: [unclosed\n", "b": "- a list\n", "shop": {**APP, "clusters": ["nope"]}})
    assert found[0].startswith("environments/apps/a.yaml:")
    assert found[1] == "environments/apps/b.yaml: expected a mapping at the top level, got a list"
    assert found[2].startswith("environments/apps/shop.yaml: clusters[0]: unknown workload cluster 'nope'")


def test_hidden_files_are_skipped(write_fleet: FleetWriter) -> None:
    project = write_fleet(envs=ENVS)
    write_apps(project, {"shop": APP, ".shop.yaml.swp": "not yaml: ["})
    assert [p.app.name for p in load_fleet(project).apps] == ["shop"]


def test_an_app_may_not_be_named_kustomization(write_fleet: FleetWriter) -> None:
    assert problems(write_fleet, {"kustomization": APP}) == [
        'environments/apps/kustomization.yaml: app name "kustomization" is taken: the folders that hold each app\'s '
        "tenant folder (workloads repository) and its AWS resources (platform repository) have a kustomization.yaml "
        "of their own; rename the file"
    ]


def test_a_64_character_app_name_and_a_70_character_namespace_are_located(write_fleet: FleetWriter) -> None:
    namespace = "n" * 70
    found = problems(write_fleet, {"a" * 64: APP, "shop": {**APP, "namespace": namespace}})
    assert found == [
        f'environments/apps/{"a" * 64}.yaml: app name "{"a" * 64}" must be a DNS-1123 label of at most 63 characters '
        "(it has 64) (lower-case letters, digits and '-'); rename the file",
        f'environments/apps/shop.yaml: namespace: expected at most 63 characters, got 70: "{"n" * 70}"',
    ]


#: Production with a registered cluster: the hub knows nothing of its subnets.
WITH_REGISTERED = {
    **ENVS,
    "production": {
        "clusters": [
            *ENVS["production"]["clusters"],
            {
                "name": "prod-old",
                "region": "us-west-2",
                "kubernetesVersion": "1.34",
                "network": {"cidr": "10.64.0.0/16"},
                "existing": {"mode": "registered", "externalSecretsRoleArn": "arn:aws:iam::111122223333:role/old"},
            },
        ]
    },
}
DATABASE = {"aws": {"databases": [{"name": "main", "engine": "postgres", "engineVersion": "17"}]}}


def test_an_app_with_a_database_runs_on_every_cluster_of_its_environment_but_a_registered_one(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN production with a registered cluster, an app with a database and one without, both on production
    project = write_fleet(envs=WITH_REGISTERED)
    write_apps(
        project,
        {
            "shop": {**APP, "clusters": [], "environments": ["production"], **DATABASE},
            "web": {**APP, "clusters": [], "environments": ["production"]},
        },
    )
    loaded = load_fleet(project)
    # WHEN placed THEN the app with a database is left off the registered cluster, the other runs there too
    assert [(p.app.name, p.cluster) for p in loaded.apps] == [
        ("shop", "prod-1"),
        ("shop", "prod-2"),
        ("web", "prod-1"),
        ("web", "prod-2"),
        ("web", "prod-old"),
    ]
    # AND the user is told, at the app's environment
    assert loaded.notes == (
        "environments/apps/shop.yaml: environments[0]: app 'shop' is left off cluster 'prod-old' of environment "
        "'production': it has a database, and the cluster is registered, so the hub knows nothing of its subnets",
    )


def test_an_app_with_a_database_that_names_a_registered_cluster_is_refused(write_fleet: FleetWriter) -> None:
    # GIVEN the app with a database naming the registered cluster itself WHEN placed THEN it is refused, there
    project = write_fleet(envs=WITH_REGISTERED)
    write_apps(project, {"shop": {**APP, "clusters": ["prod-1", "prod-old"], **DATABASE}})
    with pytest.raises(ConfigError) as caught:
        load_fleet(project)
    assert list(caught.value.problems) == [
        "environments/apps/shop.yaml: clusters[1]: app 'shop' has a database, which cannot go on cluster 'prod-old': "
        "it is registered, and the hub knows nothing of its subnets; import the cluster (existing.mode: observed), or "
        "take it off the app's clusters"
    ]
