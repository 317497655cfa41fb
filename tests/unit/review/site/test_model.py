"""fluxplane.review.site.model: the pages' content read from the definition and dist/, each answer from its own
module."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from fluxplane.review import versions
from fluxplane.review.site.model import Addon, SiteError, load, read_dist, version_key
from fluxplane.synth import load_plan
from tests.conftest import ROOT

TODAY = date(2026, 11, 28)


def test_version_key_orders_by_number() -> None:
    assert sorted(["v1.10.0", "1.9.2", "v1.21.1", "1.9.10"], key=version_key) == [
        "1.9.2",
        "1.9.10",
        "v1.10.0",
        "v1.21.1",
    ]


def test_behind_is_older_than_the_newest_only() -> None:
    addon = Addon("cert-manager", "", "v1.21.1", {"a": "v1.21.1", "b": "v1.9.0", "c": "v1.22.0"})
    assert [addon.behind(name) for name in ("a", "b", "c", "d")] == [False, True, False, False]


def test_the_example_fleet_as_the_pages_show_it() -> None:
    fleet = load(ROOT, TODAY)
    # the hub first, then each environment's clusters in definition order
    assert [cluster.name for cluster in fleet.clusters] == [
        "hub",
        "production-usw2",
        "production-use1",
        "production-euc1",
        "production-euw1",
        "staging-usw2",
        "staging-euw1",
    ]
    # versions, support and readiness are `fluxplane versions`' report, read from dist/
    plan = load_plan(ROOT)
    reports = versions.collect(plan, read_dist(ROOT), TODAY)
    assert [cluster.versions for cluster in fleet.clusters] == sorted(
        reports, key=lambda report: [c.name for c in fleet.clusters].index(report.name)
    )
    by_name = {cluster.name: cluster for cluster in fleet.clusters}
    assert (by_name["production-euc1"].account, by_name["production-euc1"].account_id) == ("production", "444455556666")
    assert by_name["production-euc1"].origin == "registered"
    assert by_name["staging-euw1"].nodes[0].startswith("EKS Auto Mode")
    assert by_name["staging-usw2"].graph.hub == "hub"
    assert by_name["hub"].graph.hub is None
    # the apps, each where it runs
    assert {app.app.name: [p.cluster for p in app.placements] for app in fleet.apps} == {
        "notifications": ["staging-usw2"],
        "orders": ["production-usw2", "production-use1", "production-euw1"],
    }
    # every pack enabled somewhere has a row, the newest its default pin
    assert [addon.name for addon in fleet.addons] == sorted({p for c in plan.clusters for p in c.packs})
    assert next(addon for addon in fleet.addons if addon.name == "kyverno").newest == "3.9.0"


def test_no_dist_is_one_line_that_says_what_to_run(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "environments", tmp_path / "environments")
    with pytest.raises(SiteError, match=r"dist: no such folder; run 'fluxplane synth' first") as raised:
        load(tmp_path, TODAY)
    assert len(raised.value.problems) == 1
