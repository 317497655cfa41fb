"""Tests for fluxplane.config.apps.resources: an app's tables, queues and buckets, as its file states them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import FleetWriter
from tests.support.config import APP, problems


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"aws": {"tables": [{"name": "orders", "hashKey": "id", "rangeKey": "id"}]}},
            'shop.yaml: aws.tables[0]: rangeKey must differ from hashKey, both are "id"',
        ),
        (
            {"aws": {"queues": [{"name": "events"}, {"name": "events"}]}},
            "shop.yaml: aws.queues: resource names must be unique within the app, 'events' repeated",
        ),
        ({"aws": {"buckets": [{"name": "Exports"}]}}, "shop.yaml: aws.buckets[0].name: expected a DNS-1123 label"),
        (
            {"aws": {"queues": [{"name": "q", "visibilityTimeoutSeconds": 99999}]}},
            "aws.queues[0].visibilityTimeoutSeconds",
        ),
    ],
)
def test_bad_aws_fields(write_fleet: FleetWriter, change: dict[str, Any], message: str) -> None:
    # GIVEN an app whose aws section breaks a rule WHEN the fleet loads THEN the problem names the field, in the file
    found = problems(write_fleet, {"shop": {**APP, **change}})
    assert any(message in line for line in found), found
    assert all(line.startswith("environments/apps/shop.yaml: ") for line in found), found
