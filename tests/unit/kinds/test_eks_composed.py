"""The resources an EKSCluster's Composition composes (fluxplane.kinds.eks_composed), and what they render to.

The shapes, the example fleet and the patch-and-transform renderer are tests.support.compositions'. The
rendered managed resources and the templates are validated against the provider CRDs (``../shared/crds``).
"""

from __future__ import annotations

import copy
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.config.models import DEFAULT_KUBERNETES_VERSION, WorkloadCluster
from fluxplane.kinds import eks_api as eks
from fluxplane.kinds.eks_composed import Shape, composed_resources
from fluxplane.validate.cel import CelRules
from fluxplane.validate.schemas import CrdCorpus
from fluxplane.validate.tree import Document
from tests.conftest import CRDS, VALIDATE_MANIFESTS
from tests.support.compositions import (
    AUTO_MODE,
    KEYLESS,
    LABEL,
    OBSERVED_STATUS,
    SHAPES,
    SINGLE_NAT,
    THREE_ZONES,
    TWO_GROUPS,
    TWO_ZONES,
    by_name,
    composite,
    example_fleet,
    observed,
    render,
    workload_cluster,
)

EC2 = "ec2.aws.m.upbound.io/v1beta1"
IAM = "iam.aws.m.upbound.io/v1beta1"
EKS = "eks.aws.m.upbound.io/v1beta1"

#: The kind a selector field selects (within the same composite resource).
SELECTED_KIND = {
    "vpcIdSelector": "VPC",
    "subnetIdSelector": "Subnet",
    "allocationIdSelector": "EIP",
    "gatewayIdSelector": "InternetGateway",
    "natGatewayIdSelector": "NATGateway",
    "routeTableIdSelector": "RouteTable",
    "roleSelector": "Role",
    "roleArnSelector": "Role",
    "nodeRoleArnSelector": "Role",
    "clusterNameSelector": "Cluster",
}

needs_crds = pytest.mark.skipif(
    not CRDS.is_dir(), reason=f"{CRDS} is missing: rendered resources cannot be checked against provider CRDs"
)


# -- shapes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "name", "labels"),
    [
        (
            Shape(3, 1, "OnePerZone"),
            "eks-3-zones-1-node-group",
            {"availability-zones": "3", "hub-access": "kubeconfig", "nat-gateways": "OnePerZone", "node-groups": "1"},
        ),
        (
            Shape(2, 2, "Single"),
            "eks-2-zones-2-node-groups-single-nat",
            {"availability-zones": "2", "hub-access": "kubeconfig", "nat-gateways": "Single", "node-groups": "2"},
        ),
        (
            Shape(3, 1, "OnePerZone", keyless=True),
            "eks-3-zones-1-node-group-keyless",
            {"availability-zones": "3", "hub-access": "keyless", "nat-gateways": "OnePerZone", "node-groups": "1"},
        ),
        (
            Shape(2, 0, "Single", keyless=True, auto_mode=True),
            "eks-2-zones-auto-mode-single-nat-keyless",
            {"availability-zones": "2", "compute": "auto-mode", "hub-access": "keyless", "nat-gateways": "Single"},
        ),
    ],
)
def test_a_shape_names_and_labels_its_composition(shape: Shape, name: str, labels: dict[str, str]) -> None:
    # GIVEN a shape WHEN named and labelled THEN both say zones, node groups, NAT mode (and hub access)
    assert shape.name == name
    assert shape.labels == {f"{LABEL}/{key}": value for key, value in labels.items()}


# -- composed resources ----------------------------------------------------------------------------

THREE_ZONE_KINDS = {
    (EC2, "VPC"): 1,
    (EC2, "InternetGateway"): 1,
    (EC2, "Subnet"): 6,
    (EC2, "EIP"): 3,
    (EC2, "NATGateway"): 3,
    (EC2, "RouteTable"): 4,
    (EC2, "Route"): 4,
    (EC2, "RouteTableAssociation"): 6,
    (IAM, "Role"): 3,
    (IAM, "RolePolicyAttachment"): 4,
    (IAM, "RolePolicy"): 1,
    (IAM, "OpenIDConnectProvider"): 1,
    (EKS, "Cluster"): 1,
    (EKS, "NodeGroup"): 1,
    (EKS, "ClusterAuth"): 1,
    (EKS, "Addon"): 1,
    ("v1", "ConfigMap"): 1,
}


