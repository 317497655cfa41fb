"""provider-kubernetes ProviderConfig (``kubernetes.m.crossplane.io/v1alpha1``): a namespaced way in
to another cluster, through a kubeconfig Secret in the same namespace."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Label, Name, Props


class SecretKeySelector(Props):
    name: Name
    namespace: Label
    key: str


class ProviderCredentials(Props):
    source: Literal["Secret", "InjectedIdentity"]
    secret_ref: SecretKeySelector | None = None

    @model_validator(mode="after")
    def _secret_named(self) -> ProviderCredentials:
        if (self.source == "Secret") != (self.secret_ref is not None):
            raise ValueError("secretRef is required with source Secret, and only then")
        return self


class KubernetesProviderConfigProps(Props):
    name: Name
    namespace: Label
    labels: dict[str, str] | None = None
    credentials: ProviderCredentials


class KubernetesProviderConfig(TypedResource[KubernetesProviderConfigProps]):
    api_version = "kubernetes.m.crossplane.io/v1alpha1"
    kind = "ProviderConfig"
    props_class = KubernetesProviderConfigProps
