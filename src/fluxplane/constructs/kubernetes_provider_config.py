"""provider-kubernetes ProviderConfig (``kubernetes.m.crossplane.io/v1alpha1``): a namespaced way in
to another cluster, through a kubeconfig Secret in the same namespace."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Label, Name, Props


class SecretKeySelector(Props):
    """A key of a Secret, by the Secret's name and namespace."""

    name: Name
    """Name of the Secret."""
    namespace: Label
    """Namespace of the Secret."""
    key: str
    """Key in the Secret that holds the kubeconfig."""


class ProviderCredentials(Props):
    """How provider-kubernetes connects to a cluster's API."""

    source: Literal["Secret", "InjectedIdentity"]
    """``Secret`` (a kubeconfig in a Secret) or ``InjectedIdentity`` (the provider's own in-cluster identity)."""
    secret_ref: SecretKeySelector | None = None
    """The Secret key that holds the kubeconfig; set with source ``Secret``, and only then. Default: not set."""

    @model_validator(mode="after")
    def _secret_named(self) -> ProviderCredentials:
        if (self.source == "Secret") != (self.secret_ref is not None):
            raise ValueError("secretRef is required with source Secret, and only then")
        return self


class KubernetesProviderConfigProps(Props):
    """Props of a provider-kubernetes ProviderConfig."""

    name: Name
    """``metadata.name`` of the ProviderConfig; managed resources name it in ``providerConfigRef``."""
    namespace: Label
    """Namespace of the ProviderConfig, and of the managed resources that use it."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    credentials: ProviderCredentials
    """Credentials for connecting to the Kubernetes API."""


class KubernetesProviderConfig(TypedResource[KubernetesProviderConfigProps]):
    api_version = "kubernetes.m.crossplane.io/v1alpha1"
    kind = "ProviderConfig"
    props_class = KubernetesProviderConfigProps
