"""An object given as plain data, for documents fluxplane carries rather than builds (overlay additions)."""

from __future__ import annotations

import copy
from typing import Any

from fluxplane.constructs.base import Resource


class RawObject(Resource):
    """A manifest given as a dict with apiVersion, kind and metadata.name; written as given."""

    api_version = ""
    kind = ""

    def __init__(self, scope: Any, construct_id: str, document: dict[str, Any]) -> None:
        metadata = document.get("metadata") or {}
        self._document = copy.deepcopy(document)
        self.api_version = document["apiVersion"]
        self.kind = document["kind"]
        self.namespaced = "namespace" in metadata
        super().__init__(scope, construct_id, name=metadata["name"], namespace=metadata.get("namespace"))

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._document)
