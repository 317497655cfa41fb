"""VPC CIDRs: given ones are kept and checked for overlaps, recorded ones are kept, missing ones are allocated."""

from __future__ import annotations

import itertools
from ipaddress import IPv4Network
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fluxplane.config.awsdata import shipped
from fluxplane.config.loader import load_fleet
from fluxplane.config.merge import Layer, Origins
from fluxplane.config.models import ClusterNetwork
from fluxplane.config.network import (
    ALLOCATIONS_HEADER,
    VERSIONS_HEADER,
    Claim,
    Recorded,
    ZoneSubnets,
    _Blocks,
    allocate,
    allocations_text,
    subnet_plan,
)
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


def test_allocating_makes_only_the_blocks_it_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a /8 pool of /22 blocks (16,384 of them), two recorded clusters and a newcomer
    settings = ClusterNetwork(pool="10.0.0.0/8", prefixLength=22)
    recorded = Recorded({"a": IPv4Network("10.1.0.0/22"), "b": IPv4Network("10.2.0.0/22")})
    made: list[Any] = []
    original = IPv4Network.__init__

    def counting(self: IPv4Network, address: Any, strict: bool = True) -> None:
        made.append(address)
        original(self, address, strict)

    monkeypatch.setattr(IPv4Network, "__init__", counting)
    # WHEN allocated
    cidrs, problems = allocate([_claim("a"), _claim("b"), _claim("newcomer")], settings, "x", recorded)
    # THEN the newcomer gets a free block of the pool, made alone: the pool's blocks are never listed
    assert problems == [] and cidrs["newcomer"].prefixlen == 22 and cidrs["newcomer"].subnet_of(settings.pool)
    assert cidrs["newcomer"] not in (cidrs["a"], cidrs["b"])
    assert len(made) <= 4


def test_allocation_does_not_depend_on_order_and_adding_a_cluster_moves_no_other() -> None:
    settings = ClusterNetwork()
    names = [f"c{n}" for n in range(20)]
    first, _ = allocate([_claim(n) for n in names], settings, "x")
    reordered, _ = allocate([_claim(n) for n in reversed(names)], settings, "x")
    assert first == reordered
    grown, _ = allocate([_claim(n) for n in [*names, "newcomer"]], settings, "x", Recorded(first))
    assert {name: grown[name] for name in names} == first


def test_a_newcomer_whose_name_hashes_to_a_taken_block_moves_no_recorded_cluster() -> None:
    # GIVEN staging-usw2 recorded at the block its name hashes to, and a newcomer whose name hashes to the
    # same block and sorts before it ("ml-afc": without the record, it would take 10.198.0.0/16 first)
    recorded = Recorded({"staging-usw2": IPv4Network("10.198.0.0/16")})
    claims = [_claim("staging-usw2"), _claim("ml-afc")]
    # WHEN allocated
    cidrs, problems = allocate(claims, ClusterNetwork(), "x", recorded)
    # THEN the recorded cluster keeps its block and the newcomer probes past it
    assert problems == []
    assert cidrs == {"staging-usw2": IPv4Network("10.198.0.0/16"), "ml-afc": IPv4Network("10.199.0.0/16")}


def test_a_recorded_range_outlives_changes_to_the_pool_and_a_removed_pin() -> None:
    # GIVEN a cluster recorded outside today's pool and without a pin any more
    recorded = Recorded({"old": IPv4Network("172.16.0.0/16"), "gone": IPv4Network("10.0.0.0/16")})
    # WHEN allocated THEN it keeps its range, and the entry of a cluster no longer defined is ignored
    cidrs, problems = allocate([_claim("old")], ClusterNetwork(pool="10.0.0.0/8"), "x", recorded)
    assert (cidrs, problems) == ({"old": IPv4Network("172.16.0.0/16")}, [])


