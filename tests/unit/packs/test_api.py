"""Tests for fluxplane.packs.api: PackConfig, PackContext and Pack."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest
from pydantic import Field, ValidationError

from fluxplane.constructs import ConfigMap, CustomHealthCheck, Manifest, NamespacedObjectKindReference, Root
from fluxplane.constructs.config_map import ConfigMapProps
from fluxplane.errors import ConfigError, ConstructError
from fluxplane.packs.api import SEMVER, Pack, PackConfig, PackContext, covers, is_exact, split_pack, version_or_range
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import load_plan
from tests.conftest import MINIMAL_BASE


class _SampleConfig(PackConfig):
    size: int = Field(1, ge=1)


def _bind(ctx: PackContext, config: _SampleConfig) -> None:
    ConfigMap(ctx.scope, "settings", {"name": "sample", "namespace": "default", "data": {"size": str(config.size)}})


SAMPLE = Pack(name="sample", version="0.1.0", description="a sample", config=_SampleConfig, layer="configs", bind=_bind)


def _context() -> PackContext:
    return PackContext(Manifest(Root(), "m", path="x.yaml"))


def test_props_a_pack_builds_from_a_value_its_constructs_refuse_are_a_located_construct_error() -> None:
    # GIVEN a pack that builds a ConfigMap's props from its config, whose size the ConfigMap's name cannot hold
    def bind(ctx: PackContext, config: _SampleConfig) -> None:
        ConfigMap(ctx.scope, "settings", ConfigMapProps(name="x" * (config.size * 300), namespace="default"))

    pack = replace(SAMPLE, bind=bind)
    # WHEN it is applied THEN the props' problem is a ConstructError naming the pack's scope, the model and the
    # field, as a construct reports its own props, and no pydantic traceback
    with pytest.raises(ConstructError) as exc:
        pack.apply(_context(), _SampleConfig())
    assert exc.value.problems == ("root/m: ConfigMapProps.name: string should have at most 253 characters",)


def test_pack_config_is_enabled_by_default() -> None:
    # GIVEN no values WHEN a config is made THEN the pack is on
    assert PackConfig().enabled is True


def test_pack_config_can_be_switched_off() -> None:
    # GIVEN enabled: false WHEN validated THEN the pack is off
    assert PackConfig.model_validate({"enabled": False}).enabled is False


def test_pack_config_forbids_unknown_keys() -> None:
    # GIVEN a key no pack config declares WHEN validated THEN it is refused
    with pytest.raises(ValidationError, match=r"replicas\n  Extra inputs are not permitted"):
        PackConfig.model_validate({"replicas": 2})


def test_pack_config_is_frozen() -> None:
    # GIVEN a config WHEN a field is assigned THEN it is refused (configs are compared and shared)
    config = PackConfig()
    with pytest.raises(ValidationError, match="Instance is frozen"):
        config.enabled = False  # type: ignore[misc]


def test_pack_config_subclasses_inherit_enabled_and_strictness() -> None:
    # GIVEN a pack's config model WHEN validated THEN it has enabled and refuses unknown keys
    assert _SampleConfig.model_validate({"size": 3}) == _SampleConfig(enabled=True, size=3)
    with pytest.raises(ValidationError, match=r"sise\n  Extra inputs are not permitted"):
        _SampleConfig.model_validate({"sise": 3})


def test_pack_requires_nothing_by_default() -> None:
    # GIVEN a pack declared without requires WHEN read THEN it requires nothing
    assert SAMPLE.requires == ()


def test_pack_installs_into_no_namespace_by_default() -> None:
    # GIVEN a pack declared without namespaces WHEN read THEN it claims none
    assert SAMPLE.namespaces == ()


def test_a_pack_installs_the_crds_it_declares_and_those_of_crd_groups_once() -> None:
    pack = replace(SAMPLE, crds=("a.example.com", "*.b.example.com"), crd_groups=("a.example.com", "c.example.com"))
    assert pack.installed_groups == ("a.example.com", "*.b.example.com", "c.example.com")
    assert SAMPLE.installed_groups == ()


@pytest.mark.parametrize(
    ("pattern", "group", "covered"),
    [
        ("karpenter.sh", "karpenter.sh", True),
        ("karpenter.sh", "x.karpenter.sh", False),
        ("*.aws.m.upbound.io", "ec2.aws.m.upbound.io", True),
        ("*.aws.m.upbound.io", "aws.m.upbound.io", False),
        ("*.aws.upbound.io", "ec2.aws.m.upbound.io", False),
    ],
)
def test_a_crd_pattern_covers_its_group_or_every_group_under_it(pattern: str, group: str, covered: bool) -> None:
    assert covers(pattern, group) is covered


def test_the_configs_of_a_split_pack_install_no_crds() -> None:
    # GIVEN a pack that installs CRDs and emits objects of one of their groups WHEN split
    pack = replace(SAMPLE, layer="controllers", crds=("a.example.com", "b.example.com"), crd_groups=("a.example.com",))
    controllers, configs = split_pack(pack)
    # THEN the CRDs stay the pack's: what applies their kinds waits for it, not for its configs
    assert controllers.installed_groups == ("a.example.com", "b.example.com")
    assert configs.installed_groups == ()


#: The built-in packs (their namespaces and the rest of the pack contract: tests/integration/test_pack_conformance.py).
BUILT_IN = [pack for pack in PackRegistry.from_entry_points() if pack.bind.__module__.startswith("fluxplane.packs.")]


def test_every_built_in_pack_lists_the_groups_of_crd_groups_in_crds() -> None:
    # (crd_groups count as installed anyway; listing them keeps each pack's CRDs in one place)
    for pack in BUILT_IN:
        assert set(pack.crd_groups) <= set(pack.crds), pack.name


def test_context_scope_is_its_manifest() -> None:
    # GIVEN a context WHEN its scope is read THEN it is the manifest constructs are added to
    ctx = _context()
    assert ctx.scope is ctx.manifest


def test_bind_adds_constructs_to_the_manifest() -> None:
    # GIVEN the sample pack and a context
    ctx = _context()

    # WHEN bound with a config
    SAMPLE.bind(ctx, _SampleConfig(size=4))

    # THEN its object is in the manifest
    assert ctx.manifest.documents() == [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "sample", "namespace": "default"},
            "data": {"size": "4"},
        }
    ]


def test_context_starts_without_health_gates() -> None:
    # GIVEN a new context WHEN read THEN it has no health checks
    ctx = _context()
    assert (ctx.health_checks, ctx.health_check_exprs) == ([], [])


def test_add_health_check_records_and_returns_the_reference() -> None:
    # GIVEN a context and an object in its manifest
    ctx = _context()
    target = ConfigMap(ctx.scope, "cm", {"name": "settings", "namespace": "apps"})

    # WHEN the object is added as a health check
    ref = ctx.add_health_check(target)

    # THEN the reference names the object and is recorded
    assert ref == NamespacedObjectKindReference(api_version="v1", kind="ConfigMap", name="settings", namespace="apps")
    assert ctx.health_checks == [ref]


def test_add_health_check_expr_records_and_returns_the_check() -> None:
    # GIVEN a context and a CEL health check
    ctx = _context()
    check = CustomHealthCheck(api_version="example.com/v1", kind="Widget", current="status.ready == true")

    # WHEN added
    returned = ctx.add_health_check_expr(check)

    # THEN it is returned and recorded, in order
    assert returned is check
    assert ctx.health_check_exprs == [check]


# -- chart and package versions --------------------------------------------------------------------

VERSIONED = [pack for pack in BUILT_IN if "version" in pack.config.model_fields]


def test_every_built_in_chart_version_field_is_checked() -> None:
    assert {pack.name for pack in VERSIONED} >= {"podinfo", "metrics-server", "cert-manager", "crossplane-providers"}


@pytest.mark.parametrize("pack", VERSIONED, ids=lambda pack: pack.name)
@pytest.mark.parametrize("version", ["6.7.1\nfoo: bar", "6.7.1\n", ">=1.0.0", "1.2", "latest", "v1.2.3 ", "01.2.3"])
def test_a_pack_version_must_be_one_semver_version(pack: Pack, version: str) -> None:
    # GIVEN a version with more YAML after it, a range, a partial version or a tag name
    # WHEN the pack's config is validated THEN the version is refused, shown escaped
    with pytest.raises(ValidationError) as caught:
        pack.config.model_validate({"version": version})
    errors = [error for error in caught.value.errors(include_url=False) if error["loc"] == ("version",)]
    assert [str(error["ctx"]["error"]) for error in errors] == [
        "expected a semver version such as 1.2.3 or v1.2.3 (MAJOR.MINOR.PATCH, optionally -prerelease and +build), "
        f"got {json.dumps(version)}"
    ]


@pytest.mark.parametrize("version", ["1.2.3", "v1.19.4", "2.0.0-rc.1", "1.0.0+build.7", "10.20.30-alpha.beta"])
def test_a_pack_version_accepts_semver(version: str) -> None:
    pack = next(pack for pack in VERSIONED if pack.name == "podinfo")
    assert pack.config.model_validate({"version": version}).model_dump()["version"] == version


def test_every_built_in_default_version_is_semver() -> None:
    for pack in VERSIONED:
        assert re.fullmatch(SEMVER, pack.config.model_fields["version"].default), pack.name


def test_a_bad_pack_version_is_one_located_line(write_fleet: Any) -> None:
    # GIVEN metrics-server's version with a YAML line after it WHEN the fleet is planned
    base = {**MINIMAL_BASE, "packs": {"metrics-server": {"version": "3.12.2\nfoo: bar"}}}
    with pytest.raises(ConfigError) as caught:
        load_plan(write_fleet(base=base))
    # THEN one line names the file and field, the version as found and what is allowed
    assert list(caught.value.problems) == [
        "environments/base.yaml: packs.metrics-server.version: expected a semver version such as 1.2.3 or v1.2.3 "
        '(MAJOR.MINOR.PATCH, optionally -prerelease and +build), got "3.12.2\\nfoo: bar"'
    ]


# Masterminds/semver's own examples (constraints_test.go, TestNewConstraint), then ranges a team writes
RANGES = [
    ">= 1.1",
    ">40.50.60, < 50.70",
    "2.0",
    "v2.3.5-20161202202307-sha.e8fc5e5",
    ">= 1.2.3 < 2.0",
    ">= 1.2.3 < 2.0 || => 3.0 < 4",
    ">= 1.2.3, < 2.0 || => 3.0, < 4",
    "3 - 4 || => 3.0, < 4",
    "12.3.34 ~1.2.3",
    "1.0.0 - 2.0.0, <=2.0.0",
    "6.7.x",
    "6.x",
    "*",
    "~6.7.1",
    "~> 6.7",
    "^6",
    "!=6.7.2",
    ">=6.7.0 <6.8.0",
    "6.7.x-0",
]


@pytest.mark.parametrize("value", [*RANGES, "6.7.1", "v1.2.3"])
def test_a_version_or_a_range_flux_reads_is_taken_as_written(value: str) -> None:
    assert version_or_range(value) == value


@pytest.mark.parametrize(
    "value",
    [
        # refused by Masterminds/semver too
        ">= bar",
        "BAR >= 1.2.3",
        "12.3.4.1234",
        "12.3.34~ 1.2.3",
        "",
        "6.x ||",
        # read by Masterminds/semver, but not as a person means them: refused here
        "06.7.1",
        "1|2",
        "6.7.x\nfoo: bar",
        "6.7.x\t",
        "latest",
        # longer than any range a person writes
        ">=6.7.0 " + "<6.8.0 " * 14,
    ],
)
def test_a_range_flux_cannot_read_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match=r"^expected a semver version such as 6\.7\.1, or a range Flux reads, "):
        version_or_range(value)


def test_a_version_is_exact_or_a_range() -> None:
    assert is_exact("6.7.1") and is_exact("v6.7.1-rc.1")
    assert not is_exact("6.7.x") and not is_exact("6.7")
