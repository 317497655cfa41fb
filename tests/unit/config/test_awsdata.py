"""Tests for fluxplane.config.awsdata: the AWS facts fluxplane ships, and the checks made against them."""

from __future__ import annotations

import dataclasses
import re
from datetime import date
from itertools import pairwise
from pathlib import Path

import pytest

from fluxplane.config import awsdata, models
from fluxplane.config.awsdata import AwsFacts, shipped, support_warnings

DATA = Path(awsdata.__file__).parent / "data"
OVERRIDE_HINT = "add it to awsData.{} in environments/base.yaml"


def _override(**fields: object) -> AwsFacts:
    return shipped().with_override(models.AwsData.model_validate(fields))


# -- the shipped data is well formed ---------------------------------------------------------------


def test_instance_types_are_sorted_unique_and_each_a_type() -> None:
    # GIVEN the shipped instance type list WHEN read
    text = (DATA / "ec2-instance-types.txt").read_text()
    types = awsdata.read_instance_types(text)

    # THEN it names its source, and holds sorted, distinct names of the form <family>.<size>
    assert "InstanceType enum" in text and re.search(r"botocore [0-9]+\.[0-9]+\.[0-9]+", text)
    assert list(types) == sorted(set(types))
    assert [item for item in types if not re.fullmatch(models.INSTANCE_TYPE, item)] == []
    # AND the types the example fleet and the defaults use are there
    assert {"m7i.large", "m7i.xlarge", "m6i.xlarge"} <= set(types)


def test_regions_are_the_three_partitions_with_their_zones() -> None:
    # GIVEN the shipped regions WHEN read
    partitions = awsdata.read_regions((DATA / "aws-regions.yaml").read_text())

    # THEN they are the commercial, China and GovCloud partitions, each region in one of them, sorted
    assert tuple(partitions) == awsdata.PARTITIONS
    regions = [region for zones_by_region in partitions.values() for region in zones_by_region]
    assert len(regions) == len(set(regions))
    assert all(list(by_region) == sorted(by_region) for by_region in partitions.values())
    assert {"us-west-2", "cn-north-1", "us-gov-west-1"} <= set(regions)
    for by_region in partitions.values():
        for region, zones in by_region.items():
            # AND every region has two or more distinct zones, in order, each named after its region
            assert re.fullmatch(models.AWS_REGION, region), region
            assert len(zones) >= 2 and list(zones) == sorted(set(zones)), region
            assert all(re.fullmatch(models.AVAILABILITY_ZONE, zone) and zone[:-1] == region for zone in zones), zones


def test_the_calendar_is_in_order() -> None:
    # GIVEN the shipped EKS calendar WHEN read
    as_of, releases = awsdata.read_calendar((DATA / "eks-kubernetes-versions.yaml").read_text())

    # THEN its versions are consecutive minors, released in order
    versions = list(releases)
    assert all(re.fullmatch(models.KUBERNETES_VERSION, version) for version in versions)
    assert [awsdata.minor(version) for version in versions] == list(
        range(awsdata.minor(versions[0]), awsdata.minor(versions[-1]) + 1)
    )
    assert all(a.release < b.release for a, b in pairwise(releases.values()))
    # AND each one's support ends after its release, extended support after standard support
    assert all(r.release < r.end_of_standard_support < r.end_of_extended_support for r in releases.values())
    # AND the day it was read is a fixed date in the file, not today
    assert as_of == date(2026, 11, 23)


# -- instance types ------------------------------------------------------------------------------


def test_a_misspelt_instance_type_is_refused_with_the_close_match() -> None:
    assert shipped().instance_type_problem("m7i.lrage") == (
        'unknown EC2 instance type "m7i.lrage"; did you mean "m7i.large"? '
        "(a type newer than fluxplane's data: " + OVERRIDE_HINT.format("instanceTypes") + ")"
    )


def test_an_instance_type_like_no_other_gets_an_example() -> None:
    assert shipped().instance_type_problem("zzzz.q") == (
        'unknown EC2 instance type "zzzz.q"; use one AWS offers, such as m7i.large '
        "(a type newer than fluxplane's data: " + OVERRIDE_HINT.format("instanceTypes") + ")"
    )


