"""External Secrets Operator (``external-secrets.io/v1``): ClusterSecretStore and ExternalSecret.

Only what fluxplane writes is modelled: an AWS Secrets Manager store that authenticates as a
service account (IRSA), and ExternalSecrets that copy properties of one remote secret into a
Kubernetes Secret of a given type and labels.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Duration, Label, Name, Props


class ServiceAccountSelector(Props):
    name: Name
    namespace: Label | None = None
    audiences: tuple[str, ...] | None = None


class JwtAuth(Props):
    service_account_ref: ServiceAccountSelector


class AwsAuth(Props):
    jwt: JwtAuth


class AwsProvider(Props):
    service: Literal["SecretsManager", "ParameterStore"]
    region: str = Field(pattern=r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$")
    auth: AwsAuth | None = None


class SecretStoreProvider(Props):
    aws: AwsProvider


class ClusterSecretStoreProps(Props):
    name: Name
    labels: dict[str, str] | None = None
    provider: SecretStoreProvider


class ClusterSecretStore(TypedResource[ClusterSecretStoreProps]):
    api_version = "external-secrets.io/v1"
    kind = "ClusterSecretStore"
    namespaced = False
    props_class = ClusterSecretStoreProps


class SecretStoreRef(Props):
    kind: Literal["SecretStore", "ClusterSecretStore"]
    name: Name


class TemplateMetadata(Props):
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class TargetTemplate(Props):
    type: str | None = None
    metadata: TemplateMetadata | None = None


class Target(Props):
    name: Name | None = None
    creation_policy: Literal["Owner", "Orphan", "Merge", "None"] | None = None
    deletion_policy: Literal["Delete", "Merge", "Retain"] | None = None
    template: TargetTemplate | None = None


class RemoteRef(Props):
    key: str = Field(min_length=1)
    property: str | None = None


class ExternalSecretData(Props):
    secret_key: str = Field(pattern=r"^[-._a-zA-Z0-9]+$")
    remote_ref: RemoteRef


class ExternalSecretProps(Props):
    name: Name
    namespace: Label
    labels: dict[str, str] | None = None
    refresh_interval: Duration | None = None
    secret_store_ref: SecretStoreRef
    target: Target
    data: tuple[ExternalSecretData, ...] = Field(min_length=1)


class ExternalSecret(TypedResource[ExternalSecretProps]):
    api_version = "external-secrets.io/v1"
    kind = "ExternalSecret"
    props_class = ExternalSecretProps
