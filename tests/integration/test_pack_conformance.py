"""Every installed pack keeps the pack contract (fluxplane.testing.check_pack).

Each pack is checked twice: with the example fleet's config for it (which switches on most of what the
built-in packs can make), and with its defaults when its config model has them, bound with the example
fleet (a pack that builds clusters, for its first workload cluster).
"""

from __future__ import annotations

import pytest

from fluxplane.packs.api import Pack
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import load_plan
from fluxplane.synth.plan import FleetPlan
from fluxplane.testing import check_pack
from tests.conftest import ROOT

PACKS = list(PackRegistry.from_entry_points())
#: The built-in packs whose config has required fields: they are checked with the example fleet's only.
NEEDS_VALUES = {"crossplane-providers", "external-dns", "prometheus"}


@pytest.fixture(scope="module")
def example() -> FleetPlan:
    """The example fleet, which enables every built-in pack with valid values."""
    return load_plan(ROOT)


def test_the_example_fleet_configures_every_built_in_pack(example: FleetPlan) -> None:
    # GIVEN the built-in packs THEN the example fleet configures each one (so the tests below bind them with it)
    built_in = {pack.name for pack in PACKS if pack.bind.__module__.startswith("fluxplane.packs.")}
    assert len(built_in) == 17
    assert built_in <= set(example.base_configs)


@pytest.mark.parametrize("pack", PACKS, ids=lambda pack: pack.name)
def test_a_pack_keeps_the_contract_with_the_example_fleets_config(pack: Pack, example: FleetPlan) -> None:
    # GIVEN the pack, its config in the example fleet, and that fleet's first cluster for a cluster builder
    cluster = example.fleet.clusters[0] if pack.builds_clusters else None
    # WHEN checked THEN nothing breaks the contract
    assert check_pack(pack, example.base_configs.get(pack.name), fleet=example.fleet, cluster=cluster) == []


@pytest.mark.parametrize("pack", [pack for pack in PACKS if pack.name not in NEEDS_VALUES], ids=lambda pack: pack.name)
def test_a_pack_keeps_the_contract_with_its_defaults(pack: Pack, example: FleetPlan) -> None:
    # GIVEN the pack with its default config WHEN checked THEN nothing breaks the contract
    cluster = example.fleet.clusters[0] if pack.builds_clusters else None
    assert check_pack(pack, fleet=example.fleet, cluster=cluster) == []


@pytest.mark.parametrize("name", sorted(NEEDS_VALUES))
def test_a_config_with_required_fields_asks_for_an_example(name: str) -> None:
    # GIVEN a built-in pack whose config needs values WHEN checked without an example
    problems = check_pack(next(pack for pack in PACKS if pack.name == name))
    # THEN that is the one problem, and it says what to give
    assert len(problems) == 1
    assert problems[0].endswith("; give check_pack an example config")
