"""Tests for fluxplane.kinds.registry: the app kinds in order, and what a change to each cloud kind does to the live
resource."""

from __future__ import annotations

from fluxplane.kinds import (
    APP_KINDS,
    EXTERNAL_NAME,
    KINDS,
    PLURALS,
    REQUESTABLE,
    cloud_kind,
    is_managed,
    noun,
    replacing_fields,
)
from fluxplane.synth.hazards import DELETES, immutable_fields


def test_each_kind_has_one_entry() -> None:
    # GIVEN the table WHEN its (group, kind) pairs are counted THEN none is there twice
    pairs = [(entry.group, entry.kind) for entry in KINDS]
    assert len(pairs) == len(set(pairs))


def test_an_entry_covers_both_families_of_a_service() -> None:
    # GIVEN the cluster-scoped and the namespaced group of RDS THEN both are the RDS instance, which holds data
    for group in ("rds.aws.upbound.io", "rds.aws.m.upbound.io"):
        entry = cloud_kind(group, "Instance")
        assert entry is not None
        assert (entry.noun, entry.data) == ("RDS instance", True)
    assert cloud_kind("example.com", "Instance") is None


def test_the_data_bearing_kinds_are_the_stores_the_clusters_and_the_networks() -> None:
    held = {(entry.group, entry.kind) for entry in KINDS if entry.data and entry.group != "platform.fluxplane.io"}
    assert held == {
        ("rds.aws*", "Instance"),
        ("rds.aws*", "Cluster"),
        ("dynamodb.aws*", "Table"),
        ("s3.aws*", "Bucket"),
        ("sqs.aws*", "Queue"),
        ("eks.aws*", "Cluster"),
        ("ec2.aws*", "VPC"),
    }


def test_every_managed_resource_is_replaced_by_another_region_name_or_account() -> None:
    # GIVEN a kind the table knows and one it does not THEN both start with the fields every managed resource has
    engine = ("spec", "forProvider", "engine")
    assert replacing_fields("rds.aws.m.upbound.io", "Instance")[:3] == (
        ("spec", "forProvider", "region"),
        EXTERNAL_NAME,
        ("spec", "providerConfigRef", "name"),
    )
    assert engine in replacing_fields("rds.aws.m.upbound.io", "Instance")
    assert ("spec", "forProvider", "instanceClass") not in replacing_fields("rds.aws.m.upbound.io", "Instance")
    assert len(replacing_fields("s3.aws.m.upbound.io", "BucketVersioning")) == 3
    # AND a composite has only its own; a Kubernetes kind has none here
    assert ("spec", "tableName") in replacing_fields("platform.fluxplane.io", "AppTable")
    assert replacing_fields("apps", "Deployment") == ()


def test_the_guard_reads_the_same_fields() -> None:
    # GIVEN the guard's table THEN it holds every replacing field of the kinds, and what deleting a composite deletes
    for group, kind in (("rds.aws.m.upbound.io", "Instance"), ("dynamodb.aws.upbound.io", "Table")):
        assert set(replacing_fields(group, kind)) <= set(immutable_fields(group, kind))
    assert DELETES[("platform.fluxplane.io", "AppTable")] == "the DynamoDB table and its data"
    assert ("platform.fluxplane.io", "AppIdentity") not in DELETES


def test_nouns_name_a_kind_the_table_does_not_hold_by_its_service() -> None:
    assert noun("ec2.aws.m.upbound.io", "VPC") == "VPC"
    assert noun("s3.aws.m.upbound.io", "BucketVersioning") == "s3 BucketVersioning"
    assert noun("apps", "Deployment") == "Deployment"
    assert is_managed("iam.aws.upbound.io") is True
    assert is_managed("aws.m.upbound.io") is False


def test_an_app_requests_only_its_resources_never_an_identity_or_a_database() -> None:
    assert REQUESTABLE == {"AppTable": "apptables", "AppQueue": "appqueues", "AppBucket": "appbuckets"}
    assert set(APP_KINDS) - set(REQUESTABLE) == {"AppIdentity", "AddonIdentity", "AppDatabase"}


def test_the_app_kinds_are_written_in_the_order_of_their_declarations() -> None:
    # GIVEN the registry WHEN its app kinds are listed THEN identities first, then the resources, the add-ons' last
    assert list(APP_KINDS) == ["AppIdentity", "AppTable", "AppQueue", "AppBucket", "AppDatabase", "AddonIdentity"]
    assert {kind: declared.plural for kind, declared in APP_KINDS.items()} == PLURALS
