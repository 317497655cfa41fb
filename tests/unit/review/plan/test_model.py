"""Tests for fluxplane.review.plan.model: the order of a plan and the gates of --fail-on."""

from __future__ import annotations

from fluxplane.review.plan.model import KubernetesChange, Plan, PlanBase, ResourceChange, ordered

BASE = PlanBase("HEAD", "0" * 40, "committed")


def resource(action: str, name: str, data: bool = False, account: str = "1") -> ResourceChange:
    return ResourceChange(action, account, "us-east-1", "hub", "x/v1", "K", "thing", name, "src", data=data)


def release(action: str) -> KubernetesChange:
    return KubernetesChange(action, "c1", "platform", "helm.toolkit.fluxcd.io/v2", "HelmRelease", "ns", "r", "why")


def test_data_bearing_replacements_and_deletions_come_first() -> None:
    changes = [
        resource("create", "a"),
        resource("update", "b", data=True),
        resource("delete", "c", data=True, account="2"),
        resource("delete", "d"),
    ]
    assert [change.name for change in ordered(changes)] == ["c", "d", "b", "a"]


def test_gates_name_actions_data_and_destruction() -> None:
    plan = Plan(BASE, [resource("update", "a", data=True)], [release("update")])
    assert plan.gated(["create", "update", "replace", "delete", "data", "destructive"]) == ["update"]
    plan = Plan(BASE, [resource("replace", "a", data=True)])
    assert plan.gated(["replace", "data", "destructive", "delete"]) == ["replace", "data", "destructive"]
    # AND a destructive Kubernetes change counts as the action it is, and as destructive
    plan = Plan(BASE, [], [release("reinstall")])
    assert plan.gated(["replace", "destructive", "data"]) == ["replace", "destructive"]
    assert Plan(BASE, [], [release("delete")]).gated(["delete"]) == ["delete"]
    assert Plan(BASE).gated(["create", "destructive"]) == []
