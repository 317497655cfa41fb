"""Tests for fluxplane.packs.registry: building the registry and configuring packs from the definition."""

from __future__ import annotations

from dataclasses import replace
from importlib.metadata import EntryPoint
from typing import Any

import pytest
from pydantic import Field

from fluxplane.config.merge import Layer, Origins
from fluxplane.errors import FluxplaneError, PackError
from fluxplane.packs import registry as registry_module
from fluxplane.packs.api import APP_RESOURCES, AWS_PROVIDERS, Pack, PackConfig, PackContext
from fluxplane.packs.api import Layer as PackLayer
from fluxplane.packs.metrics_server import MetricsServerConfig
from fluxplane.packs.podinfo import PodinfoConfig
from fluxplane.packs.registry import ENTRY_POINT_GROUP, PackRegistry, find_cycle

#: The installed packs, as messages list them.
INSTALLED = ", ".join(PackRegistry.from_entry_points().names)


def _no_bind(ctx: PackContext, config: Any) -> None:
    """Small test packs add nothing."""


def pack(name: str, *requires: str, layer: PackLayer = "apps", config: type[PackConfig] = PackConfig) -> Pack:
    return Pack(
        name=name,
        version="0.0.1",
        description=name,
        config=config,
        layer=layer,
        bind=_no_bind,
        requires=requires,
    )


class _SizedConfig(PackConfig):
    size: int = Field(1, ge=1)


STAGING = "environments/staging.yaml"


def staging_origins(sections: dict[str, Any]) -> Origins:
    return Origins([Layer(STAGING, sections, prefix=("packs",))])


# -- building a registry -------------------------------------------------------------------------


def test_registry_is_sorted_by_name() -> None:
    # GIVEN packs in no particular order WHEN registered THEN names and iteration are sorted
    registry = PackRegistry([pack("zeta"), pack("alpha"), pack("mid")])
    assert registry.names == ("alpha", "mid", "zeta")
    assert [p.name for p in registry] == ["alpha", "mid", "zeta"]


def test_registry_membership_and_lookup() -> None:
    # GIVEN a registry of two packs
    alpha = pack("alpha")
    registry = PackRegistry([alpha, pack("beta")])

    # WHEN asked THEN it knows its packs, and only them
    assert "alpha" in registry
    assert "gamma" not in registry
    assert registry.get("alpha") is alpha


def test_an_empty_registry_is_allowed() -> None:
    # GIVEN no packs WHEN registered THEN the registry is empty
    assert PackRegistry([]).names == ()


def test_get_an_unknown_pack_lists_the_installed_ones() -> None:
    # GIVEN a registry WHEN asked for a pack it does not have THEN the installed packs are listed
    registry = PackRegistry([pack("beta"), pack("alpha")])
    with pytest.raises(PackError, match=r"^unknown pack 'gamma' \(installed: alpha, beta\)$"):
        registry.get("gamma")


def test_an_unknown_pack_close_to_an_installed_one_is_offered_it() -> None:
    # GIVEN a registry WHEN asked for a misspelt pack THEN the pack it was likely meant to be comes first
    registry = PackRegistry([pack("kyverno"), pack("karpenter")])
    with pytest.raises(
        PackError, match=r"^unknown pack 'kyvern'; did you mean 'kyverno'\? \(installed: karpenter, kyverno\)$"
    ):
        registry.get("kyvern")
    sections: dict[str, Any] = {"karpentr": {}}
    assert registry.configure(sections, staging_origins(sections))[1] == [
        "environments/staging.yaml: packs.karpentr: unknown pack 'karpentr'; did you mean 'karpenter'? "
        "(installed: karpenter, kyverno)"
    ]


def test_duplicate_packs_are_refused() -> None:
    # GIVEN the same name twice WHEN registered THEN it is refused
    with pytest.raises(PackError) as exc:
        PackRegistry([pack("alpha"), pack("beta"), pack("alpha")])
    assert exc.value.problems == ("pack 'alpha' is registered twice",)


@pytest.mark.parametrize("name", ["Alpha", "a/b", "../x", "-x", "a_b", "a" * 64, ""])
def test_pack_names_must_be_dns_labels(name: str) -> None:
    # GIVEN a pack name that is not a DNS-1123 label (it becomes a folder and an object name)
    # WHEN registered THEN it is refused, naming the pack
    with pytest.raises(PackError) as exc:
        PackRegistry([pack(name)])
    assert exc.value.problems == (f"pack {name!r}: name must be a DNS-1123 label",)


