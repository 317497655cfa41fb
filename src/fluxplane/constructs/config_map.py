"""ConfigMap (``v1``)."""

from __future__ import annotations

from typing import Any

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Label, Name, Props


class ConfigMapProps(Props):
    name: Name
    namespace: Label
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    data: dict[str, str] | None = None


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
