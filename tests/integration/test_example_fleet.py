"""The example fleet, end to end: what a user commits in dist/ is valid, buildable and intended.

Real tools where the user has them: ``kubectl kustomize`` on every kustomization folder, and the
upstream CRD schemas through ../shared/tools/validate-manifests. dist/ is committed, so a change of the
output shows in the pull request's own diff, and the first test holds dist/ to what synth writes (as
``fluxplane synth --check`` does); the others say what must hold. The snapshots of fleets of other shapes are
in test_fixture_fleets.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.charts.cluster import LAYER_LABEL
from fluxplane.charts.overlay import object_key
from fluxplane.constructs import Manifest, Root
from fluxplane.core.layout import LAYERS
from fluxplane.core.tree import LazyDocuments
from fluxplane.packs.api import PackContext, covers, split_pack
from fluxplane.synth import load_plan, render_plan
from fluxplane.synth.graph import FluxTree
from fluxplane.synth.order import BUILT_IN_GROUPS, GroupKind, applied_kinds, defined_kinds
from fluxplane.synth.writer import compare_tree
from tests.conftest import CRDS, ROOT, VALIDATE_MANIFESTS, skipped_kinds

DIST = ROOT / "dist"
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed: kustomize builds not checked")


@cache
def rendered() -> dict[str, str]:
    return render_plan(load_plan(ROOT))


def kustomize(directory: Path) -> list[dict[str, Any]]:
    assert KUBECTL is not None
    out = subprocess.run([KUBECTL, "kustomize", str(directory)], check=True, capture_output=True, text=True)
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def kustomization_dirs(root: Path) -> list[Path]:
    return sorted(path.parent for path in root.rglob("kustomization.yaml"))


def test_committed_dist_is_what_synth_writes() -> None:
    staleness = compare_tree(rendered(), DIST)
    assert (staleness.added, staleness.changed, staleness.removed) == ([], [], [])


def test_synth_is_deterministic() -> None:
    assert render_plan(load_plan(ROOT)) == rendered()


@pytest.mark.slow
@pytest.mark.skipif(not CRDS.is_dir(), reason="../shared/crds is missing: upstream CRD schemas not checked")
def test_every_document_validates_against_upstream_crds() -> None:
    result = subprocess.run(
        [sys.executable, str(VALIDATE_MANIFESTS), str(DIST)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 invalid" in result.stdout
    # fluxplane's own composite kinds have no upstream CRD: their XRDs are in dist/ and
    # tests/integration/test_hub.py validates every composite resource against them. Nor has EKS Auto Mode's
    # NodeClass: tests/unit/packs/test_auto_mode.py holds it to the fields EKS documents.
    assert skipped_kinds(result.stdout) <= {"platform.fluxplane.io/v1alpha1", "eks.amazonaws.com/v1"}, result.stdout


@pytest.mark.slow
@needs_kubectl
def test_every_kustomization_folder_builds() -> None:
    folders = kustomization_dirs(DIST)
    assert len(folders) >= 10
    for folder in folders:
        assert kustomize(folder), f"{folder} builds to nothing"


def _flux_kustomizations() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for cluster in (DIST / "platform" / "clusters").iterdir():
        for file in ("infrastructure.yaml", "apps.yaml", "flux-system/gotk-sync.yaml"):
            path = cluster / file
            if path.exists():
                found += [
                    (cluster.name, doc)
                    for doc in yaml.safe_load_all(path.read_text())
                    if doc["kind"] == "Kustomization" and doc["apiVersion"].startswith("kustomize.toolkit")
                ]
    return found


def test_every_flux_path_exists_and_has_a_kustomization_file() -> None:
    kustomizations = _flux_kustomizations()
    assert len(kustomizations) >= 8
    for cluster, doc in kustomizations:
        folder = ROOT / doc["spec"]["path"]
        assert (folder / "kustomization.yaml").is_file(), f"{cluster}: {doc['spec']['path']}"


def test_every_dependency_and_source_resolves_on_its_cluster() -> None:
    by_cluster: dict[str, set[str]] = {}
    for cluster, doc in _flux_kustomizations():
        by_cluster.setdefault(cluster, set()).add(doc["metadata"]["name"])
    for cluster, doc in _flux_kustomizations():
        for dependency in doc["spec"].get("dependsOn", []):
            assert dependency["name"] in by_cluster[cluster], (cluster, doc["metadata"]["name"], dependency)
        assert doc["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "flux-system"}


def test_every_layer_kustomization_is_health_gated() -> None:
    for cluster, doc in _flux_kustomizations():
        # flux-system is the root; spoke-bootstrap applies each cluster's chain, which gates itself, and must
        # wait for none of them, or one cluster's trouble would hold up the chains of all
        if doc["metadata"]["name"] in ("flux-system", "spoke-bootstrap"):
            continue
        spec = doc["spec"]
        assert spec.get("healthChecks") or spec.get("healthCheckExprs") or spec.get("wait"), (cluster, doc)


@pytest.mark.slow
@needs_kubectl
def test_each_overlay_builds_to_exactly_the_objects_the_model_intends() -> None:
    # GIVEN every add-on of every cluster of the example fleet
    plan = load_plan(ROOT)
    flux = {(cluster, doc["metadata"]["name"]): doc for cluster, doc in _flux_kustomizations()}
    checked = 0
    for cluster in plan.clusters:
        for name, config in cluster.packs.items():
            # (a pack whose controllers install CRDs is applied as two Kustomizations, see split_pack)
            for pack in split_pack(plan.registry.get(name)):
                if pack.builds_clusters:
                    continue  # bound per workload cluster in that cluster's chain (tests/integration/test_hub.py)
                # WHEN the folder the cluster's Flux Kustomization applies is built with kustomize
                built = kustomize(ROOT / flux[(cluster.name, pack.name)]["spec"]["path"])
                # THEN it equals the add-on rendered directly with that cluster's configuration
                manifest = Manifest(Root(), "intended", path="intended.yaml")
                pack.bind(PackContext(manifest, plan.fleet), config)
                assert {object_key(d): d for d in built} == {object_key(d): d for d in manifest.documents()}, (
                    cluster.name,
                    pack.name,
                )
                checked += 1
    assert checked >= 7


def test_overlays_hold_only_the_difference() -> None:
    # production raises metrics-server replicas and podinfo replicas; production-use1 raises podinfo again
    production = yaml.safe_load((DIST / "platform/apps/podinfo/production/kustomization.yaml").read_text())
    assert production["resources"] == ["../base"]
    assert [yaml.safe_load(p["patch"]) for p in production["patches"]] == [
        [{"op": "replace", "path": "/spec/values/replicaCount", "value": 3}]
    ]
    use1 = yaml.safe_load((DIST / "platform/clusters/production-use1/overlays/podinfo/kustomization.yaml").read_text())
    assert use1["resources"] == ["../../../../apps/podinfo/production"]
    assert [yaml.safe_load(p["patch"]) for p in use1["patches"]] == [
        [{"op": "replace", "path": "/spec/values/replicaCount", "value": 4}]
    ]
    assert not (DIST / "platform/apps/podinfo/staging").exists()


def _hub_kustomizations() -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc["spec"] for cluster, doc in _flux_kustomizations() if cluster == "hub"}


def test_hub_chain_crossplane_then_providers_then_provider_configs() -> None:
    hub = _hub_kustomizations()
    assert "dependsOn" not in hub["crossplane"]
    assert hub["crossplane"]["healthChecks"] == [
        {
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "name": "crossplane",
            "namespace": "flux-system",
        }
    ]
    assert {"name": "crossplane"} in hub["crossplane-providers"]["dependsOn"]
    assert {"name": "crossplane-providers"} in hub["crossplane-provider-configs"]["dependsOn"]
    # Providers and Functions are gated on their own Installed and Healthy conditions, not on Deployments
    gated = {(check["kind"], check["name"]) for check in hub["crossplane-providers"]["healthChecks"]}
    assert ("Provider", "provider-aws-eks") in gated and ("Function", "function-auto-ready") in gated
    assert not any(check["kind"] == "Deployment" for spec in hub.values() for check in spec.get("healthChecks", []))
    assert {expr["kind"] for expr in hub["crossplane-providers"]["healthCheckExprs"]} == {"Provider", "Function"}


def test_crds_and_their_custom_resources_never_share_a_kustomization() -> None:
    # What installs the CRDs of which API groups
    sources = {
        ("HelmRelease", "crossplane"): ("pkg.crossplane.io", "apiextensions.crossplane.io"),
        ("Provider", "provider-family-aws"): ("aws.m.upbound.io", "aws.upbound.io"),
        ("Provider", "provider-aws-ec2"): ("ec2.aws.m.upbound.io", "ec2.aws.upbound.io"),
        ("Provider", "provider-aws-eks"): ("eks.aws.m.upbound.io", "eks.aws.upbound.io"),
        ("Provider", "provider-aws-iam"): ("iam.aws.m.upbound.io", "iam.aws.upbound.io"),
        ("Provider", "provider-kubernetes"): ("kubernetes.m.crossplane.io", "kubernetes.crossplane.io"),
        ("CompositeResourceDefinition", "eksclusters.platform.fluxplane.io"): ("platform.fluxplane.io",),
    }
    for name, spec in _hub_kustomizations().items():
        folder = ROOT / spec["path"]
        documents = [
            doc
            for file in sorted(folder.glob("*.yaml"))
            if file.name != "kustomization.yaml"
            for doc in yaml.safe_load_all(file.read_text())
        ]
        present = {(doc["kind"], doc["metadata"]["name"]) for doc in documents}
        groups = {doc["apiVersion"].split("/")[0] for doc in documents}
        for source, defined in sources.items():
            if source in present:
                assert not groups & set(defined), (name, source, groups)


def _layers(cluster: str) -> dict[str, tuple[str, set[GroupKind], set[GroupKind]]]:
    """Per Kustomization of ``cluster``, as Flux applies dist/: its layer (a tenant's: apps), the (group, kind) of
    what it applies, and the kinds the CRDs and XRDs among them define."""
    found: dict[str, tuple[str, set[GroupKind], set[GroupKind]]] = {}
    for placed in _tree().fleet.local(cluster).on(cluster):
        if placed.key[:2] == ("kustomize.toolkit.fluxcd.io", "Kustomization"):
            layer = placed.doc["metadata"].get("labels", {}).get(LAYER_LABEL)
            found[placed.key.name] = (layer or ("apps" if placed.namespace != "flux-system" else ""), set(), set())
    for kustomization, placed in _tree().fleet.applied(cluster):
        _, kinds, defined = found[kustomization.doc["metadata"]["name"]]
        kinds |= applied_kinds([placed.doc])
        defined |= defined_kinds([placed.doc])
    return found


@cache
def _tree() -> FluxTree:
    return FluxTree(LazyDocuments({}, rendered()), hub="hub")


def test_no_kustomization_waits_for_an_add_on_it_neither_requires_nor_uses_the_crds_of() -> None:
    # GIVEN every cluster's dependency graph, and what each pack (or part of one) requires and installs the CRDs of
    plan = load_plan(ROOT)
    parts = {part.name: part for pack in plan.registry for part in split_pack(pack)}
    checked = 0
    for cluster in sorted(cluster.name for cluster in plan.clusters):
        graph = _tree().graph(cluster)
        names = {node.id: node.name for node in graph.nodes if node.kind == "Kustomization" and not node.hub}
        layers = _layers(cluster)
        # WHEN a Kustomization waits for an add-on
        for edge in graph.edges:
            if edge.applies or edge.source not in names or edge.target not in names:
                continue
            add_on, waiting = names[edge.source], names[edge.target]
            if add_on not in parts:
                continue
            layer, kinds, _ = layers[waiting]
            below = LAYERS[: LAYERS.index(layer)] if layer in LAYERS else ()
            installed = {
                (group, kind)
                for group, kind in kinds
                if any(covers(pattern, group) for pattern in parts[add_on].installed_groups)
                or (group, kind) in layers[add_on][2]
            }
            unknown = {
                (group, kind)
                for group, kind in kinds
                if group not in BUILT_IN_GROUPS
                and not any(
                    other in parts and any(covers(pattern, group) for pattern in parts[other].installed_groups)
                    for other in layers
                )
                and not any((group, kind) in defined for _, _, defined in layers.values())
            }
            nearest = next((lower for lower in reversed(below) if any(v[0] == lower for v in layers.values())), None)
            # THEN it requires the add-on, or applies kinds whose CRDs the add-on installs; or it is of the apps
            # layer, or plain manifests, which wait for the layer below as a whole; or applies a kind no one is
            # known to install, which waits for every layer below
            justified = (
                add_on in (parts[waiting].requires if waiting in parts else ())
                or bool(installed)
                or ((layer == "apps" or waiting.startswith("manifests-")) and layers[add_on][0] == nearest)
                or (bool(unknown) and layers[add_on][0] in below)
            )
            assert justified, (cluster, waiting, add_on, sorted(kinds))
            checked += 1
    assert checked >= 30


def _documents(root: Path) -> list[tuple[str, dict[str, Any]]]:
    return [
        (file.relative_to(root).as_posix(), doc)
        for file in sorted(root.rglob("*.yaml"))
        for doc in yaml.safe_load_all(file.read_text())
        if doc
    ]


def test_every_health_expression_fails_fast_and_waits_only_for_conditions_that_are_set() -> None:
    # GIVEN every Flux health expression in dist/ and the XRDs the fleet defines
    documents = _documents(DIST)
    xrds = {doc["spec"]["names"]["kind"]: doc for _, doc in documents if doc["kind"] == "CompositeResourceDefinition"}
    exprs = [
        (path, expr)
        for path, doc in documents
        if doc["kind"] == "Kustomization" and doc["apiVersion"].startswith("kustomize.toolkit.fluxcd.io/")
        for expr in doc["spec"].get("healthCheckExprs", [])
    ]
    assert len(exprs) >= 10
    for path, expr in exprs:
        # THEN each has a failed clause, so a failing object fails the Kustomization at once
        assert expr.get("failed"), (path, expr)
        # AND none waits for Offered on an XRD: Crossplane sets it only for XRDs with claims
        if expr["kind"] == "CompositeResourceDefinition":
            assert "Offered" not in expr["current"], (path, expr)
    assert xrds and all("claimNames" not in xrd["spec"] for xrd in xrds.values())
    assert {xrd["spec"]["scope"] for xrd in xrds.values()} == {"Namespaced"}
