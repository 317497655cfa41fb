"""AppQueue (fluxplane.kinds.app_queue): an app's SQS queue, as a composite and as what its Composition composes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from fluxplane.constructs import Root
from fluxplane.errors import ConstructError
from fluxplane.kinds.app_queue import ACTIONS, APP_KIND, AppQueue, AppQueueProps

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


def test_on_a_workload_cluster_it_composes_the_queue_without_the_app_roles_policy() -> None:
    # GIVEN the kind's declaration WHEN its resources are composed on the hub and on a workload cluster
    assert APP_KIND.spoke_composed is not None
    hub = [resource["name"] for resource in APP_KIND.composed()]
    spoke = [resource["name"] for resource in APP_KIND.spoke_composed()]
    # THEN the hub grants the app's role the queue; the workload cluster, whose Crossplane may not touch IAM, does not
    assert (hub, spoke) == (["queue", "access"], ["queue"])
    # AND the hub's grant is exactly the queue's actions
    fmt = APP_KIND.composed()[1]["patches"][1]["combine"]["string"]["fmt"]
    assert [statement["Action"] for statement in json.loads(fmt)["Statement"]] == [list(ACTIONS)]


def test_renaming_the_queue_or_making_it_fifo_replaces_it_and_loses_its_messages() -> None:
    live = APP_KIND.live
    assert {("spec", "queueName"), ("spec", "fifo")} <= set(live.replaces)
    assert (live.data, live.name, live.deletes) == (True, ("spec", "queueName"), "the SQS queue and its messages")