@pytest.mark.parametrize(
    ("shape", "changes"),
    [
        (THREE_ZONES, {}),
        (
            TWO_ZONES,
            {
                (EC2, "Subnet"): 4,
                (EC2, "EIP"): 2,
                (EC2, "NATGateway"): 2,
                (EC2, "RouteTable"): 3,
                (EC2, "Route"): 3,
                (EC2, "RouteTableAssociation"): 4,
            },
        ),
        (SINGLE_NAT, {(EC2, "EIP"): 1, (EC2, "NATGateway"): 1}),
        (TWO_GROUPS, {(EKS, "NodeGroup"): 2}),
        (KEYLESS, {(EKS, "AccessEntry"): 1, (EKS, "AccessPolicyAssociation"): 1, ("v1", "ConfigMap"): 2}),
        # Auto Mode: no node group and no Pod Identity Agent add-on; the cluster role's 4 policies more, the node
        # role's 2 instead of 3
        (AUTO_MODE, {(EKS, "NodeGroup"): 0, (EKS, "Addon"): 0, (IAM, "RolePolicyAttachment"): 7}),
    ],
    ids=lambda value: value.name if isinstance(value, Shape) else "",
)
def test_composed_kinds_of_a_shape(shape: Shape, changes: dict[tuple[str, str], int]) -> None:
    # GIVEN a shape WHEN its resources are composed
    kinds = Counter((r["base"]["apiVersion"], r["base"]["kind"]) for r in composed_resources(shape))

    # THEN exactly these kinds come out, this many of each
    assert dict(kinds) == {kind: count for kind, count in {**THREE_ZONE_KINDS, **changes}.items() if count}


def test_a_shape_has_node_groups_or_auto_mode() -> None:
    with pytest.raises(ValueError, match="a shape has node groups or EKS Auto Mode, one of the two: got 0 node groups"):
        Shape(3, 0)
    with pytest.raises(ValueError, match="got 1 node groups with Auto Mode"):
        Shape(3, 1, auto_mode=True)


def test_a_cluster_switched_into_auto_mode_keeps_its_network_and_roles() -> None:
    # GIVEN a cluster's shape with one node group and the same shape in Auto Mode
    before, after = by_name(THREE_ZONES), by_name(AUTO_MODE)
    # THEN what the switch deletes is the node group, the Pod Identity Agent add-on and the node role's policies
    # that Auto Mode's smaller set replaces; what it makes are the cluster role's Auto Mode policies and the node
    # role's new ones; everything else keeps its name and template but the cluster and the node role
    assert sorted(set(before) - set(after)) == [
        "node-group-0",
        "pod-identity-agent",
        "role-node-ec2containerregistryreadonly",
        "role-node-eks-cni-policy",
        "role-node-eksworkernodepolicy",
    ]
    assert sorted(set(after) - set(before)) == [
        "role-cluster-eksblockstoragepolicy",
        "role-cluster-ekscomputepolicy",
        "role-cluster-eksloadbalancingpolicy",
        "role-cluster-eksnetworkingpolicy",
        "role-node-ec2containerregistrypullonly",
        "role-node-eksworkernodeminimalpolicy",
    ]
    changed = sorted(name for name in set(before) & set(after) if before[name] != after[name])
    assert changed == ["cluster", "role-node"]


def test_a_single_nat_gateway_serves_every_private_route() -> None:
    # GIVEN the 3-zone single-NAT shape WHEN composed
    resources = by_name(SINGLE_NAT)

    # THEN every private route goes through the NAT gateway of zone 0, the only one
    routes = [r for r in resources.values() if r["base"]["kind"] == "Route" and r["name"] != "route-public-internet"]
    assert [r["name"] for r in routes] == ["route-private-0-nat", "route-private-1-nat", "route-private-2-nat"]
    for route in routes:
        assert route["base"]["spec"]["forProvider"]["natGatewayIdSelector"] == {
            "matchControllerRef": True,
            "matchLabels": {f"{LABEL}/zone": "0"},
        }
    assert [name for name in resources if name.startswith(("eip-", "nat-gateway-"))] == ["eip-0", "nat-gateway-0"]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: shape.name)
def test_resource_names_are_unique(shape: Shape) -> None:
    names = [resource["name"] for resource in composed_resources(shape)]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    ("smaller", "larger"),
    [
        (TWO_ZONES, THREE_ZONES),
        (THREE_ZONES, TWO_GROUPS),
        (THREE_ZONES, KEYLESS),
        (Shape(3, 1, "Single"), Shape(5, 1, "Single")),
        (Shape(2, 1), Shape(6, 3, keyless=True)),
    ],
    ids=lambda shape: shape.name,
)
def test_a_shape_that_grows_keeps_every_resource_it_had(smaller: Shape, larger: Shape) -> None:
    # GIVEN a shape and a larger one (more zones, node groups, keyless access)
    before, after = by_name(smaller), by_name(larger)

    # WHEN a cluster changes from one to the other THEN each of its resources keeps its name and template
    assert set(before) < set(after)
    for name, resource in before.items():
        assert after[name] == resource, name


