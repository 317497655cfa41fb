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
    source: Literal["IRSA", "PodIdentity"]


class AwsClusterProviderConfigProps(Props):
    name: Name
    labels: dict[str, str] | None = None
    credentials: AwsCredentials


class AwsClusterProviderConfig(TypedResource[AwsClusterProviderConfigProps]):
    api_version = "aws.m.upbound.io/v1beta1"
    kind = "ClusterProviderConfig"
    namespaced = False
    props_class = AwsClusterProviderConfigProps
