"""Null-safe CEL health expressions for Flux healthCheckExprs."""

from __future__ import annotations

import pytest

from fluxplane.constructs import condition_false, condition_true, conditions_health
from fluxplane.constructs.props import CustomHealthCheck

NULL_SAFE = "status.?conditions.orValue([])"


def test_condition_true_reads_conditions_null_safely_with_exists() -> None:
    # GIVEN / WHEN the expression for condition Ready being True
    expr = condition_true("Ready")

    # THEN it is exactly the null-safe exists form
    assert expr == "status.?conditions.orValue([]).exists(c, c.type == 'Ready' && c.status == 'True')"


def test_condition_false_reads_conditions_null_safely_with_exists() -> None:
    # GIVEN / WHEN the expression for condition Synced being False
    expr = condition_false("Synced")

    # THEN it is exactly the null-safe exists form with status False
    assert expr == "status.?conditions.orValue([]).exists(c, c.type == 'Synced' && c.status == 'False')"


def test_conditions_health_defaults_to_ready() -> None:
    # GIVEN / WHEN a health check with default conditions
    check = conditions_health("example.com/v1", "Widget")

    # THEN it is current when Ready is True and has no failed expression
    assert check == CustomHealthCheck(
        api_version="example.com/v1",
        kind="Widget",
        current="status.?conditions.orValue([]).exists(c, c.type == 'Ready' && c.status == 'True')",
    )
    assert check.dump() == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "current": "status.?conditions.orValue([]).exists(c, c.type == 'Ready' && c.status == 'True')",
    }


def test_conditions_health_joins_several_conditions_with_and() -> None:
    # GIVEN / WHEN a health check over Ready and Synced
    check = conditions_health("pkg.crossplane.io/v1", "Provider", current=("Installed", "Healthy"))

    # THEN both must be True, in the given order
    assert check.current == (
        "status.?conditions.orValue([]).exists(c, c.type == 'Installed' && c.status == 'True')"
        " && status.?conditions.orValue([]).exists(c, c.type == 'Healthy' && c.status == 'True')"
    )


def test_conditions_health_failed_names_the_condition_whose_false_status_means_failure() -> None:
    # GIVEN / WHEN a health check with a failed condition
    check = conditions_health("example.com/v1", "Widget", failed="Synced")

    # THEN failed is the null-safe "Synced is False" expression and inProgress stays unset
    assert check.failed == "status.?conditions.orValue([]).exists(c, c.type == 'Synced' && c.status == 'False')"
    assert check.in_progress is None


@pytest.mark.parametrize(
    "check",
    [
        conditions_health("a/v1", "A"),
        conditions_health("a/v1", "A", current=("Ready", "Synced", "Healthy"), failed="Ready"),
    ],
    ids=["default", "three-conditions-and-failed"],
)
def test_every_expression_is_null_safe_and_never_uses_all(check: CustomHealthCheck) -> None:
    # GIVEN a health check's expressions
    expressions = [expr for expr in (check.current, check.in_progress, check.failed) if expr is not None]

    # WHEN / THEN none uses all() (true over an empty list), and every conditions access is null-safe
    for expr in expressions:
        assert ".all(" not in expr
        accesses = expr.count("conditions")
        assert accesses > 0
        assert expr.count(NULL_SAFE) == accesses
        assert expr.count(f"{NULL_SAFE}.exists(") == accesses


def test_conditions_health_without_conditions_is_rejected() -> None:
    # GIVEN / WHEN / THEN an empty condition list would make the check vacuous, so it is refused
    with pytest.raises(ValueError, match=r"^conditions_health needs at least one condition$"):
        conditions_health("a/v1", "A", current=())
