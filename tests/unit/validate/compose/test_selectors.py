"""Tests for fluxplane.validate.compose.selectors: the reference selectors of composed resources, and which labels
they select. What a selector finds among a render's resources is tested with the compose checks
(tests/unit/validate/compose/test_checks.py), which place the resources it selects among."""

from __future__ import annotations

from typing import Any

from fluxplane.validate.compose.fieldpath import Unknown
from fluxplane.validate.compose.selectors import find_selectors, labels_match


def test_a_selector_matches_labels_that_hold_every_wanted_value() -> None:
    assert labels_match({"app": "db", "zone": "a"}, {"app": "db", "zone": "a", "extra": "x"})
    assert not labels_match({"app": "db", "zone": "a"}, {"app": "db", "zone": "b"})
    assert not labels_match({"app": "db", "zone": "a"}, {"app": "db"})


def test_a_value_only_the_running_system_knows_may_match() -> None:
    # a label or a wanted value read from an observed status is not judged: it may match
    assert labels_match({"vpc": Unknown("status.vpcId")}, {"vpc": "vpc-1"})
    assert labels_match({"vpc": "vpc-1"}, {"vpc": Unknown("status.vpcId")})
    # but a missing label never does
    assert not labels_match({"vpc": Unknown("status.vpcId")}, {})


def test_selectors_are_found_by_path_with_the_object_that_holds_them() -> None:
    # GIVEN a managed resource with a controller-ref selector, a labels selector in a list, and a selector of neither
    for_provider: dict[str, Any] = {
        "vpcIdSelector": {"matchControllerRef": True},
        "routes": [{"gatewayIdSelector": {"matchLabels": {"name": "igw"}}}],
        "subnetIdSelector": {"policy": {"resolve": "Always"}},
    }
    body = {"spec": {"forProvider": for_provider}}

    # WHEN searched THEN the first two, each with its path and the object holding it
    assert find_selectors(body, []) == [
        (["spec", "forProvider", "vpcIdSelector"], {"matchControllerRef": True}, for_provider),
        (
            ["spec", "forProvider", "routes", 0, "gatewayIdSelector"],
            {"matchLabels": {"name": "igw"}},
            for_provider["routes"][0],
        ),
    ]
