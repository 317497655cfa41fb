"""Tests for fluxplane.validate.runtime: where the example dist/'s documents end up, and what exists in each
cluster once placed objects have produced their outputs."""

from __future__ import annotations

from fluxplane.validate.runtime import RuntimeFleet
from fluxplane.validate.tree import load_tree
from tests.conftest import ROOT

SPOKES = ["production-euc1", "production-euw1", "production-use1", "production-usw2", "staging-euw1", "staging-usw2"]
#: The spokes with a composite resource: every one but the registered production-euc1, which the hub reaches keyless.
COMPOSED = [cluster for cluster in SPOKES if cluster != "production-euc1"]


def test_the_example_places_its_objects_on_every_cluster_without_problems() -> None:
    # GIVEN the example dist/ WHEN placed THEN the hub and the six spokes, and nothing the walk cannot follow
    fleet = RuntimeFleet(load_tree(ROOT / "dist"))
    assert fleet.clusters == ["hub", *SPOKES]
    assert fleet.problems == []


def test_an_external_secret_produces_its_target_secret_where_it_is_placed() -> None:
    # GIVEN the sealing key step, an ExternalSecret the hub applies on each spoke through its kubeconfig
    fleet = RuntimeFleet(load_tree(ROOT / "dist"))
    # THEN the spokes hold it and the Secret it writes; the hub holds neither
    secret = ("", "Secret", "kube-system", "sealed-secrets-key")
    external = ("external-secrets.io", "ExternalSecret", "kube-system", "sealed-secrets-key")
    assert [cluster for cluster in fleet.clusters if fleet.has(cluster, external)] == SPOKES
    assert [cluster for cluster in fleet.clusters if fleet.has(cluster, secret)] == SPOKES


def test_a_composite_produces_the_connection_secret_its_composition_writes() -> None:
    # GIVEN the hub's EKSCluster composites WHEN placed THEN each yields its kubeconfig Secret in its namespace
    fleet = RuntimeFleet(load_tree(ROOT / "dist"))
    assert sorted(key for key in fleet.exists["hub"] if key[1] == "Secret" and key[3].endswith("-kubeconfig")) == [
        ("", "Secret", cluster, f"{cluster}-kubeconfig") for cluster in COMPOSED
    ]
