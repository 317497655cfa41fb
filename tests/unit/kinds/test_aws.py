"""The AWS managed resources' entries (fluxplane.kinds.aws)."""

from __future__ import annotations

from fluxplane.kinds.aws import MANAGED
from fluxplane.kinds.live import is_managed


def test_every_entry_is_of_a_managed_group_in_either_family() -> None:
    for entry in MANAGED:
        assert is_managed(entry.group.replace("*", ".upbound.io")), entry
        assert is_managed(entry.group.replace("*", ".m.upbound.io")), entry


def test_the_stores_that_hold_data_say_what_deleting_them_destroys() -> None:
    holding = {(entry.group.split(".")[0], entry.kind) for entry in MANAGED if entry.data}
    assert holding == {
        ("rds", "Instance"),
        ("rds", "Cluster"),
        ("dynamodb", "Table"),
        ("s3", "Bucket"),
        ("sqs", "Queue"),
        ("eks", "Cluster"),
        ("ec2", "VPC"),
    }
    assert all(entry.deletes for entry in MANAGED if entry.data)
