"""metrics-server: resource metrics for ``kubectl top``, HPA and VPA."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from fluxplane.constructs.helm_release import (
    DEFAULT_DRIFT_DETECTION,
    DEFAULT_INSTALL,
    DEFAULT_UPGRADE,
    HelmRelease,
)
from fluxplane.constructs.helm_repository import HelmRepository
from fluxplane.packs import versions
from fluxplane.packs.api import Pack, PackConfig, PackContext


class MetricsServerConfig(PackConfig):
    replicas: int = Field(
        1, ge=1, le=10, description="metrics-server replicas; 2 or more also adds a PodDisruptionBudget."
    )
    version: str = Field(versions.METRICS_SERVER.version, description="Chart version.")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")


def bind(ctx: PackContext, config: MetricsServerConfig) -> None:
    chart = versions.METRICS_SERVER
    repository = HelmRepository(ctx.scope, "repository", {"name": "metrics-server", "url": chart.repository})
    release = HelmRelease(
        ctx.scope,
        "release",
        {
            "name": "metrics-server",
            "releaseName": "metrics-server",
            "targetNamespace": "kube-system",
            "chart": {
                "spec": {
                    "chart": chart.chart,
                    "version": config.version,
                    "sourceRef": {"kind": "HelmRepository", "name": repository.name},
                }
            },
            "install": DEFAULT_INSTALL,
            "upgrade": DEFAULT_UPGRADE,
            "driftDetection": DEFAULT_DRIFT_DETECTION,
        },
    )
    release.add_values({"replicas": config.replicas})
    if config.replicas > 1:
        release.add_values({"podDisruptionBudget": {"enabled": True, "minAvailable": 1}})
    release.add_values(config.values)
    ctx.add_health_check(release)


PACK = Pack(
    name="metrics-server",
    version="1.0.0",
    description="Kubernetes metrics-server (resource metrics for kubectl top and autoscalers)",
    config=MetricsServerConfig,
    layer="controllers",
    bind=bind,
)
