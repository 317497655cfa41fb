"""The pack API: how an add-on plugs into fluxplane.

A pack is a module exporting ``PACK``, a :class:`Pack`. It is found through the ``fluxplane.packs``
entry-point group (built-in packs use the same group), configured by a typed section of the fleet
definition (``packs: {<name>: {...}}``) and bound once per distinct configuration: ``bind`` adds
constructs under :attr:`PackContext.scope` and declares the pack's health gates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from fluxplane.config.models import Fleet
from fluxplane.constructs.base import Resource
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.props import CustomHealthCheck, NamespacedObjectKindReference

Layer = Literal["controllers", "configs", "apps"]


class PackConfig(BaseModel):
    """Base of every pack's config model: one section of ``packs:`` in the definition."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)

    enabled: bool = Field(True, description="Set to false to switch the pack off here (e.g. for one cluster).")


@dataclass
class PackContext:
    """What ``bind`` works with: the output file to add objects to, the fleet, and the pack's health gates.

    ``fleet`` is the whole definition, for packs whose output follows from it (the hub's composite
    resource per workload cluster); most packs need only their config. ``timeout`` lengthens the
    Flux Kustomization's wait for packs whose objects take long to become healthy.
    """

    manifest: Manifest
    fleet: Fleet | None = None
    health_checks: list[NamespacedObjectKindReference] = field(default_factory=list)
    health_check_exprs: list[CustomHealthCheck] = field(default_factory=list)
    timeout: str | None = None

    @property
    def scope(self) -> Manifest:
        return self.manifest

    def add_health_check(self, target: Resource) -> NamespacedObjectKindReference:
        """Gate the pack's Flux Kustomization on a kstatus-compatible object (HelmRelease, Deployment)."""
        ref = NamespacedObjectKindReference(
            api_version=target.api_version, kind=target.kind, name=target.name, namespace=target.namespace
        )
        self.health_checks.append(ref)
        return ref

    def add_health_check_expr(self, check: CustomHealthCheck) -> CustomHealthCheck:
        """Say how to judge objects of a custom kind (CEL, see fluxplane.constructs.health).

        Flux evaluates the expressions for the objects given to :meth:`add_health_check`; a pack that
        lists none is waited for as a whole (``wait: true``), and the expressions then apply to every
        object of their kind.
        """
        self.health_check_exprs.append(check)
        return check


@dataclass(frozen=True)
class Pack:
    """An add-on: what it is, how it is configured, where it sits and what it needs first."""

    name: str
    version: str
    description: str
    config: type[PackConfig]
    layer: Layer
    bind: Callable[[PackContext, Any], None]
    requires: tuple[str, ...] = ()
