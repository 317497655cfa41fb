"""VPC CIDRs: given ones are kept and checked for overlaps, missing ones are allocated stably."""

from __future__ import annotations

import itertools
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest

from fluxplane.config.loader import load_fleet
from fluxplane.config.merge import Layer, Origins
from fluxplane.config.models import ClusterNetwork
from fluxplane.config.network import Claim, allocate
from fluxplane.errors import ConfigError
from tests.conftest import MINIMAL_BASE, FleetWriter


def _claim(name: str, cidr: str | None = None, file: str = "environments/staging.yaml", index: int = 0) -> Claim:
    entry: dict[str, Any] = {"name": name}
    if cidr:
        entry["network"] = {"cidr": cidr}
    return Claim(name, IPv4Network(cidr) if cidr else None, Origins([Layer(file, entry, prefix=("clusters", index))]))


def test_fifty_allocated_clusters_never_overlap_and_stay_in_the_pool() -> None:
    claims = [_claim(f"cluster-{n:02d}", index=n) for n in range(50)]
    cidrs, problems = allocate(claims, ClusterNetwork(), "environments/base.yaml: clusterNetwork.pool")
    assert problems == []
    networks = sorted(cidrs.values())
    assert len(networks) == 50
    assert all(network.prefixlen == 16 and network.subnet_of(IPv4Network("10.0.0.0/8")) for network in networks)
    assert all(not a.overlaps(b) for a, b in itertools.pairwise(networks))


def test_allocation_does_not_depend_on_order_and_adding_a_cluster_moves_no_other() -> None:
    settings = ClusterNetwork()
    names = [f"c{n}" for n in range(20)]
    first, _ = allocate([_claim(n) for n in names], settings, "x")
    reordered, _ = allocate([_claim(n) for n in reversed(names)], settings, "x")
    assert first == reordered
    grown, _ = allocate([_claim(n) for n in [*names, "newcomer"]], settings, "x")
    assert {name: grown[name] for name in names} == first


def test_given_cidrs_are_kept_and_never_handed_out_again() -> None:
    claims = [_claim("pinned", "10.0.0.0/9"), _claim("free")]
    cidrs, problems = allocate(claims, ClusterNetwork(prefixLength=16), "x")
    assert problems == []
    assert cidrs["pinned"] == IPv4Network("10.0.0.0/9")
    assert not cidrs["free"].overlaps(IPv4Network("10.0.0.0/9"))


def test_overlapping_given_cidrs_are_reported_against_the_cluster_entry() -> None:
    claims = [_claim("a", "10.20.0.0/16", index=0), _claim("b", "10.20.16.0/20", "environments/production.yaml", 3)]
    _, problems = allocate(claims, ClusterNetwork(), "x")
    assert problems == [
        "environments/production.yaml: clusters[3].network.cidr: 10.20.16.0/20 overlaps 10.20.0.0/16 of "
        "cluster 'a' (environments/staging.yaml: clusters[0].network.cidr)"
    ]


def test_reserved_ranges_are_avoided_and_overlaps_with_them_reported() -> None:
    settings = ClusterNetwork(pool="10.0.0.0/15", prefixLength=16, reserved=["10.0.0.0/16"])
    cidrs, problems = allocate([_claim("a")], settings, "x")
    assert (cidrs, problems) == ({"a": IPv4Network("10.1.0.0/16")}, [])
    _, problems = allocate([_claim("b", "10.0.0.0/20")], settings, "x")
    assert problems == [
        "environments/staging.yaml: clusters[0].network.cidr: 10.0.0.0/20 overlaps 10.0.0.0/16 of a reserved range"
    ]


def test_an_exhausted_pool_is_reported() -> None:
    settings = ClusterNetwork(pool="10.0.0.0/15", prefixLength=16)
    _, problems = allocate(
        [_claim("a"), _claim("b"), _claim("c")], settings, "environments/base.yaml: clusterNetwork.pool"
    )
    assert problems == [
        "environments/base.yaml: clusterNetwork.pool: no free /16 left in 10.0.0.0/15 (2 blocks) for cluster 'c'; "
        "use a larger pool or a longer prefixLength"
    ]


