"""Small fleets of each shape (tests/fixtures/fleets/), synthesized in memory: snapshots and what each shape must hold.

The example fleet's dist/ is committed and ``fluxplane synth --check`` holds it; these fixtures cover the
shapes the example does not take (a hub alone, tenants in a repository of their own, apps' resources on the
cluster). One snapshot per output file makes a change of the output read like a GitOps pull request; the
semantic tests say what each shape must produce, so a snapshot update cannot quietly accept a broken tree.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from fluxplane.testing import FleetUnderTest, synthesize_fleet
from fluxplane.validate.schemas import SHIPPED_CRDS
from tests.conftest import ROOT

FLEETS = ROOT / "tests" / "fixtures" / "fleets"
SHAPES = ("hub-only", "hub-and-spokes", "spoke-mode", "separate-workloads-repo")


class YamlSnapshot(SingleFileSnapshotExtension):
    """One snapshot file per synthesized file, so a snapshot diff reads like the pull request's diff."""

    file_extension = "yaml"
    _write_mode = WriteMode.TEXT


@cache
def fleet(shape: str) -> FleetUnderTest:
    return synthesize_fleet(FLEETS / shape)


def documents(shape: str, path: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(fleet(shape).files[path]) if doc]


def every_document(shape: str) -> list[dict[str, Any]]:
    return [doc for path in fleet(shape).files if path.endswith(".yaml") for doc in documents(shape, path)]


def by_name(shape: str, path: str, kind: str) -> dict[str, dict[str, Any]]:
    """The objects of ``kind`` in the file at ``path``, by name."""
    return {doc["metadata"]["name"]: doc for doc in documents(shape, path) if doc["kind"] == kind}


def flux_kustomizations(shape: str, path: str) -> dict[str, dict[str, Any]]:
    """The spec of each Flux Kustomization in the file at ``path``, by name."""
    return {
        doc["metadata"]["name"]: doc["spec"]
        for doc in documents(shape, path)
        if doc["kind"] == "Kustomization" and doc["apiVersion"].startswith("kustomize.toolkit.fluxcd.io/")
    }


def cluster_folders(shape: str, repository: str = "platform") -> set[str]:
    prefix = f"{repository}/clusters/"
    return {path.removeprefix(prefix).split("/")[0] for path in fleet(shape).files if path.startswith(prefix)}


def fixture_tree() -> dict[str, bytes | None]:
    """Every path under tests/fixtures/fleets/: a file's bytes, None for a folder."""
    return {
        path.relative_to(FLEETS).as_posix(): path.read_bytes() if path.is_file() else None
        for path in sorted(FLEETS.rglob("*"))
    }


@pytest.mark.parametrize("shape", SHAPES)
def test_every_file_matches_its_snapshot(shape: str, snapshot: SnapshotAssertion) -> None:
    # GIVEN the fixture fleet of this shape, synthesized in memory
    files = fleet(shape).files
    assert files
    # WHEN each file is compared with its snapshot (all of them, so a failure lists every changed file)
    changed = [
        path
        for path, text in files.items()
        if snapshot(name=path.replace("/", "__"), extension_class=YamlSnapshot) != text
    ]
    # THEN every file it writes is the one its snapshot holds
    assert changed == [], (
        "review the new output, then accept it with --snapshot-update (tests/fixtures/fleets/README.md)"
    )


def test_synthesizing_writes_nothing_into_the_fixtures() -> None:
    # GIVEN the fixture folders as committed
    before = fixture_tree()
    # WHEN every fleet is synthesized anew (neither an allocations file nor a synth cache may appear)
    for shape in SHAPES:
        synthesize_fleet(FLEETS / shape)
    # THEN the folders hold the same files, byte for byte
    assert fixture_tree() == before


@pytest.mark.parametrize("shape", SHAPES)
def test_every_reference_resolves_on_its_cluster(shape: str) -> None:
    assert fleet(shape).reference_findings() == []


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES)
def test_valid_for_the_controllers(shape: str) -> None:
    # against the CRDs fluxplane ships, as a fleet repository's own test checks it
    assert fleet(shape).schema_findings([SHIPPED_CRDS]) == []