def test_a_pin_replaces_the_recorded_range_of_its_own_cluster() -> None:
    # GIVEN a recorded cluster that is now pinned elsewhere WHEN allocated THEN the pin wins (an explicit move)
    recorded = Recorded({"a": IPv4Network("10.1.0.0/16")})
    cidrs, problems = allocate([_claim("a", "10.2.0.0/16")], ClusterNetwork(), "x", recorded)
    assert (cidrs, problems) == ({"a": IPv4Network("10.2.0.0/16")}, [])


def test_a_pin_that_takes_another_clusters_recorded_range_is_refused() -> None:
    # GIVEN staging-usw2 recorded at 10.198.0.0/16 and another cluster pinned onto it
    recorded = Recorded({"staging-usw2": IPv4Network("10.198.0.0/16")})
    claims = [_claim("staging-usw2"), _claim("ml-usw1", "10.198.0.0/16", "environments/production.yaml", 2)]
    # WHEN allocated THEN the pin is refused where it is written, naming whose range it takes
    _, problems = allocate(claims, ClusterNetwork(), "x", recorded)
    assert problems == [
        "environments/production.yaml: clusters[2].network.cidr: 10.198.0.0/16 overlaps 10.198.0.0/16 of cluster "
        "'staging-usw2' (its allocated range, environments/allocations.yaml: clusters.staging-usw2); a pin may not "
        "take another cluster's range: pick a free one"
    ]


def test_a_reserved_range_laid_over_a_recorded_cluster_is_refused_at_the_reserved_list() -> None:
    settings = ClusterNetwork(reserved=["10.198.0.0/20"])
    recorded = Recorded({"staging-usw2": IPv4Network("10.198.0.0/16")})
    _, problems = allocate(
        [_claim("staging-usw2")], settings, "pool", recorded, "environments/base.yaml: clusterNetwork.reserved"
    )
    assert problems == [
        "environments/base.yaml: clusterNetwork.reserved: 10.198.0.0/20 overlaps 10.198.0.0/16 of cluster "
        "'staging-usw2' (environments/allocations.yaml: clusters.staging-usw2); a cluster's range never moves by "
        "itself: reserve another range, or move the cluster explicitly with its network.cidr"
    ]


def test_two_clusters_recorded_in_one_range_are_refused_at_the_recorded_file() -> None:
    # GIVEN two changes merged at once, each recording its new cluster in the same block
    recorded = Recorded({"a": IPv4Network("10.5.0.0/16"), "b": IPv4Network("10.5.0.0/16")})
    _, problems = allocate([_claim("a"), _claim("b")], ClusterNetwork(), "x", recorded)
    assert problems == [
        "environments/allocations.yaml: clusters.b: 10.5.0.0/16 overlaps 10.5.0.0/16 of cluster 'a' "
        "(environments/allocations.yaml: clusters.a); two clusters were given one range (two changes merged at "
        "once?): delete the line of the cluster that is not built yet, and synth allocates it again"
    ]


def test_the_recorded_file_lists_every_cluster_by_name_under_its_header() -> None:
    text = allocations_text({"b": IPv4Network("10.2.0.0/16"), "a": IPv4Network("10.1.0.0/16")}, {})
    assert text == ALLOCATIONS_HEADER + "clusters:\n  a: 10.1.0.0/16\n  b: 10.2.0.0/16\n"
    assert allocations_text({}, {}) == ALLOCATIONS_HEADER + "clusters: {}\n"
    versions = allocations_text({}, {"hub": "1.37", "a": "1.30"})
    assert versions.endswith(f'\n{VERSIONS_HEADER}kubernetesVersions:\n  a: "1.30"\n  hub: "1.37"\n')


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