def test_pack_namespaces_must_be_dns_labels() -> None:
    # GIVEN a pack that declares a namespace no cluster can have
    from dataclasses import replace

    bad = replace(pack("alpha"), namespaces=("tools", "Tools_2"))
    # WHEN registered THEN it is refused, naming the pack and the bad namespace
    with pytest.raises(PackError, match=r"^pack 'alpha': namespaces must be DNS-1123 labels, got 'Tools_2'$"):
        PackRegistry([bad])


def test_requirements_on_packs_that_are_not_installed_list_the_installed_ones() -> None:
    # GIVEN a pack requiring one that is not installed
    # WHEN registered THEN the missing requirement and the installed packs are named
    with pytest.raises(PackError) as exc:
        PackRegistry([pack("web", "ingress", "cert-manager"), pack("db")])
    assert exc.value.problems == (
        "pack 'web' requires 'ingress', which is not installed (installed: db, web)",
        "pack 'web' requires 'cert-manager', which is not installed (installed: db, web)",
    )


@pytest.mark.parametrize(
    ("packs", "cycle"),
    [
        ([pack("a", "b"), pack("b", "a")], "a -> b -> a"),
        ([pack("b", "a"), pack("a", "b")], "a -> b -> a"),
        ([pack("a", "a")], "a -> a"),
        ([pack("a", "b"), pack("b", "c"), pack("c", "b")], "b -> c -> b"),
        ([pack("x", "y"), pack("y", "z"), pack("z", "x")], "x -> y -> z -> x"),
    ],
    ids=["two", "two-reversed", "self", "tail", "three"],
)
def test_requirement_cycles_are_refused_and_shown(packs: list[Pack], cycle: str) -> None:
    # GIVEN packs that require each other in a cycle WHEN registered THEN the cycle is shown
    with pytest.raises(PackError) as exc:
        PackRegistry(packs)
    assert exc.value.problems == (f"packs require each other in a cycle: {cycle}",)


def test_all_registry_problems_are_reported_together() -> None:
    # GIVEN a bad name, a duplicate, a missing requirement and a cycle
    packs = [pack("Bad"), pack("a", "b"), pack("b", "a"), pack("a"), pack("c", "missing")]

    # WHEN registered THEN every problem is one line of one error
    with pytest.raises(PackError) as exc:
        PackRegistry(packs)
    assert exc.value.problems == (
        "pack 'Bad': name must be a DNS-1123 label",
        "pack 'a' is registered twice",
        "pack 'c' requires 'missing', which is not installed (installed: a, b, c)",
        "packs require each other in a cycle: a -> b -> a",
    )
    assert isinstance(exc.value, FluxplaneError)


def test_an_acyclic_requirement_graph_is_accepted() -> None:
    # GIVEN a diamond of requirements WHEN registered THEN it is accepted
    registry = PackRegistry([pack("app", "db", "cache"), pack("db", "base"), pack("cache", "base"), pack("base")])
    assert registry.names == ("app", "base", "cache", "db")


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({}, None),
        ({"a": ()}, None),
        ({"a": ("b",), "b": ()}, None),
        ({"a": ("missing",)}, None),
        ({"a": ("b", "c"), "b": ("d",), "c": ("d",), "d": ()}, None),
        ({"a": ("a",)}, ["a", "a"]),
        ({"b": ("a",), "a": ("b",)}, ["a", "b", "a"]),
        ({"a": ("c", "b"), "b": ("c",), "c": ("b",)}, ["b", "c", "b"]),
    ],
    ids=["empty", "single", "chain", "unknown-edge", "diamond", "self", "pair", "nested"],
)
def test_find_cycle(graph: dict[str, tuple[str, ...]], expected: list[str] | None) -> None:
    # GIVEN a requirement graph WHEN searched THEN the first cycle in sorted order is returned, or None
    assert find_cycle(graph) == expected


# -- from_entry_points ---------------------------------------------------------------------------


def test_from_entry_points_finds_the_built_in_packs() -> None:
    # GIVEN the installed fluxplane distribution WHEN packs are loaded from its entry points
    registry = PackRegistry.from_entry_points()

    # THEN the built-in packs are there, with their config models
    hub = ("crossplane", "crossplane-providers", "crossplane-provider-configs", "eks-compositions")
    hub += ("workload-clusters", "app-compositions")
    catalogue = ("metrics-server", "karpenter", "aws-load-balancer-controller", "external-dns", "cert-manager")
    catalogue += ("aws-ebs-csi-driver", "prometheus", "envoy-gateway", "kyverno", "fluent-bit", "podinfo")
    assert registry.names == tuple(sorted(hub + catalogue))
    assert registry.get("metrics-server").config is MetricsServerConfig
    assert registry.get("podinfo").config is PodinfoConfig
    assert ENTRY_POINT_GROUP == "fluxplane.packs"


