"""Tests for fluxplane.review.plan.report: the plan as text, Markdown and JSON."""

from __future__ import annotations

import json

from fluxplane.review.plan.model import KubernetesChange, Plan, PlanBase, ResourceChange, ordered
from fluxplane.review.plan.report import SCHEMA, markdown, summary, text, to_json

BASE = PlanBase("main", "0123456789abcdef0123", "committed")
ENGINE = "engine changed from postgres to mysql"


def plan() -> Plan:
    instance = ResourceChange(
        "replace",
        "444455556666",
        "us-east-1",
        "hub",
        "rds.aws.m.upbound.io/v1beta1",
        "Instance",
        "RDS instance",
        "production-use1-orders-main",
        "AppDatabase production-use1/orders-database-main: instance",
        ("engine", "port"),
        (ENGINE,),
        data=True,
    )
    rule = ResourceChange(
        "update",
        "444455556666",
        "us-east-1",
        "hub",
        "ec2.aws.m.upbound.io/v1beta1",
        "SecurityGroupIngressRule",
        "security group ingress rule",
        "orders-database-main/ingress",
        "AppDatabase production-use1/orders-database-main: ingress",
        ("fromPort",),
    )
    upgrade = KubernetesChange(
        "update",
        "staging-usw2",
        "platform",
        "helm.toolkit.fluxcd.io/v2",
        "HelmRelease",
        "flux-system",
        "metrics-server",
        "upgrades chart metrics-server from 3.13.0 to 3.13.1",
    )
    return Plan(BASE, [instance, rule], [upgrade], scope="1 changed files")


def test_text_flags_data_bearing_first_then_groups_then_the_summary() -> None:
    assert text(plan()).splitlines() == [
        "fluxplane plan: main (0123456789ab) -> working tree",
        "base: dist/ as committed at main",
        "read: 1 changed files",
        "",
        "data-bearing resources replaced or deleted (1):",
        "  ! replaces RDS instance production-use1-orders-main in account 444455556666 (us-east-1, cluster hub): "
        + ENGINE,
        "",
        "AWS account 444455556666, region us-east-1, cluster hub:",
        "  -/+ replace RDS instance production-use1-orders-main",
        "                AppDatabase production-use1/orders-database-main: instance",
        "                changes engine, port",
        f"                {ENGINE}",
        "  ~   update  security group ingress rule orders-database-main/ingress",
        "                AppDatabase production-use1/orders-database-main: ingress",
        "                changes fromPort",
        "",
        "Kubernetes, cluster staging-usw2:",
        "  ~   update    HelmRelease flux-system/metrics-server (platform): upgrades chart metrics-server from 3.13.0 "
        "to 3.13.1",
        "",
        summary(plan()),
    ]
    assert summary(plan()) == (
        "Plan: AWS 0 to create, 1 to update in place, 1 to replace, 0 to delete (1 data-bearing replaced or deleted); "
        "Kubernetes 1 releases or packages installed or upgraded, 0 destructive changes."
    )


def test_an_empty_plan_says_so() -> None:
    assert text(Plan(BASE)).splitlines()[-2] == (
        "No AWS resource changes, and no Kubernetes release, package or destructive change."
    )
    assert "No AWS resource changes" in markdown(Plan(BASE))


def test_markdown_is_a_comment_with_a_table_per_account_region_and_cluster() -> None:
    out = markdown(plan())
    lines = out.splitlines()
    assert lines[0] == "## fluxplane plan: `main` (0123456789ab) → working tree"
    assert "### :warning: Data-bearing resources replaced or deleted" in lines
    assert "### AWS account 444455556666, region us-east-1, cluster hub" in lines
    assert (
        "| -/+ replace | RDS instance `production-use1-orders-main` | "
        "`AppDatabase production-use1/orders-database-main: instance` | engine, port | " + ENGINE + " |"
    ) in lines
    assert lines[-1] == f"**{summary(plan())}**"
    # AND as a section of another comment its headings go one level down
    assert markdown(plan(), heading="###").startswith("### fluxplane plan")


def test_markdown_leaves_rows_out_to_fit_but_keeps_the_headline_and_summary() -> None:
    big = plan()
    big.resources = big.resources * 200
    out = markdown(big, limit=4000)
    assert len(out) <= 4000
    assert "more lines left out to fit a comment: run `fluxplane plan` to see all._" in out
    assert out.rstrip().endswith(f"**{summary(big)}**")


def test_json_has_a_stable_schema() -> None:
    document = json.loads(to_json(plan()))
    assert document["schema"] == SCHEMA
    assert document["base"] == {"ref": "main", "commit": "0123456789abcdef0123", "source": "committed"}
    assert document["summary"] == {
        "create": 0,
        "update": 1,
        "replace": 1,
        "delete": 0,
        "forget": 0,
        "manage": 0,
        "import": 0,
        "dataBearing": 1,
        "kubernetes": 1,
        "destructive": 0,
    }
    assert document["resources"][0] == {
        "action": "replace",
        "account": "444455556666",
        "region": "us-east-1",
        "cluster": "hub",
        "apiVersion": "rds.aws.m.upbound.io/v1beta1",
        "kind": "Instance",
        "noun": "RDS instance",
        "name": "production-use1-orders-main",
        "source": "AppDatabase production-use1/orders-database-main: instance",
        "fields": ["engine", "port"],
        "reasons": [ENGINE],
        "dataBearing": True,
    }
    assert document["kubernetes"][0]["destructive"] is False
    assert document["notes"] == []


def test_resources_only_read_or_that_start_to_be_managed_are_said_so() -> None:
    # GIVEN an existing cluster's VPC imported read only, and its node group Crossplane starts to manage
    def change(action: str, kind: str, fields: tuple[str, ...] = ()) -> ResourceChange:
        return ResourceChange(
            action, "444455556666", "eu-west-1", "hub", "ec2.aws.m.upbound.io/v1beta1", kind, kind, "x", "s", fields
        )

    read = Plan(BASE, ordered([change("import", "VPC"), change("manage", "NodeGroup", ("managementPolicies",))]))
    # THEN the summary counts them apart from what is made, the lines mark them (what starts to be written before
    # what is only read), and JSON counts them
    assert summary(read) == (
        "Plan: AWS 0 to create, 0 to update in place, 0 to replace, 0 to delete, 1 to start managing, 1 to read "
        "without change (0 data-bearing replaced or deleted); Kubernetes 0 releases or packages installed or "
        "upgraded, 0 destructive changes."
    )
    lines = text(read).splitlines()
    assert "  !   manage  NodeGroup x" in lines and "  =   import  VPC x" in lines
    assert lines.index("  !   manage  NodeGroup x") < lines.index("  =   import  VPC x")
    assert "                changes managementPolicies" in lines
    assert json.loads(to_json(read))["summary"]["import"] == 1
    assert read.gated(["manage", "create"]) == ["manage"]
