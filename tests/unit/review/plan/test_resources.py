"""Tests for fluxplane.review.plan.resources: the AWS resources of two trees compared, composites rendered on both
sides."""

from __future__ import annotations

import copy
from typing import Any

from fluxplane.review.diff.fleet import RepositoryObject
from fluxplane.review.diff.scope import Definitions
from fluxplane.review.plan.resources import Comparison, Reading, Side
from tests.conftest import ROOT


def example_reading() -> Reading:
    files = {path.relative_to(ROOT / "dist").as_posix(): path.read_text() for path in (ROOT / "dist").rglob("*.yaml")}
    return Reading(Definitions(files), "hub")


def database() -> dict[str, Any]:
    reading = example_reading()
    [document] = [
        document
        for document in reading.texts.objects(("AppDatabase",), lambda body: True)
        if document.file == "platform/cloud/production-use1/orders.yaml"
    ]
    return copy.deepcopy(document.body)


def compare(old: dict[str, Any] | None, new: dict[str, Any] | None) -> Comparison:
    reading = example_reading()
    body = new if new is not None else old
    assert body is not None
    key = ("platform.fluxplane.io", body["kind"], "production-use1", body["metadata"]["name"])
    before = Side({"hub": {key: RepositoryObject("platform", old)}} if old is not None else {}, reading)
    after = Side({"hub": {key: RepositoryObject("platform", new)}} if new is not None else {}, reading)
    comparison = Comparison(before, after, frozenset())
    comparison.run({"hub": [key]})
    return comparison


def test_a_composite_is_compared_by_what_it_composes() -> None:
    # GIVEN the example's database with another instance class
    old = database()
    new = copy.deepcopy(old)
    new["spec"]["instanceClass"] = "db.t4g.small"
    [change] = compare(old, new).changes
    # THEN its RDS instance is updated in place, in the production account
    assert (change.action, change.noun, change.name, change.account, change.region) == (
        "update",
        "RDS instance",
        "production-use1-orders-main",
        "444455556666",
        "us-east-1",
    )
    assert change.fields == ("instanceClass",)
    assert change.source == "AppDatabase production-use1/orders-database-main: instance"


def test_a_composite_removed_deletes_what_it_composed_in_aws_only() -> None:
    deleted = compare(database(), None).changes
    assert {change.action for change in deleted} == {"delete"}
    # the Kubernetes objects it writes on the cluster are not AWS resources
    assert {change.api_version.split(".")[0] for change in deleted} == {"rds", "ec2", "iam"}


def test_a_composite_that_cannot_be_rendered_is_compared_as_itself() -> None:
    old = database()
    old["spec"]["crossplane"] = {"compositionRef": {"name": "gone"}}
    new = copy.deepcopy(old)
    new["spec"]["engine"] = "mysql"
    comparison = compare(old, new)
    [change] = comparison.changes
    assert (change.action, change.noun, change.reasons) == (
        "replace",
        "app database",
        ("engine changed from postgres to mysql",),
    )
    assert change.data is True
    assert comparison.notes[0].startswith("hub: AppDatabase production-use1/orders-database-main not rendered: ")
