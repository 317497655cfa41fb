"""Namespace (``v1``)."""

from __future__ import annotations

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Label, Props


class NamespaceProps(Props):
    """Props of a Namespace."""

    name: Label
    """``metadata.name`` of the Namespace, a DNS-1123 label."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    annotations: dict[str, str] | None = None
    """``metadata.annotations``. Default: none."""


class Namespace(TypedResource[NamespaceProps]):
    api_version = "v1"
    kind = "Namespace"
    namespaced = False
    props_class = NamespaceProps

    def spec_dict(self) -> None:
        return None
