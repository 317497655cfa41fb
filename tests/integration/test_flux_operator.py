"""The Flux Operator: a spoke's Flux from a FluxInstance, and a hub whose sync a FluxInstance of the user's owns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.charts.spokes import chain_steps
from fluxplane.cli import main
from fluxplane.packs import versions
from tests.conftest import FleetWriter, load_documents
from tests.support.git import git
from tests.support.manifests import assert_valid_and_built

TWO_CLUSTERS: dict[str, Any] = {
    "clusters": [
        {"name": "staging-1", "region": "us-west-2"},
        {"name": "staging-2", "region": "us-west-2", "fluxInstaller": "flux-operator"},
    ]
}
HUB = "dist/platform/clusters/hub"
#: A FluxInstance of the user's that syncs the hub (the Flux Operator's documented layout).
HUB_INSTANCE = """apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: "2.9.x"
    registry: ghcr.io/fluxcd
  sync:
    kind: GitRepository
    url: ssh://git@github.com/example-org/fleet.git
    ref: refs/heads/main
    path: dist/platform/clusters/hub
    pullSecret: flux-system
"""


def _chain(root: Path, cluster: str) -> dict[str, dict[str, Any]]:
    documents = load_documents(root / "dist/platform/spokes" / cluster / "bootstrap.yaml")
    return {doc["metadata"]["name"]: doc for doc in documents if doc["kind"] == "Kustomization"}


def test_a_spoke_can_get_its_flux_from_the_flux_operator(write_fleet: FleetWriter) -> None:
    # GIVEN one cluster on the flux2 chart and one on the Flux Operator
    root = write_fleet(envs={"staging": TWO_CLUSTERS})
    # WHEN synthesized
    assert main(["--root", str(root), "synth"]) == 0
    spokes = root / "dist/platform/spokes"
    # THEN the operator's cluster installs the operator's chart, from an OCIRepository the hub keeps
    release = load_documents(spokes / "staging-2/flux/flux.yaml")[0]
    assert release["spec"]["releaseName"] == "flux-operator"
    assert release["spec"]["targetNamespace"] == "flux-system"
    assert release["spec"]["chartRef"] == {"kind": "OCIRepository", "name": "flux-operator", "namespace": "flux-system"}
    sources = {doc["metadata"]["name"]: doc for doc in load_documents(spokes / "sources.yaml")}
    assert sources["flux-operator"]["kind"] == "OCIRepository"
    assert sources["flux-operator"]["spec"]["url"] == "oci://ghcr.io/controlplaneio-fluxcd/charts/flux-operator"
    assert sources["flux-operator"]["spec"]["ref"] == {"tag": versions.FLUX_OPERATOR.version}
    # AND then the FluxInstance, locked down for tenants as the chart's Flux is (the operator accepts only the
    # name flux, in its namespace; distribution's registry and version are required)
    instance = load_documents(spokes / "staging-2/flux-instance/flux-instance.yaml")[0]
    assert instance["apiVersion"] == "fluxcd.controlplane.io/v1"
    assert instance["metadata"] == {"name": "flux", "namespace": "flux-system"}
    assert instance["spec"]["distribution"] == {"version": "2.9.x", "registry": "ghcr.io/fluxcd"}
    assert instance["spec"]["cluster"] == {"type": "aws", "multitenant": True, "tenantDefaultServiceAccount": "default"}
    assert "kustomize-controller" in instance["spec"]["components"]
    assert "sync" not in instance["spec"]  # the chain's next steps hand the spoke its sync, as with the chart
    # AND the chain waits for the operator, then for the instance to be ready, before the hand-over
    chain = _chain(root, "staging-2")
    steps = chain_steps("flux-operator", git_credentials=False)
    assert [name for name in chain if name in steps] == list(steps)
    assert chain["flux-instance"]["spec"]["dependsOn"] == [{"name": "flux"}]
    assert chain["flux-instance"]["spec"]["wait"] is True
    assert chain["flux-instance"]["spec"]["kubeConfig"] == chain["flux-sync"]["spec"]["kubeConfig"]
    assert chain["flux-sync"]["spec"]["dependsOn"] == [{"name": "flux-instance"}]
    # AND the other cluster keeps the flux2 chart
    assert load_documents(spokes / "staging-1/flux/flux.yaml")[0]["spec"]["releaseName"] == "flux2"
    assert "flux-instance" not in _chain(root, "staging-1")
    assert not (spokes / "staging-1/flux-instance").exists()
    # AND everything validates (the FluxInstance is skipped without its CRD) and builds
    assert_valid_and_built(root / "dist", [spokes / "staging-2/flux-instance", spokes / "staging-2"])


def test_switching_a_live_clusters_flux_installer_is_a_replacement(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a cluster whose Flux the flux2 chart installed
    root = write_fleet(envs={"staging": {"clusters": [TWO_CLUSTERS["clusters"][0]]}})
    assert main(["--root", str(root), "synth"]) == 0
    before = (root / "dist/platform/spokes/staging-1/flux/flux.yaml").read_text()
    # WHEN it is switched to the Flux Operator
    root = write_fleet(
        envs={"staging": {"clusters": [{**TWO_CLUSTERS["clusters"][0], "fluxInstaller": "flux-operator"}]}}, root=root
    )
    # THEN synth refuses: helm-controller would uninstall the spoke's Flux, its CRDs and every object of theirs
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err
    assert (
        "platform/spokes/staging-1/flux/flux.yaml: HelmRelease staging-1/flux: the release moves from flux2 in "
        "flux-system to flux-operator in flux-system, so helm-controller uninstalls it, deleting what it installed, "
        "before it installs the new one; to do it on purpose, run synth with --replace 'HelmRelease/staging-1/flux'"
    ) in err
    assert (root / "dist/platform/spokes/staging-1/flux/flux.yaml").read_text() == before
    # AND asked for explicitly, it is done
    assert main(["--root", str(root), "synth", "--replace", "HelmRelease/staging-1/flux"]) == 0
    assert (root / "dist/platform/spokes/staging-1/flux-instance/flux-instance.yaml").is_file()


def test_a_hub_synced_by_a_flux_instance_of_its_own_keeps_it(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a fleet whose hub the Flux Operator runs, with the user's FluxInstance in the hub's flux-system/
    base = example_project / "environments/base.yaml"
    base.write_text(
        base.read_text().replace(
            "management:\n  name: hub\n", "management:\n  name: hub\n  bootstrap: flux-operator\n", 1
        )
    )
    (example_project / "dist").rename(example_project / "old-dist")
    # WHEN synthesized before the FluxInstance is there THEN the folder is left empty, saying what goes there
    assert main(["--root", str(example_project), "synth"]) == 0
    assert not (example_project / HUB / "flux-system").exists()
    assert (
        f"note: {example_project / 'dist'}/platform/clusters/hub/flux-system/ is empty: your FluxInstance goes there "
        "(management.bootstrap: flux-operator), with sync.path: <the repository's path to dist>/platform/clusters/hub"
    ) in capsys.readouterr().err
    # AND once it is there, synth keeps it as it is, and git sees no change
    folder = example_project / HUB / "flux-system"
    folder.mkdir()
    (folder / "flux-instance.yaml").write_text(HUB_INSTANCE)
    (folder / "kustomization.yaml").write_text("resources:\n- flux-instance.yaml\n")
    git(example_project, "init", "-q")
    git(example_project, "add", "-A")
    git(example_project, "commit", "-qm", "fleet")
    assert main(["--root", str(example_project), "synth"]) == 0
    assert git(example_project, "status", "--porcelain", "--", "dist") == ""
    assert main(["--root", str(example_project), "synth", "--check"]) == 0
    assert yaml.safe_load((folder / "flux-instance.yaml").read_text())["spec"]["sync"]["path"] == (
        "dist/platform/clusters/hub"
    )
