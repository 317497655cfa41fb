"""The example fleet's hub: the Crossplane chain, the EKS API and one composite resource per cluster, each in its
own chain."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from ipaddress import IPv4Network
from itertools import combinations, pairwise
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.config.hub import cluster_namespace, kubeconfig_secret
from fluxplane.kinds import eks_api as eks
from fluxplane.kinds.eks_cluster import GROUP, KIND
from fluxplane.synth import load_plan
from tests.conftest import CRDS, ROOT, VALIDATE_MANIFESTS, skipped_kinds

DIST = ROOT / "dist"
CONFIGS = DIST / "platform" / "infrastructure" / "configs"
HUB = DIST / "platform" / "clusters" / "hub" / "infrastructure.yaml"
CHAIN = ("crossplane", "crossplane-providers", "crossplane-provider-configs", "eks-compositions")
SPOKES = DIST / "platform" / "spokes"


def documents(root: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    for path in sorted(root.rglob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                yield path, doc


def hub_kustomizations() -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc["spec"] for doc in yaml.safe_load_all(HUB.read_text())}


def composites() -> dict[str, dict[str, Any]]:
    """Every cluster's composite resource, from the folder its chain's ``cluster`` Kustomization applies."""
    return {
        doc["metadata"]["name"]: doc
        for path, doc in documents(SPOKES)
        if path.parent.name == "cluster" and doc["apiVersion"].startswith(f"{GROUP}/") and doc["kind"] == KIND
    }


def builds(cluster: str) -> dict[str, Any]:
    """The Kustomization of ``cluster``'s chain that builds it."""
    (found,) = [
        doc
        for doc in yaml.safe_load_all((SPOKES / cluster / "bootstrap.yaml").read_text())
        if doc["kind"] == "Kustomization" and doc["metadata"]["name"] == "cluster"
    ]
    return found


def xrd() -> dict[str, Any]:
    (found,) = [
        doc for _, doc in documents(CONFIGS / "eks-compositions") if doc["kind"] == "CompositeResourceDefinition"
    ]
    return found


def test_the_hubs_chain_that_builds_the_clusters_waits_for_no_add_on_it_does_not_use() -> None:
    # GIVEN the hub's Crossplane chain, which builds and changes every workload cluster, and what each waits for
    chain = {*CHAIN, "app-compositions"}
    waits = {name: {item["name"] for item in spec.get("dependsOn", [])} for name, spec in hub_kustomizations().items()}

    def closure(name: str) -> set[str]:
        found = set(waits[name])
        for dependency in waits[name]:
            found |= closure(dependency)
        return found

    # THEN each link waits, directly or not, for the chain alone: a fluent-bit, kyverno, metrics-server or
    # cert-manager change that fails holds up no workload cluster
    for link in chain:
        assert closure(link) <= chain, (link, closure(link) - chain)
    assert waits["crossplane-providers"] == {"crossplane"}
    assert waits["crossplane-provider-configs"] == {"crossplane-providers"}
    assert waits["eks-compositions"] == waits["app-compositions"] == {"crossplane-provider-configs", "crossplane"}
    # AND so does each workload cluster's own chain, which starts after eks-compositions (below)


def test_the_hub_chain_is_ordered_and_gated_on_crossplane_objects() -> None:
    hub = hub_kustomizations()
    # GIVEN the hub's Kustomizations THEN each link of the chain depends on the one before
    for earlier, later in pairwise(CHAIN):
        assert {"name": earlier} in hub[later]["dependsOn"], (earlier, later)
    # AND the compositions wait for the XRD to be Established (never Offered: it has no claims)
    assert hub["eks-compositions"]["healthChecks"] == [
        {
            "apiVersion": "apiextensions.crossplane.io/v2",
            "kind": "CompositeResourceDefinition",
            "name": "eksclusters.platform.fluxplane.io",
        }
    ]
    (xrd_expr,) = hub["eks-compositions"]["healthCheckExprs"]
    assert "c.type == 'Established' && c.status == 'True'" in xrd_expr["current"]
    assert "Offered" not in xrd_expr["current"]
    assert (
        xrd_expr["failed"] == "status.?conditions.orValue([]).exists(c, c.type == 'Established' && c.status == 'False')"
    )
    # AND each workload cluster is built by its own chain once the compositions are served, which waits for its
    # composite resource alone to be Ready, long enough for EKS; a registered cluster has none, and its step waits
    # for what it applies
    assert "workload-clusters" not in hub
    for cluster in load_plan(ROOT).fleet.clusters:
        name = cluster.name
        spec = builds(name)["spec"]
        if eks.composition_of(cluster) is None:
            assert (spec["wait"], spec["timeout"]) == (True, "5m")
            assert "healthChecks" not in spec
            continue
        assert spec["dependsOn"] == [{"name": "eks-compositions", "namespace": "flux-system"}]
        assert spec["healthChecks"] == [
            {"apiVersion": f"{GROUP}/v1alpha1", "kind": KIND, "name": name, "namespace": cluster_namespace(name)}
        ]
        (ready,) = spec["healthCheckExprs"]
        assert (ready["apiVersion"], ready["kind"]) == (f"{GROUP}/v1alpha1", KIND)
        assert "c.type == 'Ready' && c.status == 'True'" in ready["current"]
        assert "c.type == 'Synced' && c.status == 'False'" in ready["failed"]
        assert spec["timeout"] == "45m"


