"""The EKS Auto Mode section of a workload cluster (fluxplane.config.models.auto_mode): the built-in node pools, and
the NodeClasses and NodePools of the cluster's own, refused where EKS would refuse them or the bootstrap could not
run."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.config.models.auto_mode import AutoMode, AutoModeNodeClass, AutoModeNodePool, EphemeralStorage


def errors(model: type[AutoMode | AutoModeNodePool | AutoModeNodeClass | EphemeralStorage], data: Any) -> list[Any]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    return [(error["loc"], error["msg"]) for error in caught.value.errors()]


def test_auto_mode_runs_both_built_in_pools_by_default() -> None:
    auto = AutoMode.model_validate({"enabled": True})
    assert (auto.node_pools, auto.node_classes, auto.custom_node_pools) == (["general-purpose", "system"], [], [])


def test_the_bootstrap_needs_the_general_purpose_pool() -> None:
    assert errors(AutoMode, {"enabled": True, "nodePools": ["system"]}) == [
        (
            ("nodePools",),
            "needs 'general-purpose': the hub's bootstrap of the cluster (External Secrets, Sealed Secrets, Flux) "
            "runs on it before the cluster's Flux applies customNodePools",
        )
    ]


def test_the_rest_counts_only_when_auto_mode_is_on() -> None:
    # a cluster switched out of Auto Mode keeps what it said, unchecked
    assert AutoMode.model_validate({"enabled": False, "nodePools": ["system"]}).node_pools == ["system"]


def test_a_custom_pool_names_a_node_class_the_cluster_has() -> None:
    # GIVEN a pool naming a NodeClass the cluster does not define THEN it is refused at its field, with the known ones
    data = {"enabled": True, "customNodePools": [{"name": "gpu", "nodeClass": "fast"}]}
    assert errors(AutoMode, data) == [
        (
            ("customNodePools", 0, "nodeClass"),
            "'fast' is not a NodeClass of the cluster (known: default); add it to nodeClasses",
        )
    ]
    # AND once the cluster defines it, the pool is accepted
    data["nodeClasses"] = [{"name": "fast"}]
    assert AutoMode.model_validate(data).custom_node_pools[0].node_class == "fast"


def test_names_are_each_once_and_never_eks_own() -> None:
    twice = {"enabled": True, "nodeClasses": [{"name": "a"}, {"name": "a"}]}
    assert errors(AutoMode, twice) == [(("nodeClasses",), "NodeClass names must be unique, 'a' repeated")]
    assert errors(AutoModeNodeClass, {"name": "default"}) == [
        (
            ("name",),
            "Value error, 'default' is the NodeClass EKS makes with the built-in node pools; choose another name",
        )
    ]
    assert errors(AutoModeNodePool, {"name": "system"}) == [
        (
            ("name",),
            "Value error, 'system' is a built-in node pool of EKS Auto Mode, switched on in `nodePools`; choose "
            "another name",
        )
    ]


@pytest.mark.parametrize("expire", ["505h", "Never"])
def test_a_node_lives_at_most_21_days(expire: str) -> None:
    assert errors(AutoModeNodePool, {"name": "a", "expireAfter": expire}) == [
        (
            ("expireAfter",),
            "Value error, at most 504h: EKS Auto Mode replaces a node after 21 days whatever its pool says, "
            f"got {expire!r}",
        )
    ]
    assert AutoModeNodePool.model_validate({"name": "a", "expireAfter": "504h"}).expire_after == "504h"


def test_a_root_volume_is_within_eks_s_limits_for_its_unit() -> None:
    assert EphemeralStorage.model_validate({"size": "64000G"}).size == "64000G"
    assert errors(EphemeralStorage, {"size": "60000Gi"}) == [
        (("size",), "Value error, EKS allows 1 to 59000Gi, got '60000Gi'")
    ]
