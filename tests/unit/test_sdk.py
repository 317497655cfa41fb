"""Tests for fluxplane.sdk: the one module pack authors import."""

from __future__ import annotations

import ast

import fluxplane.sdk
from fluxplane.constructs import patch_and_transform
from fluxplane.constructs.helm_repository import Chart
from fluxplane.packs.api import APP_RESOURCES, AWS_PROVIDERS, Pack, PackConfig, PackContext
from fluxplane.packs.versions import Chart as PinnedChart
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "fluxplane-pack-reloader" / "src" / "fluxplane_pack_reloader" / "__init__.py"


def test_every_exported_name_is_there_and_sorted() -> None:
    # GIVEN the SDK's __all__ WHEN each name is looked up THEN it exists, and the list is kept sorted
    assert [name for name in fluxplane.sdk.__all__ if not hasattr(fluxplane.sdk, name)] == []
    assert fluxplane.sdk.__all__ == sorted(fluxplane.sdk.__all__, key=lambda name: (not name.isupper(), name))


def test_the_sdk_hands_out_fluxplanes_own_objects() -> None:
    # GIVEN the SDK WHEN its names are compared with where fluxplane keeps them THEN they are the same objects,
    # so a pack written against the SDK is a pack the registry and synth accept
    assert (fluxplane.sdk.Pack, fluxplane.sdk.PackConfig, fluxplane.sdk.PackContext) == (Pack, PackConfig, PackContext)
    assert fluxplane.sdk.Chart is Chart is PinnedChart
    assert fluxplane.sdk.patch_and_transform is patch_and_transform


def test_the_example_pack_imports_nothing_of_fluxplane_but_the_sdk() -> None:
    # GIVEN the third-party example pack WHEN its imports are read THEN every fluxplane one is fluxplane.sdk
    tree = ast.parse(EXAMPLE.read_text())
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert {module for module in modules if module.startswith("fluxplane")} == {"fluxplane.sdk"}


def test_a_pack_can_declare_what_it_provides_from_the_sdk_alone() -> None:
    # GIVEN the SDK WHEN a pack of another distribution names a feature it stands in for
    # THEN the names are fluxplane's, and every feature fluxplane has is among them
    assert (fluxplane.sdk.APP_RESOURCES, fluxplane.sdk.AWS_PROVIDERS) == (APP_RESOURCES, AWS_PROVIDERS)
    assert set(fluxplane.sdk.PROVIDES) == {APP_RESOURCES, AWS_PROVIDERS}