def test_hub_only_is_the_management_cluster_alone() -> None:
    # GIVEN a hub with Crossplane and its providers but no eks-compositions, and an environment without clusters
    files = fleet("hub-only").files
    # THEN the hub is the one cluster folder, nothing builds a workload cluster and no tenant is written
    assert cluster_folders("hub-only") == {"hub"}
    assert not any(path.startswith(("platform/spokes/", "workloads/")) for path in files)
    assert not any(doc["kind"] == "EKSCluster" for doc in every_document("hub-only"))
    # AND the hub applies its Crossplane chain and the base's add-on, each from its base folder
    hub = flux_kustomizations("hub-only", "platform/clusters/hub/infrastructure.yaml")
    assert {name: spec["path"] for name, spec in hub.items()} == {
        "crossplane": "./dist/platform/infrastructure/controllers/crossplane/base",
        "crossplane-providers": "./dist/platform/infrastructure/configs/crossplane-providers/base",
        "crossplane-provider-configs": "./dist/platform/infrastructure/configs/crossplane-provider-configs/base",
        "metrics-server": "./dist/platform/infrastructure/controllers/metrics-server/base",
    }


def test_hub_and_spokes_builds_one_eks_cluster_per_workload_cluster_on_its_pinned_range() -> None:
    # GIVEN two workload clusters, each pinning its VPC range, and the clusters' pinned Kubernetes version
    clusters = {
        name: doc
        for name in ("staging-usw2", "production-use1")
        for doc in documents("hub-and-spokes", f"platform/spokes/{name}/cluster/cluster.yaml")
        if doc["kind"] == "EKSCluster"
    }
    # THEN the hub builds one EKSCluster each, in its own namespace, on the range and version the fixture pins
    everywhere = [doc for doc in every_document("hub-and-spokes") if doc["kind"] == "EKSCluster"]
    assert sorted(doc["metadata"]["name"] for doc in everywhere) == ["production-use1", "staging-usw2"]
    assert {
        name: (doc["metadata"]["namespace"], doc["spec"]["region"], doc["spec"]["network"]["vpcCidr"])
        for name, doc in clusters.items()
    } == {
        "staging-usw2": ("staging-usw2", "us-west-2", "10.10.0.0/16"),
        "production-use1": ("production-use1", "us-east-1", "10.20.0.0/16"),
    }
    assert {doc["spec"]["kubernetesVersion"] for doc in clusters.values()} == {"1.34"}
    assert cluster_folders("hub-and-spokes") == {"hub", "staging-usw2", "production-use1"}


def test_hub_and_spokes_writes_each_environments_difference_as_its_own_overlay() -> None:
    # GIVEN metrics-server at two replicas in staging and three in production
    folder = "platform/infrastructure/controllers/metrics-server"
    overlays = {
        environment: documents("hub-and-spokes", f"{folder}/{environment}/kustomization.yaml")[0]
        for environment in ("staging", "production")
    }
    # THEN each environment's overlay is its base and one patch, and the two patches differ in the replicas alone
    assert {environment: overlay["resources"] for environment, overlay in overlays.items()} == {
        "staging": ["../base"],
        "production": ["../base"],
    }
    patches = {
        environment: [yaml.safe_load(patch["patch"]) for patch in overlay["patches"]]
        for environment, overlay in overlays.items()
    }
    pdb = {"op": "add", "path": "/spec/values/podDisruptionBudget", "value": {"enabled": True, "minAvailable": 1}}
    assert patches == {
        "staging": [[{"op": "replace", "path": "/spec/values/replicas", "value": 2}, pdb]],
        "production": [[{"op": "replace", "path": "/spec/values/replicas", "value": 3}, pdb]],
    }
    # AND each cluster applies its environment's overlay; the hub, in no environment, the base
    paths = {
        cluster: flux_kustomizations("hub-and-spokes", f"platform/clusters/{cluster}/infrastructure.yaml")[
            "metrics-server"
        ]["path"]
        for cluster in ("hub", "staging-usw2", "production-use1")
    }
    assert paths == {
        "hub": f"./dist/{folder}/base",
        "staging-usw2": f"./dist/{folder}/staging",
        "production-use1": f"./dist/{folder}/production",
    }
    # AND kyverno, changed in production alone, has a production overlay and no staging one
    kyverno = "platform/infrastructure/configs/kyverno-configs"
    assert f"{kyverno}/production/kustomization.yaml" in fleet("hub-and-spokes").files
    assert f"{kyverno}/staging/kustomization.yaml" not in fleet("hub-and-spokes").files