def _selectors(value: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(field, selector) of every ``...Selector`` field in ``value``, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key.endswith("Selector"):
                yield key, item
            else:
                yield from _selectors(item)
    elif isinstance(value, list):
        for item in value:
            yield from _selectors(item)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: shape.name)
def test_every_selector_picks_its_own_resources_unambiguously(shape: Shape) -> None:
    # GIVEN the composed resources of a shape
    resources = composed_resources(shape)
    checked = 0
    for resource in resources:
        for field, selector in _selectors(resource["base"]):
            where = f"{resource['name']}: {field}"
            # THEN every selector stays within the composite resource
            assert selector["matchControllerRef"] is True, where
            assert set(selector) <= {"matchControllerRef", "matchLabels"}, where
            # AND its labels are carried by exactly the resources it means, of the kind it selects
            labels = selector.get("matchLabels", {})
            matches = [
                other["name"]
                for other in resources
                if other["base"]["kind"] == SELECTED_KIND[field]
                and labels.items() <= other["base"].get("metadata", {}).get("labels", {}).items()
            ]
            expected = shape.zones if labels == {f"{LABEL}/tier": "private"} else 1
            assert len(matches) == expected, (where, matches)
            checked += 1
    assert checked > 0


def _labels(selector: dict[str, Any]) -> dict[str, str]:
    return {key.removeprefix(f"{LABEL}/"): value for key, value in selector.get("matchLabels", {}).items()}


@pytest.mark.parametrize("shape", [THREE_ZONES, TWO_ZONES, SINGLE_NAT], ids=lambda shape: shape.name)
def test_public_subnets_route_to_the_internet_and_private_ones_through_nat(shape: Shape) -> None:
    # GIVEN the network of a shape
    resources = by_name(shape)
    nat_zone = {index: str(index if shape.nat_gateways == "OnePerZone" else 0) for index in range(shape.zones)}

    # THEN NAT gateways sit in the public subnet of their zone, with the EIP of their zone
    for name, resource in resources.items():
        if resource["base"]["kind"] == "NATGateway":
            zone = resource["base"]["metadata"]["labels"][f"{LABEL}/zone"]
            for_provider = resource["base"]["spec"]["forProvider"]
            assert _labels(for_provider["subnetIdSelector"]) == {"tier": "public", "zone": zone}, name
            assert _labels(for_provider["allocationIdSelector"]) == {"zone": zone}, name
    # AND the public route table sends 0.0.0.0/0 to the internet gateway
    public_route = resources["route-public-internet"]["base"]["spec"]["forProvider"]
    assert public_route["destinationCidrBlock"] == "0.0.0.0/0"
    assert (_labels(public_route["gatewayIdSelector"]), _labels(public_route["routeTableIdSelector"])) == (
        {},
        {"route-table": "public"},
    )
    for index in range(shape.zones):
        # AND each zone's private route table sends 0.0.0.0/0 to its NAT gateway
        route = resources[f"route-private-{index}-nat"]["base"]["spec"]["forProvider"]
        assert route["destinationCidrBlock"] == "0.0.0.0/0"
        assert _labels(route["natGatewayIdSelector"]) == {"zone": nat_zone[index]}
        assert _labels(route["routeTableIdSelector"]) == {"route-table": f"private-{index}"}
        # AND each subnet is associated with the route table of its tier (and zone)
        for tier, table in (("public", "public"), ("private", f"private-{index}")):
            association = resources[f"route-table-association-{tier}-{index}"]["base"]["spec"]["forProvider"]
            assert _labels(association["subnetIdSelector"]) == {"tier": tier, "zone": str(index)}
            assert _labels(association["routeTableIdSelector"]) == {"route-table": table}
        # AND only public subnets give instances public addresses
        for tier in ("public", "private"):
            subnet = resources[f"subnet-{tier}-{index}"]["base"]["spec"]["forProvider"]
            assert subnet["mapPublicIpOnLaunch"] is (tier == "public")


def test_cluster_and_node_groups_run_in_the_private_subnet_of_every_zone() -> None:
    resources = by_name(TWO_GROUPS)
    private = {"matchControllerRef": True, "matchLabels": {f"{LABEL}/tier": "private"}}
    assert resources["cluster"]["base"]["spec"]["forProvider"]["vpcConfig"]["subnetIdSelector"] == private
    for group in ("node-group-0", "node-group-1"):
        assert resources[group]["base"]["spec"]["forProvider"]["subnetIdSelector"] == private