def test_many_clusters_left_out_are_reported_in_one_line() -> None:
    settings = ClusterNetwork(pool="10.0.0.0/15", prefixLength=16)
    _, problems = allocate([_claim(name) for name in "abcdefg"], settings, "x")
    assert problems == [
        "x: no free /16 left in 10.0.0.0/15 (2 blocks) for clusters 'c', 'd', 'e' and 2 more; "
        "use a larger pool or a longer prefixLength"
    ]


def test_an_exhausted_pool_is_a_config_error_not_a_crash(write_fleet: FleetWriter) -> None:
    # GIVEN three clusters and room for two WHEN loaded THEN one clear line, no traceback
    base = {**MINIMAL_BASE, "clusterNetwork": {"pool": "10.0.0.0/15", "prefixLength": 16}}
    clusters = [{"name": name, "region": "us-west-2"} for name in ("a", "b", "c")]
    root: Path = write_fleet(base=base, envs={"staging": {"clusters": clusters}})
    with pytest.raises(ConfigError) as caught:
        load_fleet(root)
    assert caught.value.problems == (
        "environments/base.yaml: clusterNetwork.pool: no free /16 left in 10.0.0.0/15 (2 blocks) for cluster 'c'; "
        "use a larger pool or a longer prefixLength",
    )


def test_loaded_fleets_carry_their_cidrs(write_fleet: FleetWriter) -> None:
    root: Path = write_fleet(
        envs={
            "staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]},
            "production": {"clusters": [{"name": "p1", "region": "us-east-1", "network": {"cidr": "10.50.0.0/16"}}]},
        }
    )
    clusters = {c.name: c for c in load_fleet(root).fleet.clusters}
    assert clusters["p1"].network.cidr == IPv4Network("10.50.0.0/16")
    assert clusters["s1"].network.cidr is not None and not clusters["s1"].network.cidr.overlaps(
        IPv4Network("10.50.0.0/16")
    )


@pytest.mark.parametrize(
    ("network", "message"),
    [
        (
            {"cidr": "10.0.0.1/16"},
            'network.cidr: expected an IPv4 network such as 10.20.0.0/16 (no host bits set), got "10.0.0.1/16"',
        ),
        (
            {"cidr": "10.0.0.0/24"},
            "network.cidr: a VPC CIDR must be /16 to /22 (room for 2 subnets per zone), got 10.0.0.0/24",
        ),
        (
            {"cidr": "banana"},
            'network.cidr: expected an IPv4 network such as 10.20.0.0/16 (no host bits set), got "banana"',
        ),
        ({"availabilityZones": 1}, "network.availabilityZones: expected an integer >= 2, got 1"),
        ({"natGateways": "Many"}, "network.natGateways: expected one of 'OnePerZone' or 'Single', got \"Many\""),
    ],
)
def test_bad_network_values(write_fleet: FleetWriter, network: dict[str, Any], message: str) -> None:
    root = write_fleet(envs={"staging": {"clusters": [{"name": "s1", "region": "us-west-2", "network": network}]}})
    with pytest.raises(ConfigError) as caught:
        load_fleet(root)
    assert caught.value.problems == (f"environments/staging.yaml: clusters[0].{message}",)


def test_unknown_instance_type_and_overlaps_reported_in_one_run(write_fleet: FleetWriter) -> None:
    root = write_fleet(
        base={**MINIMAL_BASE, "clusterNetwork": {"reserved": ["10.0.0.0/16"]}},
        envs={
            "staging": {
                "clusters": [
                    {"name": "s1", "region": "us-west-2", "nodeGroups": [{"name": "a", "instanceTypes": ["m9z.large"]}]}
                ]
            }
        },
    )
    with pytest.raises(ConfigError) as caught:
        load_fleet(root)
    assert caught.value.problems == (
        'environments/staging.yaml: clusters[0].nodeGroups[0].instanceTypes[0]: unknown EC2 instance type "m9z.large"; '
        'did you mean "m9g.large"? (a type newer than fluxplane\'s data: add it to awsData.instanceTypes in '
        "environments/base.yaml)",
    )
