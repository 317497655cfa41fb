"""Tests for fluxplane.packs.api: PackConfig, PackContext and Pack."""

from __future__ import annotations

import pytest
from pydantic import Field, ValidationError

from fluxplane.constructs import ConfigMap, CustomHealthCheck, Manifest, NamespacedObjectKindReference, Root
from fluxplane.packs.api import Pack, PackConfig, PackContext


class _SampleConfig(PackConfig):
    size: int = Field(1, ge=1)


def _bind(ctx: PackContext, config: _SampleConfig) -> None:
    ConfigMap(ctx.scope, "settings", {"name": "sample", "namespace": "default", "data": {"size": str(config.size)}})


SAMPLE = Pack(name="sample", version="0.1.0", description="a sample", config=_SampleConfig, layer="configs", bind=_bind)


def _context() -> PackContext:
    return PackContext(Manifest(Root(), "m", path="x.yaml"))


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