# -- what a composite renders to -----------------------------------------------------------------


SMALL_KEYLESS = workload_cluster(
    name="data-euc1",
    network={"cidr": "10.40.0.0/20", "availabilityZones": 2, "natGateways": "Single"},
    endpoint={"publicAccessCidrs": ["203.0.113.0/24"]},
    logging=["api", "scheduler"],
    hubAccess="keyless",
    tags={"team": "data", "cost-center": "42"},
    nodeGroups=[
        {"name": "system", "instanceTypes": ["m7i.large"]},
        {
            "name": "spot",
            "instanceTypes": ["c7g.xlarge", "c6g.xlarge"],
            "capacityType": "SPOT",
            "minSize": 0,
            "maxSize": 10,
            "desiredSize": 1,
            "diskSize": 100,
            "labels": {"workload": "batch"},
            "taints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
        },
    ],
)


def rendered_fleet() -> list[tuple[WorkloadCluster, dict[str, Any], dict[str, dict[str, Any]]]]:
    """(cluster, composite, rendered resources) of every example cluster the hub creates and of SMALL_KEYLESS."""
    fleet = example_fleet()
    return [
        (cluster, xr, render(observed(xr), eks.composition_props(eks.shape_of(cluster)).dump()))
        for cluster in (*fleet.clusters, SMALL_KEYLESS, AUTO_CLUSTER)
        if cluster.existing is None
        for xr in [composite(cluster, fleet)]
    ]


