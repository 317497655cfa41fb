"""AWS ClusterProviderConfig: identity-based credentials only."""

from __future__ import annotations

import pytest

from fluxplane.constructs import Manifest, Root
from fluxplane.constructs.aws_provider_config import AwsClusterProviderConfig
from fluxplane.errors import ConstructError


def test_irsa_cluster_provider_config() -> None:
    config = AwsClusterProviderConfig(
        Manifest(Root(), "m", path="x.yaml"), "aws", {"name": "default", "credentials": {"source": "IRSA"}}
    )
    assert config.to_dict() == {
        "apiVersion": "aws.m.upbound.io/v1beta1",
        "kind": "ClusterProviderConfig",
        "metadata": {"name": "default"},
        "spec": {"credentials": {"source": "IRSA"}},
    }


def test_static_secret_credentials_are_not_offered() -> None:
    with pytest.raises(ConstructError, match=r"credentials\.source: input should be 'IRSA' or 'PodIdentity'"):
        AwsClusterProviderConfig(
            Manifest(Root(), "m", path="x.yaml"), "aws", {"name": "default", "credentials": {"source": "Secret"}}
        )
