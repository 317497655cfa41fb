"""AppTable (fluxplane.kinds.app_table): an app's DynamoDB table, as a composite and as what its Composition
composes."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.constructs import Root
from fluxplane.errors import ConstructError
from fluxplane.kinds.app_table import APP_KIND, AppTable

TABLE: dict[str, Any] = {
    "name": "shop-orders",
    "namespace": "shop",
    "region": "us-west-2",
    "app": "shop",
    "tableName": "shop-orders",
    "hashKey": "id",
}


def test_a_table_has_one_or_two_key_attributes() -> None:
    with pytest.raises(ConstructError, match=r"^root/table: AppTableProps\.attributes: tuple should have at least 1"):
        AppTable(Root(), "table", {**TABLE, "attributes": []})


def test_its_xrd_requires_the_key_and_its_attributes() -> None:
    spec = APP_KIND.xrd_props().dump()["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["required"] == ["region", "app", "tableName", "hashKey", "attributes"]
    assert spec["properties"]["attributes"]["maxItems"] == 2


def test_a_changed_key_replaces_the_table_and_loses_its_items() -> None:
    live = APP_KIND.live
    assert {("spec", "tableName"), ("spec", "hashKey"), ("spec", "rangeKey")} <= set(live.replaces)
    assert (live.data, live.name) == (True, ("spec", "tableName"))