@pytest.mark.slow
@needs_crds
def test_rendered_managed_resources_are_complete_valid_objects(tmp_path: Path) -> None:
    # GIVEN every example cluster's composite resource rendered through its Composition
    documents = [obj for _, _, objects in rendered_fleet() for obj in objects.values()]
    (tmp_path / "rendered.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))

    # WHEN validated as whole objects against the provider CRDs
    result = subprocess.run(
        [sys.executable, str(VALIDATE_MANIFESTS), str(tmp_path)], capture_output=True, text=True, check=False
    )

    # THEN every one is valid: nothing the CRDs require is missing, nothing set is unknown
    assert result.returncode == 0, result.stdout + result.stderr
    count = len(documents)
    assert f"{count} documents, {count} valid, 0 invalid, 0 skipped" in result.stdout, result.stdout


def test_rendered_values_come_from_the_composite() -> None:
    for cluster, xr, objects in rendered_fleet():
        spec = xr["spec"]
        # THEN subnets get their zone and CIDR from the composite
        subnet = objects["subnet-private-0"]["spec"]["forProvider"]
        assert subnet["cidrBlock"] == spec["network"]["zones"][0]["privateSubnetCidr"]
        assert subnet["availabilityZone"] == spec["network"]["zones"][0]["name"]
        assert subnet["tags"] == {
            "kubernetes.io/role/internal-elb": "1",
            "Name": f"{cluster.name}-private-{spec['network']['zones'][0]['name']}",
            "karpenter.sh/discovery": cluster.name,
            **cluster.tags,
        }
        # AND only the private subnets, where nodes run, are Karpenter's to find
        for index in range(len(spec["network"]["zones"])):
            private = objects[f"subnet-private-{index}"]["spec"]["forProvider"]["tags"]
            public = objects[f"subnet-public-{index}"]["spec"]["forProvider"]["tags"]
            assert (private.get("karpenter.sh/discovery"), "karpenter.sh/discovery" in public) == (cluster.name, False)
        # AND the node role has the fixed name Karpenter's EC2NodeClass gives, the cluster role a generated one
        assert objects["role-node"]["metadata"]["annotations"] == {
            "crossplane.io/external-name": f"{cluster.name}-node"
        }
        assert "annotations" not in objects["role-cluster"]["metadata"]
        # AND the EKS cluster is called like the fleet's cluster
        eks_cluster = objects["cluster"]
        assert eks_cluster["metadata"]["annotations"] == {"crossplane.io/external-name": cluster.name}
        assert eks_cluster["spec"]["forProvider"]["version"] == cluster.kubernetes_version
        assert eks_cluster["spec"]["forProvider"]["region"] == cluster.region
        # AND the node group's size at creation is the definition's (an Auto Mode cluster has none)
        if cluster.auto:
            assert not [name for name in objects if name.startswith("node-group-")]
        else:
            group = objects["node-group-0"]["spec"]
            assert group["initProvider"] == {"scalingConfig": {"desiredSize": cluster.node_groups[0].desired_size}}
            assert group["forProvider"]["scalingConfig"] == {
                "minSize": cluster.node_groups[0].min_size,
                "maxSize": cluster.node_groups[0].max_size,
            }
        # AND the definition's tags reach the VPC while its Name tag stays
        vpc = objects["vpc"]["spec"]["forProvider"]
        assert cluster.tags
        assert vpc["tags"] == {"Name": cluster.name, **cluster.tags}
        assert vpc["cidrBlock"] == str(cluster.network.cidr)
        # AND ClusterAuth writes its connection secret next to the composite
        assert objects["cluster-auth"]["spec"]["writeConnectionSecretToRef"] == {"name": f"{cluster.name}-cluster-auth"}
        # AND the bootstrap ConfigMap carries External Secrets' role under the name the hub reads
        assert objects["bootstrap-values"]["metadata"]["name"] == f"{cluster.name}-bootstrap"
        assert objects["bootstrap-values"]["data"] == {
            "external-secrets-role-arn": OBSERVED_STATUS["externalSecretsRoleArn"]
        }


def test_a_second_node_group_and_keyless_access_render_from_the_composite() -> None:
    # GIVEN the 2-zone keyless cluster with a tainted Spot node group, rendered
    (objects,) = [objects for cluster, _, objects in rendered_fleet() if cluster is SMALL_KEYLESS]

    # THEN the second node group carries the second definition, taints in EKS's spelling
    group = objects["node-group-1"]
    assert group["metadata"]["annotations"] == {"crossplane.io/external-name": "spot"}
    assert group["spec"]["forProvider"] == {
        "capacityType": "SPOT",
        "clusterNameSelector": {"matchControllerRef": True},
        "diskSize": 100,
        "instanceTypes": ["c7g.xlarge", "c6g.xlarge"],
        "labels": {"workload": "batch"},
        "nodeRoleArnSelector": {"matchControllerRef": True, "matchLabels": {f"{LABEL}/role": "node"}},
        "region": "eu-central-1",
        "scalingConfig": {"minSize": 0, "maxSize": 10},
        "subnetIdSelector": {"matchControllerRef": True, "matchLabels": {f"{LABEL}/tier": "private"}},
        "tags": {"team": "data", "cost-center": "42"},
        "taint": [{"key": "spot", "value": "true", "effect": "NO_SCHEDULE"}],
        "updateConfig": {"maxUnavailable": 1},
        "version": DEFAULT_KUBERNETES_VERSION,
    }
    # AND the endpoint and logging follow the definition
    vpc_config = objects["cluster"]["spec"]["forProvider"]["vpcConfig"]
    assert vpc_config["publicAccessCidrs"] == ["203.0.113.0/24"]
    assert objects["cluster"]["spec"]["forProvider"]["enabledClusterLogTypes"] == ["api", "scheduler"]
    # AND the hub's Flux role is admitted, and its ConfigMap names the cluster
    assert objects["hub-access-entry"]["spec"]["forProvider"]["principalArn"] == (
        example_fleet().management.flux_role_arn
    )
    assert objects["hub-access"]["metadata"]["name"] == "data-euc1-hub-access"
    assert objects["hub-access"]["data"] == {"provider": "aws", "cluster": OBSERVED_STATUS["clusterArn"]}


AUTO_CLUSTER = workload_cluster(
    name="auto-euc1",
    autoMode={"enabled": True, "nodePools": ["general-purpose"]},
    tags={"team": "data"},
)


def test_an_auto_mode_cluster_renders_with_compute_storage_and_load_balancing_and_no_node_group() -> None:
    # GIVEN a cluster in EKS Auto Mode with only the general-purpose pool, its composite rendered through its
    # Composition once Crossplane has observed the node role
    fleet = example_fleet()
    xr = composite(AUTO_CLUSTER, fleet)
    assert xr["spec"]["crossplane"]["compositionRef"]["name"] == "eks-2-zones-auto-mode"
    assert (xr["spec"]["nodeGroups"], xr["spec"]["autoMode"]) == (
        [],
        {"enabled": True, "nodePools": ["general-purpose"]},
    )
    objects = render(observed(xr), eks.composition_props(eks.shape_of(AUTO_CLUSTER)).dump())

    # THEN the EKS cluster switches compute, block storage and load balancing on together, the compute capability
    # launching the built-in pool as the node role
    cluster = objects["cluster"]["spec"]
    assert cluster["forProvider"]["computeConfig"] == {
        "enabled": True,
        "nodePools": ["general-purpose"],
        "nodeRoleArn": OBSERVED_STATUS["nodeRoleArn"],
    }
    assert cluster["forProvider"]["storageConfig"] == {"blockStorage": {"enabled": True}}
    assert cluster["forProvider"]["kubernetesNetworkConfig"] == {"elasticLoadBalancing": {"enabled": True}}
    # AND it bootstraps no self-managed add-ons, at creation only (a cluster switched into Auto Mode is not replaced)
    assert cluster["initProvider"] == {"bootstrapSelfManagedAddons": False}
    assert "bootstrapSelfManagedAddons" not in cluster["forProvider"]
    # AND no node group nor Pod Identity Agent add-on is composed
    assert [obj["kind"] for obj in objects.values() if obj["kind"] in ("NodeGroup", "Addon")] == []
    # AND the roles carry Auto Mode's policies, the cluster role trusting EKS to tag its sessions
    attached = {
        name: obj["spec"]["forProvider"]["policyArn"].rsplit("/", 1)[1]
        for name, obj in objects.items()
        if obj["kind"] == "RolePolicyAttachment"
    }
    by_role = {
        role: sorted(policy for name, policy in attached.items() if name.startswith(f"role-{role}-"))
        for role in ("cluster", "node")
    }
    assert by_role == {
        "cluster": [
            "AmazonEKSBlockStoragePolicy",
            "AmazonEKSClusterPolicy",
            "AmazonEKSComputePolicy",
            "AmazonEKSLoadBalancingPolicy",
            "AmazonEKSNetworkingPolicy",
        ],
        "node": ["AmazonEC2ContainerRegistryPullOnly", "AmazonEKSWorkerNodeMinimalPolicy"],
    }
    trust = yaml.safe_load(objects["role-cluster"]["spec"]["forProvider"]["assumeRolePolicy"])
    assert trust["Statement"][0]["Action"] == ["sts:AssumeRole", "sts:TagSession"]


def test_a_cluster_leaving_auto_mode_switches_its_three_capabilities_off() -> None:
    # GIVEN a cluster whose definition switches Auto Mode off, and one that never names it
    fleet = example_fleet()
    leaving = workload_cluster(name="left", autoMode={"enabled": False})
    plain = workload_cluster(name="plain")
    switches = ("computeConfig", "storageConfig", "kubernetesNetworkConfig")
    for cluster, written in (
        (
            leaving,
            [{"enabled": False}, {"blockStorage": {"enabled": False}}, {"elasticLoadBalancing": {"enabled": False}}],
        ),
        (plain, [None, None, None]),
    ):
        # WHEN rendered through its Composition (node groups, no Auto Mode)
        objects = render(observed(composite(cluster, fleet)), eks.composition_props(eks.shape_of(cluster)).dump())
        # THEN the one switching off writes false into all three, the other nothing (EKS keeps what it has)
        assert [objects["cluster"]["spec"]["forProvider"].get(key) for key in switches] == written, cluster.name


def test_the_external_secrets_role_trusts_the_clusters_oidc_provider() -> None:
    _, _, objects = rendered_fleet()[0]
    policy = yaml.safe_load(objects["role-external-secrets"]["spec"]["forProvider"]["assumeRolePolicy"])
    host = OBSERVED_STATUS["oidcIssuerHost"]
    assert policy["Statement"] == [
        {
            "Effect": "Allow",
            "Principal": {"Federated": OBSERVED_STATUS["oidcProviderArn"]},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {
                "StringEquals": {
                    f"{host}:sub": "system:serviceaccount:external-secrets:external-secrets",
                    f"{host}:aud": "sts.amazonaws.com",
                }
            },
        }
    ]


@pytest.mark.slow
@needs_crds
def test_composition_templates_set_only_fields_of_their_crds(tmp_path: Path) -> None:
    # GIVEN every base of every shape, named like a composed resource
    templates = []
    for shape in SHAPES:
        for resource in composed_resources(shape):
            base = copy.deepcopy(resource["base"])
            base.setdefault("metadata", {}).update(name=f"example-{resource['name']}", namespace="example")
            templates.append(base)
    (tmp_path / "templates.yaml").write_text(yaml.safe_dump_all(templates, sort_keys=False))

    # WHEN validated as partial objects THEN every field they set is in their CRD
    result = subprocess.run(
        [sys.executable, str(VALIDATE_MANIFESTS), "--partial", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    count = len(templates)
    assert f"{count} documents, {count} valid, 0 invalid, 0 skipped" in result.stdout, result.stdout


# -- an existing cluster's Composition ------------------------------------------------------------------

#: What Crossplane would have read back from an existing cluster's imported resources.
IMPORTED_STATUS = {
    **{key: OBSERVED_STATUS[key] for key in ("vpcId", "clusterArn", "endpoint", "oidcIssuer", "oidcIssuerHost")},
    "certificateAuthority": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",
}


def existing_cluster(mode: str, **fields: Any) -> WorkloadCluster:
    """An existing cluster of ``mode`` importing its VPC, three private subnets and two node groups."""
    return workload_cluster(
        network={"cidr": "10.65.0.0/16"},
        nodeGroups=[
            {"name": "general", "instanceTypes": ["m6i.xlarge"], "minSize": 3, "maxSize": 9, "desiredSize": 3},
            {"name": "batch", "instanceTypes": ["c6i.xlarge"], "minSize": 0, "maxSize": 5, "desiredSize": 1},
        ],
        existing={
            "mode": mode,
            "vpcId": "vpc-0e1f2a3b4c5d60718",
            "subnetIds": ["subnet-0a1b2c3d4e5f60718", "subnet-0b2c3d4e5f6071829", "subnet-0c3d4e5f607182930"],
            "externalSecretsRoleArn": "arn:aws:iam::444455556666:role/a-external-secrets",
        },
        **fields,
    )


def rendered_existing(cluster: WorkloadCluster) -> dict[str, dict[str, Any]]:
    fleet = example_fleet()
    shape = eks.composition_of(cluster)
    assert isinstance(shape, eks.ExistingShape)
    return render({**composite(cluster, fleet), "status": IMPORTED_STATUS}, eks.composition_props(shape).dump())


@pytest.mark.parametrize(
    ("shape", "name"),
    [
        (eks.ExistingShape(eks.OBSERVED, 3, 1), "eks-observed-3-subnets-1-node-group"),
        (eks.ExistingShape(eks.MANAGED, 2, 2, keyless=True), "eks-managed-2-subnets-2-node-groups-keyless"),
    ],
)
def test_an_existing_clusters_shape_names_and_labels_its_composition(shape: eks.ExistingShape, name: str) -> None:
    assert shape.name == name
    assert eks.management_of(name) == shape.mode
    assert shape.labels == {
        f"{LABEL}/existing": shape.mode,
        f"{LABEL}/hub-access": "keyless" if shape.keyless else "kubeconfig",
        f"{LABEL}/node-groups": str(shape.node_groups),
        f"{LABEL}/subnets": str(shape.subnets),
    }


def test_an_observed_cluster_is_imported_by_id_and_only_read() -> None:
    # GIVEN an observed cluster, rendered through its Composition
    cluster = existing_cluster("observed")
    objects = rendered_existing(cluster)

    # THEN it composes its VPC, subnets, EKS cluster and node groups, a ClusterAuth and the bootstrap ConfigMap:
    # nothing else, so nothing is made in AWS
    assert {name: (obj["kind"]) for name, obj in objects.items()} == {
        "vpc": "VPC",
        "subnet-private-0": "Subnet",
        "subnet-private-1": "Subnet",
        "subnet-private-2": "Subnet",
        "cluster": "Cluster",
        "node-group-0": "NodeGroup",
        "node-group-1": "NodeGroup",
        "cluster-auth": "ClusterAuth",
        "bootstrap-values": "ConfigMap",
    }
    # AND each AWS resource is imported by its id, Observe only: Crossplane never creates, updates or deletes it
    ids = {
        "vpc": "vpc-0e1f2a3b4c5d60718",
        "subnet-private-0": "subnet-0a1b2c3d4e5f60718",
        "subnet-private-1": "subnet-0b2c3d4e5f6071829",
        "subnet-private-2": "subnet-0c3d4e5f607182930",
        "cluster": "a",
        "node-group-0": "general",
        "node-group-1": "batch",
    }
    for name, external_name in ids.items():
        obj = objects[name]
        assert obj["metadata"]["annotations"] == {"crossplane.io/external-name": external_name}, name
        assert obj["spec"]["managementPolicies"] == ["Observe"], name
        # AND it asks for nothing: only where to look, and which cluster a node group is of
        assert set(obj["spec"]["forProvider"]) <= {"region", "clusterNameSelector"}, name
        assert obj["spec"]["forProvider"]["region"] == "eu-central-1"
        assert obj["spec"]["providerConfigRef"] == {"kind": "ClusterProviderConfig", "name": "default"}
        assert "initProvider" not in obj["spec"], name
    # AND its private subnets carry the labels an app's database finds them by, as a created cluster's do
    assert objects["subnet-private-1"]["metadata"]["labels"] == {f"{LABEL}/tier": "private", f"{LABEL}/zone": "1"}
    # AND the ClusterAuth, which makes no AWS resource, writes the kubeconfig the hub reads
    assert objects["cluster-auth"]["spec"]["writeConnectionSecretToRef"] == {"name": "a-cluster-auth"}
    # AND External Secrets' role is the one the definition names
    assert objects["bootstrap-values"]["data"] == {
        "external-secrets-role-arn": "arn:aws:iam::444455556666:role/a-external-secrets"
    }


def test_an_observed_clusters_live_state_flows_into_its_composite() -> None:
    # GIVEN an observed cluster's Composition WHEN its resources' status patches are read
    shape = eks.ExistingShape(eks.OBSERVED, 3, 1)
    written = {
        (resource["name"], patch["fromFieldPath"], patch["toFieldPath"])
        for resource in eks.existing_resources(shape)
        for patch in resource["patches"]
        if patch["type"] == "ToCompositeFieldPath"
    }
    # THEN the VPC's id, the cluster's ARN, endpoint, certificate authority and OIDC issuer reach the composite
    assert written == {
        ("vpc", "status.atProvider.id", "status.vpcId"),
        ("cluster", "status.atProvider.arn", "status.clusterArn"),
        ("cluster", "status.atProvider.endpoint", "status.endpoint"),
        ("cluster", "status.atProvider.certificateAuthority[0].data", "status.certificateAuthority"),
        ("cluster", "status.atProvider.identity[0].oidc[0].issuer", "status.oidcIssuer"),
        ("cluster", "status.atProvider.identity[0].oidc[0].issuer", "status.oidcIssuerHost"),
    }


def test_a_managed_existing_cluster_is_managed_in_full_from_the_definition() -> None:
    # GIVEN the same cluster, managed, with keyless hub access
    objects = rendered_existing(existing_cluster("managed", hubAccess="keyless"))

    # THEN its imported resources are Crossplane's in full
    for name in ("vpc", "subnet-private-0", "cluster", "node-group-0", "node-group-1"):
        assert objects[name]["spec"]["managementPolicies"] == ["*"], name
    # AND the Kubernetes version and node group sizes follow the definition
    version = DEFAULT_KUBERNETES_VERSION
    assert objects["cluster"]["spec"]["forProvider"] == {"region": "eu-central-1", "version": version}
    assert objects["node-group-1"]["spec"]["forProvider"]["scalingConfig"] == {"minSize": 0, "maxSize": 5}
    assert objects["node-group-1"]["spec"]["initProvider"] == {"scalingConfig": {"desiredSize": 1}}
    # AND the subnets the CRD asks for once Crossplane may create it are the imported ones, read at creation only
    assert objects["cluster"]["spec"]["initProvider"] == {
        "vpcConfig": {"subnetIdSelector": {"matchControllerRef": True, "matchLabels": {f"{LABEL}/tier": "private"}}}
    }
    # AND keyless access reads the imported cluster's ARN; no access entry is made, the user grants it
    assert objects["hub-access"]["data"] == {"provider": "aws", "cluster": OBSERVED_STATUS["clusterArn"]}
    assert not any(obj["kind"] in ("AccessEntry", "AccessPolicyAssociation") for obj in objects.values())


@pytest.mark.slow
@needs_crds
def test_an_existing_clusters_resources_are_valid_objects(tmp_path: Path) -> None:
    # GIVEN an observed and a managed cluster's resources rendered through their Compositions
    documents = [
        obj
        for mode in ("observed", "managed")
        for obj in rendered_existing(existing_cluster(mode, hubAccess="keyless")).values()
    ]
    (tmp_path / "rendered.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))

    # WHEN validated as whole objects against the provider CRDs THEN every one is valid
    result = subprocess.run(
        [sys.executable, str(VALIDATE_MANIFESTS), str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    count = len(documents)
    assert f"{count} documents, {count} valid, 0 invalid, 0 skipped" in result.stdout, result.stdout
    # AND the CRDs' CEL rules hold: an Observe-only resource needs none of the fields Create or Update need, and a
    # managed one has them (a node group's scaling, a cluster's subnets)
    rules = CelRules.from_corpus(CrdCorpus.from_dirs([CRDS]))
    assert rules.check_all(Document("rendered.yaml", index, obj) for index, obj in enumerate(documents)) == []
    assert rules.counts.evaluated >= 2 * 2 + 2