@pytest.mark.parametrize("instance_type", ["m7i.large", "c7g.16xlarge", "u-6tb1.metal", "m7i-flex.large"])
def test_instance_types_ec2_offers_are_accepted(instance_type: str) -> None:
    assert shipped().instance_type_problem(instance_type) is None


# -- regions and zones ---------------------------------------------------------------------------


def test_a_misspelt_region_is_refused_with_the_close_match() -> None:
    assert shipped().region_problem("eu-wst-1") == (
        'unknown AWS region "eu-wst-1"; did you mean "eu-west-1"? (a region newer than fluxplane\'s data: '
        "add it with its availability zones to awsData.regions in environments/base.yaml)"
    )


@pytest.mark.parametrize("region", ["us-west-2", "ap-southeast-7", "mx-central-1", "cn-northwest-1", "us-gov-east-1"])
def test_commercial_china_and_govcloud_regions_are_accepted(region: str) -> None:
    assert shipped().region_problem(region) is None


@pytest.mark.parametrize(
    ("region", "names"),
    [
        ("us-west-2", ("us-west-2a", "us-west-2b", "us-west-2c")),
        ("ca-central-1", ("ca-central-1a", "ca-central-1b", "ca-central-1d")),
        ("ap-northeast-1", ("ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d")),
        ("cn-north-1", ("cn-north-1a", "cn-north-1b", "cn-north-1d")),
    ],
)
def test_zone_names_come_from_the_data_in_order(region: str, names: tuple[str, ...]) -> None:
    # GIVEN a region WHEN its first three zones are asked for THEN they are the zones it has, not a, b, c
    assert shipped().zone_names(region, 3) == names


def test_more_zones_than_a_region_has_are_refused() -> None:
    # GIVEN six zones in ca-central-1, which has three
    aws = shipped()

    # WHEN checked THEN the count and the zones are named, with the way out for an account with more
    assert aws.zone_count_problem("ca-central-1", 6) == (
        "ca-central-1 has 3 availability zones (ca-central-1a, ca-central-1b, ca-central-1d), got 6; use at most 3, "
        "or list your account's zones there under awsData.regions in environments/base.yaml"
    )
    assert aws.zone_count_problem("ca-central-1", 3) is None
    assert aws.zone_count_problem("us-east-1", 6) is None
    # AND a region it does not know is left to the region check
    assert aws.zone_count_problem("xx-new-1", 6) is None
    with pytest.raises(ValueError, match=r"^'ca-central-1' has 3 known availability zones, not 6$"):
        aws.zone_names("ca-central-1", 6)


# -- Kubernetes versions -------------------------------------------------------------------------


