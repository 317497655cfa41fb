"""Crossplane DeploymentRuntimeConfig (``pkg.crossplane.io/v1beta1``): how a package's pods run.

It replaced the removed ControllerConfig. fluxplane uses it to give provider pods a fixed service
account name and the annotation that binds it to an IAM role (IRSA).
"""

from __future__ import annotations

from typing import Any

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Name, Props


class ObjectMetaTemplate(Props):
    """Metadata of an object Crossplane creates for a package, such as its service account."""

    name: Name | None = None
    """Name of the object. Default: not set (Crossplane names it)."""
    labels: dict[str, str] | None = None
    """Labels, merged with Crossplane's own (which win for ``crossplane.io`` keys). Default: none."""
    annotations: dict[str, str] | None = None
    """Annotations, such as IRSA's ``eks.amazonaws.com/role-arn``. Default: none."""


class ServiceAccountTemplate(Props):
    """The template of a package's service account."""

    metadata: ObjectMetaTemplate
    """Metadata of the service account Crossplane creates for the package's pods."""


class DeploymentRuntimeConfigProps(Props):
    """Props of a DeploymentRuntimeConfig."""

    name: Name
    """``metadata.name`` of the config (cluster-scoped); packages name it in ``runtimeConfigRef``."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    service_account_template: ServiceAccountTemplate | None = None
    """Template of the package's service account. Default: not set (Crossplane's defaults)."""
    deployment_template: dict[str, Any] | None = None
    """Template of the package's Deployment (``metadata`` and ``spec``), as plain data. Default: not set
    (Crossplane's defaults)."""


class DeploymentRuntimeConfig(TypedResource[DeploymentRuntimeConfigProps]):
    api_version = "pkg.crossplane.io/v1beta1"
    kind = "DeploymentRuntimeConfig"
    namespaced = False
    props_class = DeploymentRuntimeConfigProps
