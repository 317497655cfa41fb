"""ConfigMap (``v1``)."""

from __future__ import annotations

from typing import Any

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Label, Name, Props


class ConfigMapProps(Props):
    """Props of a ConfigMap."""

    name: Name
    """``metadata.name`` of the ConfigMap."""
    namespace: Label
    """Namespace of the ConfigMap."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    annotations: dict[str, str] | None = None
    """``metadata.annotations``. Default: none."""
    data: dict[str, str] | None = None
    """The configuration data, string keys to string values; written sorted by key. Default: not set (no data)."""


class ConfigMap(TypedResource[ConfigMapProps]):
    """A ConfigMap; keys are written sorted so output does not depend on insertion order."""

    api_version = "v1"
    kind = "ConfigMap"
    props_class = ConfigMapProps

    def spec_dict(self) -> None:
        return None

    def to_dict(self) -> dict[str, Any]:
        doc = super().to_dict()
        if self.props.data:
            doc["data"] = dict(sorted(self.props.data.items()))
        return doc
