"""Composite resources rendered to what their Compositions compose, without the checks: what plan compares.

A ``Composer`` holds one tree's definitions (its XRDs, Compositions and Functions, with the clusters' own overlays
of them: fluxplane.validate.compose.overlays) and renders a composite placed on a cluster the way the checks do
(fluxplane.validate.compose.checks): defaulted by its XRD's schema, its Composition selected among those its
cluster meets, the function pipeline run offline to the fixed point Crossplane converges to
(fluxplane.validate.compose.engine). What only the cluster knows (an observed status, a generated name) stays
``Unknown``. A composite that cannot be rendered (no XRD defines it, no Composition is selected, a function
this package does not run, a failing patch) says why instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fluxplane.core.layout import cluster_of
from fluxplane.validate.compose.checks import same_cluster
from fluxplane.validate.compose.composition import CompositionModel, read_composition, split_api
from fluxplane.validate.compose.engine import render
from fluxplane.validate.compose.xr import XRD, XRD_GROUP, defaulted, observed_xr, read_xrd, select_compositions
from fluxplane.validate.tree import Document

__all__ = ["ComposedResources", "Composer"]


@dataclass(frozen=True)
class ComposedResources:
    """What one composite composes: each resource by its name in the Composition, or why nothing is known."""

    composition: str = ""
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Why the composite was not rendered ("" when it was).
    reason: str = ""


class Composer:
    """Renders composites with one tree's definitions (module docstring)."""

    def __init__(self, definitions: Iterable[Document]) -> None:
        self.xrds: dict[tuple[str, str], XRD] = {}
        self.cluster_xrds: dict[tuple[str | None, str, str], XRD] = {}
        self.compositions: list[Document] = []
        self.functions: dict[str, str] = {}
        self._models: dict[tuple[str, int], CompositionModel] = {}
        for document in definitions:
            if not isinstance(document.body, dict):
                continue
            group = split_api(document.body.get("apiVersion"))[0]
            if document.kind == "CompositeResourceDefinition" and group == XRD_GROUP:
                xrd = read_xrd(document, None)
                owner = cluster_of(document.file)
                if owner is None:
                    self.xrds.setdefault((xrd.group, xrd.kind), xrd)
                self.cluster_xrds.setdefault((owner, xrd.group, xrd.kind), xrd)
            elif document.kind == "Composition" and group == XRD_GROUP:
                self.compositions.append(document)
            elif document.kind == "Function" and group == "pkg.crossplane.io":
                package = (document.body.get("spec") or {}).get("package")
                self.functions[document.name] = package if isinstance(package, str) else document.name

    def definition(self, group: str, kind: str, cluster: str | None) -> XRD | None:
        """The XRD of ``group`` and ``kind`` a composite on ``cluster`` meets, None when the tree defines none."""
        found = self.cluster_xrds.get((cluster, group, kind)) or self.xrds.get((group, kind))
        if found is None:
            found = next((xrd for (_, g, k), xrd in self.cluster_xrds.items() if (g, k) == (group, kind)), None)
        return found

    def _model(self, document: Document) -> CompositionModel:
        key = (document.file, document.index)
        if key not in self._models:
            self._models[key] = read_composition(document, self.functions, self.xrds, lambda *_: None)[0]
        return self._models[key]

    def compose(self, body: dict[str, Any], cluster: str | None) -> ComposedResources:
        """What the composite ``body``, placed on ``cluster``, composes."""
        group, version = split_api(body.get("apiVersion"))
        xrd = self.definition(group, str(body.get("kind") or ""), cluster)
        if xrd is None:
            return ComposedResources(reason="no CompositeResourceDefinition defines it")
        if version not in xrd.versions:
            return ComposedResources(reason=f"its XRD {xrd.document.name!r} has no version {version!r}")
        schema = xrd.schema(version)
        xr = defaulted(body, schema)
        selection = select_compositions(xrd, xr, same_cluster(cluster, self.compositions))
        if selection.problem is not None:
            return ComposedResources(reason=selection.problem[1])
        chosen = selection.compositions[0]
        model = self._model(chosen)
        if model.reason is not None or model.pipeline is None:
            return ComposedResources(chosen.name, reason=model.reason or f"Composition {chosen.name!r} cannot be read")
        result = render(model.pipeline, observed_xr(xr, xrd, chosen.name, schema))
        if result.failure is not None:
            return ComposedResources(chosen.name, reason=result.failure.message)
        return ComposedResources(chosen.name, {name: item.body for name, item in result.composed.items()})
