"""What an EKS Auto Mode cluster applies itself (fluxplane.packs.auto_mode), and its fit to the EKS composition.

No CRD of Auto Mode's NodeClass is published, so the NodeClasses are checked against a small typed model of the
fields EKS documents for ``eks.amazonaws.com/v1`` NodeClass (the user guide's "Node Class Specification"); the
NodePools are validated against Karpenter's CRD (``../shared/crds``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from fluxplane.config.models import WorkloadCluster
from fluxplane.kinds import eks_api as eks
from fluxplane.packs import auto_mode
from tests.conftest import CRDS, VALIDATE_MANIFESTS
from tests.support.compositions import composite, example_fleet, observed, render, workload_cluster

#: A cluster that sets every field the definition has for its NodeClasses and NodePools.
CONFIGURED = workload_cluster(
    name="auto-euc1",
    autoMode={
        "enabled": True,
        "nodePools": ["general-purpose"],
        "nodeClasses": [
            {
                "name": "large-disk",
                "ephemeralStorage": {"size": "200Gi", "iops": 6000, "throughput": 250, "kmsKeyID": "alias/nodes"},
                "networkPolicy": "DefaultDeny",
                "networkPolicyEventLogs": "Enabled",
                "snatPolicy": "Disabled",
            },
            {"name": "plain"},
        ],
        "customNodePools": [
            {
                "name": "batch",
                "nodeClass": "large-disk",
                "instanceCategories": ["c", "m"],
                "instanceFamilies": ["c7g", "m7g"],
                "capacityTypes": ["spot", "on-demand"],
                "architectures": ["arm64"],
                "cpuLimit": 64,
                "labels": {"workload": "batch"},
                "taints": [{"key": "workload", "value": "batch", "effect": "NoSchedule"}],
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": "5m",
                "expireAfter": "168h",
            },
            {"name": "general"},
        ],
    },
)

needs_crds = pytest.mark.skipif(not CRDS.is_dir(), reason=f"{CRDS} is missing: NodePools cannot be checked")


# -- NodeClass, as EKS documents it ----------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _SelectorTerm(_Strict):
    tags: dict[str, str] | None = None
    id: str | None = None
    name: str | None = None


class _EphemeralStorage(_Strict):
    size: Annotated[str, StringConstraints(pattern=r"^[0-9]+(Gi|G|Ti|T)$")]
    iops: int | None = Field(None, ge=3000, le=16000)
    throughput: int | None = Field(None, ge=125, le=1000)
    kmsKeyID: str | None = None


class _AdvancedNetworking(_Strict):
    httpsProxy: str | None = None
    noProxy: list[str] | None = None


class _CertificateBundle(_Strict):
    name: str
    data: str


class _NodeClassSpec(_Strict):
    """``spec`` of an ``eks.amazonaws.com/v1`` NodeClass: the fields EKS documents, role and selectors required."""

    role: str
    subnetSelectorTerms: Annotated[list[_SelectorTerm], Field(min_length=1)]
    securityGroupSelectorTerms: Annotated[list[_SelectorTerm], Field(min_length=1)]
    snatPolicy: Literal["Random", "Disabled"] | None = None
    networkPolicy: Literal["DefaultAllow", "DefaultDeny"] | None = None
    networkPolicyEventLogs: Literal["Disabled", "Enabled"] | None = None
    ephemeralStorage: _EphemeralStorage | None = None
    advancedNetworking: _AdvancedNetworking | None = None
    certificateBundles: list[_CertificateBundle] | None = None
    tags: dict[str, str] | None = None


class _NodeClass(_Strict):
    apiVersion: Literal["eks.amazonaws.com/v1"]
    kind: Literal["NodeClass"]
    metadata: dict[str, Any]
    spec: _NodeClassSpec


def _documents(cluster: WorkloadCluster) -> list[dict[str, Any]]:
    return [document for documents in auto_mode.cluster_files(cluster).values() for document in documents]


def _auto_mode_clusters() -> list[WorkloadCluster]:
    return [cluster for cluster in (*example_fleet().clusters, CONFIGURED) if cluster.auto]


def test_the_example_has_an_auto_mode_cluster_with_a_node_class_and_a_node_pool() -> None:
    (example,) = [cluster for cluster in example_fleet().clusters if cluster.auto]
    kinds = [document["kind"] for document in _documents(example)]
    assert kinds == ["NodeClass", "NodePool", "StorageClass", "IngressClass"]


def test_every_node_class_has_only_the_fields_eks_documents() -> None:
    # GIVEN the NodeClasses of the example's Auto Mode cluster and of one that sets every field
    node_classes = [
        doc for cluster in _auto_mode_clusters() for doc in _documents(cluster) if doc["kind"] == "NodeClass"
    ]
    assert len(node_classes) == 3
    # WHEN read as the NodeClass EKS documents THEN each is one, with nothing EKS does not know
    for document in node_classes:
        _NodeClass.model_validate(document)


def test_a_node_class_carries_what_the_definition_sets() -> None:
    large_disk, plain = (doc for doc in _documents(CONFIGURED) if doc["kind"] == "NodeClass")
    assert large_disk == {
        "apiVersion": "eks.amazonaws.com/v1",
        "kind": "NodeClass",
        "metadata": {"name": "large-disk"},
        "spec": {
            "role": "auto-euc1-node",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "auto-euc1"}}],
            "securityGroupSelectorTerms": [{"tags": {"aws:eks:cluster-name": "auto-euc1"}}],
            "ephemeralStorage": {"size": "200Gi", "iops": 6000, "throughput": 250, "kmsKeyID": "alias/nodes"},
            "networkPolicy": "DefaultDeny",
            "networkPolicyEventLogs": "Enabled",
            "snatPolicy": "Disabled",
        },
    }
    assert set(plain["spec"]) == {"role", "subnetSelectorTerms", "securityGroupSelectorTerms"}


def test_a_node_class_launches_nodes_as_the_composed_node_role_in_the_private_subnets() -> None:
    # GIVEN an Auto Mode cluster rendered through its Composition
    cluster = CONFIGURED
    objects = render(observed(composite(cluster, example_fleet())), eks.composition_props(eks.shape_of(cluster)).dump())
    spec = next(doc for doc in _documents(cluster) if doc["kind"] == "NodeClass")["spec"]
    # THEN its role is the node role the composition names, the one EKS admits with the built-in node pools
    assert spec["role"] == objects["role-node"]["metadata"]["annotations"]["crossplane.io/external-name"]
    # AND its subnet selector picks exactly the private subnets
    (term,) = spec["subnetSelectorTerms"]
    picked = sorted(
        name
        for name, obj in objects.items()
        if obj["kind"] == "Subnet" and term["tags"].items() <= obj["spec"]["forProvider"]["tags"].items()
    )
    assert picked == [f"subnet-private-{index}" for index in range(cluster.network.availability_zones)]


def test_a_node_pool_names_its_node_class_by_auto_modes_group_and_labels() -> None:
    batch, general = (doc for doc in _documents(CONFIGURED) if doc["kind"] == "NodePool")
    assert batch == {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "batch"},
        "spec": {
            "template": {
                "metadata": {"labels": {"workload": "batch"}},
                "spec": {
                    "nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "large-disk"},
                    "requirements": [
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                        {"key": "eks.amazonaws.com/instance-category", "operator": "In", "values": ["c", "m"]},
                        {"key": "eks.amazonaws.com/instance-family", "operator": "In", "values": ["c7g", "m7g"]},
                    ],
                    "taints": [{"key": "workload", "value": "batch", "effect": "NoSchedule"}],
                    "expireAfter": "168h",
                },
            },
            "limits": {"cpu": 64},
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
        },
    }
    # AND a pool that names no NodeClass takes EKS's own
    assert general["spec"]["template"]["spec"]["nodeClassRef"]["name"] == "default"


@pytest.mark.slow
@needs_crds
def test_node_pools_are_valid_against_karpenters_crd(tmp_path: Path) -> None:
    documents = [doc for cluster in _auto_mode_clusters() for doc in _documents(cluster) if doc["kind"] == "NodePool"]
    assert len(documents) == 3
    (tmp_path / "node-pools.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    result = subprocess.run(
        [sys.executable, str(VALIDATE_MANIFESTS), str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 documents, 3 valid, 0 invalid, 0 skipped" in result.stdout, result.stdout


def test_the_storage_and_ingress_classes_are_auto_modes() -> None:
    # GIVEN an Auto Mode cluster's files
    files = auto_mode.cluster_files(CONFIGURED)
    (storage_class,) = files["storage-class.yaml"]
    (ingress_class,) = files["ingress-class.yaml"]
    # THEN volumes come from Auto Mode's block storage, gp3, encrypted, the cluster's default class
    assert storage_class["provisioner"] == "ebs.csi.eks.amazonaws.com"
    assert storage_class["metadata"] == {
        "name": "gp3",
        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
    }
    assert storage_class["parameters"] == {"type": "gp3", "encrypted": "true"}
    # AND Ingresses of class alb are Auto Mode's ALBs
    assert ingress_class == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": {"name": "alb"},
        "spec": {"controller": "eks.amazonaws.com/alb"},
    }
    # AND nothing names the drivers Auto Mode stands in for
    text = yaml.safe_dump_all([doc for documents in files.values() for doc in documents])
    assert not re.search(r"ebs\.csi\.aws\.com|ingress\.k8s\.aws", text)


def test_a_cluster_without_auto_mode_applies_nothing_of_it() -> None:
    assert auto_mode.cluster_files(workload_cluster(name="plain")) == {}
    assert auto_mode.cluster_files(workload_cluster(name="left", autoMode={"enabled": False})) == {}