def test_the_supported_versions_are_those_whose_extended_support_had_not_ended_on_the_calendar_date() -> None:
    # GIVEN the calendar read on 2026-11-23: 1.30's extended support ended 2026-07-23, 1.31's ends 2026-11-26
    assert shipped().supported_versions == ("1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
    # WHEN the calendar's date moves past 1.31's end THEN 1.31 is no longer offered
    assert dataclasses.replace(shipped(), as_of=date(2026, 11, 26)).supported_versions[0] == "1.32"


def test_the_supported_versions_are_worked_out_once_per_set_of_facts() -> None:
    # GIVEN facts WHEN each cluster of a fleet has its version checked THEN the versions are not sorted again each time
    facts = dataclasses.replace(shipped())
    first = facts.supported_versions
    facts.version_problem("1.99")
    assert facts.supported_versions is first


def test_an_unknown_version_is_refused_with_the_supported_range() -> None:
    assert shipped().version_problem("1.99") == (
        'expected a Kubernetes version EKS supports (1.31 to 1.37), got "1.99" '
        "(a version newer than fluxplane's data: " + OVERRIDE_HINT.format("kubernetesVersions") + ")"
    )


def test_a_version_past_its_extended_support_is_refused_with_the_date() -> None:
    assert shipped().version_problem("1.30") == (
        'expected a Kubernetes version EKS supports (1.31 to 1.37), got "1.30": its extended support ended on '
        "2026-07-23"
    )


def test_a_version_older_than_the_calendar_is_refused() -> None:
    assert shipped().version_problem("1.22") == (
        'expected a Kubernetes version EKS supports (1.31 to 1.37), got "1.22": EKS support for it has ended'
    )


@pytest.mark.parametrize("version", ["1.31", "1.33", "1.37"])
def test_supported_versions_are_accepted(version: str) -> None:
    assert shipped().version_problem(version) is None


# -- awsData: facts newer than fluxplane's ---------------------------------------------------------


def test_an_override_admits_a_new_type_region_and_version() -> None:
    # GIVEN awsData naming a type, a region and a version fluxplane's data does not have
    aws = _override(
        instanceTypes=["m99z.large"],
        regions={"xx-new-1": ["xx-new-1a", "xx-new-1b", "xx-new-1c"]},
        kubernetesVersions=["1.38"],
    )

    # WHEN checked THEN each is accepted, and the new region's zones are used in their order
    assert shipped().instance_type_problem("m99z.large") is not None
    assert aws.instance_type_problem("m99z.large") is None
    assert aws.region_problem("xx-new-1") is None
    assert aws.zone_names("xx-new-1", 2) == ("xx-new-1a", "xx-new-1b")
    assert aws.version_problem("1.38") is None
    assert aws.supported_versions[-1] == "1.38"
    # AND what the data already had is still accepted
    assert aws.instance_type_problem("m7i.large") is None


def test_an_override_replaces_a_regions_zones_for_an_account_that_sees_others() -> None:
    # GIVEN an account whose us-west-1 zones are b and c
    aws = _override(regions={"us-west-1": ["us-west-1b", "us-west-1c"]})

    # WHEN its zones are asked for THEN the account's replace fluxplane's
    assert shipped().zone_names("us-west-1", 2) == ("us-west-1a", "us-west-1b")
    assert aws.zone_names("us-west-1", 2) == ("us-west-1b", "us-west-1c")


def test_added_versions_that_are_not_consecutive_are_listed_apart() -> None:
    aws = _override(kubernetesVersions=["1.40"])
    assert aws.version_problem("1.39") is not None
    assert "(1.31 to 1.37, 1.40)" in (aws.version_problem("1.39") or "")


def test_an_override_cannot_bring_back_a_version_past_its_extended_support() -> None:
    # GIVEN awsData adding 1.30, which the calendar says EKS no longer offers
    aws = _override(kubernetesVersions=["1.30", "1.38"])

    # WHEN checked THEN the addition is refused, and 1.30 is still not supported
    assert aws.added_version_problem("1.30") == (
        "EKS ended extended support for Kubernetes 1.30 on 2026-07-23, so it cannot be added; use 1.31 to 1.38"
    )
    assert aws.added_version_problem("1.38") is None
    assert aws.version_problem("1.30") is not None


def test_clusters_past_or_near_the_end_of_standard_support_are_named_once_per_version() -> None:
    releases = shipped().releases
    versions = {"hub": "1.34", "a": "1.33", "b": "1.34", "c": "1.37", **{f"old-{n}": "1.32" for n in range(7)}}
    # WHEN judged on the day 1.34 has 8 days of standard support left
    lines = support_warnings(versions, releases, date(2026, 11, 24))
    # THEN the versions past it and the one near it are named, oldest first, each with its clusters
    assert lines == [
        "Kubernetes 1.32 left EKS standard support on 2026-03-23: old-0, old-1, old-2, old-3, old-4 and 2 more run on "
        "paid extended support until 2027-03-23, when EKS upgrades them; upgrade to 1.33 (kubernetesVersion)",
        "Kubernetes 1.33 left EKS standard support on 2026-07-29: a runs on paid extended support until 2027-07-29, "
        "when EKS upgrades it; upgrade to 1.34 (kubernetesVersion)",
        "Kubernetes 1.34 leaves EKS standard support on 2026-12-02, in 8 days: b, hub; upgrade to 1.35 "
        "(kubernetesVersion)",
    ]
    # AND a version far from its end, or one the calendar does not hold, is not judged
    assert support_warnings({"c": "1.37", "d": "1.40"}, releases, date(2026, 11, 24)) == []
    assert support_warnings({"b": "1.34"}, releases, date(2026, 9, 2)) == []
    assert len(support_warnings({"b": "1.34"}, releases, date(2026, 9, 3))) == 1
