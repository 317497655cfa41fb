"""environments/allocations.yaml (fluxplane.synth.allocations): what the loader allocated, recorded beside the
definition, written only when it changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.errors import ConfigError
from fluxplane.synth import load_plan
from fluxplane.synth.allocations import ALLOCATIONS, recorded_text, stale, write
from fluxplane.synth.plan import FleetPlan
from tests.conftest import FleetWriter
from tests.support.packs import DEMO_HUB, DEMO_REPOSITORIES, demo_registry

BASE: dict[str, Any] = {"repositories": DEMO_REPOSITORIES, "management": DEMO_HUB}


def planned(write_fleet: FleetWriter, clusters: list[dict[str, Any]]) -> tuple[Path, FleetPlan]:
    root = write_fleet(base=BASE, envs={"staging": {"clusters": clusters}})
    return root, load_plan(root, demo_registry())


def test_the_record_holds_each_workload_cluster_s_range_and_each_cluster_s_version(write_fleet: FleetWriter) -> None:
    # GIVEN a fleet of one workload cluster, its range allocated by the loader
    _, plan = planned(write_fleet, [{"name": "a", "region": "us-west-2"}])
    (cluster,) = plan.fleet.clusters
    assert cluster.network.cidr is not None

    # WHEN recorded THEN the cluster's range, and the hub's and the cluster's Kubernetes versions
    assert yaml.safe_load(recorded_text(plan)) == {
        "clusters": {"a": str(cluster.network.cidr)},
        "kubernetesVersions": {"a": cluster.kubernetes_version, "hub": plan.fleet.management.kubernetes_version},
    }


def test_the_record_is_written_when_it_changes_and_only_then(write_fleet: FleetWriter) -> None:
    # GIVEN a fleet with nothing recorded yet
    root, plan = planned(write_fleet, [{"name": "a", "region": "us-west-2"}])
    assert stale(root, plan)

    # WHEN written twice THEN the first run writes the record, the second finds nothing to do
    assert write(root, plan) is True
    assert (root / ALLOCATIONS).read_text() == recorded_text(plan)
    assert (stale(root, plan), write(root, plan)) == (False, False)

    # AND a record edited by hand is stale, and written again
    (root / ALLOCATIONS).write_text("clusters: {}\n")
    assert (stale(root, plan), write(root, plan)) == (True, True)
    assert (root / ALLOCATIONS).read_text() == recorded_text(plan)


def test_a_fleet_without_workload_clusters_records_nothing(write_fleet: FleetWriter) -> None:
    root, plan = planned(write_fleet, [])
    assert (stale(root, plan), write(root, plan)) == (False, False)
    assert not (root / ALLOCATIONS).exists()


def test_a_link_in_the_record_s_place_is_refused_not_followed(write_fleet: FleetWriter, tmp_path: Path) -> None:
    # GIVEN the record's path is a symbolic link to a file elsewhere
    root, plan = planned(write_fleet, [{"name": "a", "region": "us-west-2"}])
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text("kept: true\n")
    (root / ALLOCATIONS).symlink_to(elsewhere)

    # WHEN synth records THEN it refuses, and the file the link points to is untouched
    with pytest.raises(ConfigError, match=r"^environments/allocations\.yaml: a symbolic link \(to "):
        write(root, plan)
    assert elsewhere.read_text() == "kept: true\n"
