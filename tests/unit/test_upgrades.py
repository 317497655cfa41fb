"""fluxplane versions: which version runs where, and what blocks each cluster's next upgrade."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from fluxplane.cli import main
from fluxplane.synth import load_plan, render_plan
from fluxplane.upgrades import (
    NEWEST,
    ClusterVersions,
    collect,
    compatibility,
    markdown,
    project_versions,
    text,
    unsupported,
)
from tests.conftest import MINIMAL_BASE, ROOT, FleetWriter

TODAY = date(2026, 11, 24)
FLOW_SCHEMA = """apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: FlowSchema
metadata:
  name: batch
spec:
  priorityLevelConfiguration:
    name: workload-low
"""


def _report(root: Path) -> dict[str, ClusterVersions]:
    plan = load_plan(root)
    return {cluster.name: cluster for cluster in collect(plan, render_plan(plan), TODAY)}


def test_the_example_fleet_shows_the_cluster_held_back_and_every_pack_where_it_runs() -> None:
    clusters = _report(ROOT)
    # THEN the hub comes first, and the cluster held back a version is on it, next in line for the one after
    assert next(iter(clusters)) == "hub"
    assert {name: (item.kubernetes, item.next) for name, item in clusters.items()} == {
        "hub": ("1.34", "1.35"),
        "production-euc1": ("1.34", "1.35"),
        "production-euw1": ("1.34", "1.35"),
        "production-use1": ("1.33", "1.34"),
        "production-usw2": ("1.34", "1.35"),
        "staging-euw1": ("1.34", "1.35"),
        "staging-usw2": ("1.34", "1.35"),
    }
    assert clusters["production-use1"].support == "extended (paid) until 2027-07-29"
    assert clusters["staging-usw2"].support == "standard until 2026-12-02"
    # AND every pack each cluster enables, with the version it runs there
    plan = load_plan(ROOT)
    for planned in plan.clusters:
        assert set(clusters[planned.name].packs) == set(planned.packs)
    assert clusters["hub"].packs["crossplane"] == "2.3.4"
    # AND the API versions of what the cluster's Flux applies
    assert {"kustomize.toolkit.fluxcd.io/v1", "helm.toolkit.fluxcd.io/v2"} <= set(clusters["staging-usw2"].apis)
    assert "apiextensions.crossplane.io/v1" in clusters["hub"].apis
    assert "apiextensions.crossplane.io/v1" not in clusters["staging-usw2"].apis
    # AND each cluster's readiness names exactly the add-ons whose published range leaves out its next version
    for item in clusters.values():
        named = {line.split()[0] for line in item.blockers if line.endswith("first")}
        assert named == {pack for pack, _ in unsupported(item.next, item.packs)}, item.name


def test_an_addon_outside_its_range_blocks_the_upgrade_and_is_flagged_when_already_outside(
    write_fleet: FleetWriter,
) -> None:
    base = {**MINIMAL_BASE, "packs": {"kyverno": {"version": "3.6.1"}}}
    root = write_fleet(
        base=base,
        envs={"staging": {"clusters": [{"name": "staging-1", "region": "us-west-2", "kubernetesVersion": "1.34"}]}},
    )
    cluster = _report(root)["staging-1"]
    source = compatibility()["kyverno"].source
    assert f"kyverno 3.6.1 supports Kubernetes 1.31 to 1.34 ({source}): upgrade kyverno first" in cluster.blockers
    assert cluster.outside == ()
    root = write_fleet(
        base=base,
        envs={"staging": {"clusters": [{"name": "staging-1", "region": "us-west-2", "kubernetesVersion": "1.35"}]}},
        root=root / "again",
    )
    assert _report(root)["staging-1"].outside == (
        f"kyverno 3.6.1 supports Kubernetes 1.31 to 1.34 ({source}), and the cluster runs 1.35",
    )


def test_an_api_version_the_next_kubernetes_no_longer_serves_blocks_the_upgrade(write_fleet: FleetWriter) -> None:
    root = write_fleet(
        envs={"staging": {"clusters": [{"name": "staging-1", "region": "us-west-2", "kubernetesVersion": "1.31"}]}}
    )
    manifest = root / "environments/manifests/staging/configs/flow.yaml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(FLOW_SCHEMA)
    cluster = _report(root)["staging-1"]
    assert cluster.next == "1.32"
    assert (
        "1 FlowSchema in flowcontrol.apiserver.k8s.io/v1beta3, which Kubernetes stopped serving in 1.32: move to "
        "flowcontrol.apiserver.k8s.io/v1"
    ) in cluster.blockers


def test_a_cluster_on_the_newest_eks_version_is_newest_not_blocked(write_fleet: FleetWriter) -> None:
    # GIVEN a cluster on 1.37, the newest version of fluxplane's calendar
    cluster = _report(write_fleet())["staging-1"]
    # THEN there is nothing to upgrade to: it is newest, and nothing blocks it
    assert (cluster.kubernetes, cluster.next, cluster.newest, cluster.verdict) == ("1.37", "1.38", True, "newest")
    assert cluster.blockers == ()
    report = text([cluster])
    assert "  staging-1  staging      1.37        standard until" in report
    assert report.splitlines()[1].split() == ["CLUSTER", "ENVIRONMENT", "KUBERNETES", "EKS", "SUPPORT", "NEXT", "READY"]
    assert report.splitlines()[2].split()[-2:] == ["-", "newest"]
    assert f"  staging-1 1.37: {NEWEST}\n" in report
    assert "| - | newest |" in markdown([cluster])
    assert f"- **staging-1** 1.37: {NEWEST}" in markdown([cluster])


def test_a_next_version_eks_does_not_offer_blocks_a_cluster_that_is_not_on_the_newest(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN a later version added through awsData, past a gap in the calendar
    base = {**MINIMAL_BASE, "awsData": {"kubernetesVersions": ["1.39"]}}
    cluster = _report(write_fleet(base=base))["staging-1"]
    # THEN 1.37 is not the newest, and its next version is one EKS does not offer
    assert (cluster.kubernetes, cluster.next, cluster.newest) == ("1.37", "1.38", False)
    assert cluster.blockers == (
        "EKS does not offer Kubernetes 1.38 (fluxplane's calendar, or awsData.kubernetesVersions)",
    )
    assert "  staging-1 1.37 -> 1.38: blocked\n" in text([cluster])


def test_both_formats_hold_every_section(write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_fleet()
    clusters = list(_report(root).values())
    assert [line for line in text(clusters).splitlines() if line.endswith(":") and not line.startswith(" ")] == [
        "clusters:",
        "packs:",
        "APIs the clusters' objects use:",
        "upgrade readiness:",
    ]
    assert f"  staging-1 1.37: {NEWEST}\n" in text(clusters)
    assert "| staging-1 | staging | 1.37 |" in markdown(clusters)
    assert main(["--root", str(root), "versions", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert out == markdown(collect(load_plan(root), render_plan(load_plan(root)), datetime.now(UTC).date()))
    assert out.count("## ") == 4


def test_objects_in_deprecated_api_versions_are_listed_and_block_nothing(write_fleet: FleetWriter) -> None:
    # GIVEN the example, whose kyverno pack writes the deprecated ClusterPolicy
    clusters = _report(ROOT)
    # THEN every cluster with kyverno lists it, and stays ready
    for item in clusters.values():
        assert item.deprecated == (
            "1 ClusterPolicy in kyverno.io/v1, deprecated: move to policies.kyverno.io/v1 ValidatingPolicy (the "
            "kyverno pack's policyKind)",
        ), item.name
    assert clusters["production-use1"].blockers == ()
    assert "    ~ 1 ClusterPolicy in kyverno.io/v1, deprecated" in text(list(clusters.values()))
    # AND the policy written as a ValidatingPolicy is not listed
    base = {**MINIMAL_BASE, "packs": {"kyverno": {"policyKind": "ValidatingPolicy"}}}
    assert _report(write_fleet(base=base))["staging-1"].deprecated == ()


def test_project_versions_renders_the_definition_and_prints_nothing(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the minimal fleet
    project = write_fleet()
    # WHEN its versions are collected from the project folder
    clusters = project_versions(project, TODAY)
    # THEN they are what collect finds in synth's rendering of it, and nothing was printed
    assert clusters == list(_report(project).values())
    assert [cluster.name for cluster in clusters] == ["hub", "staging-1"]
    assert capsys.readouterr() == ("", "")
