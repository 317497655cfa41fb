"""Tests for fluxplane.validate.compose.overlays: the definitions a cluster's own overlay makes."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.core.tree.kustomize import Folders
from fluxplane.validate.compose.overlays import overlay_definitions
from fluxplane.validate.tree import Document

KUSTOMIZATION = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}
COMPOSITION = {
    "apiVersion": "apiextensions.crossplane.io/v1",
    "kind": "Composition",
    "metadata": {"name": "db"},
    "spec": {"mode": "Pipeline"},
}
RELEASE = {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": {"name": "app"}}
PATCH = {
    "patch": "apiVersion: apiextensions.crossplane.io/v1\nkind: Composition\nmetadata:\n  name: db\nspec:\n  x: 1\n"
}


def _documents(files: dict[str, dict[str, Any]]) -> list[Document]:
    return [Document(file, 1, body) for file, body in files.items()]


def test_an_overlay_s_definitions_are_patched_and_overlays_without_any_are_not_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a cluster's overlay over a catalogue folder holding a Composition, and one over a folder holding none
    documents = _documents(
        {
            "platform/catalogue/db/composition.yaml": COMPOSITION,
            "platform/catalogue/db/kustomization.yaml": {**KUSTOMIZATION, "resources": ["composition.yaml"]},
            "platform/catalogue/app/release.yaml": RELEASE,
            "platform/catalogue/app/kustomization.yaml": {**KUSTOMIZATION, "resources": ["release.yaml"]},
            "platform/clusters/a/overlays/db/kustomization.yaml": {
                **KUSTOMIZATION,
                "resources": ["../../../../catalogue/db"],
                "patches": [PATCH],
            },
            "platform/clusters/a/overlays/app/kustomization.yaml": {
                **KUSTOMIZATION,
                "resources": ["../../../../catalogue/app"],
                "patches": [PATCH],
            },
        }
    )
    built: list[str] = []
    build = Folders.build

    def counting(self: Folders, folder: str) -> Any:
        built.append(folder)
        return build(self, folder)

    monkeypatch.setattr(Folders, "build", counting)
    # WHEN the overlays' definitions are read
    found = list(overlay_definitions(documents))
    # THEN the Composition comes patched, as a document of its overlay's kustomization file
    assert [(document.file, document.index, document.body["spec"]) for document in found] == [
        ("platform/clusters/a/overlays/db/kustomization.yaml", 1, {"mode": "Pipeline", "x": 1})
    ]
    # AND the overlay whose files hold no definition is not built
    assert "platform/clusters/a/overlays/app" not in built


def test_only_the_overlays_of_the_clusters_asked_for_are_read() -> None:
    # GIVEN two clusters' overlays over one catalogue folder holding a Composition
    overlay = {**KUSTOMIZATION, "resources": ["../../../../catalogue/db"], "patches": [PATCH]}
    documents = _documents(
        {
            "platform/catalogue/db/composition.yaml": COMPOSITION,
            "platform/catalogue/db/kustomization.yaml": {**KUSTOMIZATION, "resources": ["composition.yaml"]},
            "platform/clusters/a/overlays/db/kustomization.yaml": overlay,
            "platform/clusters/b/overlays/db/kustomization.yaml": overlay,
        }
    )
    # WHEN the definitions of b's overlays alone are asked for THEN only b's come, and all when no cluster is named
    assert [document.file for document in overlay_definitions(documents, {"b"})] == [
        "platform/clusters/b/overlays/db/kustomization.yaml"
    ]
    assert len(list(overlay_definitions(documents))) == 2
