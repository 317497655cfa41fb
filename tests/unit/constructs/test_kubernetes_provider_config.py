"""provider-kubernetes ProviderConfig (kubernetes.m.crossplane.io/v1alpha1): a namespaced way into a cluster."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.constructs import Manifest, Root
from fluxplane.constructs.kubernetes_provider_config import KubernetesProviderConfig
from fluxplane.errors import ConstructError

SECRET_REF = {"name": "spoke-kubeconfig", "namespace": "spoke", "key": "value"}


def _config(credentials: dict[str, Any], **changes: Any) -> KubernetesProviderConfig:
    props = {"name": "spoke", "namespace": "spoke", "credentials": credentials, **changes}
    return KubernetesProviderConfig(Manifest(Root(), "m", path="x.yaml"), "config", props)


def test_a_provider_config_reads_a_kubeconfig_secret() -> None:
    # GIVEN / WHEN a ProviderConfig with Secret credentials
    config = _config({"source": "Secret", "secretRef": SECRET_REF})

    # THEN it is namespaced and names the Secret, its namespace and its key
    assert config.to_dict() == {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "ProviderConfig",
        "metadata": {"name": "spoke", "namespace": "spoke"},
        "spec": {"credentials": {"source": "Secret", "secretRef": SECRET_REF}},
    }


def test_injected_identity_needs_no_secret() -> None:
    assert _config({"source": "InjectedIdentity"}).to_dict()["spec"] == {"credentials": {"source": "InjectedIdentity"}}


@pytest.mark.parametrize(
    ("credentials", "changes", "message"),
    [
        ({"source": "Environment"}, {}, r"credentials\.source: input should be 'Secret' or 'InjectedIdentity'$"),
        ({"source": "Secret", "secretRef": {"name": "k", "namespace": "spoke"}}, {}, r"credentials\.secretRef\.key"),
        (
            {"source": "Secret", "secretRef": {**SECRET_REF, "namespace": "Spoke"}},
            {},
            r"credentials\.secretRef\.namespace: string should match pattern",
        ),
        ({"source": "InjectedIdentity"}, {"namespace": None}, r"namespace: input should be a valid string$"),
        ({}, {}, r"credentials\.source: field required$"),
    ],
)
def test_malformed_credentials_are_refused(credentials: dict[str, Any], changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConstructError, match=rf"^root/m/config: KubernetesProviderConfigProps\.{message}"):
        _config(credentials, **changes)


def test_secret_credentials_need_a_secret_reference() -> None:
    # GIVEN / WHEN / THEN Secret credentials that name no Secret are refused when the construct is made
    with pytest.raises(ConstructError, match=r"credentials"):
        _config({"source": "Secret"})
