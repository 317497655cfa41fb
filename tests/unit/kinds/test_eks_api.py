"""The EKS composite API (fluxplane.kinds.eks_api): the Composition's patches against the XRD, composite resources and
the XRD.

Crossplane is not run here: tests.support.compositions renders a Composition for a composite resource, and
tests.unit.packs.test_eks_composed validates what it renders of the example fleet's composites against the provider
CRDs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from ipaddress import IPv4Network
from itertools import combinations
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from fluxplane.config.awsdata import facts
from fluxplane.config.hub import cluster_namespace, kubeconfig_secret
from fluxplane.config.models import DEFAULT_KUBERNETES_VERSION, AwsData, WorkloadCluster
from fluxplane.kinds import eks_api as eks
from fluxplane.kinds.eks_cluster import EKSClusterProps
from fluxplane.validate.celengine import compile_expression
from tests.support.compositions import (
    SHAPES,
    apply_patch,
    by_name,
    composite,
    example_fleet,
    segments,
    set_path,
    workload_cluster,
)


def all_patches(shape: eks.Shape) -> Iterator[dict[str, Any]]:
    """Every patch of ``shape``'s Composition: the resources', the patch sets' and the connection secret's."""
    resources_input = eks.composition_props(shape).dump()["pipeline"][0]["input"]
    for resource in resources_input["resources"]:
        yield from resource["patches"]
    for patch_set in resources_input["patchSets"]:
        yield from patch_set["patches"]
    yield from resources_input["writeConnectionSecretToRef"]["patches"]


# -- patches against the XRD --------------------------------------------------------------------------


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
    # AND a shape in EKS Auto Mode reads its built-in pools, another its node groups and the Auto Mode switch
    compute = (
        {"spec.autoMode.nodePools"} if shape.auto_mode else {"spec.nodeGroups[0].desiredSize", "spec.autoMode.enabled"}
    )
    assert {"spec.network.zones[0].privateSubnetCidr", *compute} <= sources


def test_a_misspelt_path_is_not_found_in_the_schema() -> None:
    # GIVEN / WHEN / THEN the schema walk the test above relies on refuses what the XRD lacks
    schema = eks.xrd_schema()
    assert schema_at(schema, "spec.network.zones[0].name") == schema_at(schema, "spec.network.zones[5].name")
    assert schema_at(schema, "spec.network.zones.name") is None
    assert schema_at(schema, "spec.network.zone[0].name") is None
    assert schema_at(schema, "status.clusterName") is None


# -- a patch-and-transform renderer ---------------------------------------------------------------


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


#: A cluster unlike the example's: 2 zones, one NAT gateway, two node groups with labels and taints, keyless.

# -- the composite resource of a cluster -------------------------------------------------------------


@pytest.mark.parametrize("name", ["production-usw2", "production-use1", "staging-usw2"])
def test_composite_props_of_an_example_cluster(name: str) -> None:
    # GIVEN an example cluster WHEN its composite resource is made
    fleet = example_fleet()
    (cluster,) = [c for c in fleet.clusters if c.name == name]
    props = eks.composite_props(cluster, fleet.sealing_key, fleet.management.flux_role_arn).model_dump(by_alias=True)

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
    cluster = workload_cluster(nodeGroups=[{"name": "gpu", "instanceTypes": ["g6.xlarge"], "taints": taints}])

    # WHEN made into composite props THEN EKS's spelling of each effect is used
    (group,) = eks.composite_props(cluster, example_fleet().sealing_key).dump()["nodeGroups"]
    assert group["taints"] == [
        {"key": "dedicated", "value": "gpu", "effect": "NO_SCHEDULE"},
        {"key": "spot", "value": "", "effect": "PREFER_NO_SCHEDULE"},
        {"key": "drain", "value": "now", "effect": "NO_EXECUTE"},
    ]


def test_composite_props_of_a_small_cluster_exactly() -> None:
    # GIVEN a 2-zone cluster with a private endpoint only and a single NAT gateway
    cluster = workload_cluster(
        network={"cidr": "10.20.0.0/22", "availabilityZones": 2, "natGateways": "Single"},
        endpoint={"publicAccess": False},
        tags={"team": "data"},
    )

    # WHEN made into composite props
    props = eks.composite_props(cluster, example_fleet().sealing_key)

    # THEN this is the whole composite resource spec
    assert props == EKSClusterProps.model_validate(
        {
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
    )


def test_composite_props_name_the_zones_the_region_has() -> None:
    # GIVEN a three-zone cluster in ca-central-1, whose zones are a, b and d
    cluster = workload_cluster(region="ca-central-1", network={"cidr": "10.20.0.0/16", "availabilityZones": 3})

    # WHEN made into composite props THEN the subnets go to those zones, not to a nonexistent ca-central-1c
    zones = eks.composite_props(cluster, example_fleet().sealing_key).dump()["network"]["zones"]
    assert [zone["name"] for zone in zones] == ["ca-central-1a", "ca-central-1b", "ca-central-1d"]


def test_composite_props_name_the_zones_awsdata_gives() -> None:
    # GIVEN an account whose us-west-1 zones are b and c, as awsData says
    aws = facts(AwsData.model_validate({"regions": {"us-west-1": ["us-west-1b", "us-west-1c"]}}))
    cluster = workload_cluster(region="us-west-1")

    # WHEN made into composite props with those facts THEN the account's zone names are used
    zones = eks.composite_props(cluster, example_fleet().sealing_key, aws=aws).dump()["network"]["zones"]
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
    cluster = workload_cluster(hubAccess="keyless")
    with pytest.raises(ValueError, match=r"^cluster 'a' uses keyless hub access; give the hub's Flux role$"):
        eks.composite_props(cluster, example_fleet().sealing_key)


ESO_ROLE = "arn:aws:iam::444455556666:role/a-external-secrets"
#: An observed cluster: its VPC and two private subnets imported by id, its node group named by the definition.
OBSERVED_CLUSTER = {
    "network": {"cidr": "10.20.0.0/16"},
    "nodeGroups": [{"name": "general", "instanceTypes": ["m6i.xlarge"]}],
    "existing": {
        "mode": "observed",
        "vpcId": "vpc-0e1f2a3b4c5d60718",
        "subnetIds": ["subnet-0a1b2c3d4e5f60718", "subnet-0b2c3d4e5f6071829"],
        "externalSecretsRoleArn": ESO_ROLE,
    },
}


def test_composite_props_of_an_observed_cluster_exactly() -> None:
    # GIVEN an observed cluster WHEN made into composite props
    props = eks.composite_props(workload_cluster(**OBSERVED_CLUSTER), example_fleet().sealing_key)

    # THEN its Composition imports, its AWS ids are spelled out, and nothing is planned: no zones, endpoint or logging
    assert props == EKSClusterProps.model_validate(
        {
            "name": "a",
            "namespace": "a",
            "crossplane": {"compositionRef": {"name": "eks-observed-2-subnets-1-node-group"}},
            "region": "eu-central-1",
            "kubernetesVersion": DEFAULT_KUBERNETES_VERSION,
            "network": {"vpcCidr": IPv4Network("10.20.0.0/16")},
            "nodeGroups": [
                {
                    "name": "general",
                    "instanceTypes": ["m6i.xlarge"],
                    "capacityType": "ON_DEMAND",
                    "minSize": 2,
                    "maxSize": 4,
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
            "hubAccess": None,
            "existing": {
                "vpcId": "vpc-0e1f2a3b4c5d60718",
                "subnetIds": ["subnet-0a1b2c3d4e5f60718", "subnet-0b2c3d4e5f6071829"],
                "externalSecretsRoleArn": ESO_ROLE,
            },
        }
    )


@pytest.mark.parametrize(
    ("mode", "hub_access", "shape"),
    [
        ("observed", "kubeconfig", eks.ExistingShape(eks.OBSERVED, 2, 1)),
        ("managed", "keyless", eks.ExistingShape(eks.MANAGED, 2, 1, keyless=True)),
    ],
)
def test_an_imported_clusters_composition_follows_its_mode(mode: str, hub_access: str, shape: Any) -> None:
    existing = {**OBSERVED_CLUSTER["existing"], "mode": mode}
    cluster = workload_cluster(**{**OBSERVED_CLUSTER, "existing": existing, "hubAccess": hub_access})
    assert eks.composition_of(cluster) == shape
    assert eks.management_of(shape.name) == mode


def test_a_registered_cluster_has_no_composite_resource() -> None:
    # GIVEN a registered cluster WHEN its Composition is asked for THEN it has none, and no composite props
    existing = {"mode": "registered", "externalSecretsRoleArn": ESO_ROLE}
    cluster = workload_cluster(existing=existing)
    assert eks.composition_of(cluster) is None
    with pytest.raises(ValueError, match=r"^cluster 'a' is registered: the hub imports nothing of it"):
        eks.composite_props(cluster, example_fleet().sealing_key)
    # AND a cluster the hub creates keeps the Composition of its shape
    assert eks.composition_of(workload_cluster()) == eks.Shape(zones=2, node_groups=1)
    assert eks.management_of("eks-2-zones-1-node-group") == eks.CREATED


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
    # (a registered cluster has no composite resource)
    for cluster in [c for c in fleet.clusters if eks.composition_of(c) is not None]:
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


def test_zones_are_required_of_a_cluster_the_hub_creates_only() -> None:
    # GIVEN the XRD's rule on the spec
    rule = eks.xrd_schema()["properties"]["spec"]["x-kubernetes-validations"][0]
    program = compile_expression(rule["rule"]).program
    assert program is not None
    fleet = example_fleet()
    created = composite(fleet.clusters[0], fleet)["spec"]
    imported = composite(workload_cluster(**OBSERVED_CLUSTER), fleet)["spec"]
    # WHEN evaluated THEN a created cluster with zones and an imported one without pass
    assert (program.run({"self": created}).value, program.run({"self": imported}).value) == (True, True)
    # AND a created cluster without zones is refused, with the rule's message
    created["network"].pop("zones")
    assert program.run({"self": created}).value is False
    assert rule["message"] == "network.zones is required for a cluster the hub creates"


def test_xrd_props_name_the_referenceable_version_and_its_schema() -> None:
    props = eks.xrd_props().dump()
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
    composition = eks.composition_props(shape).dump()
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
