"""podinfo: a small web app to check a cluster end to end (the app Flux's own examples deploy)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field

from fluxplane.packs import versions
from fluxplane.sdk import SUBSTITUTED, Namespace, NamespaceProps, Pack, PackContext, ReleaseConfig, oci_chart_release

NAMESPACE = "podinfo"


class PodinfoConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    replicas: int = Field(1, ge=1, le=50, description="Pod replicas.")
    namespace: str = Field(NAMESPACE, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", description="Namespace to run in.")
    message: Annotated[str, SUBSTITUTED] = Field(
        "podinfo on ${cluster_name}",
        description="UI message; ${cluster_name} and other cluster variables are substituted.",
    )
    version: str = Field(versions.PODINFO.version, description="Chart version (OCI tag).")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")

    def installs_into(self) -> str:
        return self.namespace


def bind(ctx: PackContext, config: PodinfoConfig) -> None:
    Namespace(ctx.scope, "namespace", NamespaceProps(name=config.namespace))
    release = oci_chart_release(
        ctx.scope,
        name="podinfo",
        url=versions.PODINFO.url,
        version=config.version,
        target_namespace=config.namespace,
        identity=config,
    )
    release.add_values({"replicaCount": config.replicas, "ui": {"message": config.message}})
    release.add_values(config.values)
    ctx.add_health_check(release)


PACK = Pack(
    name="podinfo",
    version="1.0.0",
    description="podinfo sample web app, to verify a cluster end to end",
    config=PodinfoConfig,
    layer="apps",
    bind=bind,
    namespaces=(NAMESPACE,),
)
