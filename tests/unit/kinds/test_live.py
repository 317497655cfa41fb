"""The form of a live-resource entry (fluxplane.kinds.live): field paths, kind patterns and managed groups."""

from __future__ import annotations

import pytest

from fluxplane.kinds.live import CloudKind, given, is_managed, spec


def test_given_and_spec_name_fields_under_for_provider_and_spec() -> None:
    assert given("engine", "vpcConfig.subnetIds") == (
        ("spec", "forProvider", "engine"),
        ("spec", "forProvider", "vpcConfig", "subnetIds"),
    )
    assert spec("network.zones") == (("spec", "network", "zones"),)


@pytest.mark.parametrize(
    ("group", "kind", "matches"),
    [
        ("rds.aws.upbound.io", "Instance", True),
        ("rds.aws.m.upbound.io", "Instance", True),
        ("rds.aws.upbound.io", "Cluster", False),
        ("rdsx.example.com", "Instance", False),
    ],
)
def test_an_entrys_group_is_a_pattern_over_both_provider_families(group: str, kind: str, matches: bool) -> None:
    assert CloudKind("rds.aws*", "Instance", "RDS instance").matches(group, kind) is matches


def test_managed_groups_are_the_aws_services_not_the_providers_own() -> None:
    assert is_managed("ec2.aws.upbound.io") and is_managed("ec2.aws.m.upbound.io")
    assert not is_managed("aws.upbound.io") and not is_managed("platform.fluxplane.io")
