"""Tests for fluxplane.config.models.clusters: the management and workload cluster models."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.config import models


def _errors(model: type[models.Model], data: Any) -> list[tuple[tuple[str | int, ...], str, str]]:
    with pytest.raises(ValidationError) as exc:
        model.model_validate(data)
    return [(tuple(e["loc"]), e["type"], e["msg"]) for e in exc.value.errors(include_url=False)]


def _one_error(model: type[models.Model], data: Any) -> tuple[tuple[str | int, ...], str]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    (error,) = caught.value.errors(include_url=False)
    return tuple(error["loc"]), str(error["ctx"]["error"]) if "ctx" in error else error["msg"]


# -- clusters ------------------------------------------------------------------------------------


def test_workload_cluster_defaults_to_one_default_node_group() -> None:
    # GIVEN a name and a region only WHEN validated THEN version, packs and node groups are defaulted
    cluster = models.WorkloadCluster.model_validate({"name": "a", "region": "us-west-2"})
    assert cluster.kubernetes_version == models.DEFAULT_KUBERNETES_VERSION
    assert cluster.packs == {}
    assert cluster.node_groups == [models.NodeGroup(name="default")]


@pytest.mark.parametrize("name", ["a/b", "../x", "UPPER", "-x", "x-", "a.b", "a_b", ""])
def test_cluster_names_must_be_dns_labels(name: str) -> None:
    # GIVEN a name that is not a DNS-1123 label (or would escape a folder) WHEN validated THEN it fails
    assert [(loc, kind) for loc, kind, _ in _errors(models.WorkloadCluster, {"name": name, "region": "us-west-2"})] == [
        (("name",), "string_pattern_mismatch")
    ]


def test_cluster_names_are_at_most_63_characters() -> None:
    # GIVEN a 64-character label WHEN validated THEN the length fails
    assert [
        (loc, kind) for loc, kind, _ in _errors(models.WorkloadCluster, {"name": "a" * 64, "region": "us-west-2"})
    ] == [(("name",), "string_too_long")]


@pytest.mark.parametrize("region", ["us-west-2", "eu-central-1", "us-gov-west-1", "ap-southeast-4"])
def test_cluster_region_accepts_aws_regions(region: str) -> None:
    # GIVEN an AWS region WHEN validated THEN it is kept
    assert models.WorkloadCluster.model_validate({"name": "a", "region": region}).region == region


@pytest.mark.parametrize("region", ["uswest2", "US-WEST-2", "us-west", "west-2", "us-west-2a"])
def test_cluster_region_refuses_other_values(region: str) -> None:
    # GIVEN something that is not a region WHEN validated THEN the pattern fails
    assert [(loc, kind) for loc, kind, _ in _errors(models.WorkloadCluster, {"name": "a", "region": region})] == [
        (("region",), "string_pattern_mismatch")
    ]


@pytest.mark.parametrize("version", ["1.28", "1.33", "1.40"])
def test_cluster_kubernetes_version_is_checked_for_its_form_only(version: str) -> None:
    # GIVEN any "1.NN" version WHEN validated THEN it is kept: whether EKS supports it depends on the base
    # file's awsData, so the loader checks that (tests/unit/config/test_awsdata.py, test_loader.py)
    cluster = models.WorkloadCluster.model_validate({"name": "a", "region": "us-west-2", "kubernetesVersion": version})
    assert cluster.kubernetes_version == version


@pytest.mark.parametrize(("version", "kind"), [("1.3", "string_pattern_mismatch"), (1.33, "value_error")])
def test_cluster_kubernetes_version_must_be_a_quoted_minor_version(version: Any, kind: str) -> None:
    # GIVEN a one-digit minor or an unquoted number WHEN validated THEN it fails
    assert [
        (loc, k)
        for loc, k, _ in _errors(
            models.WorkloadCluster, {"name": "a", "region": "us-west-2", "kubernetesVersion": version}
        )
    ] == [(("kubernetesVersion",), kind)]


def test_workload_cluster_needs_at_least_one_node_group() -> None:
    # GIVEN an empty node group list WHEN validated THEN one is asked for, or Auto Mode
    assert _one_error(models.WorkloadCluster, {"name": "a", "region": "us-west-2", "nodeGroups": []}) == (
        ("nodeGroups",),
        "give at least one node group, or set autoMode.enabled: true",
    )


def test_workload_cluster_node_group_names_are_unique() -> None:
    # GIVEN two node groups with the same name WHEN validated THEN the repeated name is named
    data = {"name": "a", "region": "us-west-2", "nodeGroups": [{"name": "x"}, {"name": "y"}, {"name": "x"}]}
    assert _errors(models.WorkloadCluster, data) == [
        (("nodeGroups",), "value_error", "Value error, node group names must be unique, 'x' repeated")
    ]


def test_management_cluster_is_called_hub_by_default() -> None:
    # GIVEN a management cluster without a name WHEN validated THEN it is "hub"
    assert models.ManagementCluster.model_validate({"region": "us-west-2"}).name == "hub"


def test_management_cluster_has_no_node_groups_field() -> None:
    # GIVEN nodeGroups on the management cluster WHEN validated THEN it is an unknown key
    assert [
        (loc, kind) for loc, kind, _ in _errors(models.ManagementCluster, {"region": "us-west-2", "nodeGroups": []})
    ] == [(("nodeGroups",), "extra_forbidden")]


def test_management_egress_cidrs_are_ipv4_ranges() -> None:
    # GIVEN the hub's NAT gateway addresses WHEN validated THEN they are kept as networks; none by default
    hub = models.ManagementCluster.model_validate({"region": "us-west-2", "egressCidrs": ["203.0.113.7/32"]})
    assert [str(network) for network in hub.egress_cidrs] == ["203.0.113.7/32"]
    assert models.ManagementCluster.model_validate({"region": "us-west-2"}).egress_cidrs == []


# -- Endpoint ------------------------------------------------------------------------------------


def test_the_hub_reaches_an_endpoint_from_the_public_side_by_default() -> None:
    assert models.Endpoint().from_hub == "public"
    assert models.Endpoint.model_validate({"fromHub": "private"}).from_hub == "private"


def test_the_default_public_source_range_is_one_network_in_a_list_of_each_endpoints_own() -> None:
    # GIVEN two endpoints that name no source range THEN both admit everywhere, from one network made once (not one
    # per cluster of a large fleet), each in a list of its own
    first, second = models.Endpoint(), models.Endpoint()
    assert first.public_access_cidrs == [IPv4Network("0.0.0.0/0")]
    assert first.public_access_cidrs[0] is second.public_access_cidrs[0]
    assert first.public_access_cidrs is not second.public_access_cidrs


def test_from_hub_is_public_or_private() -> None:
    assert [(loc, kind) for loc, kind, _ in _errors(models.Endpoint, {"fromHub": "vpn"})] == [
        (("fromHub",), "literal_error")
    ]


CLUSTER = {"name": "a", "region": "us-west-2"}


@pytest.mark.parametrize("key", ["Name", "aws:createdBy", "karpenter.sh/discovery", "kubernetes.io/role/elb"])
def test_cluster_tags_may_not_set_what_the_composition_or_aws_own(key: str) -> None:
    with pytest.raises(ValidationError) as caught:
        models.WorkloadCluster.model_validate({**CLUSTER, "tags": {key: "x", "team": "a"}})
    (error,) = caught.value.errors()
    assert error["loc"] == ("tags",)
    assert f"{key!r}: the composition sets Name" in error["msg"]


def test_a_cluster_name_leaves_room_for_its_node_role() -> None:
    models.WorkloadCluster.model_validate({**CLUSTER, "name": "c" * 59})
    with pytest.raises(ValidationError, match=r"at most 59 characters: the cluster's node role is named <name>-node"):
        models.WorkloadCluster.model_validate({**CLUSTER, "name": "c" * 60})


def test_cluster_tags_accept_aws_tag_characters() -> None:
    # GIVEN letters of any script, digits, spaces and _ . : / = + - @ WHEN validated THEN the tags are kept
    tags = {"Cost Center": "Équipe 42 +=.:/@-_", "k" * 128: "v" * 256, "empty": ""}
    assert models.WorkloadCluster.model_validate({**CLUSTER, "tags": tags}).tags == tags


@pytest.mark.parametrize(
    ("tags", "loc", "message"),
    [
        (
            {"team\nowner": "a"},
            ("tags", "team\nowner", "[key]"),
            "expected an AWS tag key of 1 to 128 Unicode letters, digits, spaces and _ . : / = + - @, got "
            '"team\\nowner", which has "\\n"',
        ),
        (
            {"team": "a\u2028b"},
            ("tags", "team"),
            "expected an AWS tag value of 0 to 256 Unicode letters, digits, spaces and _ . : / = + - @, got "
            '"a\\u2028b", which has "\\u2028"',
        ),
        (
            {"team": "${x}; rm"},
            ("tags", "team"),
            "expected an AWS tag value of 0 to 256 Unicode letters, digits, spaces and _ . : / = + - @, got "
            '"${x}; rm", which has "$", ";", "{", "}"',
        ),
        (
            {"": "a"},
            ("tags", "", "[key]"),
            'expected an AWS tag key of 1 to 128 Unicode letters, digits, spaces and _ . : / = + - @, got "" '
            "(0 characters)",
        ),
        (
            {"k" * 129: "a"},
            ("tags", "k" * 129, "[key]"),
            'expected an AWS tag key of 1 to 128 Unicode letters, digits, spaces and _ . : / = + - @, got "'
            + "k" * 76
            + '..." (129 characters)',
        ),
        (
            {"team": "v" * 257},
            ("tags", "team"),
            'expected an AWS tag value of 0 to 256 Unicode letters, digits, spaces and _ . : / = + - @, got "'
            + "v" * 76
            + '..." (257 characters)',
        ),
    ],
)
def test_cluster_tags_follow_aws_tagging_rules(tags: dict[str, str], loc: tuple[str, ...], message: str) -> None:
    assert _one_error(models.WorkloadCluster, {**CLUSTER, "tags": tags}) == (loc, message)


@pytest.mark.parametrize("name", ["secret-store", "sealing-key"])
def test_a_workload_cluster_may_not_take_the_name_of_a_shared_bootstrap_step(name: str) -> None:
    assert _one_error(models.WorkloadCluster, {**CLUSTER, "name": name}) == (
        ("name",),
        f"{name!r} is taken: the hub's bootstrap chains share a step of that name (spokes/steps/{name}), which "
        "fluxplane names like the chain of this cluster; choose another name",
    )


# -- existing clusters --------------------------------------------------------------------------------

ESO_ROLE = "arn:aws:iam::444455556666:role/a-external-secrets"
EXISTING_CLUSTER = {**CLUSTER, "region": "eu-central-1", "network": {"cidr": "10.64.0.0/16"}}
REGISTERED = {"mode": "registered", "externalSecretsRoleArn": ESO_ROLE}
OBSERVED = {
    "mode": "observed",
    "externalSecretsRoleArn": ESO_ROLE,
    "vpcId": "vpc-0e1f2a3b4c5d60718",
    "subnetIds": ["subnet-0a1b2c3d4e5f60718", "subnet-0b2c3d4e5f6071829"],
}


def _problems(data: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    with pytest.raises(ValidationError) as caught:
        models.WorkloadCluster.model_validate(data)
    return [(tuple(e["loc"]), str(e["ctx"]["error"])) for e in caught.value.errors(include_url=False)]


@pytest.mark.parametrize("existing", [REGISTERED, OBSERVED, {**OBSERVED, "mode": "managed"}])
def test_an_existing_cluster_of_each_mode_is_recorded_as_given(existing: dict[str, Any]) -> None:
    # GIVEN an existing cluster with what its mode needs WHEN validated THEN it is kept as given
    cluster = models.WorkloadCluster.model_validate({**EXISTING_CLUSTER, "existing": existing})
    assert cluster.existing is not None
    assert (cluster.existing.mode, cluster.existing.imported) == (existing["mode"], existing["mode"] != "registered")
    assert cluster.existing.external_secrets_role_arn == ESO_ROLE
    # AND the hub reaches a registered one with a kubeconfig the user seals, an imported one with the composed one
    assert cluster.provided_kubeconfig is (existing["mode"] == "registered")
    assert models.WorkloadCluster.model_validate({**EXISTING_CLUSTER}).provided_kubeconfig is False


def test_an_existing_clusters_range_is_given_never_allocated() -> None:
    # GIVEN an existing cluster without network.cidr WHEN validated THEN the problem is at network.cidr
    assert _problems({**CLUSTER, "existing": REGISTERED}) == [
        (
            ("network", "cidr"),
            "an existing cluster's VPC range is recorded from the definition, never allocated: give its VPC's CIDR",
        )
    ]


def test_an_observed_cluster_names_its_vpc_and_subnets_each_at_its_field() -> None:
    # GIVEN an observed cluster without its VPC, with one subnet twice, and an ARN it does not take
    existing = {
        "mode": "observed",
        "externalSecretsRoleArn": ESO_ROLE,
        "subnetIds": ["subnet-0a1b2c3d4e5f60718", "subnet-0a1b2c3d4e5f60718"],
        "clusterArn": "arn:aws:eks:eu-central-1:444455556666:cluster/a",
    }
    # WHEN validated THEN each problem is at its own field, all at once
    assert _problems({**EXISTING_CLUSTER, "existing": existing}) == [
        (("existing", "vpcId"), "mode observed imports the cluster's VPC by its id: give it (vpc-...)"),
        (("existing", "subnetIds"), "each subnet once, 'subnet-0a1b2c3d4e5f60718' repeated"),
        (("existing", "clusterArn"), "mode observed reads the EKS cluster's ARN from AWS; remove it"),
    ]
    # AND too few subnets are refused, with the count found
    assert _problems({**EXISTING_CLUSTER, "existing": {**OBSERVED, "subnetIds": ["subnet-0a1b2c3d"]}}) == [
        (
            ("existing", "subnetIds"),
            "mode observed imports the private subnets the cluster's nodes run in: give 2 to 6 subnet ids, got 1",
        )
    ]


def test_a_registered_cluster_imports_nothing() -> None:
    # GIVEN a registered cluster with AWS ids only an imported one reads WHEN validated THEN both are refused
    existing = {**REGISTERED, "vpcId": OBSERVED["vpcId"], "subnetIds": OBSERVED["subnetIds"]}
    assert _problems({**EXISTING_CLUSTER, "existing": existing}) == [
        (("existing", "vpcId"), "mode registered imports nothing of the cluster's; remove it, or set mode: observed"),
        (
            ("existing", "subnetIds"),
            "mode registered imports nothing of the cluster's; remove them, or set mode: observed",
        ),
    ]


def test_keyless_access_to_a_registered_cluster_reads_its_arn_which_must_name_it() -> None:
    # GIVEN a registered cluster with keyless access and no ARN WHEN validated THEN the ARN is asked for
    keyless = {**EXISTING_CLUSTER, "hubAccess": "keyless", "existing": REGISTERED}
    assert _problems(keyless) == [
        (
            ("existing", "clusterArn"),
            "keyless hub access reaches a registered cluster by its EKS ARN: give it (aws eks describe-cluster --name "
            "a --query cluster.arn)",
        )
    ]
    # AND an ARN of another cluster, or of another region, is refused
    other = {**REGISTERED, "clusterArn": "arn:aws:eks:eu-west-1:444455556666:cluster/b"}
    assert _problems({**keyless, "existing": other}) == [
        (
            ("existing", "clusterArn"),
            "names EKS cluster 'b' in eu-west-1; the cluster is 'a' in eu-central-1 (the EKS cluster is named like the "
            "fleet's cluster)",
        )
    ]
    # AND the cluster's own ARN is taken
    own = {**REGISTERED, "clusterArn": "arn:aws:eks:eu-central-1:444455556666:cluster/a"}
    assert models.WorkloadCluster.model_validate({**keyless, "existing": own}).existing == models.ExistingCluster(
        mode="registered", externalSecretsRoleArn=ESO_ROLE, clusterArn=own["clusterArn"]
    )


@pytest.mark.parametrize("bootstrap", ["fluxplane", "flux", "flux-operator"])
def test_a_workload_cluster_says_who_installs_its_flux(bootstrap: str) -> None:
    cluster = models.WorkloadCluster.model_validate({**CLUSTER, "bootstrap": bootstrap})
    assert cluster.bootstrap == bootstrap
    assert models.WorkloadCluster.model_validate(CLUSTER).bootstrap == "fluxplane"


# -- EKS Auto Mode -------------------------------------------------------------------------------------


def test_an_auto_mode_cluster_has_no_node_groups_and_both_built_in_pools() -> None:
    # GIVEN Auto Mode switched on and nothing else WHEN validated THEN no node group is defaulted, both built-in pools
    # run
    cluster = models.WorkloadCluster.model_validate({**CLUSTER, "autoMode": {"enabled": True}})
    assert cluster.auto and cluster.node_groups == []
    assert cluster.auto_mode is not None and cluster.auto_mode.node_pools == ["general-purpose", "system"]
    # AND switched off, the cluster keeps its default node group
    off = models.WorkloadCluster.model_validate({**CLUSTER, "autoMode": {"enabled": False}})
    assert not off.auto and off.node_groups == [models.NodeGroup(name="default")]


def test_an_auto_mode_cluster_refuses_node_groups_of_its_own() -> None:
    # GIVEN Auto Mode and node groups WHEN validated THEN the node groups are refused, at their field
    assert _problems({**CLUSTER, "autoMode": {"enabled": True}, "nodeGroups": [{"name": "system"}]}) == [
        (
            ("nodeGroups",),
            "an Auto Mode cluster has no managed node groups: EKS launches its nodes (autoMode.nodePools and "
            "autoMode.customNodePools); remove nodeGroups, or set autoMode.enabled: false",
        )
    ]


def test_an_existing_cluster_cannot_be_put_in_auto_mode() -> None:
    data = {**EXISTING_CLUSTER, "existing": REGISTERED, "autoMode": {"enabled": True}}
    assert _problems(data) == [
        (
            ("autoMode", "enabled"),
            "an existing cluster's Auto Mode is its own: the hub does not make its nodes; remove autoMode",
        )
    ]


@pytest.mark.parametrize(
    ("auto_mode", "loc", "message"),
    [
        (
            {"nodePools": ["system"]},
            ("nodePools",),
            "needs 'general-purpose': the hub's bootstrap of the cluster (External Secrets, Sealed Secrets, Flux) runs "
            "on it before the cluster's Flux applies customNodePools",
        ),
        (
            {"nodePools": ["general-purpose", "general-purpose"]},
            ("nodePools",),
            "each pool once, 'general-purpose' repeated",
        ),
        (
            {"nodeClasses": [{"name": "big"}, {"name": "big"}]},
            ("nodeClasses",),
            "NodeClass names must be unique, 'big' repeated",
        ),
        (
            {"customNodePools": [{"name": "batch", "nodeClass": "large"}]},
            ("customNodePools", 0, "nodeClass"),
            "'large' is not a NodeClass of the cluster (known: default); add it to nodeClasses",
        ),
        (
            {"customNodePools": [{"name": "system"}]},
            ("customNodePools", 0, "name"),
            "'system' is a built-in node pool of EKS Auto Mode, switched on in `nodePools`; choose another name",
        ),
        (
            {"nodeClasses": [{"name": "default"}]},
            ("nodeClasses", 0, "name"),
            "'default' is the NodeClass EKS makes with the built-in node pools; choose another name",
        ),
        (
            {"customNodePools": [{"name": "batch", "expireAfter": "Never"}]},
            ("customNodePools", 0, "expireAfter"),
            "at most 504h: EKS Auto Mode replaces a node after 21 days whatever its pool says, got 'Never'",
        ),
        (
            {"nodeClasses": [{"name": "big", "ephemeralStorage": {"size": "60Ti"}}]},
            ("nodeClasses", 0, "ephemeralStorage", "size"),
            "EKS allows 1 to 58Ti, got '60Ti'",
        ),
    ],
)
def test_auto_mode_refuses_pools_and_classes_eks_would_not_take(
    auto_mode: dict[str, Any], loc: tuple[str | int, ...], message: str
) -> None:
    assert _problems({**CLUSTER, "autoMode": {"enabled": True, **auto_mode}}) == [(("autoMode", *loc), message)]


def test_auto_mode_needs_to_be_switched_on_or_off_in_words() -> None:
    # GIVEN an autoMode section without enabled WHEN validated THEN enabled is asked for
    assert _errors(models.WorkloadCluster, {**CLUSTER, "autoMode": {}})[0][:2] == (("autoMode", "enabled"), "missing")
