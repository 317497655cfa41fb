"""An app's databases (``aws.databases``): the definition's rules, the AppDatabase the hub writes for each cluster the
app runs on (hub and spoke mode alike), the providers it needs, and the guard over a live database."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from fluxplane.cli import EXIT_BAD_INPUT, main
from fluxplane.config.apps import Database
from fluxplane.errors import ConfigError
from fluxplane.synth import load_plan, render_plan
from fluxplane.synth.guard import guard
from tests.conftest import MINIMAL_BASE, MINIMAL_ENV, FleetWriter

CLOUD = "platform/cloud/staging-1/shop.yaml"
CHAIN = "platform/spokes/staging-1/bootstrap.yaml"


def base(
    *, services: tuple[str, ...] = ("ec2", "eks", "iam", "rds", "dynamodb"), kubernetes: bool = True
) -> dict[str, Any]:
    fleet = copy.deepcopy(MINIMAL_BASE)
    fleet["management"]["packs"] = {
        **fleet["management"]["packs"],
        "app-compositions": {},
        "crossplane-providers": {
            "roleArn": "arn:aws:iam::111122223333:role/crossplane-providers",
            "services": list(services),
            "kubernetes": kubernetes,
        },
    }
    return fleet


def write_app(root: Path, name: str = "shop", **aws: Any) -> Path:
    app = {
        "repository": {"url": f"https://example.com/{name}.git", "secretRef": None, "ref": {"branch": "main"}},
        "clusters": ["staging-1"],
        "namespace": "shop-ns",
        "aws": aws or {"databases": [{"name": "main", "engine": "postgres", "engineVersion": "17"}]},
    }
    (root / "environments" / "apps").mkdir(parents=True, exist_ok=True)
    (root / "environments" / "apps" / f"{name}.yaml").write_text(yaml.safe_dump(app))
    return root


def documents(files: dict[str, str], path: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(files[path]) if doc]


def problems(root: Path) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        load_plan(root)
    return list(exc.value.problems)


@pytest.fixture
def hub(write_fleet: FleetWriter) -> Path:
    return write_app(write_fleet(base=base()))


# -- the definition -------------------------------------------------------------------------------------


def test_a_database_needs_an_engine_and_its_version_and_defaults_small_private_and_protected() -> None:
    database = Database.model_validate({"name": "orders-main", "engine": "mysql", "engineVersion": "8.4"})
    assert database.instance_class == "db.t4g.micro" and database.allocated_storage == 20
    assert database.max_allocated_storage is None and database.multi_az is False
    assert database.backup_retention_days == 7 and database.deletion_protection is True
    assert database.username == "dbadmin"
    # THEN the database inside is named after the entry, as the engines accept it
    assert database.db_name == "orders_main"
    with pytest.raises(ValidationError, match="engine"):
        Database.model_validate({"name": "main", "engineVersion": "17"})
    with pytest.raises(ValidationError, match="engineVersion"):
        Database.model_validate({"name": "main", "engine": "postgres"})


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        # YAML reads 17 and 8.4 as numbers: the version must reach RDS as written
        ({"engineVersion": 17}, 'as a quoted string such as "17" or "8.4", got the number 17'),
        ({"engineVersion": 8.4}, "got the number 8.4"),
        ({"engine": "oracle"}, "'postgres' or 'mysql'"),
        ({"maxAllocatedStorage": 21, "allocatedStorage": 20}, "greater than or equal to 22"),
        ({"maxAllocatedStorage": 120, "allocatedStorage": 110}, "at least 10% above allocatedStorage (110), got 120"),
        ({"username": "rdsadmin"}, "a user RDS keeps for itself"),
        ({"username": "Admin"}, "should match pattern"),
        ({"name": "9lives"}, "set databaseName"),
        ({"instanceClass": "t4g.micro"}, "should match pattern"),
        ({"backupRetentionDays": 36}, "less than or equal to 35"),
    ],
)
def test_what_rds_or_the_engines_refuse_is_refused(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Database.model_validate({"name": "main", "engine": "postgres", "engineVersion": "17", **entry})


def test_a_database_name_set_apart_from_the_entrys_is_kept() -> None:
    database = Database.model_validate(
        {"name": "9lives", "engine": "postgres", "engineVersion": "17", "databaseName": "lives"}
    )
    assert database.db_name == "lives"


def test_an_unquoted_version_is_reported_with_the_file_and_field(write_fleet: FleetWriter) -> None:
    root = write_app(write_fleet(base=base()), databases=[{"name": "main", "engine": "postgres", "engineVersion": 17}])
    (line,) = problems(root)
    assert line.startswith("environments/apps/shop.yaml: aws.databases[0].engineVersion:")
    assert "quoted" in line


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("a--b", "no two hyphens in a row: rename the database, or the app"),
        ("x" * 60, "at most 63 characters: shorten the name"),
    ],
)
def test_an_identifier_rds_refuses_is_reported_at_the_databases_name(
    write_fleet: FleetWriter, name: str, rule: str
) -> None:
    root = write_app(write_fleet(base=base()), databases=[{"name": name, "engine": "postgres", "engineVersion": "17"}])
    assert any(
        line.startswith("environments/apps/shop.yaml: aws.databases[0].name: on cluster 'staging-1' the AWS name")
        and rule in line
        for line in problems(root)
    ), problems(root)


def test_two_apps_whose_databases_would_share_an_identifier_are_refused(write_fleet: FleetWriter) -> None:
    root = write_fleet(base=base())
    write_app(root, "a", databases=[{"name": "b-c", "engine": "postgres", "engineVersion": "17"}])
    app = yaml.safe_load((root / "environments/apps/a.yaml").read_text())
    app["namespace"] = "a-b"
    app["aws"]["databases"][0]["name"] = "c"
    (root / "environments/apps/a-b.yaml").write_text(yaml.safe_dump(app))
    assert any(
        'this database would be RDS DB instance "staging-1-a-b-c"' in line
        and "identifiers are unique per account and region; rename one of the two databases" in line
        for line in problems(root)
    ), problems(root)


# -- what synth writes ------------------------------------------------------------------------------------


def test_the_hub_writes_an_app_database_next_to_the_clusters_eks_cluster(hub: Path) -> None:
    files = render_plan(load_plan(hub))
    (database,) = [doc for doc in documents(files, CLOUD) if doc["kind"] == "AppDatabase"]
    assert database["metadata"] == {
        "name": "shop-database-main",
        "namespace": "staging-1",
        "labels": {"fluxplane.io/app": "shop", "fluxplane.io/cluster": "staging-1"},
        "annotations": {"fluxplane.io/applied-by": "staging-1/app-resources"},
    }
    spec = database["spec"]
    cluster = next(
        doc for doc in documents(files, "platform/spokes/staging-1/cluster/cluster.yaml") if doc["kind"] == "EKSCluster"
    )
    # THEN it sits in the cluster's VPC, is named <cluster>-<app>-<name>, and its Secret goes to the app's namespace
    assert spec["clusterName"] == cluster["metadata"]["name"] == "staging-1"
    assert spec["vpcCidr"] == cluster["spec"]["network"]["vpcCidr"]
    assert spec["identifier"] == "staging-1-shop-main"
    assert (spec["app"], spec["appNamespace"]) == ("shop", "shop-ns")
    assert (spec["engine"], spec["engineVersion"], spec["databaseName"]) == ("postgres", "17", "main")
    # AND the version reaches the API server as a string (YAML 1.2 reads 17 as a number)
    assert "engineVersion: '17'" in files[CLOUD]


def test_the_clusters_chain_waits_for_the_database_longer(hub: Path) -> None:
    files = render_plan(load_plan(hub))
    (resources,) = [
        doc
        for doc in documents(files, CHAIN)
        if doc["kind"] == "Kustomization" and doc["metadata"]["name"] == "app-resources"
    ]
    assert resources["spec"]["timeout"] == "45m"
    assert {"kind": "AppDatabase", "name": "shop-database-main"}.items() <= next(
        check for check in resources["spec"]["healthChecks"] if check["kind"] == "AppDatabase"
    ).items()


def test_a_cluster_that_makes_its_apps_resources_still_gets_its_databases_from_the_hub(
    write_fleet: FleetWriter,
) -> None:
    env = {"clusters": [{**MINIMAL_ENV["clusters"][0], "appResources": "spoke"}]}
    root = write_app(
        write_fleet(base=base(), envs={"staging": env}),
        queues=[{"name": "events"}],
        databases=[{"name": "main", "engine": "mysql", "engineVersion": "8.4"}],
    )
    files = render_plan(load_plan(root))
    hub_kinds = sorted(doc["kind"] for doc in documents(files, CLOUD))
    assert hub_kinds == ["AppDatabase", "AppIdentity"]
    on_cluster = documents(files, "workloads/clusters/staging-1/app-resources/shop.yaml")
    assert [doc["kind"] for doc in on_cluster] == ["AppQueue"]
    # AND the tenant may not make databases itself
    tenant = documents(files, "workloads/clusters/staging-1/shop/tenant.yaml")
    (role,) = [doc for doc in tenant if doc["kind"] == "Role"]
    assert not any("appdatabases" in rule.get("resources", ()) for rule in role["rules"])


def test_the_hub_needs_the_rds_provider_and_provider_kubernetes(write_fleet: FleetWriter) -> None:
    root = write_app(write_fleet(base=base(services=("ec2", "eks", "iam", "dynamodb"))))
    assert any(
        "crossplane-providers.services: the apps' AWS resources need the provider family members rds" in line
        for line in problems(root)
    )
    root = write_app(write_fleet(base=base(kubernetes=False)))
    assert any(
        "crossplane-providers.kubernetes: apps shop have databases" in line and "kubernetes: true" in line
        for line in problems(root)
    )


# -- day two ----------------------------------------------------------------------------------------------


def test_removing_or_replacing_a_database_needs_the_users_word(hub: Path) -> None:
    before = render_plan(load_plan(hub))
    write_app(hub, databases=[{"name": "main", "engine": "mysql", "engineVersion": "8.4"}])
    changed = render_plan(load_plan(hub))
    dist = hub / "dist"
    for path, text in before.items():
        (dist / path).parent.mkdir(parents=True, exist_ok=True)
        (dist / path).write_text(text)
    (line,) = [line for line in guard(changed, dist, hub="hub") if "AppDatabase" in line]
    assert "AppDatabase staging-1/shop-database-main: spec.engine changes from postgres to mysql" in line
    assert "--replace 'AppDatabase/staging-1/shop-database-main'" in line
    write_app(hub, tables=[{"name": "t", "hashKey": "id"}])
    (line,) = [line for line in guard(render_plan(load_plan(hub)), dist, hub="hub") if "AppDatabase" in line]
    assert "removed, so Crossplane deletes the RDS database, once its deletionProtection is off" in line
    assert "--delete 'AppDatabase/staging-1/shop-database-main'" in line


def test_synth_refuses_a_removed_database_and_writes_nothing(hub: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(hub), "synth"]) == 0
    write_app(hub, tables=[{"name": "t", "hashKey": "id"}])
    before = (hub / "dist" / CLOUD).read_text()
    capsys.readouterr()
    assert main(["--root", str(hub), "synth"]) == EXIT_BAD_INPUT
    assert "AppDatabase staging-1/shop-database-main: removed" in capsys.readouterr().err
    assert (hub / "dist" / CLOUD).read_text() == before
