"""AWS ClusterProviderConfig (``aws.m.upbound.io/v1beta1``): how the AWS providers authenticate.

fluxplane composes namespaced managed resources (``*.aws.m.upbound.io``), which reference a
ClusterProviderConfig. Credentials come from the pod's identity (IRSA or EKS Pod Identity); static
keys are not offered. A config for another AWS account assumes a role there (``assumeRoleChain``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Name, Props


class AwsCredentials(Props):
    """Where the AWS providers get their credentials."""

    source: Literal["IRSA", "PodIdentity"]
    """Source of the credentials: ``IRSA`` (IAM roles for service accounts) or ``PodIdentity`` (EKS Pod Identity)."""


class AssumeRole(Props):
    """A role the providers assume after authenticating, e.g. one in another account."""

    role_arn: str = Field(alias="roleARN", pattern=r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$")
    """ARN of the role."""
    external_id: str | None = Field(None, alias="externalID")
    """The external ID the role's trust policy asks for. Default: not set."""


class AwsClusterProviderConfigProps(Props):
    """Props of an AWS ClusterProviderConfig."""

    name: Name
    """``metadata.name`` of the config (cluster-scoped); managed resources name it in ``providerConfigRef``."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    credentials: AwsCredentials
    """How the AWS providers authenticate."""
    assume_role_chain: tuple[AssumeRole, ...] | None = None
    """Roles assumed in turn after authenticating, the last one's credentials used. Default: none (the pod's own)."""


class AwsClusterProviderConfig(TypedResource[AwsClusterProviderConfigProps]):
    api_version = "aws.m.upbound.io/v1beta1"
    kind = "ClusterProviderConfig"
    namespaced = False
    props_class = AwsClusterProviderConfigProps