def test_from_entry_points_of_an_unused_group_is_empty() -> None:
    # GIVEN a group no distribution uses WHEN loaded THEN the registry is empty
    assert PackRegistry.from_entry_points("fluxplane.no-such-group").names == ()


def _use_entry_points(monkeypatch: pytest.MonkeyPatch, *entries: tuple[str, str]) -> None:
    points = [EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP) for name, value in entries]

    def fake_entry_points(group: str) -> list[EntryPoint]:
        return [point for point in points if point.group == group]

    monkeypatch.setattr(registry_module, "entry_points", fake_entry_points)


OTHER_PODINFO = pack("podinfo")


def test_from_entry_points_refuses_one_name_claimed_by_two_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN two entry points called "podinfo" that load different objects
    _use_entry_points(
        monkeypatch,
        ("podinfo", "tests.unit.packs.test_registry:OTHER_PODINFO"),
        ("podinfo", "fluxplane.packs.podinfo:PACK"),
    )

    # WHEN loaded THEN both sources are named
    with pytest.raises(PackError) as exc:
        PackRegistry.from_entry_points()
    assert exc.value.problems == (
        "pack 'podinfo' is registered by two distributions: ? (fluxplane.packs.podinfo:PACK) "
        "and ? (tests.unit.packs.test_registry:OTHER_PODINFO)",
    )


def test_from_entry_points_ignores_the_same_entry_seen_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the same entry point listed twice (a distribution found twice on sys.path)
    _use_entry_points(
        monkeypatch, ("podinfo", "fluxplane.packs.podinfo:PACK"), ("podinfo", "fluxplane.packs.podinfo:PACK")
    )

    # WHEN loaded THEN it is registered once
    assert PackRegistry.from_entry_points().names == ("podinfo",)


