"""Namespace (``v1``)."""

from __future__ import annotations

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Label, Props


class NamespaceProps(Props):
    name: Label
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class Namespace(TypedResource[NamespaceProps]):
    api_version = "v1"
    kind = "Namespace"
    namespaced = False
    props_class = NamespaceProps

    def spec_dict(self) -> None:
        return None
