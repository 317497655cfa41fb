"""Tests for fluxplane.synth.cloud: what happens to one AWS managed resource between two trees, and why."""

from __future__ import annotations

from typing import Any

from fluxplane.kinds import EXTERNAL_NAME
from fluxplane.synth.cloud import (
    UNKNOWN,
    ResourceAction,
    aws_name,
    changed_fields,
    dotted,
    judge,
    provider_config,
    show,
)
from fluxplane.validate.compose import Unknown

RDS = ("rds.aws.m.upbound.io", "Instance")


def instance(**given: Any) -> dict[str, Any]:
    values = {"region": "us-east-1", "identifier": "orders", "engine": "postgres", "instanceClass": "db.t4g.micro"}
    return {
        "apiVersion": "rds.aws.m.upbound.io/v1beta1",
        "kind": "Instance",
        "metadata": {"name": "orders"},
        "spec": {
            "forProvider": {**values, **given},
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "p"},
        },
    }


def test_an_instance_class_is_updated_in_place() -> None:
    assert judge(*RDS, instance(), instance(instanceClass="db.t4g.small")) == ResourceAction(
        "update", ("instanceClass",)
    )


def test_an_engine_replaces_the_instance_and_says_why() -> None:
    verdict = judge(*RDS, instance(), instance(engine="mysql", port=3306))
    assert verdict == ResourceAction("replace", ("engine", "port"), ("engine changed from postgres to mysql",))


def test_a_field_set_for_the_first_time_replaces_nothing() -> None:
    # GIVEN an availability zone (which AWS cannot change in place) set where there was none
    assert judge(*RDS, instance(), instance(availabilityZone="us-east-1a")) == ResourceAction(
        "update", ("availabilityZone",)
    )


def test_another_provider_config_is_another_account() -> None:
    old, new = instance(), instance()
    new["spec"]["providerConfigRef"]["name"] = "production"
    verdict = judge(*RDS, old, new)
    assert verdict is not None
    assert verdict.reasons == (
        "providerConfigRef.name changed from p to production (another account: made anew there, the old one is left "
        "unmanaged)",
    )


def test_created_deleted_and_left_in_aws() -> None:
    assert judge(*RDS, None, instance()) == ResourceAction("create")
    assert judge(*RDS, instance(), None) == ResourceAction(
        "delete",
        reasons=("destroys the database instance and its data (RDS keeps a final snapshot unless skipFinalSnapshot)",),
    )
    orphaned = instance()
    orphaned["spec"]["deletionPolicy"] = "Orphan"
    assert judge(*RDS, orphaned, None) == ResourceAction(
        "forget", reasons=("its deletion policy leaves it in AWS, unmanaged",)
    )
    observed = instance()
    observed["spec"]["managementPolicies"] = ["Observe"]
    assert judge(*RDS, observed, None).action == "forget"  # type: ignore[union-attr]
    # AND a kind whose deletion needs no saying is deleted without a reason
    assert judge("ec2.aws.m.upbound.io", "Route", {"spec": {}}, None) == ResourceAction("delete")
    assert judge(*RDS, instance(), instance()) is None


def test_values_only_the_cluster_knows_are_equal_to_each_other() -> None:
    # GIVEN a composed resource whose name field is known only after apply, in both trees
    old, new = instance(identifier=Unknown("a")), instance(identifier=Unknown("b"))
    assert judge(*RDS, old, new) is None
    # THEN one that becomes known is a change, shown as such
    verdict = judge(*RDS, old, instance(identifier="orders"))
    assert verdict is not None
    assert verdict.reasons == (f"identifier changed from {UNKNOWN} to orders",)


def test_changed_fields_are_below_spec_and_the_external_name() -> None:
    old, new = instance(), instance(tags={"a": "1"})
    new["metadata"]["annotations"] = {"crossplane.io/external-name": "x"}
    new["metadata"]["labels"] = {"ignored": "yes"}
    assert changed_fields(old, new) == [EXTERNAL_NAME, ("spec", "forProvider", "tags")]
    assert [dotted(path) for path in changed_fields(old, new)] == ["external name", "tags"]
    assert dotted(("spec", "providerConfigRef", "name")) == "providerConfigRef.name"


