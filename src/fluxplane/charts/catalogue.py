"""CatalogueChart: one add-on's folder of the catalogue, its base and its overlays.

``<layer>/<pack>/base/`` holds the add-on rendered with the fleet-wide configuration. An environment
or a cluster whose configuration renders differently gets an overlay folder over its parent that
holds only the difference (see fluxplane.charts.overlay): ``<layer>/<pack>/<environment>/`` and
``clusters/<cluster>/overlays/<pack>/``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fluxplane.charts.base import FleetChart
from fluxplane.charts.overlay import OverlayPlan, plan_overlay
from fluxplane.constructs.base import Construct
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.raw import RawObject
from fluxplane.core.codec import dump_value
from fluxplane.core.layout import RepositoryLayout, catalogue_dir, relative

#: Renders an add-on into a manifest; returns what the add-on declared about itself (health gates).
Binder = Callable[[Manifest], Any]


@dataclass(frozen=True)
class Variant:
    """An add-on rendered with one configuration, and the folder a cluster applies it from."""

    directory: str
    documents: list[dict[str, Any]]
    declared: Any


class CatalogueChart(FleetChart):
    """The catalogue entry of one add-on."""

    def __init__(self, scope: Any, construct_id: str, *, layout: RepositoryLayout, layer: str, pack: str) -> None:
        super().__init__(scope, construct_id, layout=layout, directory=catalogue_dir(layer, pack))
        self.layer = layer
        self.pack = pack
        self.base_dir = posixpath.join(self.directory, "base")
        self._variants = Construct(self, "variants")

    @property
    def file_name(self) -> str:
        return f"{self.pack}.yaml"

    def emit_base(self, binder: Binder) -> Variant:
        """Render the add-on with the fleet-wide configuration and write it in full as the base folder."""
        manifest = self.add_manifest("base", posixpath.join(self.base_dir, self.file_name))
        declared = binder(manifest)
        self.add_kustomization_file("base-kustomization", self.base_dir).config.add_resource(self.file_name)
        return Variant(directory=self.base_dir, documents=manifest.documents(), declared=declared)

    def render(self, variant_id: str, binder: Binder) -> tuple[list[dict[str, Any]], Any]:
        """Render the add-on for another configuration, without writing it: (documents, declared)."""
        manifest = Manifest(self._variants, variant_id, path=posixpath.join(self.base_dir, self.file_name))
        declared = binder(manifest)
        return manifest.documents(), declared

    def plan(self, parent: Variant, documents: list[dict[str, Any]]) -> OverlayPlan:
        """The overlay that turns ``parent`` into ``documents`` (empty when they render alike)."""
        return plan_overlay(parent.documents, documents, dump_value)

    def emit_overlay(self, construct_id: str, directory: str, parent: Variant, plan: OverlayPlan) -> None:
        """Write ``plan`` as an overlay folder at ``directory`` over ``parent``'s folder."""
        scope = Construct(self, construct_id)
        config = self.add_kustomization_file("kustomization", directory, scope=scope).config
        config.add_resource(relative(directory, parent.directory))
        if plan.added:
            added = self.add_manifest("added", posixpath.join(directory, self.file_name), scope)
            for index, document in enumerate(plan.added):
                RawObject(added, f"object-{index}", document)
            config.add_resource(self.file_name)
        for patch in plan.patches:
            config.add_patch(patch)
