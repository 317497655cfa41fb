"""Each workload cluster fetches only what it applies: its GitRepository's sparse checkout holds every file its
Flux Kustomizations build, and no other cluster's folder."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from fluxplane.cli import main
from fluxplane.core.codec import parse_documents
from fluxplane.core.tree import FleetWalk, Folders, LazyDocuments
from fluxplane.synth import load_plan, render_plan
from tests.conftest import MINIMAL_BASE, ROOT, FleetWriter, load_documents

APP = {
    "repository": {"url": "ssh://git@example.com/org/shop.git", "ref": {"branch": "main"}, "secretRef": None},
    "path": "deploy",
    "clusters": ["staging-1"],
}


def _sparse(files: dict[str, str], cluster: str) -> list[str] | None:
    (source,) = [
        doc
        for doc in parse_documents(files[f"platform/clusters/{cluster}/flux-system/gotk-sync.yaml"])
        if doc["kind"] == "GitRepository"
    ]
    sparse: list[str] | None = source["spec"].get("sparseCheckout")
    return sparse


def _read_by(files: dict[str, str], cluster: str) -> set[str]:
    """Every file (as a repository path, dist/...) that a Kustomization applied on ``cluster`` from its
    flux-system GitRepository builds: its path's folder and everything kustomize reads from there."""
    fleet = FleetWalk(LazyDocuments({}, files))
    folders = Folders(LazyDocuments({}, files))
    read: set[str] = set()
    applied: list[dict[str, Any]] = [placed.doc for _, placed in fleet.applied(cluster)]
    entry = [doc for doc in parse_documents(files[f"platform/clusters/{cluster}/flux-system/gotk-sync.yaml"])]
    for doc in [*applied, *entry]:
        if doc.get("kind") != "Kustomization" or not str(doc.get("apiVersion", "")).startswith("kustomize.toolkit"):
            continue
        ref = doc["spec"]["sourceRef"]
        if (ref["kind"], ref["name"], ref.get("namespace", "flux-system")) != (
            "GitRepository",
            "flux-system",
            "flux-system",
        ):
            continue
        folder = doc["spec"]["path"].removeprefix("./").removeprefix("dist/")
        read.update(f"dist/{path}" for path in folders.inputs(folder))
        read.add(f"dist/{folder}/")
    return read


def _outside(read: set[str], sparse: list[str]) -> list[str]:
    return sorted(path for path in read if not any(path.startswith(directory + "/") for directory in sparse))


def test_every_file_a_workload_cluster_builds_is_in_its_sparse_checkout() -> None:
    files = render_plan(load_plan(ROOT))
    clusters = [cluster.name for cluster in load_plan(ROOT).fleet.clusters]
    for cluster in clusters:
        sparse = _sparse(files, cluster)
        assert sparse, cluster
        read = _read_by(files, cluster)
        # THEN it builds from more than its own folder (the catalogue), and nothing outside the checkout
        assert any("/infrastructure/" in path for path in read), cluster
        assert _outside(read, sparse) == [], cluster
        # AND no other cluster's folder is fetched, nor the hub's
        others = [other for other in [*clusters, "hub"] if other != cluster]
        assert not any(f"/clusters/{other}" in directory for other in others for directory in sparse), sparse
        assert not any("/spokes" in directory for directory in sparse), sparse
    # AND the hub, which reads everything, fetches everything
    assert _sparse(files, "hub") is None


def test_a_cluster_overlay_reads_its_layers_catalogue_and_gets_it(write_fleet: FleetWriter) -> None:
    # GIVEN a cluster whose podinfo differs from its environment's (a cluster overlay under its own folder)
    base = {**MINIMAL_BASE, "packs": {"podinfo": {}}}
    envs = {
        "staging": {"clusters": [{"name": "staging-1", "region": "us-west-2", "packs": {"podinfo": {"replicas": 3}}}]}
    }
    root = write_fleet(base=base, envs=envs)
    files = render_plan(load_plan(root))
    sparse = _sparse(files, "staging-1")
    assert sparse is not None and "dist/platform/apps" in sparse
    assert _outside(_read_by(files, "staging-1"), sparse) == []


def test_tenants_from_a_workloads_repository_of_their_own_check_out_their_cluster_folder(
    write_fleet: FleetWriter,
) -> None:
    base = {
        **MINIMAL_BASE,
        "repositories": {
            **MINIMAL_BASE["repositories"],
            "workloads": {"url": "https://example.com/org/workloads.git", "secretRef": None},
        },
    }
    root = write_fleet(base=base)
    apps = root / "environments" / "apps"
    apps.mkdir()
    (apps / "shop.yaml").write_text(yaml.safe_dump(APP))
    files = render_plan(load_plan(root))
    tenants = {doc["kind"]: doc for doc in parse_documents(files["platform/clusters/staging-1/tenants.yaml"])}
    assert tenants["GitRepository"]["spec"]["sparseCheckout"] == ["dist/workloads/clusters/staging-1"]
    assert "dist/workloads/clusters/staging-1" not in (_sparse(files, "staging-1") or [])


def test_sparse_checkout_can_be_turned_off(write_fleet: FleetWriter) -> None:
    base = {**MINIMAL_BASE, "flux": {"sparseCheckout": False}}
    root = write_fleet(base=base)
    assert main(["--root", str(root), "synth"]) == 0
    (source, _) = load_documents(root / "dist/platform/clusters/staging-1/flux-system/gotk-sync.yaml")
    assert "sparseCheckout" not in source["spec"]


@pytest.mark.parametrize("path", [None, "deploy/fleet"])
def test_the_checkout_follows_where_the_platform_repository_keeps_dist(
    write_fleet: FleetWriter, path: str | None
) -> None:
    repositories = {"platform": {**MINIMAL_BASE["repositories"]["platform"], **({"path": path} if path else {})}}
    root = write_fleet(base={**MINIMAL_BASE, "repositories": repositories})
    files = render_plan(load_plan(root))
    sparse = _sparse(files, "staging-1")
    prefix = path or "dist/platform"
    assert sparse is not None and f"{prefix}/clusters/staging-1" in sparse
    assert all(directory.startswith(prefix + "/") for directory in sparse)


def test_the_example_checkouts_are_what_dist_holds() -> None:
    for cluster in ("staging-usw2", "production-usw2", "production-use1"):
        sparse = _sparse(render_plan(load_plan(ROOT)), cluster)
        assert sparse is not None
        for directory in sparse:
            assert (ROOT / directory).is_dir(), directory  # a missing folder fails the GitRepository


def test_validate_finds_a_kustomization_whose_path_its_sparse_checkout_leaves_out(write_fleet: FleetWriter) -> None:
    from fluxplane.validate.references import check_references
    from fluxplane.validate.tree import load_tree

    # GIVEN a cluster's plain manifests that add a Flux Kustomization reading a folder outside its checkout (the
    # hub's chain of the cluster, which writes nothing of the cluster's own)
    root = write_fleet()
    manifest = root / "environments/manifests/staging/apps/extra.yaml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: extra\n"
        "  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./dist/platform/spokes/staging-1/cluster\n"
        "  prune: true\n"
        "  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    )
    assert main(["--root", str(root), "synth"]) == 0
    # WHEN validated THEN the reference check names the path and the checkout
    lines = [finding.line() for finding in check_references(load_tree(root / "dist"))]
    assert any(
        "extra.yaml" in line
        and "'./dist/platform/spokes/staging-1/cluster' is outside the sparse checkout of GitRepository "
        "flux-system/flux-system"
        in line
        for line in lines
    ), lines
