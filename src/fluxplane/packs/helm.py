"""The shape most add-ons share: a chart from a Helm repository, released with the fleet's defaults."""

from __future__ import annotations

from typing import Any

from fluxplane.constructs.helm_release import DEFAULT_DRIFT_DETECTION, DEFAULT_INSTALL, DEFAULT_UPGRADE, HelmRelease
from fluxplane.constructs.helm_repository import HelmRepository
from fluxplane.constructs.props import HELM_CONTROLLER
from fluxplane.packs.versions import Chart


def chart_release(
    scope: Any, *, name: str, chart: Chart, version: str, target_namespace: str, repository: str | None = None
) -> HelmRelease:
    """A HelmRepository for ``chart`` and a HelmRelease ``name`` of it into ``target_namespace``.

    Both live in flux-system (so they work under Flux's no-cross-namespace-refs lockdown); the
    release retries installs, rolls back failed upgrades and corrects drift. Returns the release,
    for values and health checks.
    """
    source = HelmRepository(scope, "repository", {"name": repository or name, "url": chart.repository})
    return HelmRelease(
        scope,
        "release",
        {
            "name": name,
            "releaseName": name,
            "targetNamespace": target_namespace,
            "serviceAccountName": HELM_CONTROLLER,
            "chart": {
                "spec": {
                    "chart": chart.chart,
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": source.name},
                }
            },
            "install": DEFAULT_INSTALL,
            "upgrade": DEFAULT_UPGRADE,
            "driftDetection": DEFAULT_DRIFT_DETECTION,
        },
    )
