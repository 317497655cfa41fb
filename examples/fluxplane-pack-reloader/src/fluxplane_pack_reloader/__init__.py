"""reloader: Stakater Reloader, as a fluxplane pack shipped in a distribution of its own.

Reloader watches ConfigMaps and Secrets and rolls the Deployments, StatefulSets and DaemonSets that
use them, so a sealed secret rotated through Git reaches running pods. Enable it in the definition:

    packs:
      reloader:
        watchGlobally: false
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from fluxplane.sdk import Chart, Pack, PackConfig, PackContext, chart_release

#: The pinned chart; a pack outside fluxplane pins its own versions.
RELOADER = Chart("https://stakater.github.io/stakater-charts", "reloader", "2.2.7")
#: Where Reloader runs; declared on the pack, so no app is given this namespace.
NAMESPACE = "kube-system"


class ReloaderConfig(PackConfig):
    """The ``packs.reloader`` section."""

    watch_globally: bool = Field(
        True,
        alias="watchGlobally",
        description="Watch every namespace; false limits Reloader to its own namespace.",
    )
    ignore_secrets: bool = Field(False, alias="ignoreSecrets", description="Do not roll workloads on Secret changes.")
    version: str = Field(RELOADER.version, description="Chart version.")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")


def bind(ctx: PackContext, config: ReloaderConfig) -> None:
    release = chart_release(
        ctx.scope, name="reloader", chart=RELOADER, version=config.version, target_namespace=NAMESPACE
    )
    release.add_values({"reloader": {"watchGlobally": config.watch_globally, "ignoreSecrets": config.ignore_secrets}})
    release.add_values(config.values)
    ctx.add_health_check(release)


PACK = Pack[ReloaderConfig](
    name="reloader",
    version="0.1.0",
    description="Stakater Reloader: roll workloads when their ConfigMaps or Secrets change",
    config=ReloaderConfig,
    layer="controllers",
    bind=bind,
    namespaces=(NAMESPACE,),
)
