"""Tests for fluxplane.synth.hazards: which changes replace, reinstall or cannot go, as the guard and diff's
risk report read them."""

from __future__ import annotations

from typing import Any

from fluxplane.synth.hazards import (
    PROVIDER_CONFIG_REF,
    allowed,
    deletes,
    document_key,
    immutable_change,
    immutable_fields,
    label,
    management,
    management_change,
    reinstall,
    release_target,
    version_step,
)


def test_the_immutable_table_matches_groups_by_pattern() -> None:
    assert ("spec", "forProvider", "cidrBlock") in immutable_fields("ec2.aws.m.upbound.io", "VPC")
    assert immutable_fields("example.com", "Widget") == []


def test_an_immutable_field_set_for_the_first_time_changes_nothing_unless_its_absence_is_a_value() -> None:
    # GIVEN a region set where there was none, then changed WHEN compared THEN only the change counts
    region = ("spec", "region")
    assert immutable_change({"spec": {}}, {"spec": {"region": "eu-west-1"}}, region) is None
    assert immutable_change({"spec": {"region": "us-west-2"}}, {"spec": {"region": "eu-west-1"}}, region) == (
        "us-west-2",
        "eu-west-1",
    )
    # AND a provider config named where none was moves the resource from the hub's account ("default")
    named = {"spec": {"providerConfigRef": {"name": "prod"}}}
    assert immutable_change({"spec": {}}, named, PROVIDER_CONFIG_REF) == ("default", "prod")


def test_a_release_target_takes_helm_controllers_defaults() -> None:
    # GIVEN a HelmRelease with a target namespace only, and one with a release name and a storage namespace
    targeted = {"metadata": {"name": "podinfo", "namespace": "flux-system"}, "spec": {"targetNamespace": "apps"}}
    named = {
        "metadata": {"name": "podinfo", "namespace": "flux-system"},
        "spec": {"releaseName": "p", "storageNamespace": "helm"},
    }
    # THEN (storage namespace, release namespace, release name) as helm-controller names the release
    assert release_target(targeted) == ("flux-system", "apps", "apps-podinfo")
    assert release_target(named) == ("helm", "flux-system", "p")


def test_a_release_name_longer_than_helm_allows_is_shortened_as_helm_controller_shortens_it() -> None:
    # GIVEN a HelmRelease whose [targetNamespace-]name is longer than 53 characters, and one whose name fits
    long = {
        "metadata": {"name": "which-is-longer-than-53-characters", "namespace": "flux-system"},
        "spec": {"targetNamespace": "release-name-with-very-long-name"},
    }
    fits = {"metadata": {"name": "a" * 53, "namespace": "flux-system"}, "spec": {}}
    # THEN the long one's release is named as helm-controller names it (its test, internal/release/name_test.go)
    assert release_target(long) == (
        "flux-system",
        "release-name-with-very-long-name",
        "release-name-with-very-long-name-which-i-788ca0d0d7b0",
    )
    assert release_target(fits)[2] == "a" * 53


def _chart(chart: str, source: str = "HelmRepository", **spec: Any) -> dict[str, Any]:
    source_ref = {"kind": source, "name": "charts"}
    return {
        "metadata": {"name": "web", "namespace": "flux-system"},
        "spec": {"chart": {"spec": {"chart": chart, "version": "1.0.0", "sourceRef": source_ref}}, **spec},
    }


def test_another_chart_of_a_helm_repository_is_a_reinstallation() -> None:
    # GIVEN a release of chart podinfo from a HelmRepository
    # WHEN it installs another chart under the same release THEN helm-controller reinstalls it (ReleaseTargetChanged
    # compares the chart's name too)
    assert reinstall(_chart("podinfo"), _chart("nginx")) == (
        "the chart of release web in flux-system changes from podinfo to nginx"
    )
    # AND another version or other values of the same chart upgrade it in place
    assert reinstall(_chart("podinfo"), _chart("podinfo", values={"a": 1})) is None
    # AND a moved release says where it moves, whatever its chart
    assert reinstall(_chart("podinfo"), _chart("nginx", targetNamespace="web")) == (
        "the release moves from web in flux-system to web-web in web (stored in flux-system)"
    )


