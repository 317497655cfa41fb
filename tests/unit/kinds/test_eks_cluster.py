"""EKSCluster (platform.fluxplane.io/v1alpha1): the composite resource of one workload cluster."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from fluxplane.constructs import Manifest, Root
from fluxplane.errors import ConstructError
from fluxplane.kinds.eks_cluster import EKSCluster

NODE_GROUP: dict[str, Any] = {
    "name": "system",
    "instanceTypes": ["m7i.large"],
    "minSize": 1,
    "maxSize": 3,
    "desiredSize": 2,
    "diskSize": 50,
}
PROPS: dict[str, Any] = {
    "name": "a",
    "namespace": "a",
    "crossplane": {"compositionRef": {"name": "eks-2-zones-1-node-group"}},
    "region": "us-west-2",
    "kubernetesVersion": "1.33",
    "network": {
        "vpcCidr": "10.1.0.0/16",
        "zones": [
            {"name": "us-west-2a", "publicSubnetCidr": "10.1.192.0/22", "privateSubnetCidr": "10.1.0.0/19"},
            {"name": "us-west-2b", "publicSubnetCidr": "10.1.196.0/22", "privateSubnetCidr": "10.1.32.0/19"},
        ],
    },
    "endpoint": {},
    "nodeGroups": [NODE_GROUP],
    "sealingKeySecret": "fluxplane/sealing-key",
    "kubeconfigSecretName": "a-kubeconfig",
    "bootstrapConfigMapName": "a-bootstrap",
}


def _cluster(change: Callable[[dict[str, Any]], object] | None = None) -> EKSCluster:
    props = copy.deepcopy(PROPS)
    if change is not None:
        change(props)
    return EKSCluster(Manifest(Root(), "m", path="x.yaml"), "a", props)


def _set(path: tuple[str | int, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(props: dict[str, Any]) -> None:
        target: Any = props
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def test_a_small_composite_resource_with_defaults_filled_in() -> None:
    # GIVEN / WHEN an EKSCluster with only what it needs
    cluster = _cluster()

    # THEN it renders namespaced, defaults written out so reviewers see them, no hubAccess
    assert cluster.to_dict() == {
        "apiVersion": "platform.fluxplane.io/v1alpha1",
        "kind": "EKSCluster",
        "metadata": {"name": "a", "namespace": "a"},
        "spec": {
            "crossplane": {"compositionRef": {"name": "eks-2-zones-1-node-group"}},
            "region": "us-west-2",
            "kubernetesVersion": "1.33",
            "network": {
                "vpcCidr": "10.1.0.0/16",
                "natGateways": "OnePerZone",
                "zones": [
                    {"name": "us-west-2a", "publicSubnetCidr": "10.1.192.0/22", "privateSubnetCidr": "10.1.0.0/19"},
                    {"name": "us-west-2b", "publicSubnetCidr": "10.1.196.0/22", "privateSubnetCidr": "10.1.32.0/19"},
                ],
            },
            "endpoint": {"privateAccess": True, "publicAccess": True, "publicAccessCidrs": []},
            "logging": [],
            "nodeGroups": [
                {
                    "name": "system",
                    "instanceTypes": ["m7i.large"],
                    "capacityType": "ON_DEMAND",
                    "minSize": 1,
                    "maxSize": 3,
                    "desiredSize": 2,
                    "diskSize": 50,
                    "labels": {},
                    "taints": [],
                }
            ],
            "tags": {},
            "sealingKeySecret": "fluxplane/sealing-key",
            "kubeconfigSecretName": "a-kubeconfig",
            "bootstrapConfigMapName": "a-bootstrap",
        },
    }


def test_keyless_hub_access_and_taints_are_written() -> None:
    # GIVEN keyless hub access and a tainted node group
    role = "arn:aws:iam::111122223333:role/hub-flux"
    taint = {"key": "dedicated", "value": "gpu", "effect": "NO_SCHEDULE"}

    def change(props: dict[str, Any]) -> None:
        props["hubAccess"] = {"principalArn": role, "configMapName": "a-hub-access"}
        props["nodeGroups"][0]["taints"] = [taint]

    # WHEN rendered THEN both appear under their upstream names
    spec = _cluster(change).to_dict()["spec"]
    assert spec["hubAccess"] == {"principalArn": role, "configMapName": "a-hub-access"}
    assert spec["nodeGroups"][0]["taints"] == [taint]


def test_a_subnet_outside_the_vpc_is_refused() -> None:
    def change(props: dict[str, Any]) -> None:
        props["network"]["zones"][1]["privateSubnetCidr"] = "10.2.0.0/19"

    with pytest.raises(
        ConstructError,
        match=r"^root/m/a: EKSClusterProps\.network: subnet 10\.2\.0\.0/19 of zone us-west-2b lies outside the VPC "
        r"10\.1\.0\.0/16$",
    ):
        _cluster(change)


def test_fewer_than_two_zones_are_refused() -> None:
    def change(props: dict[str, Any]) -> None:
        del props["network"]["zones"][1]

    with pytest.raises(
        ConstructError,
        match=r"^root/m/a: EKSClusterProps\.network\.zones: tuple should have at least 2 items after validation, "
        r"not 1$",
    ):
        _cluster(change)


def test_more_than_six_zones_are_refused() -> None:
    def change(props: dict[str, Any]) -> None:
        props["network"]["zones"] = [
            {"name": f"us-west-2{letter}", "publicSubnetCidr": "10.1.192.0/22", "privateSubnetCidr": "10.1.0.0/19"}
            for letter in "abcdefg"
        ]

    with pytest.raises(
        ConstructError,
        match=r"^root/m/a: EKSClusterProps\.network\.zones: tuple should have at most 6 items after validation, "
        r"not 7$",
    ):
        _cluster(change)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("region",), "us-west", r"region: string should match pattern"),
        (("kubernetesVersion",), "1.3", r"kubernetesVersion: string should match pattern"),
        (("sealingKeySecret",), "sealing key", r"sealingKeySecret: string should match pattern"),
        (("hubAccess",), {"principalArn": "arn:aws:iam::1:role/x", "configMapName": "a"}, r"hubAccess\.principalArn"),
        (("network", "natGateways"), "None", r"network\.natGateways: input should be 'OnePerZone' or 'Single'"),
        (("logging",), ["api", "kube"], r"logging\.1: input should be 'api', 'audit'"),
    ],
)
def test_malformed_fields_are_refused(path: tuple[str, ...], value: Any, message: str) -> None:
    with pytest.raises(ConstructError, match=rf"^root/m/a: EKSClusterProps\.{message}"):
        _cluster(_set(path, value))


def test_taints_use_the_eks_spelling_of_effects() -> None:
    # GIVEN a taint with Kubernetes' spelling of its effect WHEN made THEN EKS's spelling is asked for
    def change(props: dict[str, Any]) -> None:
        props["nodeGroups"][0]["taints"] = [{"key": "a", "effect": "NoSchedule"}]

    with pytest.raises(
        ConstructError,
        match=r"^root/m/a: EKSClusterProps\.nodeGroups\.0\.taints\.0\.effect: input should be 'NO_SCHEDULE', "
        r"'NO_EXECUTE' or 'PREFER_NO_SCHEDULE'",
    ):
        _cluster(change)


def test_one_bad_node_group_field_is_one_problem() -> None:
    def change(props: dict[str, Any]) -> None:
        props["nodeGroups"][0]["diskSize"] = 10

    with pytest.raises(
        ConstructError,
        match=r"^root/m/a: EKSClusterProps\.nodeGroups\.0\.diskSize: input should be greater than or equal to 20$",
    ):
        _cluster(change)


@pytest.mark.parametrize(
    "change",
    [
        _set(("nodeGroups", 0, "maxSize"), 1001),
        _set(("nodeGroups", 0, "diskSize"), 16385),
        _set(("nodeGroups", 0, "minSize"), 4),
        _set(("endpoint",), {"privateAccess": False, "publicAccess": False}),
    ],
    ids=["maxSize-over-1000", "diskSize-over-16384", "minSize-over-maxSize", "no-endpoint-access"],
)
def test_what_the_xrd_refuses_the_props_refuse(change: Callable[[dict[str, Any]], None]) -> None:
    with pytest.raises(ConstructError, match=r"^root/m/a: EKSClusterProps\."):
        _cluster(change)


EXISTING = {
    "vpcId": "vpc-0e1f2a3b4c5d60718",
    "subnetIds": ["subnet-0a1b2c3d4e5f60718", "subnet-0b2c3d4e5f6071829"],
    "externalSecretsRoleArn": "arn:aws:iam::444455556666:role/a-external-secrets",
}


def test_an_existing_clusters_composite_spells_out_its_ids_and_plans_nothing() -> None:
    # GIVEN an existing cluster's props: its range, its AWS ids, no zones, endpoint or logging
    def change(props: dict[str, Any]) -> None:
        props["crossplane"]["compositionRef"]["name"] = "eks-observed-2-subnets-1-node-group"
        props["network"] = {"vpcCidr": "10.1.0.0/16"}
        props.pop("endpoint")
        props["existing"] = EXISTING

    spec = _cluster(change).to_dict()["spec"]
    # THEN the ids are written, and no default of a cluster the hub creates is made up for it
    assert spec["existing"] == EXISTING
    assert spec["network"] == {"vpcCidr": "10.1.0.0/16"}
    assert not {"endpoint", "logging"} & spec.keys()


def test_a_cluster_the_hub_creates_needs_its_zones() -> None:
    # GIVEN props without zones and without existing ids WHEN made THEN the XRD's rule refuses them
    def change(props: dict[str, Any]) -> None:
        props["network"].pop("zones")

    with pytest.raises(
        ConstructError,
        match=r"^root/m/a: EKSClusterProps\.\(props\): network\.zones is required for a cluster the hub creates",
    ):
        _cluster(change)
    # AND ids of an existing cluster are refused when malformed
    with pytest.raises(ConstructError, match=r"^root/m/a: EKSClusterProps\.existing\.vpcId: string should match"):
        _cluster(_set(("existing",), {**EXISTING, "vpcId": "vpc-1"}))


def test_a_cluster_has_node_groups_or_auto_mode() -> None:
    # GIVEN no node group and no Auto Mode, or both WHEN made THEN the XRD's rule refuses it
    with pytest.raises(ConstructError, match=r"got 0 node groups without Auto Mode$"):
        _cluster(_set(("nodeGroups",), []))
    with pytest.raises(ConstructError, match=r"got 1 node groups with Auto Mode$"):
        _cluster(_set(("autoMode",), {"enabled": True, "nodePools": ["general-purpose"]}))

    # AND a cluster in Auto Mode without node groups, or one switched off with its node groups, is made
    def auto(props: dict[str, Any]) -> None:
        props.update(nodeGroups=[], autoMode={"enabled": True, "nodePools": ["general-purpose", "system"]})

    assert _cluster(auto).to_dict()["spec"]["autoMode"] == {"enabled": True, "nodePools": ["general-purpose", "system"]}
    assert _cluster(_set(("autoMode",), {"enabled": False})).to_dict()["spec"]["autoMode"] == {"enabled": False}
