"""Tests for fluxplane.config.apps.app: an app's fields, its ref, overlays and namespace."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.config.apps import App
from tests.conftest import FleetWriter
from tests.support.config import APP, load, problems


def test_defaults_namespace_path_and_overlay(write_fleet: FleetWriter) -> None:
    (placement,) = load(write_fleet, {"shop": APP}).apps
    app = placement.app
    assert (app.name, app.target_namespace, app.path, app.overlay) == ("shop", "shop", "deploy", "environment")
    assert app.repository.ref.flux() == {"tag": "v1.2.0"}
    assert app.repository.secret_ref is None


@pytest.mark.parametrize(
    ("overlay", "path", "expected"),
    [
        ("environment", "deploy", "./deploy/production"),
        ("cluster", "deploy/overlays", "./deploy/overlays/prod-1"),
        ("none", "k8s", "./k8s"),
        ("none", ".", "./"),
        ("environment", ".", "./production"),
    ],
)
def test_manifests_path_follows_the_overlay_convention(overlay: str, path: str, expected: str) -> None:
    app = App.model_validate({**APP, "name": "shop", "overlay": overlay, "path": path})
    assert app.manifests_path("prod-1", "production") == expected


@pytest.mark.parametrize(
    ("ref", "flux"),
    [
        ({"tag": "v1.2.0"}, {"tag": "v1.2.0"}),
        ({"semver": ">=1.4.0 <2.0.0"}, {"semver": ">=1.4.0 <2.0.0"}),
        ({"semver": "~1.4"}, {"semver": "~1.4"}),
        ({"semver": "^2.x || 3.1.0 - 3.2.0"}, {"semver": "^2.x || 3.1.0 - 3.2.0"}),
        ({"branch": "release/2026-11"}, {"branch": "release/2026-11"}),
    ],
)
def test_refs_become_the_flux_ref(ref: dict[str, str], flux: dict[str, str]) -> None:
    app = App.model_validate({**APP, "name": "shop", "repository": {**APP["repository"], "ref": ref}})
    assert app.repository.ref.flux() == flux


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"repository": {"url": "git@github.com:org/shop.git", "ref": {"tag": "v1"}}},
            'shop.yaml: repository.url: expected an ssh:// or https:// Git URL, got "git@github.com:org/shop.git"',
        ),
        (
            {"repository": {"url": "https://github.com/org/shop.git", "ref": {"semver": "newest"}}},
            'shop.yaml: repository.ref.semver: expected a semver range such as ">=1.4.0 <2.0.0" or "~1.4", '
            'got "newest"',
        ),
        (
            {"repository": {"url": "https://github.com/org/shop.git", "ref": {"tag": "v1..2"}}},
            "shop.yaml: repository.ref.tag: a Git ref name must not hold '..', '//' or '@{', got \"v1..2\"",
        ),
        (
            {"repository": {"url": "https://github.com/org/shop.git", "ref": {"branch": "my branch"}}},
            "shop.yaml: repository.ref.branch: expected a Git ref name",
        ),
        (
            {"repository": {"url": "https://github.com/org/shop.git", "ref": {"branch": "main", "tag": "v1"}}},
            "shop.yaml: repository.ref: set exactly one of tag, semver or branch, got tag, branch",
        ),
        (
            {"repository": {"url": "https://github.com/org/shop.git", "ref": {}}},
            "shop.yaml: repository.ref: set exactly one of tag, semver or branch, got none",
        ),
        ({"clusters": []}, "shop.yaml: (top level): name the clusters or environments the app runs on"),
        (
            {"namespace": "kube-system"},
            "shop.yaml: namespace: app 'shop' would run in namespace 'kube-system', a platform namespace",
        ),
        (
            {"namespace": "flux-system"},
            "shop.yaml: namespace: app 'shop' would run in namespace 'flux-system', a platform namespace",
        ),
        (
            {"team": "shop team"},
            'shop.yaml: team: expected a code owner such as @example-org/team or someone@example.com, got "shop team"',
        ),
        ({"path": "../other"}, "shop.yaml: path: "),
        (
            {"overlay": "region"},
            "shop.yaml: overlay: expected one of 'environment', 'cluster' or 'none', got \"region\"",
        ),
        ({"replicas": 3}, "shop.yaml: replicas: unknown field; allowed: "),
        ({"name": "other"}, "shop.yaml: name: not allowed here; the file name is the app's name"),
    ],
)
def test_bad_app_fields(write_fleet: FleetWriter, change: dict[str, Any], message: str) -> None:
    found = problems(write_fleet, {"shop": {**APP, **change}})
    assert any(message in line for line in found), found
    assert all(line.startswith("environments/apps/shop.yaml: ") for line in found), found


PLATFORM_HELP = "('crossplane-system', 'default', 'external-secrets', 'flux-system' or any 'kube-*')"


@pytest.mark.parametrize("name", ["kube-system", "external-secrets", "default", "flux-system", "kube-node-lease"])
def test_an_app_named_after_a_platform_namespace_is_refused_without_a_namespace(
    write_fleet: FleetWriter, name: str
) -> None:
    # GIVEN an app whose file name is a platform namespace, and no namespace: of its own
    # WHEN the definition is loaded
    found = problems(write_fleet, {name: APP})
    # THEN its namespace (its name) is refused, located at namespace:, saying what to do
    assert list(found) == [
        f"environments/apps/{name}.yaml: namespace: app {name!r} would run in namespace {name!r}, a platform "
        f"namespace {PLATFORM_HELP}; set namespace: to another name"
    ]


def test_an_app_named_after_a_platform_namespace_may_run_in_a_namespace_of_its_own(write_fleet: FleetWriter) -> None:
    # GIVEN an app named default that names its own namespace
    loaded = load(write_fleet, {"default": {**APP, "namespace": "default-site"}})
    # THEN it runs there
    assert [(p.app.name, p.app.target_namespace) for p in loaded.apps] == [("default", "default-site")]


def test_a_platform_namespace_given_as_namespace_is_refused(write_fleet: FleetWriter) -> None:
    # GIVEN an app that asks for the namespace holding the fleet's sealing key
    found = problems(write_fleet, {"shop": {**APP, "namespace": "kube-system"}})
    # THEN one located line refuses it
    assert list(found) == [
        "environments/apps/shop.yaml: namespace: app 'shop' would run in namespace 'kube-system', a platform "
        f"namespace {PLATFORM_HELP}; set namespace: to another name"
    ]
