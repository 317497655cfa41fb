"""Tests for fluxplane.config.models.clusters: the management and workload cluster models."""

from __future__ import annotations

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
    # GIVEN an empty node group list WHEN validated THEN the list is too short
    assert [
        (loc, kind)
        for loc, kind, _ in _errors(models.WorkloadCluster, {"name": "a", "region": "us-west-2", "nodeGroups": []})
    ] == [(("nodeGroups",), "too_short")]


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
