"""Existing workload clusters: registered ones, reached with a kubeconfig the user seals or keyless, and spokes that
run a Flux of their own, which the hub never replaces."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.charts.spokes import FLUX_STEPS, chain_steps
from fluxplane.cli import main
from fluxplane.synth import load_plan
from tests.conftest import HUB_PACKS, ROOT, FleetWriter, load_documents
from tests.support.git import git
from tests.support.manifests import assert_valid_and_built

ESO_ROLE = "arn:aws:iam::111122223333:role/%s-external-secrets"
BASE: dict[str, Any] = {
    "repositories": {"platform": {"url": "ssh://git@example.com/org/fleet.git", "secretRef": None}},
    "management": {
        "name": "hub",
        "region": "us-west-2",
        "fluxRoleArn": "arn:aws:iam::111122223333:role/hub-flux",
        "packs": HUB_PACKS,
    },
    "clusterDefaults": {"kubernetesVersion": "1.34"},
    "packs": {"metrics-server": {}},
}


def registered(name: str, cidr: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "region": "us-west-2",
        "network": {"cidr": cidr},
        "existing": {"mode": "registered", "externalSecretsRoleArn": ESO_ROLE % name},
        **fields,
    }


#: A registered cluster the hub reaches with a kubeconfig the user seals, and one that runs Flux from `flux bootstrap`.
OLD = registered("old", "10.64.0.0/16")
OWN_FLUX = registered(
    "own-flux",
    "10.65.0.0/16",
    bootstrap="flux",
    hubAccess="keyless",
    existing={
        "mode": "registered",
        "externalSecretsRoleArn": ESO_ROLE % "own-flux",
        "clusterArn": "arn:aws:eks:us-west-2:111122223333:cluster/own-flux",
    },
)
SPOKES = "dist/platform/spokes"
#: What `flux bootstrap git --path=dist/platform/clusters/own-flux` commits (components shortened).
BOOTSTRAPPED = {
    "gotk-components.yaml": "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n",
    "gotk-sync.yaml": "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n"
    "  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m0s\n  ref:\n    branch: main\n"
    "  url: ssh://git@example.com/org/fleet.git\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\n"
    "kind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m0s\n"
    "  path: ./dist/platform/clusters/own-flux\n  prune: true\n  sourceRef:\n    kind: GitRepository\n"
    "    name: flux-system\n",
    "kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
    "- gotk-components.yaml\n- gotk-sync.yaml\n",
}


def _project(write_fleet: FleetWriter, *clusters: dict[str, Any]) -> Path:
    root = write_fleet(base=BASE, envs={"production": {"clusters": list(clusters)}})
    shutil.copy(ROOT / "environments" / "sealing-cert.pem", root / "environments" / "sealing-cert.pem")
    return root


def _seal_kubeconfig(root: Path, cluster: str) -> None:
    kubeconfig = root / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    args = ["--namespace", cluster, "--name", f"{cluster}-kubeconfig", "--from-file", f"value={kubeconfig}"]
    assert main(["--root", str(root), "seal", "--cluster", "hub", *args]) == 0


def _chain(root: Path, cluster: str) -> dict[str, dict[str, Any]]:
    documents = load_documents(root / SPOKES / cluster / "bootstrap.yaml")
    return {doc["metadata"]["name"]: doc for doc in documents if doc["kind"] == "Kustomization"}


# -- registered, with a kubeconfig the user seals -------------------------------------------------------------


def test_a_registered_cluster_without_its_sealed_kubeconfig_is_refused_with_the_command(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a registered cluster the hub reaches with a kubeconfig, none sealed
    root = _project(write_fleet, OLD)
    # WHEN synthesized THEN synth refuses, naming the file and the command that makes it
    assert main(["--root", str(root), "synth"]) == 2
    assert (
        "environments/secrets/hub/old/old-kubeconfig.yaml: missing; the hub reaches registered cluster 'old' with it "
        "(or set hubAccess: keyless): fluxplane seal --cluster hub --namespace old --name old-kubeconfig "
        "--from-file value=<kubeconfig>"
    ) in capsys.readouterr().err


def test_a_registered_clusters_chain_applies_its_sealed_kubeconfig_and_nothing_of_aws(write_fleet: FleetWriter) -> None:
    # GIVEN a registered cluster whose kubeconfig the user sealed for the hub
    root = _project(write_fleet, OLD)
    _seal_kubeconfig(root, "old")
    # WHEN synthesized
    assert main(["--root", str(root), "synth"]) == 0

    # THEN its cluster step applies the sealed kubeconfig and the ConfigMap of External Secrets' role, nothing else:
    # no composite resource, no provider config, nothing of AWS
    applied = load_documents(root / SPOKES / "old/cluster/cluster.yaml")
    assert [(doc["kind"], doc["metadata"]["namespace"], doc["metadata"]["name"]) for doc in applied] == [
        ("ConfigMap", "old", "old-bootstrap"),
        ("SealedSecret", "old", "old-kubeconfig"),
    ]
    sealed = applied[1]
    assert list(sealed["spec"]["encryptedData"]) == ["value"]
    assert not any(".aws." in doc["apiVersion"] or "crossplane.io" in doc["apiVersion"] for doc in applied)
    # AND the step waits until the kubeconfig is unsealed
    step = _chain(root, "old")["cluster"]
    assert step["spec"]["wait"] is True
    assert [expr["kind"] for expr in step["spec"]["healthCheckExprs"]] == ["SealedSecret"]
    # AND the hub's own secrets folder does not hold it (its namespace exists only once the chain is applied)
    assert not (root / "dist/platform/clusters/hub/secrets").exists()
    # AND every step that reaches the cluster reads that Secret
    remote = [
        kustomization["spec"]["kubeConfig"]
        for kustomization in _chain(root, "old").values()
        if "kubeConfig" in kustomization["spec"]
    ]
    assert remote and all(access == {"secretRef": {"name": "old-kubeconfig", "key": "value"}} for access in remote)
    # AND the whole chain bootstraps it as any spoke, secrets first
    assert list(_chain(root, "old")) == ["cluster", *chain_steps("flux2-chart", git_credentials=False)]
    assert_valid_and_built(root / "dist", [root / SPOKES / "old" / "cluster", root / "dist/platform/clusters/old"])


# -- a spoke that runs a Flux of its own ----------------------------------------------------------------------


def test_the_hub_installs_no_flux_on_a_spoke_that_runs_its_own(write_fleet: FleetWriter) -> None:
    # GIVEN a registered cluster that runs Flux from `flux bootstrap`
    root = _project(write_fleet, OWN_FLUX)
    # WHEN synthesized
    assert main(["--root", str(root), "synth"]) == 0

    # THEN its chain bootstraps its secrets and stops there: no Flux installed, no sync handed over
    chain = _chain(root, "own-flux")
    assert list(chain) == ["cluster", *chain_steps("flux2-chart", git_credentials=False, bootstrap="flux")]
    assert list(chain) == ["cluster", "external-secrets", "secret-store", "sealing-key", "sealed-secrets"]
    assert not set(FLUX_STEPS) & set(chain)
    # AND no HelmRelease of the hub installs Flux there
    releases = [doc for file in (root / SPOKES / "own-flux").rglob("*.yaml") for doc in load_documents(file)]
    assert not any(
        doc["kind"] == "HelmRelease" and doc["spec"]["releaseName"] in ("flux2", "flux-operator") for doc in releases
    )
    assert not (root / SPOKES / "own-flux/flux").exists()
    # AND synth writes nothing into its flux-system/ folder, which flux bootstrap writes
    assert not (root / "dist/platform/clusters/own-flux/flux-system").exists()


def test_a_spoke_that_runs_its_own_flux_keeps_its_flux_system_as_bootstrap_wrote_it(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a spoke bootstrapped with `flux bootstrap --path=dist/platform/clusters/own-flux`, in Git
    root = _project(write_fleet, OWN_FLUX)
    assert main(["--root", str(root), "synth"]) == 0
    assert (
        f"note: {root / 'dist'}/platform/clusters/own-flux/flux-system/ is empty: `flux bootstrap` writes it "
        "(bootstrap: flux), with --path=<the repository's path to dist>/platform/clusters/own-flux"
    ) in capsys.readouterr().err
    folder = root / "dist/platform/clusters/own-flux/flux-system"
    folder.mkdir()
    for name, text in BOOTSTRAPPED.items():
        (folder / name).write_text(text)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "fleet")

    # WHEN synthesized again THEN its files are kept as they are: the hub never deletes the spoke's flux-system
    assert main(["--root", str(root), "synth"]) == 0
    assert git(root, "status", "--porcelain", "--", "dist") == ""
    assert main(["--root", str(root), "synth", "--check"]) == 0
    # AND the spoke's entry point includes them, so its Flux keeps managing itself from the fleet's path
    entry = yaml.safe_load((root / "dist/platform/clusters/own-flux/kustomization.yaml").read_text())
    assert "flux-system" in entry["resources"]
    assert_valid_and_built(root / "dist", [root / "dist/platform/clusters/own-flux"])


# -- observed, then managed ---------------------------------------------------------------------------------

SEEN = {
    "name": "seen",
    "region": "us-west-2",
    "network": {"cidr": "10.66.0.0/16"},
    "existing": {
        "mode": "observed",
        "externalSecretsRoleArn": ESO_ROLE % "seen",
        "vpcId": "vpc-0e1f2a3b4c5d60718",
        "subnetIds": ["subnet-0a1b2c3d4e5f60718", "subnet-0b2c3d4e5f6071829", "subnet-0c3d4e5f607182930"],
    },
}


def test_moving_an_observed_cluster_to_full_management_is_refused_without_manage(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an observed cluster in dist/
    root = _project(write_fleet, SEEN)
    assert main(["--root", str(root), "synth"]) == 0
    written = root / SPOKES / "seen/cluster/cluster.yaml"
    before = written.read_text()
    assert "name: eks-observed-3-subnets-1-node-group" in before
    # WHEN its definition moves it to full management
    managed = {**SEEN, "existing": {**SEEN["existing"], "mode": "managed"}}
    write_fleet(base=BASE, envs={"production": {"clusters": [managed]}}, root=root)
    capsys.readouterr()
    # THEN synth refuses, naming the flag, and writes nothing
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err
    assert (
        "platform/spokes/seen/cluster/cluster.yaml: EKSCluster seen/seen: Crossplane starts to manage its imported "
        "VPC, subnets, EKS cluster and node groups"
    ) in err
    assert "run synth with --manage 'EKSCluster/seen/seen'" in err
    assert written.read_text() == before
    # AND on the user's word, it is done
    assert main(["--root", str(root), "synth", "--manage", "EKSCluster/seen/seen"]) == 0
    assert "name: eks-managed-3-subnets-1-node-group" in written.read_text()


# -- the example fleet ---------------------------------------------------------------------------------------


def test_the_examples_existing_clusters_are_never_created_in_aws() -> None:
    dist = ROOT / SPOKES
    # GIVEN the example's registered production-euc1: its chain applies no composite and no object of AWS or
    # Crossplane, only what its definition records
    registered_step = load_documents(dist / "production-euc1/cluster/cluster.yaml")
    assert [(doc["kind"], doc["metadata"]["name"]) for doc in registered_step] == [
        ("ConfigMap", "production-euc1-bootstrap"),
        ("ConfigMap", "production-euc1-hub-access"),
    ]
    # AND its observed production-euw1 is composed by a Composition whose AWS resources are imported and only read
    (composite,) = [
        doc for doc in load_documents(dist / "production-euw1/cluster/cluster.yaml") if doc["kind"] == "EKSCluster"
    ]
    name = composite["spec"]["crossplane"]["compositionRef"]["name"]
    compositions = ROOT / "dist/platform/infrastructure/configs/eks-compositions/base/eks-compositions.yaml"
    (composition,) = [doc for doc in load_documents(compositions) if doc["metadata"]["name"] == name]
    resources = composition["spec"]["pipeline"][0]["input"]["resources"]
    aws = [
        r for r in resources if ".aws.m.upbound.io/" in r["base"]["apiVersion"] and r["base"]["kind"] != "ClusterAuth"
    ]
    assert sorted(r["base"]["kind"] for r in aws) == ["Cluster", "NodeGroup", "Subnet", "Subnet", "Subnet", "VPC"]
    for resource in aws:
        assert resource["base"]["spec"]["managementPolicies"] == ["Observe"], resource["name"]
        assert any(
            p.get("toFieldPath") == "metadata.annotations[crossplane.io/external-name]" for p in resource["patches"]
        )
    # AND the registered cluster gets no app whose database it cannot hold; the observed one does
    apps = {(p.app.name, p.cluster) for p in load_plan(ROOT).apps}
    assert ("orders", "production-euw1") in apps and ("orders", "production-euc1") not in apps