def test_from_entry_points_refuses_objects_that_are_not_packs(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN an entry point that loads something other than a Pack
    _use_entry_points(monkeypatch, ("podinfo", "fluxplane.packs.versions:PODINFO"))

    # WHEN loaded THEN the entry point is named
    with pytest.raises(PackError) as exc:
        PackRegistry.from_entry_points()
    assert exc.value.problems == ("entry point 'podinfo' (fluxplane.packs.versions:PODINFO) is not a fluxplane Pack",)


def test_from_entry_points_refuses_a_name_that_differs_from_the_packs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN an entry point "web" that loads the pack called "podinfo"
    _use_entry_points(monkeypatch, ("web", "fluxplane.packs.podinfo:PACK"))

    # WHEN loaded THEN both names are shown
    with pytest.raises(PackError) as exc:
        PackRegistry.from_entry_points()
    assert exc.value.problems == ("entry point 'web' (fluxplane.packs.podinfo:PACK) names a pack called 'podinfo'",)


# -- configure -----------------------------------------------------------------------------------


def test_configure_validates_each_section_with_its_packs_model() -> None:
    # GIVEN the built-in packs and sections for both
    registry = PackRegistry.from_entry_points()
    sections = {"podinfo": {"replicas": 2}, "metrics-server": {}}

    # WHEN configured
    configs, problems = registry.configure(sections, staging_origins(sections))

    # THEN each section is its pack's config, in name order, and there are no problems
    assert problems == []
    assert list(configs) == ["metrics-server", "podinfo"]
    assert configs == {"metrics-server": MetricsServerConfig(), "podinfo": PodinfoConfig(replicas=2)}


def test_configure_treats_a_null_section_as_the_defaults() -> None:
    # GIVEN "podinfo:" with no value WHEN configured THEN the pack is on with its defaults
    registry = PackRegistry.from_entry_points()
    configs, problems = registry.configure({"podinfo": None}, staging_origins({"podinfo": None}))
    assert (configs, problems) == ({"podinfo": PodinfoConfig()}, [])


def test_configure_drops_disabled_packs() -> None:
    # GIVEN metrics-server switched off WHEN configured THEN only podinfo is enabled
    registry = PackRegistry.from_entry_points()
    sections = {"metrics-server": {"enabled": False, "replicas": 3}, "podinfo": {}}
    configs, problems = registry.configure(sections, staging_origins(sections))
    assert (configs, problems) == ({"podinfo": PodinfoConfig()}, [])


def test_configure_reports_unknown_packs_with_the_installed_ones() -> None:
    # GIVEN a section for a pack that is not installed
    registry = PackRegistry.from_entry_points()
    sections: dict[str, Any] = {"istio": {}, "podinfo": {}}

    # WHEN configured THEN the file, the field and the installed packs are named; the rest is configured
    configs, problems = registry.configure(sections, staging_origins(sections))
    assert problems == [f"environments/staging.yaml: packs.istio: unknown pack 'istio' (installed: {INSTALLED})"]
    assert configs == {"podinfo": PodinfoConfig()}


def test_configure_reports_values_that_fail_the_pack_model() -> None:
    # GIVEN podinfo values that break its model
    registry = PackRegistry.from_entry_points()
    sections = {
        "podinfo": {"replicas": 0, "namespace": "Apps", "replica": 1},
        "metrics-server": {"replicas": 11},
    }

    # WHEN configured
    configs, problems = registry.configure(sections, staging_origins(sections))

    # THEN each problem names the file, the pack and the field
    assert problems == [
        "environments/staging.yaml: packs.metrics-server.replicas: expected an integer <= 10, got 11",
        "environments/staging.yaml: packs.podinfo.replicas: expected an integer >= 1, got 0",
        "environments/staging.yaml: packs.podinfo.namespace: expected a DNS-1123 label "
        "(lower-case letters, digits and '-', starting and ending with a letter or digit), got \"Apps\"",
        'environments/staging.yaml: packs.podinfo.replica: unknown field; did you mean "replicas"? '
        "allowed: enabled, releaseName, storageNamespace, replicas, namespace, message, version, values",
    ]
    assert configs == {}


@pytest.mark.parametrize(("section", "found"), [(True, "true"), ([], "a list"), ("on", '"on"')])
def test_configure_reports_a_section_that_is_not_a_mapping(section: Any, found: str) -> None:
    # GIVEN a pack section that is not a mapping WHEN configured THEN the section is named
    registry = PackRegistry.from_entry_points()
    _, problems = registry.configure({"podinfo": section}, staging_origins({"podinfo": section}))
    assert problems == [f"environments/staging.yaml: packs.podinfo: expected a mapping, got {found}"]


def test_configure_reports_an_enabled_pack_whose_requirement_is_not_enabled() -> None:
    # GIVEN "web" and "api" require "db", which is switched off
    registry = PackRegistry([pack("web", "db"), pack("api", "db"), pack("db")])
    sections = {"web": {}, "api": {}, "db": {"enabled": False}}

    # WHEN configured
    configs, problems = registry.configure(sections, staging_origins(sections))

    # THEN each missing requirement points at the switch that turned it off
    assert problems == [
        "environments/staging.yaml: packs.db.enabled: pack 'db' is switched off here, but pack 'api' requires it",
        "environments/staging.yaml: packs.db.enabled: pack 'db' is switched off here, but pack 'web' requires it",
    ]
    assert set(configs) == {"api", "web"}


def test_configure_reports_a_requirement_that_is_not_mentioned() -> None:
    # GIVEN "web" requires "db", which no section mentions
    registry = PackRegistry([pack("web", "db"), pack("db")])
    sections = {"web": {}}

    # WHEN configured THEN the requiring pack is named with what to add
    _, problems = registry.configure(sections, staging_origins(sections))
    assert problems == [
        "environments/staging.yaml: packs.web: pack 'web' requires 'db', which is not enabled here; add 'db' to packs"
    ]


def test_configure_accepts_requirements_that_are_enabled() -> None:
    # GIVEN web requires db and both are enabled WHEN configured THEN there are no problems
    registry = PackRegistry([pack("web", "db", config=_SizedConfig), pack("db")])
    sections = {"web": {"size": 2}, "db": None}
    configs, problems = registry.configure(sections, staging_origins(sections))
    assert problems == []
    assert configs == {"db": PackConfig(), "web": _SizedConfig(size=2)}


def test_a_disabled_pack_needs_no_requirements() -> None:
    # GIVEN web requires db, and web is switched off WHEN configured THEN nothing is required
    registry = PackRegistry([pack("web", "db"), pack("db")])
    sections = {"web": {"enabled": False}}
    assert registry.configure(sections, staging_origins(sections)) == ({}, [])


def test_configure_names_the_file_that_wrote_the_section() -> None:
    # GIVEN a cluster's packs over the environment's over the base's (as the loader stacks them)
    registry = PackRegistry.from_entry_points()
    origins = Origins(
        [
            Layer(STAGING, {"podinfo": {"message": 5}}, prefix=("clusters", 1, "packs")),
            Layer(STAGING, {"podinfo": {}}, prefix=("packs",)),
            Layer("environments/base.yaml", {"metrics-server": {"replicas": 0}}, prefix=("packs",)),
        ]
    )
    sections = {"podinfo": {"message": 5}, "metrics-server": {"replicas": 0}}

    # WHEN configured THEN each problem is reported where its value was written
    _, problems = registry.configure(sections, origins)
    assert problems == [
        "environments/base.yaml: packs.metrics-server.replicas: expected an integer >= 1, got 0",
        "environments/staging.yaml: clusters[1].packs.podinfo.message: expected a string, got 5",
    ]


def test_a_pack_that_needs_what_no_cluster_offers_is_refused() -> None:
    # GIVEN a pack needing an unknown capability WHEN registered THEN the known ones are listed
    gpu = replace(pack("gpu"), needs=("gpus",))
    with pytest.raises(PackError, match=r"needs 'gpus', which no cluster offers \(known: fluxplane-network\)$"):
        PackRegistry([gpu])


def test_a_pack_that_provides_what_fluxplane_has_no_feature_for_is_refused() -> None:
    # GIVEN a pack whose provides has a misspelt feature beside a known one
    kinds = replace(pack("kinds"), provides=(APP_RESOURCES, "app-resource"))
    # WHEN registered THEN it is refused, naming what fluxplane knows, as the only problem
    with pytest.raises(PackError) as caught:
        PackRegistry([kinds, pack("web")])
    assert caught.value.problems == (
        "pack 'kinds': provides 'app-resource', which is not a fluxplane feature (known: app-resources, aws-providers)",
    )


def test_a_pack_that_provides_known_features_registers() -> None:
    # GIVEN a pack that stands in for both of fluxplane's features WHEN registered THEN it is installed
    both = replace(pack("both"), provides=(APP_RESOURCES, AWS_PROVIDERS))
    assert PackRegistry([both]).get("both") is both


def test_configure_takes_the_config_known_from_an_equal_section() -> None:
    # GIVEN podinfo configured once with ``known``
    registry = PackRegistry.from_entry_points()
    known: dict[tuple[str, bytes], PackConfig] = {}
    sections = {"podinfo": {"replicas": 2}}
    first, _ = registry.configure(sections, staging_origins(sections), known)

    # WHEN another cluster's equal section is configured with it THEN it gets the same (frozen) config
    again = {"podinfo": {"replicas": 2}}
    configs, problems = registry.configure(again, staging_origins(again), known)
    assert problems == []
    assert configs["podinfo"] is first["podinfo"]


class _AnyConfig(PackConfig):
    value: Any = None


def test_configure_tells_apart_sections_equal_only_in_their_types() -> None:
    # GIVEN a section configured with ``value: true``, known
    registry = PackRegistry([pack("loose", config=_AnyConfig)])
    known: dict[tuple[str, bytes], PackConfig] = {}
    registry.configure({"loose": {"value": True}}, staging_origins({}), known)

    # WHEN one with ``value: 1`` (equal in Python) is configured THEN it is validated on its own: 1 stays a number
    configs, _ = registry.configure({"loose": {"value": 1}}, staging_origins({}), known)
    assert type(configs["loose"].value) is int


def test_configure_reports_an_invalid_section_at_each_file_that_has_it() -> None:
    # GIVEN the same invalid section in two files, configured with ``known``
    registry = PackRegistry.from_entry_points()
    known: dict[tuple[str, bytes], PackConfig] = {}
    sections = {"podinfo": {"replicas": 0}}
    production = Origins([Layer("environments/production.yaml", sections, prefix=("packs",))])

    # WHEN both are configured THEN each problem names its own file
    found = [registry.configure(sections, origins, known)[1] for origins in (staging_origins(sections), production)]
    assert found == [
        ["environments/staging.yaml: packs.podinfo.replicas: expected an integer >= 1, got 0"],
        ["environments/production.yaml: packs.podinfo.replicas: expected an integer >= 1, got 0"],
    ]