def test_one_composite_resource_per_workload_cluster_in_its_own_namespace() -> None:
    fleet = load_plan(ROOT).fleet
    found = composites()
    # (a registered cluster has none)
    shapes = {cluster.name: eks.composition_of(cluster) for env in fleet.environments for cluster in env.clusters}
    clusters = {cluster.name: cluster for env in fleet.environments for cluster in env.clusters}
    assert set(found) == {name for name, shape in shapes.items() if shape is not None}
    assert set(found) < set(clusters)
    namespaces = {doc["metadata"]["name"] for _, doc in documents(SPOKES) if doc["kind"] == "Namespace"}
    for name, composite in found.items():
        shape = shapes[name]
        assert shape is not None
        assert composite["metadata"]["namespace"] == cluster_namespace(name) in namespaces
        assert composite["spec"]["crossplane"]["compositionRef"]["name"] == shape.name
        assert composite["spec"]["network"]["vpcCidr"] == str(clusters[name].network.cidr)


def test_every_composition_a_composite_names_exists_and_composes_its_kind() -> None:
    compositions = {
        doc["metadata"]["name"]: doc
        for _, doc in documents(CONFIGS / "eks-compositions")
        if doc["kind"] == "Composition"
    }
    used = {composite["spec"]["crossplane"]["compositionRef"]["name"] for composite in composites().values()}
    assert used == set(compositions)
    for composition in compositions.values():
        assert composition["spec"]["compositeTypeRef"] == {"apiVersion": f"{GROUP}/v1alpha1", "kind": KIND}
        assert composition["spec"]["mode"] == "Pipeline"
        assert [step["functionRef"]["name"] for step in composition["spec"]["pipeline"]] == [
            "function-patch-and-transform",
            "function-auto-ready",
        ]


def test_vpcs_do_not_overlap_and_subnets_stay_inside_their_vpc() -> None:
    networks = {name: doc["spec"]["network"] for name, doc in composites().items()}
    vpcs = {name: IPv4Network(network["vpcCidr"]) for name, network in networks.items()}
    for (a, net_a), (b, net_b) in combinations(vpcs.items(), 2):
        assert not net_a.overlaps(net_b), (a, b)
    for name, network in networks.items():
        # (an imported cluster's subnets are its own: it has no zones planned)
        subnets = [
            IPv4Network(zone[key])
            for zone in network.get("zones", [])
            for key in ("publicSubnetCidr", "privateSubnetCidr")
        ]
        assert all(subnet.subnet_of(vpcs[name]) for subnet in subnets)
        assert not any(x.overlaps(y) for x, y in combinations(subnets, 2))


def test_every_keyless_reference_names_the_config_map_the_composition_writes() -> None:
    # the Composition's, or, for a registered cluster, the one its chain applies from the definition
    written = {
        (doc["metadata"]["namespace"], doc["spec"]["hubAccess"]["configMapName"])
        for doc in composites().values()
        if "hubAccess" in doc["spec"]
    } | {
        (doc["metadata"]["namespace"], doc["metadata"]["name"])
        for path, doc in documents(SPOKES)
        if path.parent.name == "cluster" and doc["kind"] == "ConfigMap" and doc["data"].get("provider") == "aws"
    }
    checked = 0
    for path, doc in documents(DIST):
        ref = ((doc.get("spec") or {}).get("kubeConfig") or {}).get("configMapRef")
        if ref is None:
            continue
        assert (doc["metadata"]["namespace"], ref["name"]) in written, f"{path}: {doc['metadata']['name']}"
        checked += 1
    assert written and checked >= len(written)


def _secret_references() -> Iterator[tuple[Path, dict[str, Any], str, dict[str, Any]]]:
    """Every reference to a kubeconfig Secret in dist/: Flux kubeConfig.secretRef, provider credentials."""
    for path, doc in documents(DIST):
        spec = doc.get("spec") or {}
        ref = (spec.get("kubeConfig") or {}).get("secretRef")
        if ref is not None:
            yield path, doc, doc["metadata"].get("namespace", ""), ref
        credentials = spec.get("credentials") or {}
        if doc["apiVersion"].startswith("kubernetes.m.crossplane.io/") and credentials.get("source") == "Secret":
            ref = credentials["secretRef"]
            yield path, doc, doc["metadata"].get("namespace", ""), ref


