"""AWS ClusterProviderConfig (``aws.m.upbound.io/v1beta1``): how the AWS providers authenticate.

fluxplane composes namespaced managed resources (``*.aws.m.upbound.io``), which reference a
ClusterProviderConfig. Credentials come from the pod's identity (IRSA or EKS Pod Identity); static
keys are not offered.
"""

from __future__ import annotations

from typing import Literal

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Name, Props


class AwsCredentials(Props):
    """Where the AWS providers get their credentials."""

    source: Literal["IRSA", "PodIdentity"]
    """Source of the credentials: ``IRSA`` (IAM roles for service accounts) or ``PodIdentity`` (EKS Pod Identity)."""


class AwsClusterProviderConfigProps(Props):
    """Props of an AWS ClusterProviderConfig."""

    name: Name
    """``metadata.name`` of the config (cluster-scoped); managed resources name it in ``providerConfigRef``."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    credentials: AwsCredentials
    """How the AWS providers authenticate."""


class AwsClusterProviderConfig(TypedResource[AwsClusterProviderConfigProps]):
    api_version = "aws.m.upbound.io/v1beta1"
    kind = "ClusterProviderConfig"
    namespaced = False
    props_class = AwsClusterProviderConfigProps
