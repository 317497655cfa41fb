"""Tests for fluxplane.config.models.nodes: node group sizes, node labels and taints."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.config import models


def _errors(model: type[models.Model], data: Any) -> list[tuple[tuple[str | int, ...], str, str]]:
    with pytest.raises(ValidationError) as exc:
        model.model_validate(data)
    return [(tuple(e["loc"]), e["type"], e["msg"]) for e in exc.value.errors(include_url=False)]


# -- NodeGroup -----------------------------------------------------------------------------------


def test_node_group_defaults() -> None:
    # GIVEN only a name WHEN validated THEN sizes, instance types and disk take their defaults
    group = models.NodeGroup(name="default")
    assert group.model_dump(by_alias=True) == {
        "name": "default",
        "instanceTypes": ["m7i.large"],
        "capacityType": "ON_DEMAND",
        "minSize": 2,
        "maxSize": 4,
        "desiredSize": 2,
        "diskSize": 50,
        "labels": {},
        "taints": [],
    }


def test_node_group_min_size_must_not_exceed_max_size() -> None:
    # GIVEN minSize above maxSize WHEN validated THEN the values are named
    assert _errors(models.NodeGroup, {"name": "a", "minSize": 5, "maxSize": 3, "desiredSize": 4}) == [
        ((), "value_error", "Value error, minSize (5) must not exceed maxSize (3)")
    ]


@pytest.mark.parametrize(("desired", "expected_min", "expected_max"), [(1, 2, 4), (5, 2, 4)])
def test_node_group_desired_size_must_lie_between_min_and_max(
    desired: int, expected_min: int, expected_max: int
) -> None:
    # GIVEN desiredSize outside [minSize, maxSize] WHEN validated THEN the three values are named
    assert _errors(models.NodeGroup, {"name": "a", "desiredSize": desired}) == [
        (
            (),
            "value_error",
            f"Value error, desiredSize ({desired}) must lie between minSize ({expected_min}) "
            f"and maxSize ({expected_max})",
        )
    ]


def test_node_group_sizes_at_the_bounds_are_accepted() -> None:
    # GIVEN minSize == desiredSize == maxSize WHEN validated THEN it is accepted
    group = models.NodeGroup.model_validate({"name": "a", "minSize": 3, "maxSize": 3, "desiredSize": 3})
    assert (group.min_size, group.desired_size, group.max_size) == (3, 3, 3)


@pytest.mark.parametrize(
    ("field", "value", "kind"),
    [
        ("desiredSize", 0, "greater_than_equal"),
        ("minSize", -1, "greater_than_equal"),
        ("maxSize", 1001, "less_than_equal"),
        ("diskSize", 19, "greater_than_equal"),
        ("capacityType", "spot", "literal_error"),
        ("instanceTypes", [], "too_short"),
        ("minSize", "two", "int_parsing"),
    ],
)
def test_node_group_field_constraints(field: str, value: Any, kind: str) -> None:
    # GIVEN one field out of its range WHEN validated THEN exactly that field fails with that kind
    assert [(loc, k) for loc, k, _ in _errors(models.NodeGroup, {"name": "a", field: value})] == [((field,), kind)]


def test_node_group_taints_are_checked() -> None:
    # GIVEN a taint with an unknown effect WHEN validated THEN the taint's effect is named
    assert [
        (loc, kind)
        for loc, kind, _ in _errors(models.NodeGroup, {"name": "a", "taints": [{"key": "k", "effect": "Nope"}]})
    ] == [(("taints", 0, "effect"), "literal_error")]


# -- node labels and taints: hostile but schema-shaped values -------------------------------------


def _node_group(**fields: Any) -> dict[str, Any]:
    return {"name": "workers", **fields}


def _one_error(model: type[models.Model], data: Any) -> tuple[tuple[str | int, ...], str]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    (error,) = caught.value.errors(include_url=False)
    return tuple(error["loc"]), str(error["ctx"]["error"]) if "ctx" in error else error["msg"]


def test_node_labels_accept_kubernetes_label_syntax() -> None:
    # GIVEN keys with and without a prefix, values with '-', '_' and '.' WHEN validated THEN they are kept
    labels = {"team": "payments", "example.com/tier": "a.b_c-d", "A1": "Z", "x" * 63: "y" * 63}
    assert models.NodeGroup.model_validate(_node_group(labels=labels)).labels == labels


@pytest.mark.parametrize(
    "key", ["bad key!", "-team", "team-", "a/", "/a", "Example.com/a", "a/b/c", "team\n", "x" * 64, "é"]
)
def test_node_label_keys_must_be_kubernetes_qualified_names(key: str) -> None:
    # GIVEN a key Kubernetes refuses WHEN validated THEN the key itself is named, with the syntax allowed
    loc, message = _one_error(models.NodeGroup, _node_group(labels={key: "x"}))
    assert loc == ("labels", key, "[key]")
    assert message.startswith("expected a label key such as team or example.com/team (an optional DNS subdomain")


@pytest.mark.parametrize(
    ("key", "rule"),
    [
        (
            "example.com/" + "x" * 52,
            "EKS allows a node group label key of at most 63 characters, prefix included, got 64",
        ),
        ("node-role.kubernetes.io/worker", "EKS refuses node group label keys under kubernetes.io/, k8s.io/"),
        ("kubernetes.io/arch", "EKS refuses node group label keys under kubernetes.io/"),
        ("k8s.io/x", "EKS refuses node group label keys under"),
        ("eks.amazonaws.com/nodegroup", "EKS refuses node group label keys under"),
    ],
)
def test_node_label_keys_follow_the_eks_rules(key: str, rule: str) -> None:
    # GIVEN a key Kubernetes accepts but the EKS node group API refuses WHEN validated THEN EKS's rule is named
    loc, message = _one_error(models.NodeGroup, _node_group(labels={key: "x"}))
    assert loc == ("labels", key, "[key]")
    assert message.startswith(rule), message


@pytest.mark.parametrize(("value", "found"), [("", '""'), ("bad value!", '"bad value!"'), ("v\nw", '"v\\nw"')])
def test_node_label_values_are_label_values_and_not_empty(value: str, found: str) -> None:
    # GIVEN a value Kubernetes refuses, or an empty one (EKS refuses those) WHEN validated THEN it is shown
    loc, message = _one_error(models.NodeGroup, _node_group(labels={"team": value}))
    assert loc == ("labels", "team")
    assert message == (
        "expected a label value of 1 to 63 letters, digits, '-', '_' and '.', starting and ending with a letter or "
        f"digit (EKS refuses an empty one), got {found}"
    )


def test_a_long_node_label_value_shows_its_length() -> None:
    _, message = _one_error(models.NodeGroup, _node_group(labels={"team": "v" * 64}))
    assert message.endswith(f'got "{"v" * 64}" (64 characters)')


def test_taints_accept_kubernetes_syntax_and_an_empty_value() -> None:
    taints = [
        {"key": "dedicated", "value": "", "effect": "NoSchedule"},
        {"key": "example.com/gpu", "value": "true", "effect": "NoExecute"},
        {"key": "dedicated", "value": "x", "effect": "NoExecute"},
    ]
    group = models.NodeGroup.model_validate(_node_group(taints=taints))
    assert [(t.key, t.value, t.effect) for t in group.taints] == [
        ("dedicated", "", "NoSchedule"),
        ("example.com/gpu", "true", "NoExecute"),
        ("dedicated", "x", "NoExecute"),
    ]


@pytest.mark.parametrize(
    ("taint", "field", "start"),
    [
        ({"key": "bad key!"}, "key", "expected a taint key such as dedicated or example.com/gpu (an optional DNS"),
        ({"key": "node.kubernetes.io/x"}, "key", "EKS refuses node group taint keys under kubernetes.io/"),
        ({"key": "example.com/" + "k" * 52}, "key", "EKS allows a node group taint key of at most 63 characters"),
        ({"key": "a", "value": "bad value!"}, "value", "expected a taint value that is empty or has at most 63"),
        ({"key": "a", "value": "x" * 64}, "value", "expected a taint value that is empty or has at most 63"),
    ],
)
def test_taint_keys_and_values_follow_kubernetes_and_eks(taint: dict[str, str], field: str, start: str) -> None:
    loc, message = _one_error(models.NodeGroup, _node_group(taints=[{**taint, "effect": "NoSchedule"}]))
    assert loc == ("taints", 0, field)
    assert message.startswith(start), message


def test_a_node_group_has_at_most_50_taints_each_key_and_effect_once() -> None:
    # GIVEN 51 taints WHEN validated THEN EKS's limit is named
    many = [{"key": f"k{index}", "effect": "NoSchedule"} for index in range(51)]
    assert [(loc, kind) for loc, kind, _ in _errors(models.NodeGroup, _node_group(taints=many))] == [
        (("taints",), "too_long")
    ]
    # GIVEN a key and effect twice WHEN validated THEN Kubernetes' rule is named with the pair
    twice = [{"key": "gpu", "value": "a", "effect": "NoSchedule"}, {"key": "gpu", "value": "b", "effect": "NoSchedule"}]
    assert _one_error(models.NodeGroup, _node_group(taints=twice)) == (
        ("taints",),
        'each key and effect once (Kubernetes refuses repeats), "gpu" with NoSchedule repeated',
    )
