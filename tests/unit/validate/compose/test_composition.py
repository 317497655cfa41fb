"""Tests for fluxplane.validate.compose.composition: how the compose checks name a Composition's API and its
functions. Reading a Composition's pipeline, and what is wrong with it whatever the XRs, is tested with the compose
checks (tests/unit/validate/compose/test_checks.py)."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.validate.compose.composition import AUTO_READY, PATCH_AND_TRANSFORM, function_identity, split_api


@pytest.mark.parametrize(
    ("api", "parts"),
    [
        ("platform.example.org/v1alpha1", ("platform.example.org", "v1alpha1")),
        ("v1", ("", "v1")),  # the core group
        (None, ("", "")),  # no apiVersion at all
    ],
)
def test_an_api_version_is_split_into_group_and_version(api: Any, parts: tuple[str, str]) -> None:
    assert split_api(api) == parts


@pytest.mark.parametrize(
    ("reference", "identity"),
    [
        ("xpkg.crossplane.io/crossplane-contrib/function-auto-ready:v0.7.0", AUTO_READY),
        ("xpkg.upbound.io/crossplane-contrib/function-patch-and-transform@sha256:0123abcd", PATCH_AND_TRANSFORM),
        ("function-patch-and-transform", PATCH_AND_TRANSFORM),  # a Function's name alone
    ],
)
def test_a_function_is_known_by_its_package_s_name_whatever_its_registry_and_version(
    reference: str, identity: str
) -> None:
    assert function_identity(reference) == identity
