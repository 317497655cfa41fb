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
from fluxplane.charts.layout import RepositoryLayout, catalogue_dir, relative
from fluxplane.charts.overlay import plan_overlay
from fluxplane.constructs.base import Construct
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.raw import RawObject
from fluxplane.constructs.render import dump_value

#: Renders an add-on into a manifest; returns what the add-on declared about itself (health gates).
Binder = Callable[[Manifest], Any]


@dataclass
class Variant:
    """An add-on rendered with one configuration."""

    directory: str
    manifest: Manifest
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

    def render(self, variant_id: str, directory: str, binder: Binder) -> Variant:
        """Render the add-on for one configuration, without writing it yet."""
        manifest = Manifest(self._variants, variant_id, path=posixpath.join(directory, self.file_name))
        declared = binder(manifest)
        return Variant(directory=directory, manifest=manifest, documents=manifest.documents(), declared=declared)

    def emit_base(self, variant: Variant) -> None:
        """Write ``variant`` in full as the base folder."""
        self._files.append(variant.manifest)
        self.add_kustomization_file("base", variant.directory).config.add_resource(self.file_name)

    def emit_overlay(self, construct_id: str, parent: Variant, child: Variant) -> bool:
        """Write ``child`` as an overlay over ``parent``; False (nothing written) when they render alike."""
        plan = plan_overlay(parent.documents, child.documents, dump_value)
        if plan.empty:
            return False
        scope = Construct(self, construct_id)
        config = self.add_kustomization_file(f"{construct_id}-kustomization", child.directory, scope=scope).config
        config.add_resource(relative(child.directory, parent.directory))
        if plan.added:
            added = self.add_manifest(f"{construct_id}-added", posixpath.join(child.directory, self.file_name), scope)
            for index, document in enumerate(plan.added):
                RawObject(added, f"object-{index}", document)
            config.add_resource(self.file_name)
        for patch in plan.patches:
            config.add_patch(patch)
        return True
