"""fluxplane versions: which version runs where, and what blocks each cluster's next upgrade."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from fluxplane.cli import main
from fluxplane.config.awsdata import minor
from fluxplane.config.compatibility import compatibility, outgrown
from fluxplane.review.versions import NEWEST, ClusterVersions, collect, markdown, project_versions, text
from fluxplane.synth import load_plan, render_plan
from fluxplane.synth.plan import PINNED
from tests.conftest import HUB_PACKS, MINIMAL_BASE, MINIMAL_ENV, ROOT, FleetWriter

TODAY = date(2026, 11, 24)
FLOW_SCHEMA = """apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: FlowSchema
metadata:
  name: batch
spec:
  priorityLevelConfiguration:
    name: workload-low
"""


def _on(version: str) -> dict[str, object]:
    return {"clusters": [{**MINIMAL_ENV["clusters"][0], "kubernetesVersion": version}]}


def _report(root: Path) -> dict[str, ClusterVersions]:
    plan = load_plan(root)
    return {cluster.name: cluster for cluster in collect(plan, render_plan(plan), TODAY)}


#: A fleet half way through an upgrade wave (docs/how-to/upgrade-kubernetes.md): staging and the hub on 1.35,
#: production held on 1.34 with a Kyverno that supports no later version.
WAVE = ROOT / "tests" / "fixtures" / "upgrade-wave"


def test_a_wave_shows_the_cluster_held_back_what_blocks_it_and_every_pack_where_it_runs() -> None:
    clusters = _report(WAVE)
    # THEN the hub comes first, and the cluster held back a version is on it, next in line for the one after
    assert next(iter(clusters)) == "hub"
    assert {name: (item.kubernetes, item.next) for name, item in clusters.items()} == {
        "hub": ("1.35", "1.36"),
        "production-usw2": ("1.34", "1.35"),
        "staging-usw2": ("1.35", "1.36"),
    }
    assert clusters["production-usw2"].support == "standard until 2026-12-02"
    assert clusters["staging-usw2"].support == "standard until 2027-03-27"
    # AND the add-on that holds it back is named, with what to do first
    source = compatibility()["kyverno"].source
    assert clusters["production-usw2"].blockers == (
        f"kyverno 3.6.1 supports Kubernetes 1.31 to 1.34 ({source}): upgrade kyverno first",
    )
    # AND every pack each cluster enables, with the version it runs there
    plan = load_plan(WAVE)
    for planned in plan.clusters:
        assert set(clusters[planned.name].packs) == set(planned.packs)
    assert clusters["production-usw2"].packs["kyverno"] == "3.6.1"
    # AND the API versions of what the cluster's Flux applies
    assert {"kustomize.toolkit.fluxcd.io/v1", "helm.toolkit.fluxcd.io/v2"} <= set(clusters["staging-usw2"].apis)
    assert "apiextensions.crossplane.io/v1" in clusters["hub"].apis
    assert "apiextensions.crossplane.io/v1" not in clusters["staging-usw2"].apis
    # AND the platform's controllers that are not packs: Flux everywhere, External Secrets and Sealed Secrets on spokes
    assert clusters["hub"].controllers == {"flux": "2.9"}
    assert clusters["staging-usw2"].controllers == {
        "flux": "2.9",
        "external-secrets": "2.14.0",
        "sealed-secrets": "2.18.5",
    }
    # AND each cluster's readiness names exactly the controllers whose published range ends below its next version
    for item in clusters.values():
        named = {line.split()[0] for line in item.blockers if line.endswith("first") or PINNED in line}
        assert named == {name for name, _ in outgrown(item.next, {**item.packs, **item.controllers})}, item.name


def test_the_guide_shows_the_waves_report(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the upgrade guide's report of a wave WHEN versions runs on the wave THEN each line it quotes is there
    readme = (ROOT / "docs" / "how-to" / "upgrade-kubernetes.md").read_text()
    quoted = readme.split("$ fluxplane versions\n", 1)[1].split("```", 1)[0]
    quoted += readme.split("is told of the switch:\n\n```text\n", 1)[1].split("```", 1)[0]
    assert main(["--root", str(WAVE), "versions"]) == 0
    out = capsys.readouterr().out.splitlines()
    for line in quoted.splitlines():
        if line.strip() != "...":
            assert line in out, line


def test_the_example_fleet_is_current() -> None:
    # GIVEN the example users copy WHEN its versions are read THEN no cluster is below 1.35, each in standard support
    for name, item in _report(ROOT).items():
        assert minor(item.kubernetes) >= 35, name
        assert item.support.startswith("standard"), name


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
    assert not [line for line in cluster.outside if line.startswith("kyverno")]
    root = write_fleet(
        base=base,
        envs={"staging": {"clusters": [{"name": "staging-1", "region": "us-west-2", "kubernetesVersion": "1.35"}]}},
        root=root / "again",
    )
    assert f"kyverno 3.6.1 supports Kubernetes 1.31 to 1.34 ({source}), and the cluster runs 1.35" in (
        _report(root)["staging-1"].outside
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
    cluster = _report(write_fleet(envs={"staging": _on("1.37")}))["staging-1"]
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
    cluster = _report(write_fleet(base=base, envs={"staging": _on("1.37")}))["staging-1"]
    # THEN 1.37 is not the newest, and its next version is one EKS does not offer
    assert (cluster.kubernetes, cluster.next, cluster.newest) == ("1.37", "1.38", False)
    assert (
        cluster.blockers[0]
        == "EKS does not offer Kubernetes 1.38 (fluxplane's calendar, or awsData.kubernetesVersions)"
    )
    assert "  staging-1 1.37 -> 1.38: blocked\n" in text([cluster])


def test_both_formats_hold_every_section(write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_fleet(envs={"staging": _on("1.36")})
    clusters = list(_report(root).values())
    assert [line for line in text(clusters).splitlines() if line.endswith(":") and not line.startswith(" ")] == [
        "clusters:",
        "packs:",
        "the platform's controllers:",
        "APIs the clusters' objects use:",
        "upgrade readiness:",
    ]
    assert "  staging-1 1.36 -> 1.37: blocked\n" in text(clusters)
    assert "| staging-1 | staging | 1.36 |" in markdown(clusters)
    assert main(["--root", str(root), "versions", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert out == markdown(collect(load_plan(root), render_plan(load_plan(root)), datetime.now(UTC).date()))
    assert out.count("## ") == 5


def test_objects_in_deprecated_api_versions_are_listed_and_block_nothing(write_fleet: FleetWriter) -> None:
    # GIVEN the example, whose kyverno pack writes the deprecated ClusterPolicy
    clusters = _report(ROOT)
    # THEN every cluster with kyverno lists it, and stays ready
    for item in clusters.values():
        assert item.deprecated == (
            "1 ClusterPolicy in kyverno.io/v1, deprecated: move to policies.kyverno.io/v1 ValidatingPolicy (the "
            "kyverno pack's policyKind)",
        ), item.name
    assert all(item.blockers == () for item in clusters.values())
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


def test_the_platforms_controllers_are_listed_per_cluster_and_block_an_upgrade_past_their_range(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN a hub and a workload cluster on 1.36, which EKS offers a version past
    base = {**MINIMAL_BASE, "management": {**MINIMAL_BASE["management"], "kubernetesVersion": "1.36"}}
    root = write_fleet(base=base, envs={"staging": _on("1.36")})
    clusters = _report(root)
    hub, spoke = clusters["hub"], clusters["staging-1"]
    # THEN Flux is listed on both, the hub's from flux.version, External Secrets and Sealed Secrets on the spoke
    assert hub.controllers == {"flux": "2.9"}
    assert spoke.controllers == {"flux": "2.9", "external-secrets": "2.14.0", "sealed-secrets": "2.18.5"}
    assert "  flux              2.9      hub, staging-1\n" in text([hub, spoke])
    assert "| sealed-secrets | 2.18.5 | staging-1 |" in markdown([hub, spoke])
    # AND each one whose range ends at 1.36 blocks 1.37, saying how to run a newer one
    table = compatibility()
    flux, eso, crossplane = table["flux"].source, table["external-secrets"].source, table["crossplane"].source
    assert hub.blockers == (
        f"crossplane 2.4.3 supports Kubernetes 1.34 to 1.36 ({crossplane}): upgrade crossplane first",
        f"flux 2.9 supports Kubernetes 1.34 to 1.36 ({flux}): upgrade the hub's Flux first, and set flux.version",
    )
    assert spoke.blockers == (
        f"flux 2.9 supports Kubernetes 1.34 to 1.36 ({flux}): {PINNED}",
        f"external-secrets 2.14.0 supports Kubernetes 1.19 to 1.36 ({eso}): {PINNED}",
    )
    assert (hub.outside, spoke.outside) == ((), ())


def test_a_spokes_flux_is_the_one_its_installer_installs_and_none_of_its_own_is_judged(
    write_fleet: FleetWriter,
) -> None:
    clusters = [
        {"name": "staging-1", "region": "us-west-2", "kubernetesVersion": "1.36", "fluxInstaller": "flux-operator"},
        {"name": "staging-2", "region": "us-west-2", "kubernetesVersion": "1.36", "bootstrap": "flux"},
    ]
    found = _report(write_fleet(envs={"staging": {"clusters": clusters}}))
    assert found["staging-1"].controllers["flux"] == "2.9.x"
    assert "flux" not in found["staging-2"].controllers
    assert found["staging-2"].controllers == {"external-secrets": "2.14.0", "sealed-secrets": "2.18.5"}


def test_a_controller_whose_range_starts_above_the_next_version_does_not_block_the_upgrade_toward_it(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN cert-manager v1.21.1 (Kubernetes 1.33 to 1.36) on a cluster still on 1.31 (its role made by the hub)
    hub = {**MINIMAL_BASE["management"], "packs": {**HUB_PACKS, "app-compositions": {}}}
    staging = {**_on("1.31"), "packs": {"cert-manager": {"version": "v1.21.1"}}}
    cluster = _report(write_fleet(base={**MINIMAL_BASE, "management": hub}, envs={"staging": staging}))["staging-1"]
    # THEN moving to 1.32 brings it closer to its range: not a blocker, and flagged as outside already
    source = compatibility()["cert-manager"].source
    supports = f"cert-manager v1.21.1 supports Kubernetes 1.33 to 1.36 ({source})"
    assert not [line for line in cluster.blockers if line.startswith("cert-manager")]
    assert f"{supports}, and the cluster runs 1.31" in cluster.outside
