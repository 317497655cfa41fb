"""crossplane: Crossplane v2 core on the management cluster, from its Helm chart."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from fluxplane.constructs.helm_release import DEFAULT_DRIFT_DETECTION, DEFAULT_INSTALL, DEFAULT_UPGRADE, HelmRelease
from fluxplane.constructs.helm_repository import HelmRepository
from fluxplane.constructs.namespace import Namespace
from fluxplane.packs import versions
from fluxplane.packs.api import Pack, PackConfig, PackContext

NAMESPACE = "crossplane-system"


class CrossplaneConfig(PackConfig):
    version: str = Field(versions.CROSSPLANE.version, description="Crossplane chart version (2.x).")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")


def bind(ctx: PackContext, config: CrossplaneConfig) -> None:
    chart = versions.CROSSPLANE
    Namespace(ctx.scope, "namespace", {"name": NAMESPACE})
    repository = HelmRepository(ctx.scope, "repository", {"name": "crossplane-stable", "url": chart.repository})
    release = HelmRelease(
        ctx.scope,
        "release",
        {
            "name": "crossplane",
            "releaseName": "crossplane",
            "targetNamespace": NAMESPACE,
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
    release.add_values(config.values)
    ctx.add_health_check(release)


PACK = Pack(
    name="crossplane",
    version="1.0.0",
    description="Crossplane v2 core (Helm chart) in crossplane-system",
    config=CrossplaneConfig,
    layer="controllers",
    bind=bind,
)
