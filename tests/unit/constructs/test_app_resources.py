"""The app resource composites (fluxplane.constructs.app_resources): what an app may ask of AWS, as the kinds of
platform.fluxplane.io. What each kind composes is tested with the packs that define and compose them
(tests/unit/packs/test_app_xrds.py, test_app_composed.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from fluxplane.constructs import Root
from fluxplane.constructs.app_resources import KINDS, REQUESTABLE, AppQueue, AppQueueProps, AppTable
from fluxplane.errors import ConstructError

QUEUE: dict[str, Any] = {"name": "shop-orders", "namespace": "shop", "region": "us-west-2", "app": "shop"}


def test_a_composite_renders_in_its_namespace_with_its_defaults() -> None:
    # GIVEN a FIFO queue of the shop app, tagged by its team
    queue = AppQueue(
        Root(),
        "queue",
        AppQueueProps.model_validate(
            {**QUEUE, "queueName": "shop-orders.fifo", "fifo": True, "tags": {"team": "shop"}}
        ),
    )

    # THEN it is a namespaced platform.fluxplane.io object, with SQS's defaults spelled out
    assert queue.to_dict() == {
        "apiVersion": "platform.fluxplane.io/v1alpha1",
        "kind": "AppQueue",
        "metadata": {"name": "shop-orders", "namespace": "shop"},
        "spec": {
            "region": "us-west-2",
            "tags": {"team": "shop"},
            "app": "shop",
            "queueName": "shop-orders.fifo",
            "fifo": True,
            "visibilityTimeoutSeconds": 30,
            "messageRetentionSeconds": 345600,
        },
    }


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"region": "us-west"}, "region: string should match pattern"),
        ({"visibilityTimeoutSeconds": 43201}, "visibilityTimeoutSeconds: input should be less than or equal to 43200"),
    ],
)
def test_a_composite_refuses_what_aws_would(change: dict[str, Any], problem: str) -> None:
    expected = re.escape(f"root/queue: AppQueueProps.{problem}")
    with pytest.raises(ConstructError, match=f"^{expected}"):
        AppQueue(Root(), "queue", {**QUEUE, "queueName": "shop-orders", **change})


def test_a_table_has_one_or_two_key_attributes() -> None:
    table = {**QUEUE, "tableName": "shop-orders", "hashKey": "id"}
    with pytest.raises(ConstructError, match=r"^root/table: AppTableProps\.attributes: tuple should have at least 1"):
        AppTable(Root(), "table", {**table, "attributes": []})


def test_an_app_requests_only_its_resources_never_an_identity_or_a_database() -> None:
    assert REQUESTABLE == {"AppTable": "apptables", "AppQueue": "appqueues", "AppBucket": "appbuckets"}
    assert set(KINDS) - set(REQUESTABLE) == {"AppIdentity", "AddonIdentity", "AppDatabase"}
