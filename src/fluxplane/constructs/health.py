"""Null-safe CEL health expressions for Flux ``healthCheckExprs``, each with a failure clause.

kustomize-controller waits until its timeout when an expression touches a field that does not exist
yet, and ``all`` over an empty list is true. So every expression here reads conditions through
``status.?conditions.orValue([])`` and tests them with ``exists``.

Every check also says when an object has failed (Flux's ``failed`` expression), so a Kustomization
reports the failure at once and retries after its ``retryInterval`` instead of waiting out its
timeout. The failure is the False status of a condition the controller sets only on an error, never
while the object is still progressing: Crossplane sets a composite's ``Ready`` to False while it is
being created, so composites fail on ``Synced`` (a reconcile error), not on ``Ready``.
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


def conditions_health(api_version: str, kind: str, current: tuple[str, ...], *, failed: str) -> CustomHealthCheck:
    """A health check that is current when every condition in ``current`` is True.

    ``failed`` names the condition whose False status means the object failed (rather than still
    progressing), so Flux reports the failure instead of waiting for the timeout.
    """
    if not current:
        raise ValueError("conditions_health needs at least one condition")
    return CustomHealthCheck(
        api_version=api_version,
        kind=kind,
        current=" && ".join(condition_true(name) for name in current),
        failed=condition_false(failed),
    )


def composite_health(api_version: str, kind: str) -> CustomHealthCheck:
    """A Crossplane composite resource: Ready, failed on a reconcile error (``Synced`` False).

    Crossplane keeps ``Ready`` False (reason ``Creating``) while it composes, so ``Ready`` False is
    progress; ``Synced`` False (``ReconcileError``) is a composition or function error.
    """
    return conditions_health(api_version, kind, ("Ready",), failed="Synced")


def definition_health(api_version: str, kind: str) -> CustomHealthCheck:
    """A Crossplane CompositeResourceDefinition: its composite CRD served (``Established``).

    ``Offered`` is set only for XRDs with claims, which namespaced (v2) XRDs cannot have: waiting for
    it would never end. ``Established`` False means Crossplane is removing the definition.
    """
    return conditions_health(api_version, kind, ("Established",), failed="Established")


def package_health(api_version: str, kind: str) -> CustomHealthCheck:
    """A Crossplane package (Provider, Function): installed and healthy; failed when unhealthy.

    While a package unpacks, ``Installed`` is False and ``Healthy`` is Unknown; ``Healthy`` False
    (``UnhealthyPackageRevision``) means its revision or runtime failed.
    """
    return conditions_health(api_version, kind, ("Installed", "Healthy"), failed="Healthy")


def ready_health(api_version: str, kind: str) -> CustomHealthCheck:
    """An object whose controller sets ``Ready`` False only on an error (External Secrets' stores and secrets)."""
    return conditions_health(api_version, kind, ("Ready",), failed="Ready")
