"""Tests for fluxplane.testing's package: its pack testing names load only when first used."""

from __future__ import annotations

import subprocess
import sys

import pytest

import fluxplane.testing
from fluxplane.testing import packs


def test_the_pytest_plugin_loads_no_pack_testing_and_no_javascript_runtime() -> None:
    # GIVEN a fresh interpreter WHEN the plugin every fleet repository's test session loads is imported
    code = (
        "import sys; import fluxplane.testing.pytest_plugin; "
        "print(sorted(name for name in sys.modules if name.split('.')[0] in ('jsii', 'cdk8s', 'constructs') "
        "or name == 'fluxplane.testing.packs'))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # THEN neither the pack testing module nor cdk8s is imported
    assert result.stdout.strip() == "[]"


def test_the_pack_testing_names_are_those_of_fluxplane_testing_packs() -> None:
    assert (fluxplane.testing.bind_pack, fluxplane.testing.check_pack, fluxplane.testing.BoundPack) == (
        packs.bind_pack,
        packs.check_pack,
        packs.BoundPack,
    )


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"module 'fluxplane\.testing' has no attribute 'bind_fleet'"):
        _ = fluxplane.testing.bind_fleet
