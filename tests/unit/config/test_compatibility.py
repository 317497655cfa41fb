"""fluxplane.config.compatibility: the Kubernetes versions each controller supports, as its project publishes them."""

from __future__ import annotations

import pytest

from fluxplane.config.awsdata import minor
from fluxplane.config.compatibility import (
    ceilings,
    compatibility,
    newest_supported,
    outgrown,
    published,
    unsupported,
)
from fluxplane.packs import versions

#: The platform's controllers fluxplane installs or the hub runs, with the versions it pins.
PLATFORM = {
    "flux": versions.FLUX2_APP_VERSION,
    "crossplane": versions.CROSSPLANE.version,
    "external-secrets": versions.EXTERNAL_SECRETS.version,
    "sealed-secrets": versions.SEALED_SECRETS.version,
}


def test_every_row_is_a_range_with_its_source() -> None:
    for name, table in compatibility().items():
        assert table.source, name
        for version, (low, high) in table.rows.items():
            assert high is None or low <= high, (name, version)


@pytest.mark.parametrize(("name", "version"), sorted(PLATFORM.items()))
def test_every_platform_controller_is_judged_at_the_version_fluxplane_pins(name: str, version: str) -> None:
    assert compatibility()[name].supported(version) is not None


def test_the_platform_controllers_ranges_are_the_published_ones() -> None:
    # Flux 2.9: "Announcing Flux 2.9 GA"; ESO: its chart's floor to its support table's version; Sealed Secrets: no
    # upper bound
    assert compatibility()["flux"].supported("2.9") == (34, 36)
    assert compatibility()["flux"].supported(versions.FLUX_DISTRIBUTION) == (34, 36)
    assert compatibility()["external-secrets"].supported("2.9.0") == (19, 36)
    assert compatibility()["sealed-secrets"].supported("2.18.5") == (25, None)
    assert compatibility()["crossplane"].supported("2.3.4") == (34, 36)


def test_a_range_leaves_out_the_versions_on_either_side() -> None:
    running = {"external-secrets": "2.9.0", "sealed-secrets": "2.18.5", "kyverno": "9.9.9"}
    source = compatibility()["external-secrets"].source
    assert unsupported("1.36", running) == []
    assert unsupported("1.18", running) == [
        ("external-secrets", f"external-secrets 2.9.0 supports Kubernetes 1.19 to 1.36 ({source})"),
        (
            "sealed-secrets",
            f"sealed-secrets 2.18.5 supports Kubernetes 1.25 and later ({compatibility()['sealed-secrets'].source})",
        ),
    ]
    # what an upgrade to a version leaves behind is only a range that ends below it
    assert outgrown("1.35", running) == []
    assert [name for name, _ in outgrown("1.37", running)] == ["external-secrets"]
    assert published({"sealed-secrets": "2.18.5"}) == [
        f"sealed-secrets 2.18.5 supports Kubernetes 1.25 and later ({compatibility()['sealed-secrets'].source})"
    ]


def test_the_newest_version_every_controller_supports_and_what_keeps_the_others_off() -> None:
    offered = ["1.34", "1.35", "1.36", "1.37"]
    running = {**PLATFORM, "cert-manager": "v1.20.0", "metrics-server": "3.13.1"}
    assert newest_supported(offered, running) == "1.35"  # cert-manager 1.20 ends at 1.35
    assert newest_supported(offered[2:], running) is None  # and no version offered is that old
    running["cert-manager"] = "v1.21.1"
    assert newest_supported(offered, running) == "1.36"
    assert ceilings("1.37", running) == (
        f"cert-manager v1.21.1, crossplane {PLATFORM['crossplane']}, external-secrets {PLATFORM['external-secrets']} "
        "and flux 2.9 support up to 1.36"
    )
    assert ceilings("1.37", {"flux": "2.8", "crossplane": "2.3.4"}) == (
        "flux 2.8 supports up to 1.35; crossplane 2.3.4 supports up to 1.36"
    )
    assert newest_supported(offered, {}) == max(offered, key=minor)
