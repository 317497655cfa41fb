"""Tests for fluxplane.config.apps.names: the names an app's resources take, and clashes between them."""

from __future__ import annotations

import pytest

from fluxplane.config.apps import App, composite_name, physical_name, queue_name, requests_name
from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError
from tests.conftest import FleetWriter
from tests.support.config import APP, load, problems, write_apps


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


def test_the_config_layer_names_the_hubs_objects_as_the_cloud_chart_does() -> None:
    from fluxplane.charts.cloud import request_account

    assert requests_name("shop") == request_account("shop") == "shop-cloud"
    assert composite_name("shop", "table", "orders") == "shop-table-orders"
