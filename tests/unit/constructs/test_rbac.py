"""RBAC (rbac.authorization.k8s.io/v1): Role, ClusterRole, RoleBinding, ClusterRoleBinding."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.constructs import (
    ClusterRole,
    ClusterRoleBinding,
    PolicyRule,
    Role,
    RoleBinding,
    RoleRef,
    Root,
    Subject,
)
from fluxplane.errors import ConstructError

API = "rbac.authorization.k8s.io/v1"
READ_PODS: dict[str, Any] = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
SA = {"kind": "ServiceAccount", "name": "podinfo", "namespace": "apps"}


# Rules


def test_role_renders_rules_at_top_level_in_upstream_names() -> None:
    # GIVEN / WHEN a Role with one rule, given with Python names
    role = Role(
        Root(),
        "role",
        {
            "name": "pod-reader",
            "namespace": "apps",
            "labels": {"app": "podinfo"},
            "rules": [{"api_groups": [""], "resources": ["pods"], "resource_names": ["web"], "verbs": ["get"]}],
        },
    )

    # THEN rules follow metadata, with upstream names and no spec
    assert role.to_dict() == {
        "apiVersion": API,
        "kind": "Role",
        "metadata": {"name": "pod-reader", "namespace": "apps", "labels": {"app": "podinfo"}},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "resourceNames": ["web"], "verbs": ["get"]}],
    }


def test_cluster_role_is_cluster_scoped() -> None:
    # GIVEN / WHEN a ClusterRole
    doc = ClusterRole(Root(), "cr", {"name": "pod-reader", "rules": [READ_PODS]}).to_dict()

    # THEN it has no namespace
    assert doc == {
        "apiVersion": API,
        "kind": "ClusterRole",
        "metadata": {"name": "pod-reader"},
        "rules": [READ_PODS],
    }


def test_non_resource_urls_use_the_kubernetes_spelling() -> None:
    # GIVEN / WHEN a rule on non-resource URLs
    rule = PolicyRule(non_resource_urls=("/healthz", "/metrics"), verbs=("get",))

    # THEN it dumps as nonResourceURLs (not nonResourceUrls)
    assert rule.dump() == {"nonResourceURLs": ["/healthz", "/metrics"], "verbs": ["get"]}
    assert PolicyRule.model_validate({"nonResourceURLs": ["/healthz"], "verbs": ["get"]}).non_resource_urls == (
        "/healthz",
    )


def test_rules_keep_their_order() -> None:
    # GIVEN two rules
    second = {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}

    # WHEN / THEN they are written in the order given
    doc = ClusterRole(Root(), "cr", {"name": "reader", "rules": [READ_PODS, second]}).to_dict()
    assert doc["rules"] == [READ_PODS, second]


def test_rule_without_resources_or_non_resource_urls_is_rejected() -> None:
    # GIVEN / WHEN / THEN a rule that targets nothing is refused, naming the rule's index
    with pytest.raises(
        ConstructError,
        match=r"^root/role: RoleProps\.rules\.0: set resources \(with apiGroups\) or "
        r"nonResourceURLs$",
    ):
        Role(
            Root(),
            "role",
            {"name": "r", "namespace": "apps", "rules": [{"apiGroups": [""], "verbs": ["get"]}]},
        )


def test_rule_without_verbs_is_rejected() -> None:
    # GIVEN / WHEN / THEN a rule with an empty verb list is refused
    with pytest.raises(ConstructError, match=r"^root/cr: ClusterRoleProps\.rules\.1: verbs must not be empty$"):
        ClusterRole(Root(), "cr", {"name": "r", "rules": [READ_PODS, {"resources": ["pods"], "verbs": []}]})


def test_rule_verbs_are_required() -> None:
    # GIVEN / WHEN / THEN a rule with no verbs key at all is refused
    with pytest.raises(ValidationError, match=r"verbs\n\s+Field required"):
        PolicyRule.model_validate({"resources": ["pods"]})


def test_role_needs_a_namespace() -> None:
    # GIVEN / WHEN / THEN a Role without namespace is refused
    with pytest.raises(ConstructError, match=r"^root/role: RoleProps\.namespace: field required$"):
        Role(Root(), "role", {"name": "r", "rules": [READ_PODS]})


def test_cluster_role_with_namespace_is_rejected() -> None:
    # GIVEN / WHEN / THEN a ClusterRole given a namespace is refused
    with pytest.raises(ConstructError, match=r"^root/cr: ClusterRoleProps\.namespace: extra inputs are not permitted$"):
        ClusterRole(Root(), "cr", {"name": "r", "namespace": "apps", "rules": [READ_PODS]})


# Bindings


def test_role_binding_renders_role_ref_then_subjects() -> None:
    # GIVEN / WHEN a RoleBinding of a Role to a ServiceAccount and a Group
    doc = RoleBinding(
        Root(),
        "rb",
        {
            "name": "podinfo-read",
            "namespace": "apps",
            "roleRef": {"kind": "Role", "name": "pod-reader"},
            "subjects": [SA, {"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}],
        },
    ).to_dict()

    # THEN roleRef has the RBAC apiGroup filled in, and subjects keep their order
    assert doc == {
        "apiVersion": API,
        "kind": "RoleBinding",
        "metadata": {"name": "podinfo-read", "namespace": "apps"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": [SA, {"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}],
    }
    assert list(doc) == ["apiVersion", "kind", "metadata", "roleRef", "subjects"]


def test_role_binding_may_refer_to_a_cluster_role() -> None:
    # GIVEN / WHEN a RoleBinding granting a ClusterRole within one namespace
    doc = RoleBinding(
        Root(),
        "rb",
        {
            "name": "view",
            "namespace": "apps",
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [SA],
        },
    ).to_dict()

    # THEN it is accepted as given
    assert doc["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}


def test_cluster_role_binding_is_cluster_scoped() -> None:
    # GIVEN / WHEN a ClusterRoleBinding
    doc = ClusterRoleBinding(
        Root(), "crb", {"name": "view", "roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [SA]}
    ).to_dict()

    # THEN it has no namespace
    assert doc == {
        "apiVersion": API,
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [SA],
    }


def test_cluster_role_binding_to_a_role_is_rejected() -> None:
    # GIVEN / WHEN / THEN a ClusterRoleBinding cannot bind a namespaced Role
    with pytest.raises(
        ConstructError,
        match=r"^root/crb: ClusterRoleBindingProps\.\(props\): a ClusterRoleBinding can only "
        r"refer to a "
        r"ClusterRole$",
    ):
        ClusterRoleBinding(Root(), "crb", {"name": "x", "roleRef": {"kind": "Role", "name": "r"}, "subjects": [SA]})


def test_service_account_subject_without_namespace_is_rejected() -> None:
    # GIVEN / WHEN / THEN a ServiceAccount subject must say its namespace
    with pytest.raises(
        ConstructError,
        match=r"^root/rb: RoleBindingProps\.subjects\.0: a ServiceAccount subject needs a "
        r"namespace$",
    ):
        RoleBinding(
            Root(),
            "rb",
            {
                "name": "x",
                "namespace": "apps",
                "roleRef": {"kind": "Role", "name": "r"},
                "subjects": [{"kind": "ServiceAccount", "name": "podinfo"}],
            },
        )


def test_user_and_group_subjects_need_no_namespace() -> None:
    # GIVEN / WHEN / THEN users and groups are cluster-wide and accepted without namespace
    assert Subject(kind="User", name="jane@example.com").dump() == {
        "kind": "User",
        "name": "jane@example.com",
    }
    assert Subject(kind="Group", name="devs").namespace is None


def test_subject_kind_is_checked() -> None:
    # GIVEN / WHEN / THEN an unknown subject kind is refused, naming the allowed kinds
    with pytest.raises(ValidationError, match=r"Input should be 'ServiceAccount', 'User' or 'Group'"):
        Subject(kind="Robot", name="x")


def test_role_ref_api_group_is_fixed() -> None:
    # GIVEN / WHEN / THEN the roleRef apiGroup defaults to RBAC and cannot be anything else
    assert RoleRef(kind="Role", name="r").api_group == "rbac.authorization.k8s.io"
    with pytest.raises(ValidationError, match=r"apiGroup\n\s+Input should be 'rbac.authorization.k8s.io'"):
        RoleRef.model_validate({"apiGroup": "apps", "kind": "Role", "name": "r"})


def test_role_ref_kind_is_role_or_cluster_role() -> None:
    # GIVEN / WHEN / THEN a binding to another kind is refused
    with pytest.raises(
        ConstructError,
        match=r"^root/rb: RoleBindingProps\.roleRef\.kind: input should be 'Role' or 'ClusterRole'$",
    ):
        RoleBinding(
            Root(),
            "rb",
            {"name": "x", "namespace": "apps", "roleRef": {"kind": "Group", "name": "r"}, "subjects": [SA]},
        )
