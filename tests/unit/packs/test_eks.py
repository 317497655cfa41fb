"""The EKS composite API (fluxplane.packs.eks): shapes, composed resources, the XRD and composite resources.

Crossplane is not run here. A small patch-and-transform renderer in this module applies each
Composition to the example fleet's composite resources, and the managed resources it renders are
validated against the provider CRDs (``../shared/crds``) as complete objects.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from functools import cache
from ipaddress import IPv4Network
from itertools import combinations, pairwise
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml

from fluxplane.config.awsdata import facts
from fluxplane.config.hub import cluster_namespace, kubeconfig_secret
from fluxplane.config.models import DEFAULT_KUBERNETES_VERSION, AwsData, Fleet, WorkloadCluster
from fluxplane.constructs import Manifest, Root
from fluxplane.constructs.eks_cluster import EKSCluster
from fluxplane.packs import eks
from fluxplane.synth import load_plan
from tests.conftest import CRDS, ROOT, VALIDATE_MANIFESTS

EC2 = "ec2.aws.m.upbound.io/v1beta1"
IAM = "iam.aws.m.upbound.io/v1beta1"
EKS = "eks.aws.m.upbound.io/v1beta1"
LABEL = "platform.fluxplane.io"

THREE_ZONES = eks.Shape(zones=3, node_groups=1)
TWO_ZONES = eks.Shape(zones=2, node_groups=1)
SINGLE_NAT = eks.Shape(zones=3, node_groups=1, nat_gateways="Single")
TWO_GROUPS = eks.Shape(zones=3, node_groups=2)
KEYLESS = eks.Shape(zones=3, node_groups=1, keyless=True)
SHAPES = [
    THREE_ZONES,
    TWO_ZONES,
    SINGLE_NAT,
    TWO_GROUPS,
    KEYLESS,
    eks.Shape(zones=6, node_groups=3, nat_gateways="Single", keyless=True),
]

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

#: What Crossplane would have written back into the composite's status by the time everything exists.
OBSERVED_STATUS = {
    "vpcId": "vpc-0123456789abcdef0",
    "clusterArn": "arn:aws:eks:us-west-2:111122223333:cluster/example",
    "endpoint": "https://EXAMPLE.gr7.us-west-2.eks.amazonaws.com",
    "oidcIssuer": "https://oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE",
    "oidcIssuerHost": "oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE",
    "oidcProviderArn": "arn:aws:iam::111122223333:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE",
    "externalSecretsRoleArn": "arn:aws:iam::111122223333:role/example-external-secrets",
}

needs_crds = pytest.mark.skipif(
    not CRDS.is_dir(), reason=f"{CRDS} is missing: rendered resources cannot be checked against provider CRDs"
)


@cache
def example_fleet() -> Fleet:
    return load_plan(ROOT).fleet


def composite(cluster: WorkloadCluster, fleet: Fleet) -> dict[str, Any]:
    """The EKSCluster document of ``cluster``, as the workload-clusters pack writes it."""
    props = eks.composite_props(cluster, fleet.sealing_key, fleet.management.flux_role_arn)
    return EKSCluster(Manifest(Root(), "m", path="x.yaml"), cluster.name, props).to_dict()


def by_name(shape: eks.Shape) -> dict[str, dict[str, Any]]:
    return {resource["name"]: resource for resource in eks.composed_resources(shape)}


def all_patches(shape: eks.Shape) -> Iterator[dict[str, Any]]:
    """Every patch of ``shape``'s Composition: the resources', the patch sets' and the connection secret's."""
    resources_input = eks.composition_props(shape)["pipeline"][0]["input"]
    for resource in resources_input["resources"]:
        yield from resource["patches"]
    for patch_set in resources_input["patchSets"]:
        yield from patch_set["patches"]
    yield from resources_input["writeConnectionSecretToRef"]["patches"]


# -- shapes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "name", "labels"),
    [
        (
            eks.Shape(3, 1, "OnePerZone"),
            "eks-3-zones-1-node-group",
            {"availability-zones": "3", "hub-access": "kubeconfig", "nat-gateways": "OnePerZone", "node-groups": "1"},
        ),
        (
            eks.Shape(2, 2, "Single"),
            "eks-2-zones-2-node-groups-single-nat",
            {"availability-zones": "2", "hub-access": "kubeconfig", "nat-gateways": "Single", "node-groups": "2"},
        ),
        (
            eks.Shape(3, 1, "OnePerZone", keyless=True),
            "eks-3-zones-1-node-group-keyless",
            {"availability-zones": "3", "hub-access": "keyless", "nat-gateways": "OnePerZone", "node-groups": "1"},
        ),
    ],
)
def test_a_shape_names_and_labels_its_composition(shape: eks.Shape, name: str, labels: dict[str, str]) -> None:
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
    ],
    ids=lambda value: value.name if isinstance(value, eks.Shape) else "",
)
def test_composed_kinds_of_a_shape(shape: eks.Shape, changes: dict[tuple[str, str], int]) -> None:
    # GIVEN a shape WHEN its resources are composed
    kinds = Counter((r["base"]["apiVersion"], r["base"]["kind"]) for r in eks.composed_resources(shape))

    # THEN exactly these kinds come out, this many of each
    assert dict(kinds) == {**THREE_ZONE_KINDS, **changes}


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
def test_resource_names_are_unique(shape: eks.Shape) -> None:
    names = [resource["name"] for resource in eks.composed_resources(shape)]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    ("smaller", "larger"),
    [
        (TWO_ZONES, THREE_ZONES),
        (THREE_ZONES, TWO_GROUPS),
        (THREE_ZONES, KEYLESS),
        (eks.Shape(3, 1, "Single"), eks.Shape(5, 1, "Single")),
        (eks.Shape(2, 1), eks.Shape(6, 3, keyless=True)),
    ],
    ids=lambda shape: shape.name,
)
def test_a_shape_that_grows_keeps_every_resource_it_had(smaller: eks.Shape, larger: eks.Shape) -> None:
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
def test_every_selector_picks_its_own_resources_unambiguously(shape: eks.Shape) -> None:
    # GIVEN the composed resources of a shape
    resources = eks.composed_resources(shape)
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
def test_public_subnets_route_to_the_internet_and_private_ones_through_nat(shape: eks.Shape) -> None:
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


# -- patches against the XRD --------------------------------------------------------------------------

_SEGMENT = re.compile(r"([^.\[\]]+)|\[([^\]]+)\]")


def segments(path: str) -> list[str | int]:
    """``a.b[0].c`` → ['a', 'b', 0, 'c']; ``metadata.annotations[x.io/y]`` → ['metadata', 'annotations', 'x.io/y']."""
    found: list[str | int] = []
    for name, bracket in _SEGMENT.findall(path):
        if name:
            found.append(name)
        else:
            found.append(int(bracket) if bracket.isdigit() else bracket)
    return found


def test_field_paths_are_split_like_crossplane_does() -> None:
    assert segments("spec.network.zones[1].name") == ["spec", "network", "zones", 1, "name"]
    assert segments("metadata.annotations[crossplane.io/external-name]") == [
        "metadata",
        "annotations",
        "crossplane.io/external-name",
    ]


def schema_at(schema: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The schema node ``path`` leads to (``[n]`` through ``items``), or None when the schema has no such field."""
    node = schema
    for segment in segments(path):
        if isinstance(segment, int):
            if "items" not in node:
                return None
            node = node["items"]
        else:
            properties = node.get("properties", {})
            if segment not in properties:
                return None
            node = properties[segment]
    return node


