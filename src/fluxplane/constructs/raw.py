"""An object given as plain data, for documents fluxplane carries rather than builds (overlay additions)."""

from __future__ import annotations

from typing import Any

from fluxplane.constructs.base import Resource
from fluxplane.constructs.props import plain_copy


class RawObject(Resource):
    """A manifest given as a dict with apiVersion, kind and metadata.name; written as given."""

    api_version = ""
    kind = ""
    builds_metadata = False

    def __init__(self, scope: Any, construct_id: str, document: dict[str, Any]) -> None:
        metadata = document.get("metadata") or {}
        self._document: dict[str, Any] = plain_copy(document)
        self.api_version = document["apiVersion"]
        self.kind = document["kind"]
        self.namespaced = "namespace" in metadata
        super().__init__(scope, construct_id, name=metadata["name"], namespace=metadata.get("namespace"))

    def to_dict(self) -> dict[str, Any]:
        return plain_copy(self._document)  # type: ignore[no-any-return]