def test_every_kubeconfig_reference_names_the_secret_the_composition_writes() -> None:
    written = {
        (doc["metadata"]["namespace"], doc["spec"]["kubeconfigSecretName"]): name for name, doc in composites().items()
    }
    checked = 0
    for path, doc, namespace, ref in _secret_references():
        where = f"{path.relative_to(DIST)}: {doc['kind']} {doc['metadata']['name']}"
        # THEN the Secret lives in the referring object's own namespace, written by that namespace's XR
        assert ref.get("namespace", namespace) == namespace, where
        assert (namespace, ref["name"]) in written, where
        cluster = written[(namespace, ref["name"])]
        assert kubeconfig_secret(cluster).name == ref["name"], where
        assert ref.get("key", "value") == "value", where
        checked += 1
    assert checked >= len(written)


def test_the_composition_publishes_cluster_auth_kubeconfig_under_value() -> None:
    for _, doc in documents(CONFIGS / "eks-compositions"):
        if doc["kind"] != "Composition":
            continue
        resources_input = doc["spec"]["pipeline"][0]["input"]
        assert resources_input["writeConnectionSecretToRef"]["patches"] == [
            {"type": "FromCompositeFieldPath", "fromFieldPath": "spec.kubeconfigSecretName", "toFieldPath": "name"}
        ]
        (auth,) = [r for r in resources_input["resources"] if r["base"]["kind"] == "ClusterAuth"]
        assert auth["connectionDetails"] == [
            {"name": "value", "type": "FromConnectionSecretKey", "fromConnectionSecretKey": "kubeconfig"}
        ]


def _crd_of(xrd_doc: dict[str, Any]) -> dict[str, Any]:
    """The CRD Crossplane derives from a v2 XRD: its schema plus the ``spec.crossplane`` machinery."""
    spec = xrd_doc["spec"]
    versions = []
    for version in spec["versions"]:
        schema = yaml.safe_load(yaml.safe_dump(version["schema"]["openAPIV3Schema"]))
        schema["properties"]["spec"]["properties"]["crossplane"] = {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
        }
        schema["properties"]["metadata"] = {"type": "object"}
        schema["properties"]["apiVersion"] = {"type": "string"}
        schema["properties"]["kind"] = {"type": "string"}
        versions.append(
            {"name": version["name"], "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
        )
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": xrd_doc["metadata"]["name"]},
        "spec": {"group": spec["group"], "names": spec["names"], "scope": spec["scope"], "versions": versions},
    }


@pytest.mark.slow
@pytest.mark.skipif(not CRDS.is_dir(), reason="../shared/crds is missing: upstream CRD schemas not checked")
def test_every_document_validates_with_the_xrd_as_a_crd(tmp_path: Path) -> None:
    # GIVEN the upstream CRDs plus the CRD Crossplane makes of fluxplane's XRD
    crds = tmp_path / "crds"
    shutil.copytree(CRDS, crds, copy_function=os.symlink)
    (crds / GROUP).mkdir()
    definitions = [doc for _, doc in documents(CONFIGS) if doc["kind"] == "CompositeResourceDefinition"]
    assert {doc["spec"]["names"]["kind"] for doc in definitions} >= {KIND, "AppIdentity", "AppTable"}
    for definition in definitions:
        plural = definition["spec"]["names"]["plural"]
        (crds / GROUP / f"{plural}.yaml").write_text(yaml.safe_dump(_crd_of(definition)))
    # WHEN dist/ is validated THEN every document, the composite resources included, is valid; EKS Auto Mode's
    # NodeClass alone has no published CRD (tests/unit/packs/test_auto_mode.py holds it to the fields EKS documents)
    result = subprocess.run(
        [sys.executable, str(VALIDATE_MANIFESTS), "--crds", str(crds), str(DIST)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 invalid," in result.stdout, result.stdout
    assert skipped_kinds(result.stdout) == {"eks.amazonaws.com/v1"}, result.stdout


def eks_plural() -> str:
    return str(xrd()["spec"]["names"]["plural"])


@pytest.mark.slow
@pytest.mark.skipif(not CRDS.is_dir(), reason="../shared/crds is missing: upstream CRD schemas not checked")
def test_every_composed_template_sets_only_fields_of_its_crd(tmp_path: Path) -> None:
    # GIVEN every resource template of every Composition in dist/, named so that it is an object
    templates = []
    for _, doc in documents(CONFIGS):
        if doc["kind"] != "Composition":
            continue
        for resource in doc["spec"]["pipeline"][0]["input"]["resources"]:
            base = yaml.safe_load(yaml.safe_dump(resource["base"]))
            base.setdefault("metadata", {}).update(name=resource["name"], namespace="template")
            templates.append(base)
    assert {t["kind"] for t in templates} >= {
        *("VPC", "Subnet", "NATGateway", "Cluster", "NodeGroup", "ClusterAuth", "Addon"),
        *("Role", "PodIdentityAssociation", "Table", "Queue", "RolePolicy"),
    }
    (tmp_path / "templates.yaml").write_text(yaml.safe_dump_all(templates))
    # WHEN validated as partial objects THEN every field they set exists in the provider's CRD
    result = subprocess.run(
        [sys.executable, str(VALIDATE_MANIFESTS), "--partial", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(templates)} documents, {len(templates)} valid, 0 invalid, 0 skipped" in result.stdout
