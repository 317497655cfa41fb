"""The Crossplane definitions a cluster's own overlay makes of the catalogue's, for rendering its composites.

A cluster whose pack config differs from its environment's gets the pack as an overlay
(``<repository>/clusters/<cluster>/overlays/<pack>/``): the catalogue's folder, with its patches, which the
tree reader applies as kustomize does (fluxplane.core.tree.patches). A cluster that makes its
apps' resources runs the app kinds' Compositions so changed; its composites must be rendered with those, not
with the hub's. This module reads each such overlay's XRDs and Compositions with their patches applied, as
documents of the overlay's kustomization file, which fluxplane.validate.compose.checks then prefers for the
composites of that cluster.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

from fluxplane.core.layout import cluster_of, is_cluster_overlay
from fluxplane.core.tree.kustomize import Folders
from fluxplane.validate.changed import is_definition
from fluxplane.validate.tree import Document

_KINDS = ("CompositeResourceDefinition", "Composition")


def _overlay_definition(doc: dict[str, Any]) -> bool:
    return is_definition(doc) and doc.get("kind") in _KINDS


def overlay_definitions(
    documents: Iterable[Document],
    clusters: Collection[str] | None = None,
    by_file: Mapping[str, list[Any]] | None = None,
) -> Iterator[Document]:
    """The XRDs and Compositions of every cluster overlay among ``documents`` (of the overlays of ``clusters`` alone,
    when given), patched, as documents of its kustomization file. ``by_file`` is ``documents``' bodies by file when
    the caller has them (fluxplane.validate.tree.DistTree.by_file)."""
    return overlay_objects(documents, _overlay_definition, kinds=_KINDS, clusters=clusters, by_file=by_file)


def overlay_objects(
    documents: Iterable[Document],
    wanted: Callable[[dict[str, Any]], bool],
    kinds: Collection[str] | None = None,
    clusters: Collection[str] | None = None,
    by_file: Mapping[str, list[Any]] | None = None,
) -> Iterator[Document]:
    """The objects ``wanted`` accepts of every cluster overlay among ``documents`` (of the overlays of ``clusters``
    alone, when given), patched, as documents of its kustomization file. With ``kinds`` (those ``wanted`` accepts
    at most), an overlay none of whose files holds an object of those kinds is not built: a patch changes the
    objects it targets, it adds none and keeps their kind. ``by_file`` is ``documents``' bodies by file, at their
    index, when the caller has them."""
    if by_file is None:
        bodies_of: dict[str, list[Any]] = {}
        for document in documents:
            bodies = bodies_of.setdefault(document.file, [])
            bodies.extend([None] * (document.index - 1 - len(bodies)))
            bodies.append(document.body)
        by_file = bodies_of
    configs: list[str] = []
    for file in by_file:
        if posixpath.basename(file) != "kustomization.yaml":
            continue
        folder = posixpath.dirname(file)
        owner = cluster_of(file)
        if owner is not None and is_cluster_overlay(folder) and (clusters is None or owner in clusters):
            configs.append(folder)
    if not configs:
        return
    folders = Folders(by_file)
    held = frozenset(kinds or ())
    holds: dict[str, bool] = {}

    def holding(file: str) -> bool:
        """Whether ``file`` holds an object of ``kinds``."""
        found = holds.get(file)
        if found is None:
            found = holds[file] = any(
                isinstance(body, dict) and body.get("kind") in held for body in by_file.get(file) or ()
            )
        return found

    for folder in sorted(configs):
        if kinds is not None and not any(holding(file) for file in folders.inputs(folder)):
            continue
        config_file = posixpath.join(folder, "kustomization.yaml")
        index = 0
        # the build applies the overlay's patches (fluxplane.core.tree.patches), to copies of the documents
        for item in folders.build(folder).items:
            if not wanted(item.doc):
                continue
            index += 1
            yield Document(config_file, index, item.doc)
