"""The crossplane hub pack (fluxplane.packs.crossplane): Crossplane's core as a health-checked HelmRelease, and
the hub's chain of Crossplane packs."""

from __future__ import annotations

from fluxplane.packs import crossplane, crossplane_provider_configs, crossplane_providers
from tests.support.hub import bind


def test_crossplane_core_is_a_health_checked_helm_release_in_crossplane_system() -> None:
    documents, context = bind(crossplane.PACK, values={})
    assert [(d["kind"], d["metadata"]["name"]) for d in documents] == [
        ("Namespace", "crossplane-system"),
        ("HelmRepository", "crossplane-stable"),
        ("HelmRelease", "crossplane"),
    ]
    release = documents[2]["spec"]
    assert release["chart"]["spec"]["version"].startswith("2.")
    assert release["targetNamespace"] == "crossplane-system"
    assert [c.dump() for c in context.health_checks] == [
        {
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "name": "crossplane",
            "namespace": "flux-system",
        }
    ]


def test_the_hub_chain_is_declared_by_requires_and_layers() -> None:
    assert (crossplane.PACK.layer, crossplane.PACK.requires) == ("controllers", ())
    assert (crossplane_providers.PACK.layer, crossplane_providers.PACK.requires) == ("configs", ("crossplane",))
    assert (crossplane_provider_configs.PACK.layer, crossplane_provider_configs.PACK.requires) == (
        "configs",
        ("crossplane-providers",),
    )


def test_crossplane_activates_nothing_by_itself() -> None:
    documents, _ = bind(crossplane.PACK, values={})
    assert documents[2]["spec"]["values"]["provider"] == {"defaultActivations": []}
    # what the definition's values say still wins
    documents, _ = bind(crossplane.PACK, values={"values": {"provider": {"defaultActivations": ["*"]}}})
    assert documents[2]["spec"]["values"]["provider"] == {"defaultActivations": ["*"]}