def test_spoke_mode_applies_the_apps_resources_on_the_cluster_in_the_apps_namespace() -> None:
    # GIVEN a workload cluster with appResources: spoke and the shop's table, queue, bucket and database
    tenants = flux_kustomizations("spoke-mode", "platform/clusters/staging-usw2/tenants.yaml")
    # THEN the cluster's own Flux applies the app-resources folder, after the tenants and the app compositions
    assert set(tenants) == {"tenants", "app-resources"}
    assert tenants["app-resources"]["path"] == "./dist/workloads/clusters/staging-usw2/app-resources"
    assert tenants["app-resources"]["dependsOn"] == [{"name": "tenants"}, {"name": "app-compositions"}]
    # AND the table, the queue and the bucket are composites in the shop's namespace there, each health-gated
    composites = documents("spoke-mode", "workloads/clusters/staging-usw2/app-resources/shop.yaml")
    assert [(doc["kind"], doc["metadata"]["name"], doc["metadata"]["namespace"]) for doc in composites] == [
        ("AppTable", "shop-table-carts", "shop"),
        ("AppQueue", "shop-queue-checkout", "shop"),
        ("AppBucket", "shop-bucket-receipts", "shop"),
    ]
    assert [(check["kind"], check["name"]) for check in tenants["app-resources"]["healthChecks"]] == [
        (doc["kind"], doc["metadata"]["name"]) for doc in composites
    ]
    # AND the hub still makes the app's role and its database, in the cluster's namespace on the hub
    hub_made = documents("spoke-mode", "platform/cloud/staging-usw2/shop.yaml")
    assert [(doc["kind"], doc["metadata"]["namespace"]) for doc in hub_made] == [
        ("AppIdentity", "staging-usw2"),
        ("AppDatabase", "staging-usw2"),
    ]
    # AND the cluster runs Crossplane with the providers of the services the app uses
    providers = flux_kustomizations("spoke-mode", "platform/clusters/staging-usw2/infrastructure.yaml")
    assert {check["name"] for check in providers["crossplane-providers"]["healthChecks"]} >= {
        "provider-aws-dynamodb",
        "provider-aws-sqs",
        "provider-aws-s3",
    }


def test_separate_workloads_repo_writes_the_tenants_into_the_workloads_repositorys_folder() -> None:
    # GIVEN repositories.workloads with its content at tenants/ in its own repository, and billing on production
    files = fleet("separate-workloads-repo").files
    # THEN the tenant is written under workloads/, the dist/ folder of that repository, and nowhere in platform/
    assert sorted(path for path in files if path.startswith("workloads/")) == [
        "workloads/clusters/production-usw2/billing/kustomization.yaml",
        "workloads/clusters/production-usw2/billing/sync.yaml",
        "workloads/clusters/production-usw2/billing/tenant.yaml",
        "workloads/clusters/production-usw2/kustomization.yaml",
    ]
    assert not any("billing" in path for path in files if path.startswith("platform/"))
    # AND the cluster reads it from the workloads repository, at its path there, checking out its folder alone
    tenants = "platform/clusters/production-usw2/tenants.yaml"
    source = by_name("separate-workloads-repo", tenants, "GitRepository")["workloads"]["spec"]
    assert source == {
        "interval": "1m",
        "url": "https://github.com/example-org/fleet-workloads.git",
        "ref": {"branch": "main"},
        "sparseCheckout": ["tenants/clusters/production-usw2"],
    }
    sync = flux_kustomizations("separate-workloads-repo", tenants)["tenants"]
    assert (sync["path"], sync["sourceRef"]) == (
        "./tenants/clusters/production-usw2",
        {"kind": "GitRepository", "name": "workloads"},
    )
