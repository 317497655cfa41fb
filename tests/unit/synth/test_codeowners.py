"""dist/CODEOWNERS: the platform team by default, governance for onboarding, each team for its app."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.config.apps import App, Placement
from fluxplane.config.models import Repositories, Teams
from fluxplane.core.layout import PLATFORM, RepositoryLayout, workloads_layout
from fluxplane.synth.codeowners import codeowners
from tests.support.codeowners import matches, owners_of

REPOSITORIES = Repositories.model_validate({"platform": {"url": "ssh://git@example.com/org/fleet.git"}})
PLATFORM_LAYOUT = RepositoryLayout(PLATFORM, REPOSITORIES.platform)
WORKLOADS_LAYOUT = workloads_layout(REPOSITORIES)
APP: dict[str, Any] = {
    "name": "shop",
    "team": "@org/shop",
    "repository": {"url": "https://github.com/org/shop.git", "ref": {"tag": "v1"}},
    "namespace": "store",
    "clusters": ["prod-1"],
}


def lines(teams: dict[str, str], *apps: dict[str, Any]) -> list[str]:
    placements = tuple(
        Placement(app=App.model_validate(app), cluster="prod-1", environment="production", region="us-west-2")
        for app in apps
    )
    text = codeowners(Teams.model_validate(teams), placements, PLATFORM_LAYOUT, WORKLOADS_LAYOUT)
    assert text is not None
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_no_platform_team_no_file() -> None:
    assert codeowners(Teams(), (), PLATFORM_LAYOUT, WORKLOADS_LAYOUT) is None


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*", "dist/platform/clusters/hub/kustomization.yaml", True),
        ("/dist/workloads/", "dist/workloads/clusters/a/b/sync.yaml", True),
        ("/dist/workloads/", "x/dist/workloads/sync.yaml", False),
        ("/dist/workloads/clusters/*/*/tenant.yaml", "dist/workloads/clusters/a/b/tenant.yaml", True),
        ("/dist/workloads/clusters/*/*/tenant.yaml", "dist/workloads/clusters/a/b/c/tenant.yaml", False),
        ("/dist/workloads/clusters/*/*/tenant.yaml", "dist/workloads/clusters/a/tenant.yaml", False),
        ("/dist/platform/clusters/*/manifests/", "dist/platform/clusters/a/manifests/apps/b.yaml", True),
        ("/dist/platform/clusters/*/manifests/", "dist/platform/clusters/a/b/manifests/c.yaml", False),
    ],
)
def test_patterns_are_read_as_gitignore_reads_them(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


GOVERNED = {"platform": "@org/platform", "governance": "@org/governance"}


def test_platform_then_governance_then_each_apps_team_then_privilege() -> None:
    found = lines(GOVERNED, {**APP, "aws": {"queues": [{"name": "jobs"}]}})
    assert found == [
        "* @org/platform",
        "/dist/workloads/ @org/governance",
        "/dist/workloads/clusters/prod-1/shop/ @org/shop",
        "/environments/secrets/prod-1/store/ @org/shop",
        "/environments/apps/ @org/governance",
        "/dist/workloads/clusters/*/*/tenant.yaml @org/governance",
        "/dist/platform/cloud/ @org/governance",
        "/environments/manifests/ @org/governance",
        "/charts/ @org/governance",
        "/dist/platform/clusters/*/manifests/ @org/governance",
    ]


@pytest.mark.parametrize(
    ("path", "owners"),
    [
        # privilege: the governance team alone
        ("environments/apps/shop.yaml", ["@org/governance"]),
        ("dist/workloads/clusters/prod-1/shop/tenant.yaml", ["@org/governance"]),
        ("dist/platform/cloud/prod-1/shop.yaml", ["@org/governance"]),
        ("dist/platform/cloud/prod-1/shop-git.yaml", ["@org/governance"]),
        ("dist/platform/cloud/kustomization.yaml", ["@org/governance"]),
        # plain manifests and cdk8s charts, which can grant anyone anything on a cluster, and what they make
        ("environments/manifests/production/apps/binding.yaml", ["@org/governance"]),
        ("environments/manifests/production/prod-1/configs/role.yaml", ["@org/governance"]),
        ("charts/team_quotas.py", ["@org/governance"]),
        ("charts/_common/__init__.py", ["@org/governance"]),
        ("dist/platform/clusters/prod-1/manifests/apps/environment/binding.yaml", ["@org/governance"]),
        ("dist/platform/clusters/prod-1/manifests/apps/kustomization.yaml", ["@org/governance"]),
        # onboarding: the governance team
        ("dist/workloads/clusters/prod-1/kustomization.yaml", ["@org/governance"]),
        # the rest of the app's tenant and its sealed secrets: its team
        ("dist/workloads/clusters/prod-1/shop/sync.yaml", ["@org/shop"]),
        ("dist/workloads/clusters/prod-1/shop/shop-git.yaml", ["@org/shop"]),
        ("dist/workloads/clusters/prod-1/shop/kustomization.yaml", ["@org/shop"]),
        ("environments/secrets/prod-1/store/shop-git.yaml", ["@org/shop"]),
        # everything else: the platform team
        ("dist/platform/clusters/prod-1/kustomization.yaml", ["@org/platform"]),
        ("dist/platform/clusters/prod-1/apps.yaml", ["@org/platform"]),
        ("environments/production.yaml", ["@org/platform"]),
    ],
)
def test_the_last_matching_line_of_a_privilege_file_names_only_governance(path: str, owners: list[str]) -> None:
    # GIVEN the file of a fleet with a governance team and an app with AWS resources and a team
    text = codeowners(
        Teams.model_validate(GOVERNED),
        (
            Placement(
                app=App.model_validate({**APP, "aws": {"queues": [{"name": "jobs"}]}}),
                cluster="prod-1",
                environment="production",
                region="us-west-2",
            ),
        ),
        PLATFORM_LAYOUT,
        WORKLOADS_LAYOUT,
    )
    assert text is not None
    # WHEN GitHub picks the owners of a file (the last line that matches it)
    # THEN they are the ones it must be
    assert owners_of(path, text) == owners


def test_without_a_governance_team_the_platform_team_approves_onboarding_and_privilege() -> None:
    found = lines({"platform": "@org/platform"})
    assert found == [
        "* @org/platform",
        "/dist/workloads/ @org/platform",
        "/environments/apps/ @org/platform",
        "/dist/workloads/clusters/*/*/tenant.yaml @org/platform",
        "/dist/platform/cloud/ @org/platform",
        "/environments/manifests/ @org/platform",
        "/charts/ @org/platform",
        "/dist/platform/clusters/*/manifests/ @org/platform",
    ]


def test_an_app_without_a_team_has_no_lines_of_its_own() -> None:
    no_team = {key: value for key, value in APP.items() if key != "team"}
    assert [line for line in lines({"platform": "@org/p"}, no_team) if "shop" in line or "store" in line] == []


def test_no_app_team_owns_its_aws_resources() -> None:
    # GIVEN an app with AWS resources and a team THEN no line gives the team its cloud file
    found = lines(GOVERNED, {**APP, "aws": {"queues": [{"name": "jobs"}]}})
    assert [line for line in found if "/cloud/" in line] == ["/dist/platform/cloud/ @org/governance"]