def test_loaded_fleets_keep_the_recorded_ranges(write_fleet: FleetWriter) -> None:
    # GIVEN a recorded range for s1 that its name would not hash to
    root: Path = write_fleet(envs={"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    (root / "environments" / "allocations.yaml").write_text("clusters:\n  s1: 10.77.0.0/16\n")
    # WHEN loaded THEN s1 has it, and the recorded file is not read as an environment
    (cluster,) = load_fleet(root).fleet.clusters
    assert cluster.network.cidr == IPv4Network("10.77.0.0/16")
    assert [env.name for env in load_fleet(root).fleet.environments] == ["staging"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "clusters:\n  s1: 10.77.0.1/16\n",
            "environments/allocations.yaml: clusters.s1: expected an IPv4 network such as 10.20.0.0/16 "
            '(no host bits set), got "10.77.0.1/16"',
        ),
        (
            "clusters:\n  s1: 10.0.0.0/8\n",
            "environments/allocations.yaml: clusters.s1: a VPC CIDR must be /16 to /22, got 10.0.0.0/8",
        ),
        (
            "cluster: {}\n",
            'environments/allocations.yaml: cluster: unknown field; did you mean "clusters"? allowed: clusters, '
            "kubernetesVersions",
        ),
        ("clusters: [a]\n", "environments/allocations.yaml: clusters: expected a mapping, got a list"),
    ],
    ids=["host-bits", "too-large", "unknown-key", "not-a-mapping"],
)
def test_a_damaged_recorded_file_is_a_located_error(write_fleet: FleetWriter, text: str, problem: str) -> None:
    # GIVEN a recorded file edited by hand (it arrives with pull requests: it is checked, not trusted)
    root: Path = write_fleet(envs={"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    (root / "environments" / "allocations.yaml").write_text(text)
    # WHEN loaded THEN the problem names the file and key
    with pytest.raises(ConfigError) as caught:
        load_fleet(root)
    assert problem in caught.value.problems


@given(
    prefix=st.sampled_from([12, 16, 20]),
    used=st.lists(
        st.tuples(st.integers(0, 255), st.integers(0, 255), st.sampled_from([10, 14, 16, 20, 24])), max_size=30
    ),
)
def test_a_block_is_free_exactly_when_no_used_range_overlaps_it(prefix: int, used: list[tuple[int, int, int]]) -> None:
    # GIVEN a pool's blocks and ranges taken in it (overlapping each other, inside and across blocks)
    blocks = list(IPv4Network("10.0.0.0/8").subnets(new_prefix=prefix))
    taken = [IPv4Network(f"10.{b}.{c}.0/{length}", strict=False) for b, c, length in used]
    # WHEN the free blocks are found THEN they are those no taken range overlaps, in the pool's order
    pool = _Blocks(IPv4Network("10.0.0.0/8"), prefix, taken)
    assert pool.count == len(blocks)
    assert [pool.free(index) for index in range(pool.count)] == [
        not any(block.overlaps(network) for network in taken) for block in blocks
    ]
    # AND a block given is the pool's block at that index, and no longer free
    assert pool.give(pool.count - 1) == blocks[-1] and not pool.free(pool.count - 1)


# --------------------------------------------------------------------------------------------------------------
# subnet_plan: a VPC split into a private and a public subnet per availability zone, named from the data.


def _zone(zone: str, public: str, private: str) -> ZoneSubnets:
    return ZoneSubnets(zone=zone, public=IPv4Network(public), private=IPv4Network(private))


def _zones(region: str, count: int) -> tuple[str, ...]:
    return shipped().zone_names(region, count)


def test_a_16_over_three_zones() -> None:
    # GIVEN a /16 WHEN split over three zones
    plan = subnet_plan(IPv4Network("10.0.0.0/16"), _zones("us-west-2", 3))

    # THEN private subnets are eighths from the start, public ones /22s from the seventh eighth
    assert plan == (
        _zone("us-west-2a", "10.0.192.0/22", "10.0.0.0/19"),
        _zone("us-west-2b", "10.0.196.0/22", "10.0.32.0/19"),
        _zone("us-west-2c", "10.0.200.0/22", "10.0.64.0/19"),
    )


def test_a_22_over_two_zones() -> None:
    # GIVEN the smallest VPC fluxplane allows WHEN split over two zones THEN public subnets are /28s
    assert subnet_plan(IPv4Network("10.20.0.0/22"), _zones("eu-central-1", 2)) == (
        _zone("eu-central-1a", "10.20.3.0/28", "10.20.0.0/25"),
        _zone("eu-central-1b", "10.20.3.16/28", "10.20.0.128/25"),
    )


def test_six_zones_of_us_east_1_are_a_to_f() -> None:
    plan = subnet_plan(IPv4Network("172.16.0.0/16"), _zones("us-east-1", 6))
    assert [zone.zone for zone in plan] == [f"us-east-1{letter}" for letter in "abcdef"]
    assert plan[5] == _zone("us-east-1f", "172.16.212.0/22", "172.16.160.0/19")


@pytest.mark.parametrize(
    ("region", "names"),
    [
        ("ca-central-1", ["ca-central-1a", "ca-central-1b", "ca-central-1d"]),
        ("ap-northeast-1", ["ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d"]),
    ],
)
def test_zones_are_named_from_the_region_not_by_letter(region: str, names: list[str]) -> None:
    # GIVEN a region that skips a zone letter WHEN its three zones are planned
    plan = subnet_plan(IPv4Network("10.0.0.0/16"), _zones(region, 3))

    # THEN the subnets go to the zones the region has, and the third zone keeps the third position's subnets
    assert [zone.zone for zone in plan] == names
    assert plan[2] == _zone(names[2], "10.0.200.0/22", "10.0.64.0/19")


@st.composite
def vpcs(draw: st.DrawFn) -> IPv4Network:
    prefix = draw(st.integers(min_value=16, max_value=22))
    block = draw(st.integers(min_value=0, max_value=2**prefix - 1))
    return IPv4Network((block << (32 - prefix), prefix))


@given(vpc=vpcs(), zones=st.integers(min_value=2, max_value=6))
def test_subnets_stay_inside_the_vpc_and_never_overlap(vpc: IPv4Network, zones: int) -> None:
    # GIVEN any VPC of /16 to /22 WHEN split over 2 to 6 zones
    plan = subnet_plan(vpc, [f"zone-{index}" for index in range(zones)])

    # THEN there is one entry per zone, and every subnet lies inside the VPC
    assert len(plan) == zones
    subnets = [subnet for zone in plan for subnet in (zone.public, zone.private)]
    assert all(subnet.subnet_of(vpc) for subnet in subnets)
    # AND no two subnets overlap
    assert not any(a.overlaps(b) for a, b in combinations(subnets, 2))
    # AND private subnets are eighths, public ones sixty-fourths, and the last eighth stays free
    assert {zone.private.prefixlen - vpc.prefixlen for zone in plan} == {3}
    assert {zone.public.prefixlen - vpc.prefixlen for zone in plan} == {6}
    last_eighth = list(vpc.subnets(prefixlen_diff=3))[-1]
    assert not any(subnet.overlaps(last_eighth) for subnet in subnets)


@given(vpc=vpcs(), zones=st.integers(min_value=2, max_value=5), more=st.integers(min_value=1, max_value=4))
def test_adding_zones_moves_no_existing_zone(vpc: IPv4Network, zones: int, more: int) -> None:
    # GIVEN a plan WHEN zones are added (up to six) THEN the existing zones keep their subnets
    grown = min(zones + more, 6)
    assert subnet_plan(vpc, _zones("us-east-1", grown))[:zones] == subnet_plan(vpc, _zones("us-east-1", zones))


@pytest.mark.parametrize("zones", [0, 7])
def test_zone_counts_outside_one_to_six_are_refused(zones: int) -> None:
    # GIVEN no zone, or more zones than the VPC has eighths for WHEN planned THEN refused
    with pytest.raises(ValueError, match=rf"^zones must be 1 to 6, got {zones}$"):
        subnet_plan(IPv4Network("10.0.0.0/16"), [f"us-east-1{letter}" for letter in "abcdefg"[:zones]])
