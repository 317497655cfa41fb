"""Tests for fluxplane.config.models: defaults, constraints and validators of the fleet models."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.config import models

REPOSITORIES = {"platform": {"url": "ssh://git@example.com/org/fleet.git"}}


def _errors(model: type[models.Model], data: Any) -> list[tuple[tuple[str | int, ...], str, str]]:
    with pytest.raises(ValidationError) as exc:
        model.model_validate(data)
    return [(tuple(e["loc"]), e["type"], e["msg"]) for e in exc.value.errors(include_url=False)]


# -- Repository ----------------------------------------------------------------------------------


def test_repository_defaults() -> None:
    # GIVEN only a URL WHEN validated THEN branch, secretRef and path take their defaults
    repo = models.Repository.model_validate({"url": "https://example.com/org/fleet.git"})
    assert (repo.url, repo.branch, repo.secret_ref, repo.path) == (
        "https://example.com/org/fleet.git",
        "main",
        "flux-system",
        None,
    )


def test_repository_secret_ref_may_be_null_for_a_public_repository() -> None:
    # GIVEN secretRef null WHEN validated THEN there is no secret
    repo = models.Repository.model_validate({"url": "https://example.com/x.git", "secretRef": None})
    assert repo.secret_ref is None


@pytest.mark.parametrize("url", ["git@github.com:org/fleet.git", "http://example.com/x.git", "ssh://has space/x"])
def test_repository_url_must_be_ssh_or_https(url: str) -> None:
    # GIVEN a URL Flux cannot clone over ssh:// or https:// WHEN validated THEN the pattern fails
    assert [(loc, kind) for loc, kind, _ in _errors(models.Repository, {"url": url})] == [
        (("url",), "string_pattern_mismatch")
    ]


@pytest.mark.parametrize("path", ["dist/platform", ".", "a.b/c_d-e"])
def test_repository_path_accepts_relative_paths(path: str) -> None:
    # GIVEN a relative path WHEN validated THEN it is kept
    assert models.Repository.model_validate({"url": "ssh://x/y", "path": path}).path == path


@pytest.mark.parametrize("path", ["/abs", "a//b", "a/", ""])
def test_repository_path_refuses_absolute_and_malformed_paths(path: str) -> None:
    # GIVEN a path that is not a clean relative path WHEN validated THEN the pattern fails
    assert [(loc, kind) for loc, kind, _ in _errors(models.Repository, {"url": "ssh://x/y", "path": path})] == [
        (("path",), "string_pattern_mismatch")
    ]


@pytest.mark.parametrize("path", ["..", "a/../b", "../x"])
def test_repository_path_refuses_parent_segments(path: str) -> None:
    # GIVEN a path that leaves the repository WHEN validated THEN the validator says why
    assert _errors(models.Repository, {"url": "ssh://x/y", "path": path}) == [
        (
            ("path",),
            "value_error",
            f"Value error, must stay inside the repository (no '..' segments), got \"{path}\"",
        )
    ]


def test_repository_aliases_are_the_only_accepted_names() -> None:
    # GIVEN the Python field name instead of the YAML key WHEN validated THEN it is an unknown key
    assert _errors(models.Repository, {"url": "ssh://x/y", "secret_ref": "x"}) == [
        (("secret_ref",), "extra_forbidden", "Extra inputs are not permitted")
    ]


# -- FluxSettings --------------------------------------------------------------------------------


def test_flux_settings_defaults() -> None:
    # GIVEN nothing WHEN validated THEN Flux's usual intervals are used
    flux = models.FluxSettings()
    assert (flux.interval, flux.retry_interval, flux.timeout) == ("10m", "2m", "5m")


@pytest.mark.parametrize("value", ["1h30m", "30s", "500ms", "1.5h"])
def test_flux_settings_accept_go_durations(value: str) -> None:
    # GIVEN a Go duration WHEN validated THEN it is kept
    assert models.FluxSettings.model_validate({"interval": value}).interval == value


@pytest.mark.parametrize("value", ["10 minutes", "10", "m", "1d"])
def test_flux_settings_refuse_other_durations(value: str) -> None:
    # GIVEN something that is not a Go duration WHEN validated THEN the pattern fails
    assert [(loc, kind) for loc, kind, _ in _errors(models.FluxSettings, {"timeout": value})] == [
        (("timeout",), "string_pattern_mismatch")
    ]


# -- NodeGroup -----------------------------------------------------------------------------------


def test_node_group_defaults() -> None:
    # GIVEN only a name WHEN validated THEN sizes, instance types and disk take their defaults
    group = models.NodeGroup(name="default")
    assert group.model_dump(by_alias=True) == {
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


def test_node_group_min_size_must_not_exceed_max_size() -> None:
    # GIVEN minSize above maxSize WHEN validated THEN the values are named
    assert _errors(models.NodeGroup, {"name": "a", "minSize": 5, "maxSize": 3, "desiredSize": 4}) == [
        ((), "value_error", "Value error, minSize (5) must not exceed maxSize (3)")
    ]


@pytest.mark.parametrize(("desired", "expected_min", "expected_max"), [(1, 2, 4), (5, 2, 4)])
def test_node_group_desired_size_must_lie_between_min_and_max(
    desired: int, expected_min: int, expected_max: int
) -> None:
    # GIVEN desiredSize outside [minSize, maxSize] WHEN validated THEN the three values are named
    assert _errors(models.NodeGroup, {"name": "a", "desiredSize": desired}) == [
        (
            (),
            "value_error",
            f"Value error, desiredSize ({desired}) must lie between minSize ({expected_min}) "
            f"and maxSize ({expected_max})",
        )
    ]


def test_node_group_sizes_at_the_bounds_are_accepted() -> None:
    # GIVEN minSize == desiredSize == maxSize WHEN validated THEN it is accepted
    group = models.NodeGroup.model_validate({"name": "a", "minSize": 3, "maxSize": 3, "desiredSize": 3})
    assert (group.min_size, group.desired_size, group.max_size) == (3, 3, 3)


@pytest.mark.parametrize(
    ("field", "value", "kind"),
    [
        ("desiredSize", 0, "greater_than_equal"),
        ("minSize", -1, "greater_than_equal"),
        ("maxSize", 1001, "less_than_equal"),
        ("diskSize", 19, "greater_than_equal"),
        ("capacityType", "spot", "literal_error"),
        ("instanceTypes", [], "too_short"),
        ("minSize", "two", "int_parsing"),
    ],
)
def test_node_group_field_constraints(field: str, value: Any, kind: str) -> None:
    # GIVEN one field out of its range WHEN validated THEN exactly that field fails with that kind
    assert [(loc, k) for loc, k, _ in _errors(models.NodeGroup, {"name": "a", field: value})] == [((field,), kind)]


def test_node_group_taints_are_checked() -> None:
    # GIVEN a taint with an unknown effect WHEN validated THEN the taint's effect is named
    assert [
        (loc, kind)
        for loc, kind, _ in _errors(models.NodeGroup, {"name": "a", "taints": [{"key": "k", "effect": "Nope"}]})
    ] == [(("taints", 0, "effect"), "literal_error")]


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


# -- AwsData -------------------------------------------------------------------------------------


def test_aws_data_is_empty_by_default() -> None:
    base = models.BaseFile.model_validate({"repositories": REPOSITORIES, "management": {"region": "us-west-2"}})
    assert base.aws_data == models.AwsData(instanceTypes=[], regions={}, kubernetesVersions=[])


def test_aws_data_accepts_well_formed_additions() -> None:
    # GIVEN a type, a region with its zones and a version WHEN validated THEN they are kept as written
    data = models.AwsData.model_validate(
        {
            "instanceTypes": ["m99g.large"],
            "regions": {"xx-new-1": ["xx-new-1a", "xx-new-1b", "xx-new-1c"]},
            "kubernetesVersions": ["1.38"],
        }
    )
    assert (data.instance_types, data.regions, data.kubernetes_versions) == (
        ["m99g.large"],
        {"xx-new-1": ["xx-new-1a", "xx-new-1b", "xx-new-1c"]},
        ["1.38"],
    )


@pytest.mark.parametrize(
    ("data", "loc", "kind"),
    [
        ({"instanceTypes": ["m9g"]}, ("instanceTypes", 0), "string_pattern_mismatch"),
        ({"instanceTypes": ["m9g.large", "m9g.large"]}, ("instanceTypes",), "value_error"),
        ({"regions": {"Frankfurt": ["eu-central-1a", "eu-central-1b"]}}, ("regions", "Frankfurt", "[key]"), None),
        ({"regions": {"xx-new-1": ["xx-new-1a"]}}, ("regions", "xx-new-1"), "too_short"),
        ({"regions": {"xx-new-1": ["xx-new-1a", "xx-new-1-b"]}}, ("regions", "xx-new-1", 1), None),
        ({"regions": {"xx-new-1": ["xx-new-1a", "xx-new-2b"]}}, ("regions",), "value_error"),
        ({"regions": {"xx-new-1": ["xx-new-1a", "xx-new-1a"]}}, ("regions",), "value_error"),
        ({"kubernetesVersions": ["1.4"]}, ("kubernetesVersions", 0), "string_pattern_mismatch"),
        ({"kubernetesVersions": [1.38]}, ("kubernetesVersions",), "value_error"),
        ({"zones": {}}, ("zones",), "extra_forbidden"),
    ],
    ids=[
        "type-without-size",
        "repeated-type",
        "region-name",
        "one-zone",
        "zone-name",
        "zone-of-another-region",
        "repeated-zone",
        "one-digit-minor",
        "unquoted-version",
        "unknown-key",
    ],
)
def test_aws_data_is_checked_strictly(data: dict[str, Any], loc: tuple[str | int, ...], kind: str | None) -> None:
    # GIVEN awsData that is not of the documented shape WHEN validated THEN the field is named
    ((found_loc, found_kind, _),) = _errors(models.AwsData, data)
    assert found_loc == loc
    assert kind is None or found_kind == kind


def test_aws_data_zone_names_start_with_their_region() -> None:
    assert _errors(models.AwsData, {"regions": {"xx-new-1": ["xx-new-1a", "xx-new-2b"]}}) == [
        (
            ("regions",),
            "value_error",
            "Value error, zones of xx-new-1 are named xx-new-1 and a letter (xx-new-1a, xx-new-1b, ...), "
            'got "xx-new-2b"',
        )
    ]


def test_aws_data_versions_must_be_quoted() -> None:
    ((_, _, message),) = _errors(models.AwsData, {"kubernetesVersions": [1.38]})
    assert message.endswith("YAML reads an unquoted version as a number (1.30 becomes 1.3), so quote it")


# -- files ---------------------------------------------------------------------------------------


def test_base_file_requires_repositories_and_management() -> None:
    # GIVEN an empty base WHEN validated THEN both required sections are missing
    assert [(loc, kind) for loc, kind, _ in _errors(models.BaseFile, {})] == [
        (("repositories",), "missing"),
        (("management",), "missing"),
    ]


def test_base_file_defaults() -> None:
    # GIVEN the required sections only WHEN validated THEN flux, clusterDefaults and packs are defaulted
    base = models.BaseFile.model_validate({"repositories": REPOSITORIES, "management": {"region": "us-west-2"}})
    assert base.flux == models.FluxSettings()
    assert base.cluster_defaults == {}
    assert base.packs == {}


def test_environment_file_may_be_empty() -> None:
    # GIVEN an empty environment file WHEN validated THEN it has no clusters, defaults or packs
    env = models.EnvironmentFile.model_validate({})
    assert (env.cluster_defaults, env.packs, env.clusters) == ({}, {}, [])


def test_environment_file_refuses_base_only_keys() -> None:
    # GIVEN a key only the base file may set WHEN validated THEN it is unknown here
    assert [(loc, kind) for loc, kind, _ in _errors(models.EnvironmentFile, {"repositories": {}})] == [
        (("repositories",), "extra_forbidden")
    ]


def test_the_file_keys_are_the_documented_ones() -> None:
    # GIVEN the keys the README documents WHEN compared with the models' aliases THEN they agree
    base_keys = tuple(field.alias or name for name, field in models.BaseFile.model_fields.items())
    environment_keys = tuple(field.alias or name for name, field in models.EnvironmentFile.model_fields.items())
    assert base_keys == (
        "repositories",
        "flux",
        "management",
        "clusterNetwork",
        "clusterDefaults",
        "packs",
        "sealingKey",
        "teams",
        "accounts",
        "awsData",
    )
    assert environment_keys == ("clusterDefaults", "packs", "clusters")


def test_models_are_frozen() -> None:
    # GIVEN a validated model WHEN a field is assigned THEN pydantic refuses
    group = models.NodeGroup(name="a")
    with pytest.raises(ValidationError, match="Instance is frozen"):
        group.min_size = 1  # type: ignore[misc]


# -- Fleet ---------------------------------------------------------------------------------------


def _fleet() -> models.Fleet:
    def cluster(name: str) -> models.WorkloadCluster:
        return models.WorkloadCluster.model_validate({"name": name, "region": "us-west-2"})

    return models.Fleet(
        repositories=models.Repositories.model_validate(REPOSITORIES),
        flux=models.FluxSettings(),
        management=models.ManagementCluster.model_validate({"region": "us-west-2"}),
        environments=(
            models.Environment(name="production", file="p", packs={}, clusters=(cluster("p1"), cluster("p2"))),
            models.Environment(name="staging", file="s", packs={}, clusters=(cluster("s1"),)),
        ),
    )


def test_fleet_clusters_lists_every_workload_cluster_in_definition_order() -> None:
    # GIVEN two environments WHEN their clusters are listed THEN environment by environment, in order
    assert [cluster.name for cluster in _fleet().clusters] == ["p1", "p2", "s1"]


# -- is_dns_label --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("staging", True),
        ("a", True),
        ("prod-2", True),
        ("0a", True),
        ("a" * 63, True),
        ("a" * 64, False),
        ("Staging", False),
        ("my_env", False),
        ("-x", False),
        ("x-", False),
        ("a.b", False),
        ("a/b", False),
        ("", False),
    ],
)
def test_is_dns_label(value: str, expected: bool) -> None:
    # GIVEN a string WHEN checked THEN only DNS-1123 labels of at most 63 characters pass
    assert models.is_dns_label(value) is expected


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


# -- hostile but schema-shaped values: node labels, taints, tags, durations ------------------------


def _node_group(**fields: Any) -> dict[str, Any]:
    return {"name": "workers", **fields}


def _one_error(model: type[models.Model], data: Any) -> tuple[tuple[str | int, ...], str]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    (error,) = caught.value.errors(include_url=False)
    return tuple(error["loc"]), str(error["ctx"]["error"]) if "ctx" in error else error["msg"]


def test_node_labels_accept_kubernetes_label_syntax() -> None:
    # GIVEN keys with and without a prefix, values with '-', '_' and '.' WHEN validated THEN they are kept
    labels = {"team": "payments", "example.com/tier": "a.b_c-d", "A1": "Z", "x" * 63: "y" * 63}
    assert models.NodeGroup.model_validate(_node_group(labels=labels)).labels == labels


@pytest.mark.parametrize(
    "key", ["bad key!", "-team", "team-", "a/", "/a", "Example.com/a", "a/b/c", "team\n", "x" * 64, "é"]
)
def test_node_label_keys_must_be_kubernetes_qualified_names(key: str) -> None:
    # GIVEN a key Kubernetes refuses WHEN validated THEN the key itself is named, with the syntax allowed
    loc, message = _one_error(models.NodeGroup, _node_group(labels={key: "x"}))
    assert loc == ("labels", key, "[key]")
    assert message.startswith("expected a label key such as team or example.com/team (an optional DNS subdomain")


@pytest.mark.parametrize(
    ("key", "rule"),
    [
        (
            "example.com/" + "x" * 52,
            "EKS allows a node group label key of at most 63 characters, prefix included, got 64",
        ),
        ("node-role.kubernetes.io/worker", "EKS refuses node group label keys under kubernetes.io/, k8s.io/"),
        ("kubernetes.io/arch", "EKS refuses node group label keys under kubernetes.io/"),
        ("k8s.io/x", "EKS refuses node group label keys under"),
        ("eks.amazonaws.com/nodegroup", "EKS refuses node group label keys under"),
    ],
)
def test_node_label_keys_follow_the_eks_rules(key: str, rule: str) -> None:
    # GIVEN a key Kubernetes accepts but the EKS node group API refuses WHEN validated THEN EKS's rule is named
    loc, message = _one_error(models.NodeGroup, _node_group(labels={key: "x"}))
    assert loc == ("labels", key, "[key]")
    assert message.startswith(rule), message


@pytest.mark.parametrize(("value", "found"), [("", '""'), ("bad value!", '"bad value!"'), ("v\nw", '"v\\nw"')])
def test_node_label_values_are_label_values_and_not_empty(value: str, found: str) -> None:
    # GIVEN a value Kubernetes refuses, or an empty one (EKS refuses those) WHEN validated THEN it is shown
    loc, message = _one_error(models.NodeGroup, _node_group(labels={"team": value}))
    assert loc == ("labels", "team")
    assert message == (
        "expected a label value of 1 to 63 letters, digits, '-', '_' and '.', starting and ending with a letter or "
        f"digit (EKS refuses an empty one), got {found}"
    )


def test_a_long_node_label_value_shows_its_length() -> None:
    _, message = _one_error(models.NodeGroup, _node_group(labels={"team": "v" * 64}))
    assert message.endswith(f'got "{"v" * 64}" (64 characters)')


def test_taints_accept_kubernetes_syntax_and_an_empty_value() -> None:
    taints = [
        {"key": "dedicated", "value": "", "effect": "NoSchedule"},
        {"key": "example.com/gpu", "value": "true", "effect": "NoExecute"},
        {"key": "dedicated", "value": "x", "effect": "NoExecute"},
    ]
    group = models.NodeGroup.model_validate(_node_group(taints=taints))
    assert [(t.key, t.value, t.effect) for t in group.taints] == [
        ("dedicated", "", "NoSchedule"),
        ("example.com/gpu", "true", "NoExecute"),
        ("dedicated", "x", "NoExecute"),
    ]


@pytest.mark.parametrize(
    ("taint", "field", "start"),
    [
        ({"key": "bad key!"}, "key", "expected a taint key such as dedicated or example.com/gpu (an optional DNS"),
        ({"key": "node.kubernetes.io/x"}, "key", "EKS refuses node group taint keys under kubernetes.io/"),
        ({"key": "example.com/" + "k" * 52}, "key", "EKS allows a node group taint key of at most 63 characters"),
        ({"key": "a", "value": "bad value!"}, "value", "expected a taint value that is empty or has at most 63"),
        ({"key": "a", "value": "x" * 64}, "value", "expected a taint value that is empty or has at most 63"),
    ],
)
def test_taint_keys_and_values_follow_kubernetes_and_eks(taint: dict[str, str], field: str, start: str) -> None:
    loc, message = _one_error(models.NodeGroup, _node_group(taints=[{**taint, "effect": "NoSchedule"}]))
    assert loc == ("taints", 0, field)
    assert message.startswith(start), message


def test_a_node_group_has_at_most_50_taints_each_key_and_effect_once() -> None:
    # GIVEN 51 taints WHEN validated THEN EKS's limit is named
    many = [{"key": f"k{index}", "effect": "NoSchedule"} for index in range(51)]
    assert [(loc, kind) for loc, kind, _ in _errors(models.NodeGroup, _node_group(taints=many))] == [
        (("taints",), "too_long")
    ]
    # GIVEN a key and effect twice WHEN validated THEN Kubernetes' rule is named with the pair
    twice = [{"key": "gpu", "value": "a", "effect": "NoSchedule"}, {"key": "gpu", "value": "b", "effect": "NoSchedule"}]
    assert _one_error(models.NodeGroup, _node_group(taints=twice)) == (
        ("taints",),
        'each key and effect once (Kubernetes refuses repeats), "gpu" with NoSchedule repeated',
    )


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


@pytest.mark.parametrize("field", ["interval", "retryInterval", "timeout"])
@pytest.mark.parametrize("value", ["0s", "0m0s", "0h", "0.0000001ms"])
def test_flux_durations_must_be_above_zero(field: str, value: str) -> None:
    # GIVEN a zero duration (Go truncates below a nanosecond) WHEN validated THEN it is refused, shown as found
    assert _one_error(models.FluxSettings, {field: value}) == (
        (field,),
        f'expected a duration above zero such as 30s, 5m or 1h30m, got "{value}": at zero Flux reconciles '
        "without pause",
    )


def test_flux_durations_must_fit_go() -> None:
    # GIVEN the longest duration Go holds WHEN validated THEN it is kept; a nanosecond more is refused
    assert models.FluxSettings.model_validate({"timeout": "2562047h47m16.854775807s"}).timeout
    assert _one_error(models.FluxSettings, {"timeout": "2562047h47m16.854775808s"}) == (
        ("timeout",),
        'expected a duration Go can hold (at most 2562047h47m16s), got "2562047h47m16.854775808s"',
    )


@pytest.mark.parametrize(
    ("value", "nanoseconds"), [("1h30m", 5400 * 10**9), ("1.5s", 1_500_000_000), ("2ms", 2_000_000)]
)
def test_duration_ns_counts_as_go_does(value: str, nanoseconds: int) -> None:
    assert models.duration_ns(value) == nanoseconds


@pytest.mark.parametrize("name", ["secret-store", "sealing-key"])
def test_a_workload_cluster_may_not_take_the_name_of_a_shared_bootstrap_step(name: str) -> None:
    assert _one_error(models.WorkloadCluster, {**CLUSTER, "name": name}) == (
        ("name",),
        f"{name!r} is taken: the hub's bootstrap chains share a step of that name (spokes/steps/{name}), which "
        "fluxplane names like the chain of this cluster; choose another name",
    )
