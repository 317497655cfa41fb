"""dist/CODEOWNERS: the platform team by default, governance for onboarding, each team for its app."""

from __future__ import annotations

from typing import Any

from fluxplane.charts.layout import PLATFORM, RepositoryLayout, workloads_layout
from fluxplane.config.apps import App, Placement
from fluxplane.config.models import Repositories, Teams
from fluxplane.synth.codeowners import codeowners

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


def test_platform_then_governance_then_each_apps_team() -> None:
    found = lines(
        {"platform": "@org/platform", "governance": "@org/governance"},
        {**APP, "aws": {"queues": [{"name": "jobs"}]}},
    )
    assert found == [
        "* @org/platform",
        "/environments/apps/ @org/governance",
        "/dist/workloads/ @org/governance",
        "/dist/workloads/clusters/prod-1/shop/ @org/shop",
        "/dist/platform/cloud/prod-1/shop.yaml @org/shop",
        "/environments/secrets/prod-1/store/ @org/shop",
    ]


def test_without_a_governance_team_the_platform_team_approves_onboarding() -> None:
    found = lines({"platform": "@org/platform"})
    assert found == ["* @org/platform", "/environments/apps/ @org/platform", "/dist/workloads/ @org/platform"]


def test_an_app_without_a_team_or_aws_has_no_lines_of_its_own() -> None:
    no_team = {key: value for key, value in APP.items() if key != "team"}
    assert lines({"platform": "@org/p"}, no_team)[3:] == []
    assert "/dist/platform/cloud/prod-1/shop.yaml @org/shop" not in lines({"platform": "@org/p"}, APP)
