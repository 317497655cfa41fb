"""Crossplane DeploymentRuntimeConfig (``pkg.crossplane.io/v1beta1``): how a package's pods run.

It replaced the removed ControllerConfig. fluxplane uses it to give provider pods a fixed service
account name and the annotation that binds it to an IAM role (IRSA).
"""

from __future__ import annotations

from typing import Any

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Name, Props


class ObjectMetaTemplate(Props):
    name: Name | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class ServiceAccountTemplate(Props):
    metadata: ObjectMetaTemplate


class DeploymentRuntimeConfigProps(Props):
    name: Name
    labels: dict[str, str] | None = None
    service_account_template: ServiceAccountTemplate | None = None
    deployment_template: dict[str, Any] | None = None


class DeploymentRuntimeConfig(TypedResource[DeploymentRuntimeConfigProps]):
    api_version = "pkg.crossplane.io/v1beta1"
    kind = "DeploymentRuntimeConfig"
    namespaced = False
    props_class = DeploymentRuntimeConfigProps