@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: shape.name)
def test_every_patch_reads_and_writes_fields_the_xrd_declares(shape: eks.Shape) -> None:
    # GIVEN the patches of a shape's Composition and the XRD schema
    schema = eks.xrd_schema()
    patch_sets = {patch_set["name"] for patch_set in eks.PATCH_SETS}
    sources: set[str] = set()
    written_status: set[str] = set()
    for patch in all_patches(shape):
        # THEN patch sets exist
        if patch["type"] == "PatchSet":
            assert patch["patchSetName"] in patch_sets
        # AND what patches read from the composite's spec is in the XRD
        elif patch["type"] == "FromCompositeFieldPath":
            sources.add(patch["fromFieldPath"])
        elif patch["type"] == "CombineFromComposite":
            sources.update(variable["fromFieldPath"] for variable in patch["combine"]["variables"])
        # AND what they write back to its status is in the XRD's status
        elif patch["type"] == "ToCompositeFieldPath":
            assert patch["toFieldPath"].startswith("status."), patch
            assert schema_at(schema, patch["toFieldPath"]) is not None, patch["toFieldPath"]
            written_status.add(patch["toFieldPath"])
        else:
            pytest.fail(f"unexpected patch type {patch['type']!r}")
    for source in sorted(sources):
        if source.startswith("spec."):
            assert schema_at(schema, source) is not None, source
        elif source.startswith("status."):
            # AND status a patch reads is written by a resource of the same Composition
            assert source in written_status, source
        else:
            assert source == "metadata.name", source
    assert {"spec.network.zones[0].privateSubnetCidr", "spec.nodeGroups[0].desiredSize"} <= sources