def test_names_and_provider_configs() -> None:
    # THEN an RDS instance is named by its identifier, anything by its external name first
    assert aws_name(*RDS, instance()) == "orders"
    named = instance()
    named["metadata"]["annotations"] = {"crossplane.io/external-name": "by-annotation"}
    assert aws_name(*RDS, named) == "by-annotation"
    assert aws_name("ec2.aws.m.upbound.io", "VPC", {"spec": {}}) is None
    assert provider_config(instance()) == "p"
    assert provider_config({"spec": {}}) == "default"
    assert [show(value) for value in (True, 3, None, [1], {"a": 1}, Unknown())] == [
        "true",
        "3",
        "nothing",
        "a list",
        "an object",
        UNKNOWN,
    ]


def test_a_resource_only_observed_is_read_and_one_that_comes_to_be_written_starts_to_be_managed() -> None:
    # GIVEN an existing cluster's resource, imported with management policies of Observe only
    observed, managed = instance(), instance()
    observed["spec"]["managementPolicies"] = ["Observe"]
    managed["spec"]["managementPolicies"] = ["*"]
    read_only = "its management policies only observe it: nothing is made, changed or deleted in AWS"
    # WHEN it appears THEN it is read, never created
    assert judge(*RDS, None, observed) == ResourceAction("import", reasons=(read_only,))
    # AND moved to full management, Crossplane starts to manage it, the policies among what changes
    assert judge(*RDS, observed, managed) == ResourceAction(
        "manage", ("managementPolicies",), ("Crossplane may now update it to the definition, and delete it",)
    )
    # AND moved back, nothing is written any more: it is left in AWS, only read
    assert judge(*RDS, managed, observed) == ResourceAction("forget", reasons=(read_only,))
    # AND another resource read in its place is still only read
    other = instance()
    other["spec"]["managementPolicies"] = ["Observe"]
    other["metadata"]["annotations"] = {"crossplane.io/external-name": "other"}
    assert judge(*RDS, observed, other) == ResourceAction("import", reasons=(read_only,))


EKS_CLUSTER = ("eks.aws.m.upbound.io", "Cluster")


def eks_cluster(**given: Any) -> dict[str, Any]:
    return {
        "apiVersion": "eks.aws.m.upbound.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "a-cluster", "annotations": {"crossplane.io/external-name": "a"}},
        "spec": {"forProvider": {"region": "eu-west-1", "version": "1.34", **given}},
    }


AUTO_MODE_ON = {
    "computeConfig": {"enabled": True, "nodePools": ["general-purpose"]},
    "storageConfig": {"blockStorage": {"enabled": True}},
    "kubernetesNetworkConfig": {"elasticLoadBalancing": {"enabled": True}},
}


def test_a_cluster_switched_into_or_out_of_auto_mode_is_updated_in_place_and_says_what_that_does() -> None:
    # GIVEN an EKS cluster switched into EKS Auto Mode WHEN judged THEN it is updated in place, the switched fields
    # named, and the reason says what EKS takes over
    verdict = judge(*EKS_CLUSTER, eks_cluster(), eks_cluster(**AUTO_MODE_ON))
    assert verdict is not None
    assert (verdict.action, verdict.fields) == ("update", ("computeConfig", "storageConfig", "kubernetesNetworkConfig"))
    (reason,) = verdict.reasons
    assert reason.startswith("switches EKS Auto Mode on in place: EKS launches the cluster's nodes from its node pools")
    # AND switched off, the reason says what EKS gives back
    off = {
        "computeConfig": {"enabled": False},
        "storageConfig": {"blockStorage": {"enabled": False}},
        "kubernetesNetworkConfig": {"elasticLoadBalancing": {"enabled": False}},
    }
    verdict = judge(*EKS_CLUSTER, eks_cluster(**AUTO_MODE_ON), eks_cluster(**off))
    assert verdict is not None and verdict.action == "update"
    assert verdict.reasons[0].startswith("switches EKS Auto Mode off in place: EKS terminates the nodes it launched")
    # AND a composition that drops the switch while it is on leaves Auto Mode on, and says so
    verdict = judge(*EKS_CLUSTER, eks_cluster(**AUTO_MODE_ON), eks_cluster())
    assert verdict is not None
    assert verdict.reasons == ("computeConfig.enabled goes while EKS Auto Mode is on, which leaves it on",)
