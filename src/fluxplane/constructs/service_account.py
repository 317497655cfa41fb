"""ServiceAccount (``v1``)."""

from __future__ import annotations

from typing import Any

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Label, Name, Props


class ServiceAccountProps(Props):
    name: Name
    namespace: Label
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    automount_service_account_token: bool | None = None


class ServiceAccount(TypedResource[ServiceAccountProps]):
    """A ServiceAccount; annotations carry IRSA role ARNs (``eks.amazonaws.com/role-arn``)."""

    api_version = "v1"
    kind = "ServiceAccount"
    props_class = ServiceAccountProps

    def spec_dict(self) -> None:
        return None

    def to_dict(self) -> dict[str, Any]:
        doc = super().to_dict()
        if self.props.automount_service_account_token is not None:
            doc["automountServiceAccountToken"] = self.props.automount_service_account_token
        return doc