def test_a_chart_named_by_a_path_or_a_reference_is_no_reinstallation_by_itself() -> None:
    # GIVEN charts whose name the HelmRelease does not tell: a path in a GitRepository (the name is in Chart.yaml),
    # or a chartRef WHEN they change THEN nothing says the release is reinstalled
    assert reinstall(_chart("./charts/a", "GitRepository"), _chart("./deploy/a", "GitRepository")) is None
    by_reference = {"metadata": {"name": "web", "namespace": "flux-system"}, "spec": {"chartRef": {"name": "web"}}}
    assert reinstall(_chart("podinfo"), by_reference) is None


def test_eks_moves_a_cluster_one_minor_version_up_and_never_down() -> None:
    assert version_step("1.33", "1.34") is None
    assert version_step("1.33", "1.35") == (
        "spec.kubernetesVersion changes from 1.33 to 1.35, which EKS upgrades a cluster one minor version at a time"
    )
    assert version_step("1.34", "1.33") == (
        "spec.kubernetesVersion changes from 1.34 to 1.33, which EKS cannot downgrade a cluster"
    )
    assert version_step(None, "1.34") is None


def test_patterns_match_kind_namespace_and_name() -> None:
    # GIVEN a namespaced object and a cluster-scoped one WHEN labelled THEN Kind/namespace/name and Kind/name
    vpc = document_key(
        {"apiVersion": "ec2.aws.m.upbound.io/v1beta1", "kind": "VPC", "metadata": {"name": "a", "namespace": "n"}}
    )
    assert vpc == ("ec2.aws.m.upbound.io", "VPC", "n", "a")
    assert label(vpc) == "VPC/n/a"
    assert label(("", "Namespace", "", "apps")) == "Namespace/apps"
    # THEN a pattern must name the namespace of a namespaced object
    assert allowed(vpc, ["VPC/*/a"]) is True
    assert allowed(vpc, ["VPC/a"]) is False
    assert document_key({"kind": "VPC"}) is None


def _cluster(composition: str) -> dict[str, Any]:
    return {"kind": "EKSCluster", "spec": {"crossplane": {"compositionRef": {"name": composition}}}}


def test_who_manages_a_clusters_aws_resources_is_read_from_its_composition() -> None:
    assert management(_cluster("eks-3-zones-1-node-group")) == "created"
    assert management(_cluster("eks-observed-2-subnets-1-node-group")) == "observed"
    assert management(_cluster("eks-managed-2-subnets-1-node-group-keyless")) == "managed"
    assert management(None) is None


def test_starting_to_manage_what_was_imported_needs_manage_and_stopping_needs_nothing() -> None:
    observed, managed = _cluster("eks-observed-2-subnets-1-node-group"), _cluster("eks-managed-2-subnets-1-node-group")
    assert management_change(observed, managed)[0] == "manage"  # type: ignore[index]
    assert management_change(None, managed)[0] == "manage"  # type: ignore[index]
    assert management_change(managed, observed) is None
    assert management_change(None, observed) is None
    assert management_change(observed, observed) is None


def test_what_removing_an_object_deletes() -> None:
    cluster = ("platform.fluxplane.io", "EKSCluster", "a", "a")
    assert deletes(cluster, _cluster("eks-3-zones-1-node-group")) == (
        "Crossplane deletes the EKS cluster, its node groups and its VPC in AWS"
    )
    # an observed cluster's resources are only read
    assert deletes(cluster, _cluster("eks-observed-2-subnets-1-node-group")) is None
    # a spoke's Flux, installed through its kubeconfig, is uninstalled there
    release = ("helm.toolkit.fluxcd.io", "HelmRelease", "a", "flux")
    assert deletes(release, {"spec": {"kubeConfig": {"secretRef": {"name": "a-kubeconfig"}}}}) == (
        "helm-controller uninstalls Flux from the cluster, with its CRDs and every Flux object there"
    )
    assert deletes(release, {"spec": {}}) is None
