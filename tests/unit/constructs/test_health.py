"""Null-safe CEL health expressions for Flux healthCheckExprs."""

from __future__ import annotations

import pytest

from fluxplane.constructs import (
    composite_health,
    condition_false,
    condition_true,
    conditions_health,
    definition_health,
    package_health,
    ready_health,
)
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


def test_conditions_health_is_current_when_its_conditions_are_true_and_failed_when_one_is_false() -> None:
    # GIVEN / WHEN a health check on Ready that fails on Synced
    check = conditions_health("example.com/v1", "Widget", ("Ready",), failed="Synced")

    # THEN current reads Ready True, failed reads Synced False, inProgress stays unset
    assert check == CustomHealthCheck(
        api_version="example.com/v1",
        kind="Widget",
        current="status.?conditions.orValue([]).exists(c, c.type == 'Ready' && c.status == 'True')",
        failed="status.?conditions.orValue([]).exists(c, c.type == 'Synced' && c.status == 'False')",
    )
    assert check.dump() == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "current": "status.?conditions.orValue([]).exists(c, c.type == 'Ready' && c.status == 'True')",
        "failed": "status.?conditions.orValue([]).exists(c, c.type == 'Synced' && c.status == 'False')",
    }


def test_conditions_health_joins_several_conditions_with_and() -> None:
    # GIVEN / WHEN a health check over Installed and Healthy
    check = conditions_health("pkg.crossplane.io/v1", "Provider", ("Installed", "Healthy"), failed="Healthy")

    # THEN both must be True, in the given order
    assert check.current == (
        "status.?conditions.orValue([]).exists(c, c.type == 'Installed' && c.status == 'True')"
        " && status.?conditions.orValue([]).exists(c, c.type == 'Healthy' && c.status == 'True')"
    )


def test_composites_fail_on_a_reconcile_error_not_while_they_are_created() -> None:
    # GIVEN / WHEN the health check of a Crossplane composite resource
    check = composite_health("platform.fluxplane.io/v1alpha1", "EKSCluster")

    # THEN it waits for Ready and fails on Synced False (Crossplane keeps Ready False while creating)
    assert check.current == condition_true("Ready")
    assert check.failed == condition_false("Synced")


def test_definitions_wait_for_established_only_since_namespaced_xrds_are_never_offered() -> None:
    # GIVEN / WHEN the health check of a CompositeResourceDefinition
    check = definition_health("apiextensions.crossplane.io/v2", "CompositeResourceDefinition")

    # THEN it is current when Established, fails when Established turns False, and never waits for Offered
    assert check.current == condition_true("Established")
    assert check.failed == condition_false("Established")
    assert "Offered" not in f"{check.current} {check.failed}"


def test_packages_fail_when_unhealthy_and_stores_when_not_ready() -> None:
    # GIVEN / WHEN the health checks of a Crossplane package and an External Secrets store
    package = package_health("pkg.crossplane.io/v1", "Provider")
    store = ready_health("external-secrets.io/v1", "ClusterSecretStore")

    # THEN each names its controller's failure condition
    assert package.failed == condition_false("Healthy")
    assert store.current == condition_true("Ready")
    assert store.failed == condition_false("Ready")


@pytest.mark.parametrize(
    "check",
    [
        conditions_health("a/v1", "A", ("Ready",), failed="Synced"),
        conditions_health("a/v1", "A", ("Ready", "Synced", "Healthy"), failed="Ready"),
        composite_health("a/v1", "A"),
        definition_health("a/v1", "A"),
        package_health("a/v1", "A"),
        ready_health("a/v1", "A"),
    ],
    ids=["one-condition", "three-conditions", "composite", "definition", "package", "ready"],
)
def test_every_expression_is_null_safe_and_never_uses_all(check: CustomHealthCheck) -> None:
    # GIVEN a health check's expressions
    expressions = [expr for expr in (check.current, check.in_progress, check.failed) if expr is not None]

    # WHEN / THEN every check fails fast, none uses all() (true over an empty list), and every
    # conditions access is null-safe
    assert check.failed is not None
    for expr in expressions:
        assert ".all(" not in expr
        accesses = expr.count("conditions")
        assert accesses > 0
        assert expr.count(NULL_SAFE) == accesses
        assert expr.count(f"{NULL_SAFE}.exists(") == accesses


def test_conditions_health_without_conditions_is_rejected() -> None:
    # GIVEN / WHEN / THEN an empty condition list would make the check vacuous, so it is refused
    with pytest.raises(ValueError, match=r"^conditions_health needs at least one condition$"):
        conditions_health("a/v1", "A", (), failed="Ready")
