"""A cluster's Kubernetes version is a contract: a newer default never upgrades it, an upgrade is one minor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.config import awsdata
from fluxplane.config.loader import load_fleet
from fluxplane.config.models import DEFAULT_KUBERNETES_VERSION, LEGACY_KUBERNETES_VERSION
from fluxplane.config.network import FollowedVersion
from fluxplane.errors import ConfigError
from fluxplane.synth import load_plan
from fluxplane.synth.allocations import recorded_text
from tests.conftest import MINIMAL_ENV, FleetWriter

OLD_RECORD = """clusters:
  staging-1: 10.100.0.0/16
"""


#: Where a new cluster of the minimal fleet starts: Flux 2.9 supports up to 1.36 (fluxplane.synth.plan's tests hold
#: the choice itself).
STARTED = "1.36"


def _versions(root: Path) -> dict[str, str]:
    fleet = load_fleet(root).fleet
    return {cluster.name: cluster.kubernetes_version for cluster in (fleet.management, *fleet.clusters)}


def _record(root: Path, text: str) -> None:
    (root / "environments" / "allocations.yaml").write_text(text)


def _problems(root: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_fleet(root)
    return caught.value.problems


def _env(**cluster: Any) -> dict[str, Any]:
    return {"clusters": [{**MINIMAL_ENV["clusters"][0], **cluster}]}


def test_the_default_is_the_newest_version_of_the_calendar() -> None:
    newest = max(awsdata.shipped().releases, key=awsdata.minor)
    assert newest == DEFAULT_KUBERNETES_VERSION


def test_a_new_fleet_starts_on_the_newest_version_its_controllers_support_and_records_it(
    write_fleet: FleetWriter,
) -> None:
    root = write_fleet()
    # the definition leaves it to planning: the newest EKS offers, held back to what every controller supports
    assert _versions(root) == {"hub": DEFAULT_KUBERNETES_VERSION, "staging-1": DEFAULT_KUBERNETES_VERSION}
    plan = load_plan(root)
    recorded = yaml.safe_load(recorded_text(plan))
    assert recorded["kubernetesVersions"] == {"hub": STARTED, "staging-1": STARTED}
    # quoted: a YAML 1.2 reader would take 1.30 for the number 1.3
    assert f'staging-1: "{STARTED}"' in recorded_text(plan)


def test_clusters_of_a_fleet_from_before_versions_were_recorded_keep_the_old_default(write_fleet: FleetWriter) -> None:
    # GIVEN a fleet whose allocations file records ranges only, and a cluster added since
    root = write_fleet(
        envs={"staging": {"clusters": [*MINIMAL_ENV["clusters"], {"name": "staging-2", "region": "us-west-2"}]}}
    )
    _record(root, OLD_RECORD)
    # THEN the recorded cluster and the hub keep the version they were built with; the new one starts on the newest
    # its controllers support
    fleet = load_plan(root).fleet
    assert {cluster.name: cluster.kubernetes_version for cluster in (fleet.management, *fleet.clusters)} == {
        "hub": LEGACY_KUBERNETES_VERSION,
        "staging-1": LEGACY_KUBERNETES_VERSION,
        "staging-2": STARTED,
    }


def test_a_recorded_version_holds_until_the_definition_names_another(write_fleet: FleetWriter) -> None:
    root = write_fleet(envs={"staging": _env(kubernetesVersion="1.35")})
    _record(root, recorded_text(load_plan(root)))
    # WHEN the definition stops naming a version THEN the cluster stays where it is
    write_fleet(envs={"staging": _env()}, root=root)
    assert _versions(root)["staging-1"] == "1.35"
    # AND one minor up is an upgrade
    write_fleet(envs={"staging": _env(kubernetesVersion="1.36")}, root=root)
    assert _versions(root)["staging-1"] == "1.36"


def test_the_clusters_whose_version_follows_the_record_are_known_with_both_places(write_fleet: FleetWriter) -> None:
    # GIVEN a recorded fleet, one cluster naming its version, one not, and one new since
    clusters = [
        {"name": "staging-1", "region": "us-west-2"},
        {"name": "staging-2", "region": "us-west-2", "kubernetesVersion": "1.36"},
    ]
    root = write_fleet(envs={"staging": {"clusters": clusters}})
    recorded = recorded_text(load_plan(root))
    _record(root, recorded.replace(f'staging-1: "{STARTED}"', 'staging-1: "1.35"'))
    write_fleet(envs={"staging": {"clusters": [*clusters, {"name": "staging-3", "region": "us-west-2"}]}}, root=root)
    # WHEN loaded THEN those that name none follow the record: its entry and value, and where to name one instead
    assert load_fleet(root).followed_versions == {
        "hub": FollowedVersion(
            STARTED,
            "environments/allocations.yaml: kubernetesVersions.hub",
            "environments/base.yaml: management.kubernetesVersion",
        ),
        "staging-1": FollowedVersion(
            "1.35",
            "environments/allocations.yaml: kubernetesVersions.staging-1",
            "environments/staging.yaml: clusters[0].kubernetesVersion",
        ),
        "staging-3": FollowedVersion(
            None,
            "environments/allocations.yaml: kubernetesVersions.staging-3",
            "environments/staging.yaml: clusters[2].kubernetesVersion",
        ),
    }


@pytest.mark.parametrize(
    ("wanted", "message"),
    [
        (
            "1.37",
            "environments/staging.yaml: clusters[0].kubernetesVersion: EKS upgrades a cluster one minor version at a "
            'time: the cluster runs 1.35 (environments/allocations.yaml: kubernetesVersions.staging-1), got "1.37"; '
            'set "1.36", synthesize, merge, and move on once the upgrade is done',
        ),
        (
            "1.34",
            "environments/staging.yaml: clusters[0].kubernetesVersion: EKS cannot downgrade a cluster: the cluster "
            'runs 1.35 (environments/allocations.yaml: kubernetesVersions.staging-1), got "1.34"; replace the cluster '
            "instead (a new name) if it must run an older version",
        ),
    ],
)
def test_an_upgrade_that_eks_cannot_make_is_refused(write_fleet: FleetWriter, wanted: str, message: str) -> None:
    root = write_fleet(envs={"staging": _env(kubernetesVersion="1.35")})
    _record(root, recorded_text(load_plan(root)))
    write_fleet(envs={"staging": _env(kubernetesVersion=wanted)}, root=root)
    assert message in _problems(root)


def test_a_recorded_version_is_state_and_is_checked(write_fleet: FleetWriter) -> None:
    root = write_fleet()
    _record(root, 'clusters: {}\nkubernetesVersions:\n  staging-1: "1.20"\n  hub: 1.3\n')
    problems = _problems(root)
    assert any(line.startswith("environments/allocations.yaml: kubernetesVersions.hub:") for line in problems), problems
    _record(root, 'clusters: {}\nkubernetesVersions:\n  staging-1: "1.20"\n')
    assert any(
        line.startswith(
            "environments/allocations.yaml: kubernetesVersions.staging-1: expected a Kubernetes version EKS"
        )
        and "set its kubernetesVersion" in line
        for line in _problems(root)
    )
