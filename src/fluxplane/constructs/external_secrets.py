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
    """The service account whose token a store exchanges for AWS credentials."""

    name: Name
    """Name of the service account."""
    namespace: Label | None = None
    """Namespace of the service account, read only by a ClusterSecretStore. Default: not set (the namespace of the
    ExternalSecret being synced)."""
    audiences: tuple[str, ...] | None = None
    """Audiences (``aud`` claims) of the service account token, added to those a well-known annotation such as IRSA's
    implies. Default: not set."""


class JwtAuth(Props):
    """Authentication with a service account's token (IRSA)."""

    service_account_ref: ServiceAccountSelector
    """The service account whose token is used; its annotation names the IAM role."""


class AwsAuth(Props):
    """How a store authenticates to AWS."""

    jwt: JwtAuth
    """Authenticate with a service account's token (IRSA)."""


class AwsProvider(Props):
    """The AWS provider of a secret store."""

    service: Literal["SecretsManager", "ParameterStore"]
    """AWS service the secrets come from: ``SecretsManager`` or ``ParameterStore``."""
    region: str = Field(pattern=r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$")
    """AWS region of the secrets."""
    auth: AwsAuth | None = None
    """How to authenticate to AWS. Default: not set (the AWS SDK's default credentials of the controller's pod, e.g.
    EKS Pod Identity)."""


class SecretStoreProvider(Props):
    """A store's ``provider``: exactly one provider."""

    aws: AwsProvider
    """AWS Secrets Manager or Parameter Store."""


class StoreCondition(Props):
    """Namespaces whose ExternalSecrets a ClusterSecretStore serves."""

    namespaces: tuple[Label, ...] = Field(min_length=1)
    """The namespaces, by name."""


class ClusterSecretStoreProps(Props):
    """Props of a ClusterSecretStore: a store the ExternalSecrets of the namespaces it names may use."""

    name: Name
    """``metadata.name`` of the store (cluster-scoped); ExternalSecrets name it in ``secretStoreRef``."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    provider: SecretStoreProvider
    """Where the secrets come from, and how to authenticate there."""
    conditions: tuple[StoreCondition, ...] = Field(min_length=1)
    """The namespaces the store serves; ExternalSecrets elsewhere are refused. Required: a store that serves every
    namespace hands whatever its identity can read to anyone who may write an ExternalSecret, a tenant included."""


class ClusterSecretStore(TypedResource[ClusterSecretStoreProps]):
    api_version = "external-secrets.io/v1"
    kind = "ClusterSecretStore"
    namespaced = False
    props_class = ClusterSecretStoreProps


class SecretStoreRef(Props):
    """An ExternalSecret's ``secretStoreRef``: the store it reads from."""

    kind: Literal["SecretStore", "ClusterSecretStore"]
    """Kind of the store: ``SecretStore`` (in the ExternalSecret's namespace) or ``ClusterSecretStore``."""
    name: Name
    """Name of the store."""


class TemplateMetadata(Props):
    """Labels and annotations of the Secret an ExternalSecret creates."""

    labels: dict[str, str] | None = None
    """Labels of the Secret. Default: none."""
    annotations: dict[str, str] | None = None
    """Annotations of the Secret. Default: none."""


class TargetTemplate(Props):
    """The blueprint of the Secret an ExternalSecret creates."""

    type: str | None = None
    """Type of the Secret, e.g. ``kubernetes.io/dockerconfigjson``. Default: not set (Kubernetes' default,
    ``Opaque``)."""
    metadata: TemplateMetadata | None = None
    """Labels and annotations of the Secret. Default: not set (none)."""


class Target(Props):
    """The Kubernetes Secret an ExternalSecret writes."""

    name: Name | None = None
    """Name of the Secret. Default: not set (the ExternalSecret's name)."""
    creation_policy: Literal["Owner", "Orphan", "Merge", "None"] | None = None
    """How the Secret is created: ``Owner`` (created and owned by the ExternalSecret), ``Orphan`` (created, not
    owned), ``Merge`` (into an existing Secret) or ``None``. Default: not set (ESO's default, ``Owner``)."""
    deletion_policy: Literal["Delete", "Merge", "Retain"] | None = None
    """What happens to the Secret when its remote secrets are deleted: ``Delete``, ``Merge`` (drop their keys) or
    ``Retain``. Default: not set (ESO's default, ``Retain``)."""
    template: TargetTemplate | None = None
    """Blueprint of the Secret: its type, labels and annotations. Default: not set."""


class RemoteRef(Props):
    """Which remote secret an entry reads, and which of its properties."""

    key: str = Field(min_length=1)
    """Key of the secret in the provider, e.g. the name of the Secrets Manager secret."""
    property: str | None = None
    """Property of the secret's JSON value to read. Default: not set (the whole value)."""


class ExternalSecretData(Props):
    """A ``data`` entry: one key of the Secret and the remote value it gets."""

    secret_key: str = Field(pattern=r"^[-._a-zA-Z0-9]+$")
    """Key in the Kubernetes Secret that receives the value."""
    remote_ref: RemoteRef
    """The remote secret, and property, the value comes from."""


class ExternalSecretProps(Props):
    """Props of an ExternalSecret: a Kubernetes Secret filled from a secret store."""

    name: Name
    """``metadata.name`` of the ExternalSecret."""
    namespace: Label
    """Namespace of the ExternalSecret."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    refresh_interval: Duration | None = None
    """How often ESO reads the values from the store again. Default: not set (ESO's default, ``1h``)."""
    secret_store_ref: SecretStoreRef
    """The store the values come from."""
    target: Target
    """The Secret to write."""
    data: tuple[ExternalSecretData, ...] = Field(min_length=1)
    """The Secret's keys and the remote values they get."""


class ExternalSecret(TypedResource[ExternalSecretProps]):
    api_version = "external-secrets.io/v1"
    kind = "ExternalSecret"
    props_class = ExternalSecretProps
