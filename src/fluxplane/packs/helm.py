"""The shape most add-ons share: a chart from a Helm repository, released with the fleet's defaults."""

from __future__ import annotations

from typing import Any

from fluxplane.constructs.helm_release import DEFAULT_DRIFT_DETECTION, DEFAULT_INSTALL, DEFAULT_UPGRADE, HelmRelease
from fluxplane.constructs.helm_repository import HelmRepository
from fluxplane.constructs.oci_repository import HELM_CHART_LAYER, OCIRepository
from fluxplane.constructs.props import HELM_CONTROLLER
from fluxplane.packs.versions import Chart


def _release(scope: Any, name: str, target_namespace: str, chart: dict[str, Any]) -> HelmRelease:
    return HelmRelease(
        scope,
        "release",
        {
            "name": name,
            "releaseName": name,
            "targetNamespace": target_namespace,
            "serviceAccountName": HELM_CONTROLLER,
            **chart,
            "install": DEFAULT_INSTALL,
            "upgrade": DEFAULT_UPGRADE,
            "driftDetection": DEFAULT_DRIFT_DETECTION,
        },
    )


def chart_release(
    scope: Any, *, name: str, chart: Chart, version: str, target_namespace: str, repository: str | None = None
) -> HelmRelease:
    """A HelmRepository for ``chart`` and a HelmRelease ``name`` of it into ``target_namespace``.

    Both live in flux-system (so they work under Flux's no-cross-namespace-refs lockdown); the
    release retries installs, rolls back failed upgrades and corrects drift. Returns the release,
    for values and health checks.
    """
    source = HelmRepository(scope, "repository", {"name": repository or name, "url": chart.repository})
    spec = {"chart": chart.chart, "version": version, "sourceRef": {"kind": "HelmRepository", "name": source.name}}
    return _release(scope, name, target_namespace, {"chart": {"spec": spec}})


def oci_chart_release(scope: Any, *, name: str, url: str, version: str, target_namespace: str) -> HelmRelease:
    """An OCIRepository ``name`` for the chart artifact at ``url`` (tag ``version``) and a HelmRelease of
    it (``chartRef``) into ``target_namespace``, with the same defaults as chart_release."""
    source = OCIRepository(
        scope,
        "chart",
        {
            "name": name,
            "url": url,
            "ref": {"tag": version},
            "layerSelector": {"mediaType": HELM_CHART_LAYER, "operation": "copy"},
        },
    )
    return _release(scope, name, target_namespace, {"chartRef": {"kind": "OCIRepository", "name": source.name}})


def keep_service_account(values: dict[str, Any], namespace: str, account: str, under: str = "") -> dict[str, Any]:
    """Refuse extra Helm values that rename the chart's service account or stop creating it: an add-on's
    Pod Identity role is bound to exactly ``namespace``/``account``. ``under`` is the values key that
    holds ``serviceAccount`` (``controller`` for ``controller.serviceAccount``), empty for the top level."""
    section = values.get(under) if under else values
    found = section.get("serviceAccount") if isinstance(section, dict) else None
    if isinstance(found, dict) and {"create", "name"} & found.keys():
        key = f"{under}.serviceAccount" if under else "serviceAccount"
        raise ValueError(
            f"must not set {key}.create or .name: the Pod Identity role is bound to service account "
            f"{namespace}/{account}"
        )
    return values