def test_a_misspelt_path_is_not_found_in_the_schema() -> None:
    # GIVEN / WHEN / THEN the schema walk the test above relies on refuses what the XRD lacks
    schema = eks.xrd_schema()
    assert schema_at(schema, "spec.network.zones[0].name") == schema_at(schema, "spec.network.zones[5].name")
    assert schema_at(schema, "spec.network.zones.name") is None
    assert schema_at(schema, "spec.network.zone[0].name") is None
    assert schema_at(schema, "status.clusterName") is None


# -- a patch-and-transform renderer ---------------------------------------------------------------

_MISSING = object()


def get_path(obj: Any, path: str) -> Any:
    for segment in segments(path):
        if isinstance(segment, int):
            if not isinstance(obj, list) or segment >= len(obj):
                return _MISSING
            obj = obj[segment]
        else:
            if not isinstance(obj, dict) or segment not in obj:
                return _MISSING
            obj = obj[segment]
    return obj


def set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    parts = segments(path)
    node: Any = obj
    for segment, following in pairwise(parts):
        empty: Any = [] if isinstance(following, int) else {}
        if isinstance(segment, int):
            node.extend([None] * (segment + 1 - len(node)))
            if node[segment] is None:
                node[segment] = empty
        elif segment not in node:
            node[segment] = empty
        node = node[segment]
    last = parts[-1]
    if isinstance(last, int):
        node.extend([None] * (last + 1 - len(node)))
    node[last] = value


def _transform(value: Any, transforms: list[dict[str, Any]]) -> Any:
    for transform in transforms:
        assert transform["type"] == "string" and transform["string"]["type"] == "Format", transform
        value = transform["string"]["fmt"] % value
    return value


def apply_patch(patch: dict[str, Any], xr: dict[str, Any], target: dict[str, Any]) -> None:
    """Apply one patch of function-patch-and-transform from composite ``xr`` to composed ``target``."""
    required = patch.get("policy", {}).get("fromFieldPath") == "Required"
    if patch["type"] == "PatchSet":
        patch_sets: list[dict[str, Any]] = eks.PATCH_SETS
        (patch_set,) = [s for s in patch_sets if s["name"] == patch["patchSetName"]]
        for inner in patch_set["patches"]:
            apply_patch(inner, xr, target)
    elif patch["type"] == "FromCompositeFieldPath":
        value = get_path(xr, patch["fromFieldPath"])
        if value is _MISSING:
            assert not required, f"required {patch['fromFieldPath']} is missing from the composite"
            return
        value = _transform(copy.deepcopy(value), patch.get("transforms", []))
        existing = get_path(target, patch["toFieldPath"])
        if patch.get("policy", {}).get("toFieldPath") == "MergeObjects" and isinstance(existing, dict):
            value = {**value, **existing}
        set_path(target, patch["toFieldPath"], value)
    elif patch["type"] == "CombineFromComposite":
        combine = patch["combine"]
        values = [get_path(xr, variable["fromFieldPath"]) for variable in combine["variables"]]
        if _MISSING in values:
            assert not required, f"a required variable of {patch['toFieldPath']} is missing from the composite"
            return
        assert combine["strategy"] == "string"
        set_path(target, patch["toFieldPath"], combine["string"]["fmt"] % tuple(values))
    elif patch["type"] != "ToCompositeFieldPath":
        raise AssertionError(f"the renderer does not know patches of type {patch['type']!r}")


