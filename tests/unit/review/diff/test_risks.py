"""Each risk rule on small before/after objects."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.core.tree.objects import key_of
from fluxplane.review.diff.objects import ClusterDiff, ObjectChange
from fluxplane.review.diff.risks import immutable_fields, object_risks, risks


def change(before: dict[str, Any] | None, after: dict[str, Any] | None) -> ObjectChange:
    doc = after if after is not None else before
    assert doc is not None
    return ObjectChange("platform", "hub", key_of(doc), before, after)


def role(rules: list[dict[str, Any]], kind: str = "ClusterRole") -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": "r"}, "rules": rules}


def test_a_deleted_namespace_is_flagged() -> None:
    # GIVEN a Namespace that is removed WHEN the rules run THEN it is flagged
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    assert object_risks(change(namespace, None)) == ["Namespace deleted: everything in it is deleted"]
    assert object_risks(change(None, namespace)) == []


def test_a_removed_workload_cluster_composite_is_flagged() -> None:
    composite = {
        "apiVersion": "platform.fluxplane.io/v1alpha1",
        "kind": "EKSCluster",
        "metadata": {"name": "a", "namespace": "a"},
    }
    assert object_risks(change(composite, None)) == [
        "workload cluster removed: Crossplane deletes the EKS cluster and its network"
    ]


def test_a_removed_observed_cluster_keeps_its_aws_resources() -> None:
    # GIVEN an existing cluster's composite, whose Composition only reads what it imported, removed
    composite = {
        "apiVersion": "platform.fluxplane.io/v1alpha1",
        "kind": "EKSCluster",
        "metadata": {"name": "a", "namespace": "a"},
        "spec": {"crossplane": {"compositionRef": {"name": "eks-observed-3-subnets-1-node-group"}}},
    }
    # THEN the reviewer is told that nothing is deleted in AWS
    assert object_risks(change(composite, None)) == [
        "workload cluster removed: its AWS resources were only read, and stay as they are"
    ]


def test_a_role_gaining_a_verb_is_widening() -> None:
    before = role([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])
    after = role([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "delete"]}])
    assert object_risks(change(before, after)) == ["RBAC widened: grants delete core/pods"]


def test_a_role_gaining_a_wildcard_is_widening_with_a_wildcard() -> None:
    before = role([{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}], kind="Role")
    after = role([{"apiGroups": ["apps"], "resources": ["*"], "verbs": ["get"]}], kind="Role")
    assert object_risks(change(before, after)) == ["RBAC widened with a wildcard: grants get apps/*"]


def test_narrowing_or_a_grant_already_covered_by_a_wildcard_is_not_widening() -> None:
    wide = role([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])
    narrow = role([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])
    assert object_risks(change(wide, narrow)) == []
    named = role([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["one"]}])
    every = role([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}])
    assert object_risks(change(every, named)) == []
    assert object_risks(change(named, every)) == ["RBAC widened: grants get core/secrets"]


def binding(role_name: str, subjects: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "b"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
        "subjects": subjects,
    }


def test_a_binding_gaining_a_subject_is_widening() -> None:
    alice = {"kind": "User", "name": "alice"}
    bob = {"kind": "User", "name": "bob"}
    assert object_risks(change(binding("view", [alice]), binding("view", [alice, bob]))) == [
        "RBAC widened: binding gains subjects User bob"
    ]


def test_a_new_binding_to_cluster_admin_is_flagged() -> None:
    assert object_risks(change(None, binding("cluster-admin", [{"kind": "Group", "name": "devs"}]))) == [
        "binds ClusterRole 'cluster-admin'"
    ]
    assert object_risks(change(None, binding("view", [{"kind": "Group", "name": "devs"}]))) == []


def test_a_changed_roleref_is_both_immutable_and_flagged_when_it_binds_admin() -> None:
    subjects = [{"kind": "Group", "name": "devs"}]
    assert object_risks(change(binding("view", subjects), binding("admin", subjects))) == [
        "binds ClusterRole 'admin'",
        "immutable field roleRef changed: the update is refused or the resource is replaced",
    ]


@pytest.mark.parametrize(
    ("api_version", "kind", "path", "old", "new"),
    [
        ("apps/v1", "Deployment", ("spec", "selector"), {"matchLabels": {"a": "1"}}, {"matchLabels": {"a": "2"}}),
        ("v1", "Service", ("spec", "clusterIP"), "10.0.0.1", "10.0.0.2"),
        ("batch/v1", "Job", ("spec", "template"), {"spec": {"x": 1}}, {"spec": {"x": 2}}),
        ("v1", "PersistentVolumeClaim", ("spec", "storageClassName"), "gp2", "gp3"),
        ("ec2.aws.m.upbound.io/v1beta1", "Subnet", ("spec", "forProvider", "availabilityZone"), "a", "b"),
        ("ec2.aws.m.upbound.io/v1beta1", "VPC", ("spec", "forProvider", "cidrBlock"), "10.0.0.0/16", "10.1.0.0/16"),
        ("eks.aws.upbound.io/v1beta1", "Cluster", ("spec", "forProvider", "region"), "us-east-1", "us-west-2"),
        ("platform.fluxplane.io/v1alpha1", "EKSCluster", ("spec", "network", "vpcCidr"), "10.0.0.0/16", "10.9.0.0/16"),
    ],
)
def test_an_immutable_field_change_is_flagged(
    api_version: str, kind: str, path: tuple[str, ...], old: Any, new: Any
) -> None:
    def doc(value: Any) -> dict[str, Any]:
        result: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "n"}}
        node = result
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
        return result

    message = f"immutable field {'.'.join(path)} changed: the update is refused or the resource is replaced"
    assert object_risks(change(doc(old), doc(new))) == [message]
    assert object_risks(change(doc(old), doc(old))) == []


def test_the_immutable_table_matches_groups_by_pattern() -> None:
    assert immutable_fields("ec2.aws.upbound.io", "Subnet") == [
        ("spec", "forProvider", "region"),
        ("metadata", "annotations", "crossplane.io/external-name"),
        ("spec", "providerConfigRef", "name"),
        ("spec", "forProvider", "cidrBlock"),
        ("spec", "forProvider", "availabilityZone"),
        ("spec", "forProvider", "availabilityZoneId"),
        ("spec", "forProvider", "vpcId"),
        ("spec", "forProvider", "outpostArn"),
        ("spec", "forProvider", "ipv6Native"),
    ]
    assert immutable_fields("example.com", "Widget") == []


def kustomization(prune: bool, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "k", "namespace": "flux-system"}
    if annotations:
        metadata["annotations"] = annotations
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": metadata,
        "spec": {"prune": prune},
    }


def test_flux_prune_turned_off_is_flagged() -> None:
    assert object_risks(change(kustomization(True), kustomization(False))) == [
        "Flux prune turned off: objects removed from its path stay on the cluster"
    ]
    assert object_risks(change(kustomization(False), kustomization(True))) == []


def test_the_prune_disabled_annotation_is_flagged_when_added() -> None:
    mark = {"kustomize.toolkit.fluxcd.io/prune": "disabled"}
    assert object_risks(change(kustomization(True), kustomization(True, mark))) == [
        "kustomize.toolkit.fluxcd.io/prune: disabled added: Flux will no longer delete this object"
    ]
    assert object_risks(change(kustomization(True, mark), kustomization(True, mark))) == []


def managed(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket", "metadata": {"name": "b"}, "spec": spec}


def test_crossplane_deletion_policy_changes_that_orphan_or_delete_are_flagged() -> None:
    orphans = "Crossplane now orphans the cloud resource: deleting this object leaves it behind"
    deletes = "Crossplane now deletes the cloud resource when this object is deleted"
    assert object_risks(change(managed({"deletionPolicy": "Delete"}), managed({"deletionPolicy": "Orphan"}))) == [
        orphans
    ]
    assert object_risks(change(managed({"deletionPolicy": "Orphan"}), managed({}))) == [deletes]
    observe = {"managementPolicies": ["Observe", "Create", "Update"]}
    assert object_risks(change(managed({"managementPolicies": ["*"]}), managed(observe))) == [orphans]
    assert object_risks(change(managed(observe), managed({"managementPolicies": ["*"]}))) == [deletes]
    assert object_risks(change(managed({"deletionPolicy": "Delete"}), managed({}))) == []


def test_risks_put_removed_clusters_first() -> None:
    # GIVEN a cluster whose entry folder is gone and a section with a deleted Namespace
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    section = ClusterDiff("workloads", "east", "removed", [change(namespace, None)])
    # WHEN risks are collected THEN the removed cluster comes first
    found = risks([section], {"east": False, "west": True})
    assert [(risk.repository, risk.cluster, risk.subject, risk.message) for risk in found] == [
        ("platform", "east", "cluster", "cluster removed: dist/platform/clusters/east/ is gone"),
        ("workloads", "east", "v1 Namespace team", "Namespace deleted: everything in it is deleted"),
    ]


def test_a_hub_object_that_changes_kustomization_is_flagged() -> None:
    # GIVEN an EKSCluster whose applying Kustomization changes (fluxplane.synth.guard's moves)
    def composite(applier: str) -> dict[str, Any]:
        return {
            "apiVersion": "platform.fluxplane.io/v1alpha1",
            "kind": "EKSCluster",
            "metadata": {"name": "a", "namespace": "a", "annotations": {"fluxplane.io/applied-by": applier}},
        }

    moved = change(composite("x/old"), composite("a/cluster"))
    # THEN diff says what the reviewer must do first
    assert object_risks(moved) == [
        "moves from Kustomization x/old to a/cluster: suspend x/old on the hub first, or Flux deletes it"
    ]


def _release(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "flux", "namespace": "staging-1"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("before", "after", "flagged"),
    [
        (
            {"releaseName": "flux2", "targetNamespace": "flux-system"},
            {"releaseName": "flux-operator", "targetNamespace": "flux-system"},
            True,
        ),
        ({"targetNamespace": "a"}, {"targetNamespace": "b"}, True),
        ({}, {"storageNamespace": "elsewhere"}, True),
        # the same release, spelled out: helm-controller's defaults are [targetNamespace-]name and the namespace
        (
            {"targetNamespace": "a"},
            {"targetNamespace": "a", "releaseName": "a-flux", "storageNamespace": "staging-1"},
            False,
        ),
        ({"releaseName": "x", "values": {"a": 1}}, {"releaseName": "x", "values": {"a": 2}}, False),
    ],
)
def test_a_helm_release_whose_target_changes_is_reinstalled(
    before: dict[str, Any], after: dict[str, Any], flagged: bool
) -> None:
    found = [
        message for message in object_risks(change(_release(**before), _release(**after))) if "uninstalls" in message
    ]
    assert bool(found) is flagged, found


def test_a_helm_release_of_another_chart_is_reinstalled() -> None:
    # GIVEN a release of chart flux2 from a HelmRepository WHEN it installs chart flux-operator instead
    def of(chart: str) -> dict[str, Any]:
        return _release(chart={"spec": {"chart": chart, "sourceRef": {"kind": "HelmRepository", "name": "charts"}}})

    # THEN diff tells the reviewer helm-controller reinstalls it
    assert object_risks(change(of("flux2"), of("flux-operator"))) == [
        "the chart of release flux in staging-1 changes from flux2 to flux-operator: helm-controller uninstalls the "
        "release, deleting what it installed, then installs the new one"
    ]
