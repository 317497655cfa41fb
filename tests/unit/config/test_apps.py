"""Apps in the definition: environments/apps/<app>.yaml, validated alone and placed on the fleet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.config.apps import App, composite_name, physical_name, queue_name, requests_name
from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError
from tests.conftest import FleetWriter

ENVS: dict[str, Any] = {
    "staging": {"clusters": [{"name": "staging-1", "region": "us-west-2"}]},
    "production": {"clusters": [{"name": "prod-1", "region": "us-west-2"}, {"name": "prod-2", "region": "us-east-1"}]},
}

APP: dict[str, Any] = {
    "team": "@example-org/shop",
    "repository": {"url": "https://github.com/example-org/shop.git", "ref": {"tag": "v1.2.0"}},
    "clusters": ["staging-1"],
}


def write_apps(project: Path, apps: dict[str, Any]) -> None:
    folder = project / "environments" / "apps"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in apps.items():
        text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
        (folder / f"{name}.yaml").write_text(text)


def load(write_fleet: FleetWriter, apps: dict[str, Any]) -> Any:
    project = write_fleet(envs=ENVS)
    write_apps(project, apps)
    return load_fleet(project)


def problems(write_fleet: FleetWriter, apps: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(write_fleet, apps)
    return list(caught.value.problems)


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


def test_defaults_namespace_path_and_overlay(write_fleet: FleetWriter) -> None:
    (placement,) = load(write_fleet, {"shop": APP}).apps
    app = placement.app
    assert (app.name, app.target_namespace, app.path, app.overlay) == ("shop", "shop", "deploy", "environment")
    assert app.repository.ref.flux() == {"tag": "v1.2.0"}
    assert app.repository.secret_ref is None


@pytest.mark.parametrize(
    ("overlay", "path", "expected"),
    [
        ("environment", "deploy", "./deploy/production"),
        ("cluster", "deploy/overlays", "./deploy/overlays/prod-1"),
        ("none", "k8s", "./k8s"),
        ("none", ".", "./"),
        ("environment", ".", "./production"),
    ],
)
def test_manifests_path_follows_the_overlay_convention(overlay: str, path: str, expected: str) -> None:
    app = App.model_validate({**APP, "name": "shop", "overlay": overlay, "path": path})
    assert app.manifests_path("prod-1", "production") == expected


@pytest.mark.parametrize(
    ("ref", "flux"),
    [
        ({"tag": "v1.2.0"}, {"tag": "v1.2.0"}),
        ({"semver": ">=1.4.0 <2.0.0"}, {"semver": ">=1.4.0 <2.0.0"}),
        ({"semver": "~1.4"}, {"semver": "~1.4"}),
        ({"semver": "^2.x || 3.1.0 - 3.2.0"}, {"semver": "^2.x || 3.1.0 - 3.2.0"}),
        ({"branch": "release/2026-11"}, {"branch": "release/2026-11"}),
    ],
)
def test_refs_become_the_flux_ref(ref: dict[str, str], flux: dict[str, str]) -> None:
    app = App.model_validate({**APP, "name": "shop", "repository": {**APP["repository"], "ref": ref}})
    assert app.repository.ref.flux() == flux


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"repository": {"url": "git@github.com:org/shop.git", "ref": {"tag": "v1"}}},
            'shop.yaml: repository.url: expected an ssh:// or https:// Git URL, got "git@github.com:org/shop.git"',
        ),
        (
            {"repository": {"url": "https://github.com/org/shop.git", "ref": {"semver": "newest"}}},
            'shop.yaml: repository.ref.semver: expected a semver range such as ">=1.4.0 <2.0.0" or "~1.4", '
            'got "newest"',
        ),
        (
            {"repository": {"url": "https://github.com/org/shop.git", "ref": {"tag": "v1..2"}}},
            "shop.yaml: repository.ref.tag: a Git ref name must not hold '..', '//' or '@{', got \"v1..2\"",
        ),
        (
            {"repository": {"url": "https://github.com/org/shop.git", "ref": {"branch": "my branch"}}},
            "shop.yaml: repository.ref.branch: expected a Git ref name",
        ),
        (
            {"repository": {"url": "https://github.com/org/shop.git", "ref": {"branch": "main", "tag": "v1"}}},
            "shop.yaml: repository.ref: set exactly one of tag, semver or branch, got tag, branch",
        ),
        (
            {"repository": {"url": "https://github.com/org/shop.git", "ref": {}}},
            "shop.yaml: repository.ref: set exactly one of tag, semver or branch, got none",
        ),
        ({"clusters": []}, "shop.yaml: (top level): name the clusters or environments the app runs on"),
        (
            {"namespace": "kube-system"},
            "shop.yaml: namespace: app 'shop' would run in namespace 'kube-system', a platform namespace",
        ),
        (
            {"namespace": "flux-system"},
            "shop.yaml: namespace: app 'shop' would run in namespace 'flux-system', a platform namespace",
        ),
        (
            {"team": "shop team"},
            'shop.yaml: team: expected a code owner such as @example-org/team or someone@example.com, got "shop team"',
        ),
        ({"path": "../other"}, "shop.yaml: path: "),
        (
            {"overlay": "region"},
            "shop.yaml: overlay: expected one of 'environment', 'cluster' or 'none', got \"region\"",
        ),
        ({"replicas": 3}, "shop.yaml: replicas: unknown field; allowed: "),
        ({"name": "other"}, "shop.yaml: name: not allowed here; the file name is the app's name"),
        (
            {"aws": {"tables": [{"name": "orders", "hashKey": "id", "rangeKey": "id"}]}},
            'shop.yaml: aws.tables[0]: rangeKey must differ from hashKey, both are "id"',
        ),
        (
            {"aws": {"queues": [{"name": "events"}, {"name": "events"}]}},
            "shop.yaml: aws.queues: resource names must be unique within the app, 'events' repeated",
        ),
        ({"aws": {"buckets": [{"name": "Exports"}]}}, "shop.yaml: aws.buckets[0].name: expected a DNS-1123 label"),
        (
            {"aws": {"queues": [{"name": "q", "visibilityTimeoutSeconds": 99999}]}},
            "aws.queues[0].visibilityTimeoutSeconds",
        ),
    ],
)
def test_bad_app_fields(write_fleet: FleetWriter, change: dict[str, Any], message: str) -> None:
    found = problems(write_fleet, {"shop": {**APP, **change}})
    assert any(message in line for line in found), found
    assert all(line.startswith("environments/apps/shop.yaml: ") for line in found), found


PLATFORM_HELP = "('crossplane-system', 'default', 'external-secrets', 'flux-system' or any 'kube-*')"


@pytest.mark.parametrize("name", ["kube-system", "external-secrets", "default", "flux-system", "kube-node-lease"])
def test_an_app_named_after_a_platform_namespace_is_refused_without_a_namespace(
    write_fleet: FleetWriter, name: str
) -> None:
    # GIVEN an app whose file name is a platform namespace, and no namespace: of its own
    # WHEN the definition is loaded
    found = problems(write_fleet, {name: APP})
    # THEN its namespace (its name) is refused, located at namespace:, saying what to do
    assert list(found) == [
        f"environments/apps/{name}.yaml: namespace: app {name!r} would run in namespace {name!r}, a platform "
        f"namespace {PLATFORM_HELP}; set namespace: to another name"
    ]


def test_an_app_named_after_a_platform_namespace_may_run_in_a_namespace_of_its_own(write_fleet: FleetWriter) -> None:
    # GIVEN an app named default that names its own namespace
    loaded = load(write_fleet, {"default": {**APP, "namespace": "default-site"}})
    # THEN it runs there
    assert [(p.app.name, p.app.target_namespace) for p in loaded.apps] == [("default", "default-site")]


def test_a_platform_namespace_given_as_namespace_is_refused(write_fleet: FleetWriter) -> None:
    # GIVEN an app that asks for the namespace holding the fleet's sealing key
    found = problems(write_fleet, {"shop": {**APP, "namespace": "kube-system"}})
    # THEN one located line refuses it
    assert list(found) == [
        "environments/apps/shop.yaml: namespace: app 'shop' would run in namespace 'kube-system', a platform "
        f"namespace {PLATFORM_HELP}; set namespace: to another name"
    ]


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


def test_aws_names_that_break_aws_rules_name_the_cluster_and_the_result(write_fleet: FleetWriter) -> None:
    long_name = "x" * 50
    found = problems(write_fleet, {"shop": {**APP, "aws": {"buckets": [{"name": long_name}]}}})
    assert list(found) == [
        f"environments/apps/shop.yaml: aws.buckets[0].name: on cluster 'staging-1' the AWS name would be "
        f"\"staging-1-shop-{long_name}\"; an S3 bucket name has 3 to 63 lower-case letters, digits, '-' and '.': "
        "shorten the name"
    ]


def test_a_fifo_queue_counts_its_suffix(write_fleet: FleetWriter) -> None:
    # 78 characters fit a standard queue; with .fifo they are 83, too many for a FIFO one
    project = write_fleet(envs={"staging": {"clusters": [{"name": "c" * 40, "region": "us-west-2"}]}})
    queue = {"name": "q" * 32}
    write_apps(project, {"shop": {**APP, "clusters": ["c" * 40], "aws": {"queues": [queue]}}})
    assert load_fleet(project).apps
    write_apps(project, {"shop": {**APP, "clusters": ["c" * 40], "aws": {"queues": [{**queue, "fifo": True}]}}})
    with pytest.raises(ConfigError, match="an SQS queue name has at most 80"):
        load_fleet(project)


def test_physical_names() -> None:
    app = App.model_validate({**APP, "name": "shop", "aws": {"queues": [{"name": "jobs", "fifo": True}]}})
    assert physical_name("prod-1", "shop", "orders") == "prod-1-shop-orders"
    assert queue_name("prod-1", "shop", app.aws.queues[0]) == "prod-1-shop-jobs.fifo"


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


# -- generated names: they must fit, and no two fields may make the same one ----------------------

TABLE = {"hashKey": "id"}


def test_two_apps_whose_resources_make_one_composite_name_are_refused_at_both(write_fleet: FleetWriter) -> None:
    # GIVEN app 'a' with table 'b-table-c' and app 'a-table-b' with table 'c', both on every cluster
    apps = {
        "a": {**APP, "environments": ["staging", "production"], "aws": {"tables": [{**TABLE, "name": "b-table-c"}]}},
        "a-table-b": {**APP, "environments": ["production", "staging"], "aws": {"tables": [{**TABLE, "name": "c"}]}},
    }

    # WHEN loaded THEN one line, at the second table, names the first one and the AppTable both would make
    assert problems(write_fleet, apps) == [
        "environments/apps/a-table-b.yaml: aws.tables[0].name: the hub would name this table's AppTable "
        "\"a-table-b-table-c\", and so would environments/apps/a.yaml: aws.tables[0].name (app 'a'), in the hub "
        "namespace of clusters 'prod-1', 'prod-2', 'staging-1'; rename one of the two tables"
    ]


@pytest.mark.parametrize(
    ("field", "kind", "word"), [("queues", "AppQueue", "queue"), ("buckets", "AppBucket", "bucket")]
)
def test_queues_and_buckets_may_not_make_one_composite_name(
    write_fleet: FleetWriter, field: str, kind: str, word: str
) -> None:
    apps = {
        "a": {**APP, "aws": {field: [{"name": f"b-{word}-c"}]}},
        f"a-{word}-b": {**APP, "aws": {field: [{"name": "c"}]}},
    }
    assert problems(write_fleet, apps) == [
        f"environments/apps/a-{word}-b.yaml: aws.{field}[0].name: the hub would name this {word}'s {kind} "
        f"\"a-{word}-b-{word}-c\", and so would environments/apps/a.yaml: aws.{field}[0].name (app 'a'), in the hub "
        f"namespace of cluster 'staging-1'; rename one of the two {word}s"
    ]


def test_two_apps_whose_tables_make_one_dynamodb_table_are_refused_at_both(write_fleet: FleetWriter) -> None:
    # GIVEN app 'a' with table 'b-c' and app 'a-b' with table 'c' on one cluster
    apps = {
        "a": {**APP, "aws": {"tables": [{**TABLE, "name": "b-c"}]}},
        "a-b": {**APP, "aws": {"tables": [{**TABLE, "name": "c"}]}},
    }
    # WHEN loaded THEN both would use DynamoDB table staging-1-a-b-c: one line names both
    assert problems(write_fleet, apps) == [
        "environments/apps/a-b.yaml: aws.tables[0].name: on cluster 'staging-1' (us-west-2) this table would be "
        "DynamoDB table \"staging-1-a-b-c\", and so would environments/apps/a.yaml: aws.tables[0].name (app 'a' on "
        "cluster 'staging-1'): DynamoDB table names are unique per account and region; rename one of the two tables"
    ]


def test_buckets_clash_across_clusters_and_regions_tables_only_within_a_region(write_fleet: FleetWriter) -> None:
    # GIVEN clusters 'prod' (us-east-1) and 'prod-1' (us-west-2), app '1-x' on the first, app 'x' on the second
    envs = {
        "production": {"clusters": [{"name": "prod", "region": "us-east-1"}, {"name": "prod-1", "region": "us-west-2"}]}
    }
    project = write_fleet(envs=envs)
    aws = {"tables": [{**TABLE, "name": "c"}], "buckets": [{"name": "c"}]}
    write_apps(
        project, {"1-x": {**APP, "clusters": ["prod"], "aws": aws}, "x": {**APP, "clusters": ["prod-1"], "aws": aws}}
    )

    # WHEN loaded THEN the buckets, named across AWS, clash; the tables, in two regions, do not
    with pytest.raises(ConfigError) as caught:
        load_fleet(project)
    assert list(caught.value.problems) == [
        "environments/apps/x.yaml: aws.buckets[0].name: on cluster 'prod-1' (us-west-2) this bucket would be "
        "S3 bucket \"prod-1-x-c\", and so would environments/apps/1-x.yaml: aws.buckets[0].name (app '1-x' on "
        "cluster 'prod'): S3 bucket names are unique across AWS; rename one of the two buckets"
    ]


SECRET_APP = {**APP, "repository": {**APP["repository"], "secretRef": "shop"}, "aws": {"path": "deploy/aws"}}


def test_an_apps_hub_credentials_may_not_take_the_file_of_its_own_aws_resources(write_fleet: FleetWriter) -> None:
    # GIVEN an app with aws.path whose Git credentials are named after the app itself
    assert problems(write_fleet, {"shop": SECRET_APP}) == [
        "environments/apps/shop.yaml: repository.secretRef: with aws.path the hub keeps its copy of these "
        "credentials as shop.yaml in its folder of the app resources of cluster 'staging-1', which is the file of "
        "this app's own AWS resources; seal the credentials under another name"
    ]


def test_an_apps_hub_credentials_may_not_take_the_file_of_another_apps_resources(write_fleet: FleetWriter) -> None:
    # GIVEN app 'cart' (with AWS resources) and app 'orders' whose credentials are named 'cart', on one cluster
    apps = {
        "cart": {**APP, "aws": {"queues": [{"name": "jobs"}]}},
        "orders": {**SECRET_APP, "repository": {**SECRET_APP["repository"], "secretRef": "cart"}},
    }
    assert problems(write_fleet, apps) == [
        "environments/apps/orders.yaml: repository.secretRef: with aws.path the hub keeps its copy of these "
        "credentials as cart.yaml in its folder of the app resources of cluster 'staging-1', which is the file of "
        "the AWS resources of environments/apps/cart.yaml (app 'cart'); seal the credentials under another name"
    ]


def test_apps_may_share_credentials_and_name_them_after_an_app_elsewhere(write_fleet: FleetWriter) -> None:
    # GIVEN two apps with aws.path sharing credentials 'git', and an app 'git' on another cluster
    shared = {**SECRET_APP, "repository": {**SECRET_APP["repository"], "secretRef": "git"}}
    apps = {"cart": shared, "orders": shared, "git": {**APP, "clusters": ["prod-1"], "aws": {"path": "aws"}}}
    assert [(p.app.name, p.cluster) for p in load(write_fleet, apps).apps] == [
        ("cart", "staging-1"),
        ("git", "prod-1"),
        ("orders", "staging-1"),
    ]


def test_an_app_may_not_be_named_kustomization(write_fleet: FleetWriter) -> None:
    assert problems(write_fleet, {"kustomization": APP}) == [
        'environments/apps/kustomization.yaml: app name "kustomization" is taken: the folders that hold each app\'s '
        "tenant folder (workloads repository) and its AWS resources (platform repository) have a kustomization.yaml "
        "of their own; rename the file"
    ]


def test_a_63_character_app_name_must_leave_room_for_its_composites(write_fleet: FleetWriter) -> None:
    # GIVEN a 63-character app (a DNS-1123 label) with a table
    name = "a" * 63
    found = problems(write_fleet, {name: {**APP, "aws": {"tables": [{**TABLE, "name": "orders"}]}}})
    # THEN its AppTable's name, too long for Crossplane's label, is located at the table
    assert found == [
        f"environments/apps/{name}.yaml: aws.tables[0].name: the hub names this table's AppTable "
        f'"{name}-table-orders" (76 characters), and Crossplane labels a composite with its name, which allows 63: '
        "shorten the table's name or the app's"
    ]


def test_an_app_with_aws_path_leaves_room_for_its_requests_kustomization(write_fleet: FleetWriter) -> None:
    assert load(write_fleet, {"a" * 57: {**APP, "aws": {"path": "aws"}}}).apps
    name = "a" * 58
    assert problems(write_fleet, {name: {**APP, "aws": {"path": "aws"}}}) == [
        f"environments/apps/{name}.yaml: aws.path: the hub applies the app's requests as Flux Kustomization "
        f'"{name}-cloud" (64 characters), and Flux labels what it applies with that name, which allows 63: with '
        "aws.path an app's name has at most 57 characters; rename the file"
    ]


def test_a_64_character_app_name_and_a_70_character_namespace_are_located(write_fleet: FleetWriter) -> None:
    namespace = "n" * 70
    found = problems(write_fleet, {"a" * 64: APP, "shop": {**APP, "namespace": namespace}})
    assert found == [
        f'environments/apps/{"a" * 64}.yaml: app name "{"a" * 64}" must be a DNS-1123 label of at most 63 characters '
        "(it has 64) (lower-case letters, digits and '-'); rename the file",
        f'environments/apps/shop.yaml: namespace: expected at most 63 characters, got 70: "{"n" * 70}"',
    ]


def test_the_config_layer_names_the_hubs_objects_as_the_cloud_chart_does() -> None:
    from fluxplane.charts.cloud import request_account

    assert requests_name("shop") == request_account("shop") == "shop-cloud"
    assert composite_name("shop", "table", "orders") == "shop-table-orders"
