"""``fluxplane plan`` end to end on the example fleet in a Git repository of its own.

The base commit is the example with its dist/; each test changes the definition in the working tree, as a pull
request would, and reads the plan against it: an RDS engine change replaces the instance (data-bearing, first), an
instance class changes in place, an app's table removed is deleted (and synth refuses it without --delete), a
cluster added only creates, and a pack's version bump upgrades exactly the clusters that run it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from fluxplane.cli import EXIT_GATED, main
from tests.support.files import read_tree
from tests.support.git import git

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed: plan builds with it"),
]

ORDERS = "environments/apps/orders.yaml"


@pytest.fixture
def fleet(example_project: Path) -> Path:
    """The example, environments/ and dist/, committed."""
    git(example_project, "init", "-q")
    git(example_project, "add", "environments", "dist")
    git(example_project, "commit", "-qm", "example")
    return example_project


def edit(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new, 1))


def plan(root: Path, capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> str:
    dist = read_tree(root / "dist")
    capsys.readouterr()
    assert main(["--root", str(root), "plan", *args]) == code
    # nothing is written to dist/
    assert read_tree(root / "dist") == dist
    return capsys.readouterr().out


def plan_json(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(plan(root, capsys, "--format", "json"))
    assert document["base"]["source"] == "committed"
    return document


def actions(document: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(item["action"], item["noun"], item["name"], item["cluster"]) for item in document["resources"]]


def test_an_engine_change_replaces_the_database_first_of_all(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(fleet, ORDERS, "engine: postgres", "engine: mysql")
    document = plan_json(fleet, capsys)
    # THEN the three clusters' RDS instances are replaced, in the production account, and they come first
    replaced = [item for item in document["resources"] if item["action"] == "replace"]
    assert [(item["name"], item["account"], item["region"]) for item in replaced] == [
        ("production-euw1-orders-main", "444455556666", "eu-west-1"),
        ("production-use1-orders-main", "444455556666", "us-east-1"),
        ("production-usw2-orders-main", "444455556666", "us-west-2"),
    ]
    assert document["resources"][:3] == replaced
    assert all(item["dataBearing"] and item["kind"] == "Instance" for item in replaced)
    assert replaced[1]["reasons"] == ["engine changed from postgres to mysql"]
    assert replaced[1]["source"] == "AppDatabase production-use1/orders-database-main: instance"
    # AND the security groups' rules follow the engine's port in place
    assert {(item["action"], item["kind"]) for item in document["resources"][3:]} == {
        ("update", "SecurityGroupIngressRule")
    }
    assert document["summary"]["dataBearing"] == 3
    # AND the text says it on its first lines, and --fail-on data stops a pipeline
    out = plan(fleet, capsys, "--fail-on", "data", code=EXIT_GATED)
    lines = out.splitlines()
    assert lines[lines.index("data-bearing resources replaced or deleted (3):") + 2] == (
        "  ! replaces RDS instance production-use1-orders-main in account 444455556666 (us-east-1, cluster hub): "
        "engine changed from postgres to mysql"
    )


def test_an_instance_class_changes_in_place(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(fleet, ORDERS, '      engineVersion: "17"\n', '      engineVersion: "17"\n      instanceClass: db.t4g.small\n')
    document = plan_json(fleet, capsys)
    assert actions(document) == [
        ("update", "RDS instance", "production-euw1-orders-main", "hub"),
        ("update", "RDS instance", "production-use1-orders-main", "hub"),
        ("update", "RDS instance", "production-usw2-orders-main", "hub"),
    ]
    assert [item["fields"] for item in document["resources"]] == [["instanceClass"]] * 3
    assert plan(fleet, capsys, "--fail-on", "replace,delete,data").endswith("0 destructive changes.\n")


def test_an_apps_table_removed_is_deleted_and_synth_refuses_it(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(fleet, ORDERS, "  tables:\n    - name: orders\n      hashKey: orderId\n", "")
    # GIVEN synth refuses to write the deletion without --delete
    assert main(["--root", str(fleet), "synth"]) == 2
    assert "--delete 'AppTable/" in capsys.readouterr().err
    # THEN the plan deletes the three DynamoDB tables, data-bearing: the hub's for production-euw1 and
    # production-use1, and the one production-usw2 makes itself, in the same account
    document = plan_json(fleet, capsys)
    tables = [item for item in document["resources"] if item["kind"] == "Table"]
    assert [(item["action"], item["name"], item["cluster"], item["account"]) for item in tables] == [
        ("delete", "production-euw1-orders-orders", "hub", "444455556666"),
        ("delete", "production-use1-orders-orders", "hub", "444455556666"),
        ("delete", "production-usw2-orders-orders", "production-usw2", "444455556666"),
    ]
    assert all(item["dataBearing"] and item["reasons"] == ["destroys the table and its items"] for item in tables)
    assert {item["action"] for item in document["resources"]} == {"delete"}
    plan(fleet, capsys, "--fail-on", "delete", code=EXIT_GATED)


def test_a_cluster_added_only_creates(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(fleet)
    assert main(["--root", root, "new-cluster", "staging-use2", "--env", "staging", "--region", "us-east-2"]) == 0
    sealed = ["--cluster", "staging-use2", "--namespace", "flux-system", "--name", "flux-system"]
    assert (
        main(["--root", root, "seal", *sealed, "--from-literal", "identity=x", "--from-literal", "known_hosts=y"]) == 0
    )
    document = plan_json(fleet, capsys)
    # THEN every AWS resource is new: the cluster, its network, its node group, its add-ons' roles
    assert {item["action"] for item in document["resources"]} == {"create"}
    made = {(item["noun"], item["name"]) for item in document["resources"]}
    assert {("EKS cluster", "staging-use2"), ("VPC", "staging-use2/vpc")} <= made
    assert {item["region"] for item in document["resources"] if item["noun"] == "EKS cluster"} == {"us-east-2"}
    # AND the new cluster's releases are installed; nothing is destructive
    assert {item["action"] for item in document["kubernetes"]} == {"create"}
    assert document["summary"]["destructive"] == 0
    plan(fleet, capsys, "--fail-on", "destructive")


def test_a_pack_version_bump_upgrades_exactly_the_clusters_that_run_it(
    fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN production's Prometheus pack on another chart version (staging keeps the default)
    edit(
        fleet,
        "environments/production.yaml",
        "    workspaceRegion: us-west-2\n",
        "    workspaceRegion: us-west-2\n    version: 91.6.0\n",
    )
    document = plan_json(fleet, capsys)
    # THEN every production cluster upgrades its release in place, and nothing else changes
    assert document["resources"] == []
    assert [(item["action"], item["cluster"], item["kind"], item["name"]) for item in document["kubernetes"]] == [
        ("update", "production-euc1", "HelmRelease", "kube-prometheus-stack"),
        ("update", "production-euw1", "HelmRelease", "kube-prometheus-stack"),
        ("update", "production-use1", "HelmRelease", "kube-prometheus-stack"),
        ("update", "production-usw2", "HelmRelease", "kube-prometheus-stack"),
    ]
    assert document["kubernetes"][0]["reason"] == "upgrades chart kube-prometheus-stack from 91.5.0 to 91.6.0"
    out = plan(fleet, capsys, "--fail-on", "update", code=EXIT_GATED)
    assert "Kubernetes 4 releases or packages installed or upgraded, 0 destructive changes." in out


def test_an_existing_cluster_added_reads_its_aws_resources_and_makes_none(
    fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN another cluster Terraform made, declared observed: a copy of production-euw1 under other ids
    text = (fleet / "environments/production.yaml").read_text()
    entry = text[text.index("  - name: production-euw1\n") :]
    ids = {"production-euw1": "production-euw2", "10.65.": "10.66.", "vpc-0e1f": "vpc-0f1f", "subnet-0": "subnet-1"}
    for old, new in ids.items():
        entry = entry.replace(old, new)
    (fleet / "environments/production.yaml").write_text(text + entry.replace("eu-west-1", "eu-west-2"))
    shutil.copytree(fleet / "environments/secrets/production-euw1", fleet / "environments/secrets/production-euw2")
    document = plan_json(fleet, capsys)
    # THEN its VPC, subnets, EKS cluster and node group are read, never created
    cluster = [item for item in document["resources"] if item["source"].startswith("EKSCluster production-euw2/")]
    assert {(item["noun"], item["action"]) for item in cluster if item["noun"] != "EKS cluster credentials"} == {
        ("VPC", "import"),
        ("subnet", "import"),
        ("EKS cluster", "import"),
        ("EKS node group", "import"),
    }
    assert sorted(item["name"] for item in cluster if item["noun"] == "subnet") == [
        "subnet-1a1b2c3d4e5f60718",
        "subnet-1b2c3d4e5f6071829",
        "subnet-1c3d4e5f607182930",
    ]
    assert document["summary"]["import"] == 6


def test_moving_an_observed_cluster_to_full_management_shows_what_it_starts_to_manage(
    fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example's observed production-euw1 moved to full management
    edit(fleet, "environments/production.yaml", "      mode: observed\n", "      mode: managed\n")
    document = plan_json(fleet, capsys)
    # THEN the plan lists each imported resource Crossplane starts to manage, and makes, replaces or deletes nothing
    managed = {(item["noun"], item["name"]) for item in document["resources"] if item["action"] == "manage"}
    assert managed == {
        ("VPC", "vpc-0e1f2a3b4c5d60718"),
        ("subnet", "subnet-0a1b2c3d4e5f60718"),
        ("subnet", "subnet-0b2c3d4e5f6071829"),
        ("subnet", "subnet-0c3d4e5f607182930"),
        ("EKS cluster", "production-euw1"),
        ("EKS node group", "general"),
    }
    assert {item["action"] for item in document["resources"]} == {"manage"}
    # AND a pipeline can stop on it, while synth asks for --manage
    plan(fleet, capsys, "--fail-on", "manage", code=EXIT_GATED)
    assert main(["--root", str(fleet), "synth"]) == 2


def test_switching_a_cluster_into_auto_mode_shows_what_changes_in_place_goes_and_comes(
    fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example's staging-usw2 switched into EKS Auto Mode
    auto_mode = "  - name: staging-usw2\n    autoMode: {enabled: true}\n"
    edit(fleet, "environments/staging.yaml", "  - name: staging-usw2\n", auto_mode)
    document = plan_json(fleet, capsys)
    mine = [item for item in document["resources"] if item["source"].startswith("EKSCluster staging-usw2/")]
    by_action = {
        action: sorted(item["source"].rsplit(": ", 1)[1] for item in mine if item["action"] == action)
        for action in ("update", "delete", "create")
    }
    # THEN the EKS cluster changes in place, its Auto Mode capabilities switched on, and says what that does
    (cluster,) = [item for item in mine if item["noun"] == "EKS cluster"]
    assert cluster["action"] == "update"
    assert {"computeConfig", "storageConfig", "kubernetesNetworkConfig"} <= set(cluster["fields"])
    assert cluster["reasons"][0].startswith("switches EKS Auto Mode on in place: EKS launches the cluster's nodes")
    # AND its node group and Pod Identity Agent add-on go, as do the node role's policies Auto Mode's replace
    assert by_action["delete"] == [
        "node-group-0",
        "pod-identity-agent",
        "role-node-ec2containerregistryreadonly",
        "role-node-eks-cni-policy",
        "role-node-eksworkernodepolicy",
    ]
    (group,) = [item for item in mine if item["noun"] == "EKS node group"]
    assert group["reasons"] == ["destroys its nodes, and the pods on them"]
    # AND the roles gain Auto Mode's policies
    assert by_action["create"] == [
        "role-cluster-eksblockstoragepolicy",
        "role-cluster-ekscomputepolicy",
        "role-cluster-eksloadbalancingpolicy",
        "role-cluster-eksnetworkingpolicy",
        "role-node-ec2containerregistrypullonly",
        "role-node-eksworkernodeminimalpolicy",
    ]
    # AND the IAM roles of the add-ons Auto Mode stands in for are deleted with their Pod Identity associations
    identities = {
        item["source"].split(": ")[0]
        for item in document["resources"]
        if item["source"].startswith("AddonIdentity staging-usw2/")
    }
    assert {item["action"] for item in document["resources"] if item["source"].startswith("AddonIdentity")} == {
        "delete"
    }
    assert identities == {
        "AddonIdentity staging-usw2/aws-ebs-csi-driver-controller",
        "AddonIdentity staging-usw2/aws-load-balancer-controller-controller",
        "AddonIdentity staging-usw2/karpenter-controller",
    }
    # AND on the cluster, the add-ons themselves are uninstalled
    uninstalled = {
        item["name"]
        for item in document["kubernetes"]
        if item["cluster"] == "staging-usw2" and item["kind"] == "HelmRelease" and item["action"] == "delete"
    }
    assert uninstalled == {"karpenter", "aws-ebs-csi-driver", "aws-load-balancer-controller"}