def render(xr: dict[str, Any], composition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Composed resource name → the object P&T makes of its base for ``xr``."""
    resources_input = composition["pipeline"][0]["input"]
    assert resources_input["patchSets"] == eks.PATCH_SETS
    rendered = {}
    for resource in resources_input["resources"]:
        target = copy.deepcopy(resource["base"])
        target.setdefault("metadata", {}).update(
            name=f"{xr['metadata']['name']}-{resource['name']}", namespace=xr["metadata"]["namespace"]
        )
        for patch in resource["patches"]:
            apply_patch(patch, xr, target)
        rendered[resource["name"]] = target
    return rendered


def test_the_renderer_merges_tags_and_refuses_a_missing_required_source() -> None:
    # GIVEN a target with tags and a composite with tags
    xr = {"metadata": {"name": "a"}, "spec": {"tags": {"owner": "team", "Name": "other"}}}
    target: dict[str, Any] = {"spec": {"forProvider": {"tags": {"Name": "a"}}}}
    # WHEN the tags patch set applies THEN target keys stay and new keys come in
    apply_patch({"type": "PatchSet", "patchSetName": "tags"}, xr, target)
    assert target == {"spec": {"forProvider": {"tags": {"Name": "a", "owner": "team"}}}}
    # AND a required source that is missing fails the rendering
    with pytest.raises(AssertionError, match=r"required status\.oidcIssuer is missing"):
        apply_patch(
            {
                "type": "FromCompositeFieldPath",
                "fromFieldPath": "status.oidcIssuer",
                "toFieldPath": "spec.forProvider.url",
                "policy": {"fromFieldPath": "Required"},
            },
            xr,
            target,
        )


def observed(xr: dict[str, Any]) -> dict[str, Any]:
    return {**xr, "status": dict(OBSERVED_STATUS)}


def _cluster(**fields: Any) -> WorkloadCluster:
    data = {"name": "a", "region": "eu-central-1", "network": {"cidr": "10.20.0.0/16", "availabilityZones": 2}}
    return WorkloadCluster.model_validate({**data, **fields})


#: A cluster unlike the example's: 2 zones, one NAT gateway, two node groups with labels and taints, keyless.
SMALL_KEYLESS = _cluster(
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
    """(cluster, composite, rendered resources) of every example cluster and of SMALL_KEYLESS."""
    fleet = example_fleet()
    return [
        (cluster, xr, render(observed(xr), eks.composition_props(eks.shape_of(cluster))))
        for cluster in (*fleet.clusters, SMALL_KEYLESS)
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
        # AND the node group's size at creation is the definition's
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
        for resource in eks.composed_resources(shape):
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


# -- the composite resource of a cluster -------------------------------------------------------------


@pytest.mark.parametrize("name", ["production-usw2", "production-use1", "staging-usw2"])
def test_composite_props_of_an_example_cluster(name: str) -> None:
    # GIVEN an example cluster WHEN its composite resource is made
    fleet = example_fleet()
    (cluster,) = [c for c in fleet.clusters if c.name == name]
    props = eks.composite_props(cluster, fleet.sealing_key, fleet.management.flux_role_arn)

    # THEN it lives in the cluster's hub namespace and names its shape's Composition and Secret
    assert props["name"] == name
    assert props["namespace"] == cluster_namespace(name)
    assert props["crossplane"] == {"compositionRef": {"name": eks.shape_of(cluster).name}}
    assert props["kubeconfigSecretName"] == kubeconfig_secret(name).name
    # AND its zones follow the region, with subnets inside the VPC that do not overlap
    network = props["network"]
    assert network["vpcCidr"] == cluster.network.cidr
    assert [zone["name"] for zone in network["zones"]] == [f"{cluster.region}{letter}" for letter in "abc"]
    subnets = [zone[key] for zone in network["zones"] for key in ("publicSubnetCidr", "privateSubnetCidr")]
    assert all(subnet.subnet_of(cluster.network.cidr) for subnet in subnets)
    assert not any(a.overlaps(b) for a, b in combinations(subnets, 2))


def test_composite_props_translate_taints_to_eks_effects() -> None:
    # GIVEN a node group with taints of each Kubernetes effect
    taints = [
        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
        {"key": "spot", "effect": "PreferNoSchedule"},
        {"key": "drain", "value": "now", "effect": "NoExecute"},
    ]
    cluster = _cluster(nodeGroups=[{"name": "gpu", "instanceTypes": ["g6.xlarge"], "taints": taints}])

    # WHEN made into composite props THEN EKS's spelling of each effect is used
    (group,) = eks.composite_props(cluster, example_fleet().sealing_key)["nodeGroups"]
    assert group["taints"] == [
        {"key": "dedicated", "value": "gpu", "effect": "NO_SCHEDULE"},
        {"key": "spot", "value": "", "effect": "PREFER_NO_SCHEDULE"},
        {"key": "drain", "value": "now", "effect": "NO_EXECUTE"},
    ]


def test_composite_props_of_a_small_cluster_exactly() -> None:
    # GIVEN a 2-zone cluster with a private endpoint only and a single NAT gateway
    cluster = _cluster(
        network={"cidr": "10.20.0.0/22", "availabilityZones": 2, "natGateways": "Single"},
        endpoint={"publicAccess": False},
        tags={"team": "data"},
    )

    # WHEN made into composite props
    props = eks.composite_props(cluster, example_fleet().sealing_key)

    # THEN this is the whole composite resource spec
    assert props == {
        "name": "a",
        "namespace": "a",
        "crossplane": {"compositionRef": {"name": "eks-2-zones-1-node-group-single-nat"}},
        "region": "eu-central-1",
        "kubernetesVersion": DEFAULT_KUBERNETES_VERSION,
        "network": {
            "vpcCidr": IPv4Network("10.20.0.0/22"),
            "natGateways": "Single",
            "zones": [
                {
                    "name": "eu-central-1a",
                    "publicSubnetCidr": IPv4Network("10.20.3.0/28"),
                    "privateSubnetCidr": IPv4Network("10.20.0.0/25"),
                },
                {
                    "name": "eu-central-1b",
                    "publicSubnetCidr": IPv4Network("10.20.3.16/28"),
                    "privateSubnetCidr": IPv4Network("10.20.0.128/25"),
                },
            ],
        },
        "endpoint": {"privateAccess": True, "publicAccess": False, "publicAccessCidrs": []},
        "logging": ["api", "audit", "authenticator"],
        "nodeGroups": [
            {
                "name": "default",
                "instanceTypes": ["m7i.large"],
                "capacityType": "ON_DEMAND",
                "minSize": 2,
                "maxSize": 4,
                "desiredSize": 2,
                "diskSize": 50,
                "labels": {},
                "taints": [],
            }
        ],
        "tags": {"team": "data"},
        "sealingKeySecret": "fluxplane/sealing-key",
        "kubeconfigSecretName": "a-kubeconfig",
        "bootstrapConfigMapName": "a-bootstrap",
        "hubAccess": None,
    }


def test_composite_props_name_the_zones_the_region_has() -> None:
    # GIVEN a three-zone cluster in ca-central-1, whose zones are a, b and d
    cluster = _cluster(region="ca-central-1", network={"cidr": "10.20.0.0/16", "availabilityZones": 3})

    # WHEN made into composite props THEN the subnets go to those zones, not to a nonexistent ca-central-1c
    zones = eks.composite_props(cluster, example_fleet().sealing_key)["network"]["zones"]
    assert [zone["name"] for zone in zones] == ["ca-central-1a", "ca-central-1b", "ca-central-1d"]


def test_composite_props_name_the_zones_awsdata_gives() -> None:
    # GIVEN an account whose us-west-1 zones are b and c, as awsData says
    aws = facts(AwsData.model_validate({"regions": {"us-west-1": ["us-west-1b", "us-west-1c"]}}))
    cluster = _cluster(region="us-west-1")

    # WHEN made into composite props with those facts THEN the account's zone names are used
    zones = eks.composite_props(cluster, example_fleet().sealing_key, aws=aws)["network"]["zones"]
    assert [zone["name"] for zone in zones] == ["us-west-1b", "us-west-1c"]


def test_composite_props_need_an_allocated_cidr() -> None:
    # GIVEN a cluster read without the loader, so without a VPC CIDR
    cluster = WorkloadCluster.model_validate({"name": "a", "region": "us-west-2"})
    # WHEN / THEN its composite props are refused, saying how to get one
    with pytest.raises(
        ValueError, match=r"^cluster 'a' has no VPC CIDR; load the fleet with fluxplane\.config\.loader$"
    ):
        eks.composite_props(cluster, example_fleet().sealing_key)


def test_keyless_composite_props_need_the_hubs_flux_role() -> None:
    cluster = _cluster(hubAccess="keyless")
    with pytest.raises(ValueError, match=r"^cluster 'a' uses keyless hub access; give the hub's Flux role$"):
        eks.composite_props(cluster, example_fleet().sealing_key)


# -- the XRD ---------------------------------------------------------------------------------------


def _strict(schema: Any) -> Any:
    """``schema`` with unknown properties refused (the API server would prune them silently)."""
    if isinstance(schema, dict):
        strict = {key: _strict(value) for key, value in schema.items()}
        if "properties" in schema and "additionalProperties" not in schema:
            strict["additionalProperties"] = False
        return strict
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    return schema


def xr_validator() -> jsonschema.Draft7Validator:
    """The XRD schema as Crossplane serves it: with ``spec.crossplane``, and with apiVersion, kind, metadata."""
    schema = _strict(eks.xrd_schema())
    schema["properties"]["spec"]["properties"]["crossplane"] = {"type": "object"}
    schema["properties"].update(apiVersion={"type": "string"}, kind={"type": "string"}, metadata={"type": "object"})
    return jsonschema.Draft7Validator(schema)


def test_every_example_composite_resource_validates_against_the_xrd() -> None:
    validator = xr_validator()
    fleet = example_fleet()
    for cluster in fleet.clusters:
        document = composite(cluster, fleet)
        errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]
        assert errors == [], cluster.name


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("spec.region", "us-west", "does not match"),
        ("spec.network.zones", [], "should be non-empty|is too short"),
        ("spec.nodeGroups[0].capacityType", "RESERVED", "is not one of"),
        ("spec.nodeGroups[0].taints", [{"key": "a", "effect": "NoSchedule"}], "is not one of"),
        ("spec.nodeGroups[0].maxSize", 1001, "is greater than the maximum"),
        ("spec.network.vpcCidr", "10.0.0.0", "does not match"),
        ("spec.network.zones[0].subnet", "10.0.0.0/24", "Additional properties are not allowed"),
    ],
)
def test_the_xrd_refuses_bad_composites(path: str, value: Any, message: str) -> None:
    # GIVEN a valid example composite resource with one field made wrong
    fleet = example_fleet()
    document = composite(fleet.clusters[0], fleet)
    set_path(document, path, value)
    # WHEN validated against the XRD THEN that field is named
    errors = list(xr_validator().iter_errors(document))
    assert errors, path
    assert any(re.search(message, error.message) for error in errors), [error.message for error in errors]


def test_what_json_schema_cannot_check_is_left_to_cel_rules() -> None:
    # GIVEN the XRD schema WHEN its CEL rules are read THEN size order and endpoint access are checked
    schema = eks.xrd_schema()
    node_group = schema_at(schema, "spec.nodeGroups[0]")
    endpoint = schema_at(schema, "spec.endpoint")
    assert node_group is not None and endpoint is not None
    assert [rule["rule"] for rule in node_group["x-kubernetes-validations"]] == [
        "self.minSize <= self.maxSize",
        "self.minSize <= self.desiredSize && self.desiredSize <= self.maxSize",
    ]
    assert endpoint["x-kubernetes-validations"] == [
        {"rule": "self.privateAccess || self.publicAccess", "message": "enable private or public access"}
    ]


def test_xrd_props_name_the_referenceable_version_and_its_schema() -> None:
    props = eks.xrd_props()
    assert props["name"] == "eksclusters.platform.fluxplane.io"
    assert props["scope"] == "Namespaced"
    assert props["names"] == {"kind": "EKSCluster", "plural": "eksclusters", "categories": ["crossplane", "composite"]}
    (version,) = props["versions"]
    assert (version["name"], version["served"], version["referenceable"]) == ("v1alpha1", True, True)
    assert version["schema"] == {"openAPIV3Schema": eks.xrd_schema()}


# -- the connection secret ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: shape.name)
def test_the_composition_publishes_the_kubeconfig_under_value(shape: eks.Shape) -> None:
    # GIVEN a shape's Composition
    composition = eks.composition_props(shape)
    compose, ready = composition["pipeline"]
    assert (compose["functionRef"], ready) == (
        {"name": "function-patch-and-transform"},
        {"step": "detect-readiness", "functionRef": {"name": "function-auto-ready"}},
    )
    # THEN the composite's connection secret is named by spec.kubeconfigSecretName
    assert compose["input"]["writeConnectionSecretToRef"] == {
        "patches": [
            {"type": "FromCompositeFieldPath", "fromFieldPath": "spec.kubeconfigSecretName", "toFieldPath": "name"}
        ]
    }
    # AND it holds ClusterAuth's kubeconfig under the key Flux reads by default
    auth = by_name(shape)["cluster-auth"]
    assert auth["base"]["kind"] == "ClusterAuth"
    assert auth["connectionDetails"] == [
        {"name": kubeconfig_secret("x").key, "type": "FromConnectionSecretKey", "fromConnectionSecretKey": "kubeconfig"}
    ]
    assert [r["name"] for r in compose["input"]["resources"] if "connectionDetails" in r] == ["cluster-auth"]
