"""crossplane: Crossplane v2 core, from its Helm chart: on the hub, and on a workload cluster that makes its apps'
resources itself (``appResources: spoke``)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from fluxplane.packs import versions
from fluxplane.sdk import Namespace, NamespaceProps, Pack, PackContext, ReleaseConfig, chart_release

NAMESPACE = "crossplane-system"


class CrossplaneConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    version: str = Field(versions.CROSSPLANE.version, description="Crossplane chart version (2.x).")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")


def bind(ctx: PackContext, config: CrossplaneConfig) -> None:
    Namespace(ctx.scope, "namespace", NamespaceProps(name=NAMESPACE))
    release = chart_release(
        ctx.scope,
        name="crossplane",
        chart=versions.CROSSPLANE,
        version=config.version,
        target_namespace=NAMESPACE,
        identity=config,
        repository="crossplane-stable",
    )
    # No catch-all activation: a new hub activates only the managed resources crossplane-providers' policy
    # names. (On a hub installed before, the "default" policy Crossplane made stays, and so does what it
    # activated: activation is one-way; `kubectl delete mrap default` limits what comes next.)
    release.add_values({"provider": {"defaultActivations": []}})
    release.add_values(config.values)
    ctx.add_health_check(release)


PACK = Pack(
    name="crossplane",
    version="1.0.0",
    description="Crossplane v2 core (Helm chart) in crossplane-system",
    config=CrossplaneConfig,
    layer="controllers",
    bind=bind,
    namespaces=(NAMESPACE,),
    runs_on="any",
    # Crossplane's own (its pods apply them): XRDs, Compositions, MRDs and activation policies; packages and
    # their runtime configs; Usages; Operations
    crds=("apiextensions.crossplane.io", "pkg.crossplane.io", "protection.crossplane.io", "ops.crossplane.io"),
)
