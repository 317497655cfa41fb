"""Null-safe CEL health expressions for Flux ``healthCheckExprs``.

kustomize-controller waits until its timeout when an expression touches a field that does not exist
yet, and ``all`` over an empty list is true. So every expression here reads conditions through
``status.?conditions.orValue([])`` and tests them with ``exists``.
"""

from __future__ import annotations

from fluxplane.constructs.props import CustomHealthCheck

CONDITIONS = "status.?conditions.orValue([])"


def condition_true(condition: str) -> str:
    """CEL: the object has condition ``condition`` with status True."""
    return f"{CONDITIONS}.exists(c, c.type == '{condition}' && c.status == 'True')"


def condition_false(condition: str) -> str:
    """CEL: the object has condition ``condition`` with status False."""
    return f"{CONDITIONS}.exists(c, c.type == '{condition}' && c.status == 'False')"


def conditions_health(
    api_version: str, kind: str, current: tuple[str, ...] = ("Ready",), failed: str | None = None
) -> CustomHealthCheck:
    """A health check that is current when every condition in ``current`` is True.

    ``failed``, when given, names a condition whose False status means the object failed (rather
    than still progressing), so Flux reports the failure instead of waiting for the timeout.
    """
    if not current:
        raise ValueError("conditions_health needs at least one condition")
    return CustomHealthCheck(
        api_version=api_version,
        kind=kind,
        current=" && ".join(condition_true(name) for name in current),
        failed=condition_false(failed) if failed else None,
    )
