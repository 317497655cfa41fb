"""Small packs for the tests: one per layer, with values that change their output, a builder of workload clusters,
and a pack whose controllers install CRDs."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from fluxplane.constructs.config_map import ConfigMap
from fluxplane.constructs.health import conditions_health
from fluxplane.constructs.namespace import Namespace
from fluxplane.constructs.raw import RawObject
from fluxplane.packs.api import Layer, Pack, PackConfig, PackContext
from fluxplane.packs.registry import PackRegistry


class DemoConfig(PackConfig):
    size: int = Field(1, ge=1)
    extra: bool = False


def demo_pack(name: str, layer: Layer, requires: tuple[str, ...] = (), health: str = "expr") -> Pack:
    def bind(ctx: PackContext, config: DemoConfig) -> None:
        namespace = Namespace(ctx.scope, "namespace", {"name": name})
        ConfigMap(ctx.scope, "settings", {"name": "settings", "namespace": name, "data": {"size": str(config.size)}})
        if config.extra:
            ConfigMap(ctx.scope, "extra", {"name": "extra", "namespace": name, "data": {"on": "${cluster_name}"}})
        if health == "expr":
            ctx.add_health_check_expr(conditions_health("example.com/v1", "Widget", ("Ready",), failed="Synced"))
        elif health == "check":
            ctx.add_health_check(namespace)

    return Pack(
        name=name,
        version="1.0.0",
        description=f"demo {name}",
        config=DemoConfig,
        layer=layer,
        bind=bind,
        requires=requires,
    )


def demo_builder() -> Pack:
    """A pack that builds workload clusters: one ConfigMap per cluster in its hub namespace."""

    def bind(ctx: PackContext, config: PackConfig) -> None:
        assert ctx.cluster is not None
        built = ConfigMap(ctx.scope, "built", {"name": "built", "namespace": ctx.cluster.name, "data": {}})
        ctx.add_health_check(built)

    return Pack(
        name="build",
        version="1.0.0",
        description="demo cluster builder",
        config=PackConfig,
        layer="configs",
        bind=bind,
        builds_clusters=True,
    )


#: What a demo fleet's hub enables to build its clusters, and its public repository (no sealed credentials).
DEMO_HUB: dict[str, Any] = {"name": "hub", "region": "us-west-2", "packs": {"build": {}}}
DEMO_REPOSITORIES: dict[str, Any] = {"platform": {"url": "ssh://git@example.com/org/fleet.git", "secretRef": None}}


def demo_registry(*extra: Pack) -> PackRegistry:
    return PackRegistry(
        [
            demo_builder(),
            demo_pack("ctrl", "controllers", health="check"),
            demo_pack("conf", "configs", requires=("ctrl",)),
            demo_pack("web", "apps", health="none"),
            *extra,
        ]
    )


class IssuerConfig(PackConfig):
    email: str = Field("ops@example.com")
    identity: bool = Field(False, description="Declare a Pod Identity for the controller.")


def _bind_issuer(ctx: PackContext, config: IssuerConfig) -> None:
    namespace = Namespace(ctx.scope, "namespace", {"name": "issuer-system"})
    ctx.add_health_check(namespace)
    issuer = RawObject(
        ctx.scope,
        "issuer",
        {
            "apiVersion": "issuer.example.com/v1",
            "kind": "Issuer",
            "metadata": {"name": "default"},
            "spec": {"email": config.email},
        },
    )
    ctx.add_health_check(issuer)
    if config.identity:
        ctx.add_pod_identity("controller", namespace="issuer-system", service_account="issuer", managed_policies=("x",))


#: A pack whose controllers install CRDs (issuer.example.com) and that also emits an object of their kind.
ISSUER = Pack(
    name="issuer",
    version="1.0.0",
    description="an issuer",
    config=IssuerConfig,
    layer="controllers",
    bind=_bind_issuer,
    crd_groups=("issuer.example.com",),
)
