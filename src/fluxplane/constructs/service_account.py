"""ServiceAccount (``v1``)."""

from __future__ import annotations

from typing import Any

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Label, Name, Props


class ServiceAccountProps(Props):
    """Props of a ServiceAccount."""

    name: Name
    """``metadata.name`` of the ServiceAccount."""
    namespace: Label
    """Namespace of the ServiceAccount."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    annotations: dict[str, str] | None = None
    """``metadata.annotations``, such as IRSA's ``eks.amazonaws.com/role-arn``. Default: none."""
    automount_service_account_token: bool | None = None
    """Whether pods running as the account get an API token mounted; a pod can override it. Default: not set
    (Kubernetes mounts one)."""


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
