"""The crossplane-provider-configs hub pack (fluxplane.packs.crossplane_provider_configs): the providers' default
configs, following the identity."""

from __future__ import annotations

from fluxplane.packs import crossplane_provider_configs
from tests.support.hub import bind


def test_provider_configs_follow_the_identity() -> None:
    for identity, source in (("irsa", "IRSA"), ("pod-identity", "PodIdentity")):
        documents, context = bind(crossplane_provider_configs.PACK, values={"identity": identity})
        assert documents == [
            {
                "apiVersion": "aws.m.upbound.io/v1beta1",
                "kind": "ClusterProviderConfig",
                "metadata": {"name": "default"},
                "spec": {"credentials": {"source": source}},
            }
        ]
        assert context.health_checks == []
