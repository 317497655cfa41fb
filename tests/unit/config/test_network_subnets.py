"""subnet_plan: a VPC split into a private and a public subnet per availability zone, named from the data."""

from __future__ import annotations

from ipaddress import IPv4Network
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fluxplane.config.awsdata import shipped
from fluxplane.config.network import ZoneSubnets, subnet_plan


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
