"""metrics-server: resource metrics for ``kubectl top``, HPA and VPA."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from fluxplane.packs import versions
from fluxplane.sdk import Pack, PackContext, ReleaseConfig, chart_release

NAMESPACE = "kube-system"


class MetricsServerConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    replicas: int = Field(
        1, ge=1, le=10, description="metrics-server replicas; 2 or more also adds a PodDisruptionBudget."
    )
    version: str = Field(versions.METRICS_SERVER.version, description="Chart version.")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")


def bind(ctx: PackContext, config: MetricsServerConfig) -> None:
    release = chart_release(
        ctx.scope,
        name="metrics-server",
        chart=versions.METRICS_SERVER,
        version=config.version,
        target_namespace=NAMESPACE,
        identity=config,
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
    namespaces=(NAMESPACE,),
)
