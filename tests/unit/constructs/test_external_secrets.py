"""ClusterSecretStore and ExternalSecret (external-secrets.io/v1)."""

from __future__ import annotations

import re

import pytest

from fluxplane.constructs import Root
from fluxplane.constructs.external_secrets import (
    ClusterSecretStore,
    ClusterSecretStoreProps,
    ExternalSecret,
    ExternalSecretProps,
)
from fluxplane.errors import ConstructError

STORE: dict[str, object] = {
    "name": "fleet-secrets-manager",
    "provider": {
        "aws": {
            "service": "SecretsManager",
            "region": "us-west-2",
            "auth": {"jwt": {"serviceAccountRef": {"name": "external-secrets", "namespace": "external-secrets"}}},
        }
    },
    "conditions": [{"namespaces": ["sealed-secrets"]}],
}


def test_a_cluster_secret_store_is_cluster_scoped_and_names_the_namespaces_it_serves() -> None:
    # GIVEN a Secrets Manager store that authenticates as a service account, for one namespace
    store = ClusterSecretStore(Root(), "store", ClusterSecretStoreProps.model_validate(STORE))

    # THEN it renders with upstream's field names, no namespace, and the condition
    assert store.to_dict() == {
        "apiVersion": "external-secrets.io/v1",
        "kind": "ClusterSecretStore",
        "metadata": {"name": "fleet-secrets-manager"},
        "spec": {
            "provider": {
                "aws": {
                    "service": "SecretsManager",
                    "region": "us-west-2",
                    "auth": {
                        "jwt": {"serviceAccountRef": {"name": "external-secrets", "namespace": "external-secrets"}}
                    },
                }
            },
            "conditions": [{"namespaces": ["sealed-secrets"]}],
        },
    }


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"conditions": []}, "conditions: tuple should have at least 1 item after validation, not 0"),
        (
            {"provider": {"aws": {"service": "SecretsManager", "region": "us-west"}}},
            "provider.aws.region: string should match pattern",
        ),
    ],
)
def test_a_store_serves_named_namespaces_of_a_real_region(change: dict[str, object], problem: str) -> None:
    # a store serving every namespace would hand its identity's secrets to anyone who may write an ExternalSecret
    expected = re.escape(f"root/store: ClusterSecretStoreProps.{problem}")
    with pytest.raises(ConstructError, match=f"^{expected}"):
        ClusterSecretStore(Root(), "store", {**STORE, **change})


def test_an_external_secret_copies_remote_properties_into_a_typed_secret() -> None:
    # GIVEN an ExternalSecret reading two properties of one remote secret into a TLS Secret
    secret = ExternalSecret(
        Root(),
        "key",
        ExternalSecretProps.model_validate(
            {
                "name": "sealed-secrets-key",
                "namespace": "sealed-secrets",
                "secretStoreRef": {"kind": "ClusterSecretStore", "name": "fleet-secrets-manager"},
                "target": {
                    "creationPolicy": "Owner",
                    "template": {
                        "type": "kubernetes.io/tls",
                        "metadata": {"labels": {"sealedsecrets.bitnami.com/sealed-secrets-key": "active"}},
                    },
                },
                "data": [
                    {"secretKey": "tls.crt", "remoteRef": {"key": "fleet/sealing-key", "property": "certificate"}},
                    {"secretKey": "tls.key", "remoteRef": {"key": "fleet/sealing-key", "property": "private-key"}},
                ],
            }
        ),
    )

    # THEN it renders in its namespace with upstream's field names, unset fields left out
    assert secret.to_dict() == {
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "sealed-secrets-key", "namespace": "sealed-secrets"},
        "spec": {
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": "fleet-secrets-manager"},
            "target": {
                "creationPolicy": "Owner",
                "template": {
                    "type": "kubernetes.io/tls",
                    "metadata": {"labels": {"sealedsecrets.bitnami.com/sealed-secrets-key": "active"}},
                },
            },
            "data": [
                {"secretKey": "tls.crt", "remoteRef": {"key": "fleet/sealing-key", "property": "certificate"}},
                {"secretKey": "tls.key", "remoteRef": {"key": "fleet/sealing-key", "property": "private-key"}},
            ],
        },
    }


def test_an_external_secret_needs_a_key_to_fill() -> None:
    props = {
        "name": "a",
        "namespace": "b",
        "secretStoreRef": {"kind": "ClusterSecretStore", "name": "s"},
        "target": {},
        "data": [],
    }
    with pytest.raises(ConstructError, match=r"^root/key: ExternalSecretProps\.data: tuple should have at least 1"):
        ExternalSecret(Root(), "key", props)
