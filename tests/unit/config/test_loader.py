"""Tests for fluxplane.config.loader: reading environments/ into a Fleet, and every bad-input report.

The product's rule for bad input: one line per problem, ``environments/<file>.yaml: <field.path>:
<what is allowed>, got <value>``, and every problem of every file reported at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fluxplane.config import models
from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError, FluxplaneError
from tests.conftest import MINIMAL_BASE, FleetWriter
from tests.support.config import problems_of

DNS_HELP = "expected a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit)"
BASE_ALLOWED = (
    "allowed: repositories, flux, management, clusterNetwork, clusterDefaults, packs, sealingKey, teams, accounts, "
    "awsData"
)
ENV_ALLOWED = "allowed: clusterDefaults, packs, clusters"
CLUSTER_ALLOWED = (
    "allowed: name, region, kubernetesVersion, packs, network, endpoint, logging, tags, hubAccess, nodeGroups, "
    "autoMode, fluxInstaller, account, appResources, existing, bootstrap, cdk8sCharts"
)
REGION_HELP = "expected an AWS region such as us-west-2"
VERSION_HELP = 'expected a Kubernetes minor version such as "1.33" (quoted)'
NAME_NOT_ALLOWED = "not allowed here; set it in each cluster's own entry"
PACKS_NOT_ALLOWED = "not allowed here; set it in the top-level 'packs' section"
NODE_GROUP_ALLOWED = (
    "allowed: name, instanceTypes, capacityType, minSize, maxSize, desiredSize, diskSize, labels, taints"
)


def cluster(name: str = "staging-1", **fields: Any) -> dict[str, Any]:
    return {"name": name, "region": "us-west-2", **fields}


# -- a valid fleet -------------------------------------------------------------------------------


def test_loads_the_example_fleet(example_project: Path) -> None:
    # GIVEN the project's example environments/
    # WHEN loaded
    loaded = load_fleet(example_project)
    fleet = loaded.fleet

    # THEN environments come in file-name order with their clusters in definition order
    assert [env.name for env in fleet.environments] == ["production", "staging"]
    assert [env.file for env in fleet.environments] == [
        "environments/production.yaml",
        "environments/staging.yaml",
    ]
    assert [c.name for c in fleet.clusters] == [
        "production-usw2",
        "production-use1",
        "production-euc1",
        "production-euw1",
        "staging-usw2",
        "staging-euw1",
    ]
    assert fleet.repositories.platform.url == "ssh://git@github.com/example-org/fleet.git"
    assert fleet.flux == models.FluxSettings(interval="10m", retryInterval="2m", timeout="5m")
    assert fleet.management.name == "hub"


def test_example_fleet_clusters_merge_base_environment_and_entry(example_project: Path) -> None:
    # GIVEN the example fleet WHEN loaded
    fleet = load_fleet(example_project).fleet
    usw2, use1, _, _, staging, auto = fleet.clusters

    # THEN the region comes from base clusterDefaults unless the entry sets it
    assert (usw2.region, use1.region, staging.region) == ("us-west-2", "us-east-1", "us-west-2")
    # AND production's clusterDefaults node groups replace the base's list whole
    assert usw2.node_groups == [
        models.NodeGroup.model_validate(
            {
                "name": "system",
                "instanceTypes": ["m7i.xlarge", "m6i.xlarge"],
                "minSize": 3,
                "maxSize": 9,
                "desiredSize": 3,
            }
        )
    ]
    assert staging.node_groups == [
        models.NodeGroup.model_validate(
            {"name": "system", "instanceTypes": ["m7i.large"], "minSize": 2, "maxSize": 4, "desiredSize": 2}
        )
    ]
    # AND the cluster in EKS Auto Mode has none: EKS launches its nodes, from the built-in pools and its own
    assert (auto.region, auto.node_groups, auto.auto) == ("eu-west-1", [], True)
    assert auto.auto_mode is not None
    assert [pool.name for pool in auto.auto_mode.custom_node_pools] == ["batch"]
    # AND packs merge base, then environment, then the cluster's own entry
    assert (usw2.packs["metrics-server"], usw2.packs["podinfo"]) == ({"replicas": 2}, {"replicas": 3})
    assert (use1.packs["metrics-server"], use1.packs["podinfo"]) == ({"replicas": 2}, {"replicas": 4})
    assert (staging.packs["metrics-server"], staging.packs["podinfo"]) == ({}, {"replicas": 1})
    # mappings merge key by key: the base's cert-manager issuer stays, production's Enforce wins
    assert usw2.packs["cert-manager"] == staging.packs["cert-manager"] == {"issuer": {"email": "platform@example.com"}}
    assert (usw2.packs["kyverno"], staging.packs["kyverno"]) == (
        {"failureAction": "Enforce"},
        {"failureAction": "Audit"},
    )
    # (production-usw2 makes its apps' resources: the packs for it come first, under the definition's)
    assert list(usw2.packs) == [
        *("crossplane", "crossplane-providers", "crossplane-provider-configs", "app-compositions"),
        *("metrics-server", "cert-manager", "kyverno", "fluent-bit", "prometheus", "podinfo"),
        *("aws-load-balancer-controller", "external-dns", "envoy-gateway", "karpenter", "aws-ebs-csi-driver"),
    ]


def test_example_fleet_environment_packs_and_management_packs(example_project: Path) -> None:
    # GIVEN the example fleet WHEN loaded
    fleet = load_fleet(example_project).fleet

    # THEN each environment's packs are the base's merged with its own, and the hub gets the base's
    production, staging = (env.packs for env in fleet.environments)
    assert (production["metrics-server"], production["podinfo"]) == ({"replicas": 2}, {"replicas": 3})
    assert (staging["metrics-server"], staging["podinfo"]) == ({}, {"replicas": 1})
    assert (production["fluent-bit"], staging["fluent-bit"]) == ({"retentionDays": 90}, {"retentionDays": 30})
    shared = {
        "metrics-server": {},
        "cert-manager": {"issuer": {"email": "platform@example.com"}},
        "kyverno": {"failureAction": "Audit"},
        "fluent-bit": {"retentionDays": 30},
    }
    assert fleet.packs == shared
    assert fleet.management.packs == {
        **shared,
        "crossplane": {},
        "crossplane-providers": {
            "roleArn": "arn:aws:iam::111122223333:role/fleet-crossplane-providers",
            "services": ["ec2", "eks", "iam", "dynamodb", "sqs", "s3", "rds"],
        },
        "crossplane-provider-configs": {},
        "eks-compositions": {},
        "app-compositions": {},
        "workload-clusters": {},
    }


def test_the_minimal_fleet_uses_model_defaults(write_fleet: FleetWriter) -> None:
    # GIVEN the smallest valid fleet WHEN loaded
    fleet = load_fleet(write_fleet()).fleet

    # THEN defaults fill what the files leave out
    (only,) = fleet.clusters
    assert only.name == "staging-1"
    assert only.kubernetes_version == models.DEFAULT_KUBERNETES_VERSION
    assert only.node_groups == [models.NodeGroup(name="default")]
    assert only.packs == {"metrics-server": {}}
    assert fleet.repositories.platform.branch == "main"


def test_management_packs_merge_over_base_packs(write_fleet: FleetWriter) -> None:
    # GIVEN base packs and management packs that change one and add another
    base = {
        **MINIMAL_BASE,
        "management": {"region": "us-west-2", "packs": {"metrics-server": {"replicas": 2}, "podinfo": {}}},
    }

    # WHEN loaded
    fleet = load_fleet(write_fleet(base=base)).fleet

    # THEN the hub has both, the management value winning; the fleet's packs are the base's alone
    assert fleet.management.packs == {"metrics-server": {"replicas": 2}, "podinfo": {}}
    assert fleet.packs == {"metrics-server": {}}
    assert fleet.clusters[0].packs == {"metrics-server": {}}


def test_cluster_defaults_merge_base_then_environment_then_entry(write_fleet: FleetWriter) -> None:
    # GIVEN region and version set at three levels
    base = {**MINIMAL_BASE, "clusterDefaults": {"region": "eu-west-1", "kubernetesVersion": "1.30"}}
    env = {
        "clusterDefaults": {"kubernetesVersion": "1.31"},
        "clusters": [{"name": "a"}, {"name": "b", "region": "us-east-1", "kubernetesVersion": "1.32"}],
    }

    # WHEN loaded
    a, b = load_fleet(write_fleet(base=base, envs={"staging": env})).fleet.clusters

    # THEN each value comes from the most specific level that sets it
    assert (a.region, a.kubernetes_version) == ("eu-west-1", "1.31")
    assert (b.region, b.kubernetes_version) == ("us-east-1", "1.32")


def test_a_cluster_entry_replaces_node_group_lists_whole(write_fleet: FleetWriter) -> None:
    # GIVEN base default node groups and a cluster with its own list
    base = {**MINIMAL_BASE, "clusterDefaults": {"nodeGroups": [{"name": "system"}, {"name": "gpu"}]}}
    env = {"clusters": [cluster("a", nodeGroups=[{"name": "only", "minSize": 1, "desiredSize": 1}])]}

    # WHEN loaded
    (a,) = load_fleet(write_fleet(base=base, envs={"staging": env})).fleet.clusters

    # THEN only the cluster's node group exists
    assert [(g.name, g.min_size, g.desired_size) for g in a.node_groups] == [("only", 1, 1)]


def test_null_in_a_cluster_entry_replaces_the_default(write_fleet: FleetWriter) -> None:
    # GIVEN default node groups in the base and nodeGroups: null in the cluster entry
    base = {**MINIMAL_BASE, "clusterDefaults": {"nodeGroups": [{"name": "system"}]}}
    env = {"clusters": [cluster("a", nodeGroups=None)]}

    # WHEN loaded THEN null replaced the list (it did not delete the key) and the model refuses it
    assert problems_of(write_fleet(base=base, envs={"staging": env})) == [
        "environments/staging.yaml: clusters[0].nodeGroups: expected a list, got null"
    ]


def test_null_in_packs_replaces_a_section(write_fleet: FleetWriter) -> None:
    # GIVEN a pack configured in the base and set to null for one cluster
    base = {**MINIMAL_BASE, "packs": {"metrics-server": {"replicas": 2}}}
    env = {"clusters": [cluster("a", packs={"metrics-server": None})]}

    # WHEN loaded THEN the section is null (the pack's defaults), not removed
    (a,) = load_fleet(write_fleet(base=base, envs={"staging": env})).fleet.clusters
    assert a.packs == {"metrics-server": None}


def test_an_empty_environment_file_is_an_environment_without_clusters(write_fleet: FleetWriter) -> None:
    # GIVEN an empty staging.yaml WHEN loaded THEN staging exists with no clusters
    fleet = load_fleet(write_fleet(envs={"staging": ""})).fleet
    assert [(env.name, env.clusters) for env in fleet.environments] == [("staging", ())]


def test_non_yaml_and_hidden_files_are_ignored(write_fleet: FleetWriter) -> None:
    # GIVEN a README and a hidden editor file next to the definition
    root = write_fleet()
    (root / "environments" / "README.md").write_text("notes")
    (root / "environments" / ".staging.yaml").write_text("not: [valid")

    # WHEN loaded THEN only staging.yaml is an environment
    assert [env.name for env in load_fleet(root).fleet.environments] == ["staging"]


def test_pack_origins_name_where_each_pack_section_was_written(write_fleet: FleetWriter) -> None:
    # GIVEN packs at base, environment and cluster level
    base = {**MINIMAL_BASE, "packs": {"metrics-server": {}, "podinfo": {}}}
    env = {
        "packs": {"podinfo": {"replicas": 2}},
        "clusters": [cluster("a", packs={"podinfo": {"message": "x"}})],
    }

    # WHEN loaded
    loaded = load_fleet(write_fleet(base=base, envs={"staging": env}))

    # THEN each cluster's origins point at the most specific writer of a location
    origins = loaded.pack_origins["a"]
    assert origins.describe(("podinfo", "message")) == "environments/staging.yaml: clusters[0].packs.podinfo.message"
    assert origins.describe(("podinfo", "replicas")) == "environments/staging.yaml: packs.podinfo.replicas"
    assert origins.describe(("metrics-server",)) == "environments/base.yaml: packs.metrics-server"
    assert loaded.pack_origins["hub"].describe(("podinfo",)) == "environments/base.yaml: packs.podinfo"
    assert loaded.environment_pack_origins["staging"].describe(("podinfo", "replicas")) == (
        "environments/staging.yaml: packs.podinfo.replicas"
    )
    assert loaded.environment_pack_origins[""].describe(("podinfo",)) == "environments/base.yaml: packs.podinfo"


# -- the folder and its files --------------------------------------------------------------------


def test_a_missing_environments_folder_is_reported(tmp_path: Path) -> None:
    # GIVEN a project without environments/ WHEN loaded THEN one line says what to create
    assert problems_of(tmp_path) == [
        f"{tmp_path / 'environments'}: folder not found; create it with base.yaml and one file per environment "
        "(see 'The fleet definition' in fluxplane's documentation)"
    ]


def test_a_missing_base_file_is_reported(write_fleet: FleetWriter) -> None:
    # GIVEN environments/ with staging.yaml but no base.yaml
    root = write_fleet()
    (root / "environments" / "base.yaml").unlink()

    # WHEN loaded THEN the base file is reported missing, by its path under the project
    assert problems_of(root) == ["environments/base.yaml: file not found"]


def test_a_missing_base_file_and_a_bad_environment_file_are_reported_together(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN no base.yaml and a staging.yaml with an unknown key
    root = write_fleet(envs={"staging": {"cluster": []}})
    (root / "environments" / "base.yaml").unlink()

    # WHEN loaded THEN both problems are reported
    assert problems_of(root) == [
        "environments/base.yaml: file not found",
        f'environments/staging.yaml: cluster: unknown field; did you mean "clusters"? {ENV_ALLOWED}',
    ]


def test_an_environments_folder_without_environment_files_is_reported(write_fleet: FleetWriter) -> None:
    # GIVEN only base.yaml WHEN loaded THEN the missing environment files are reported
    assert problems_of(write_fleet(envs={})) == [
        "environments: no environment files; add one per environment, e.g. staging.yaml"
    ]


def test_an_empty_environments_folder_reports_base_and_environments(tmp_path: Path) -> None:
    # GIVEN an empty environments/ WHEN loaded THEN both the base and the environments are missing
    (tmp_path / "environments").mkdir()
    assert problems_of(tmp_path) == [
        "environments/base.yaml: file not found",
        "environments: no environment files; add one per environment, e.g. staging.yaml",
    ]


@pytest.mark.parametrize("stem", ["Staging", "my_env", "-x", "x-", "a.b", "a" * 64])
def test_an_environment_file_name_must_be_a_dns_label(write_fleet: FleetWriter, stem: str) -> None:
    # GIVEN an environment file whose name is not a DNS-1123 label
    root = write_fleet(envs={stem: {"clusters": [cluster()]}})

    # WHEN loaded THEN the file is named and the user is told to rename it
    assert problems_of(root) == [
        f'environments/{stem}.yaml: environment name "{stem}" must be a DNS-1123 label '
        "(lower-case letters, digits and '-'); rename the file"
    ]


def test_a_yml_environment_file_is_reported(write_fleet: FleetWriter) -> None:
    # GIVEN staging.yml instead of staging.yaml
    root = write_fleet(envs={"production": {"clusters": [cluster("p")]}})
    (root / "environments" / "staging.yml").write_text("clusters: []\n")

    # WHEN loaded THEN the extension is reported
    assert problems_of(root) == ["environments/staging.yml: use the .yaml extension"]


def test_an_environment_named_base_is_not_possible_and_base_yml_is_reported(write_fleet: FleetWriter) -> None:
    # GIVEN the base written as base.yml (the only way to have a second file called base)
    root = write_fleet()
    env_dir = root / "environments"
    (env_dir / "base.yaml").rename(env_dir / "base.yml")

    # WHEN loaded THEN base.yaml is missing and base.yml is reported by its extension
    assert problems_of(root) == [
        "environments/base.yaml: file not found",
        "environments/base.yml: use the .yaml extension",
    ]


def test_invalid_yaml_is_reported_with_line_and_column(write_fleet: FleetWriter) -> None:
    # GIVEN a staging.yaml with a syntax error
    root = write_fleet(envs={"staging": "clusters:\n  - name: a\n   region: us-west-2\n"})

    # WHEN loaded THEN the file, line and column are named
    assert problems_of(root) == ["environments/staging.yaml:3:4: invalid YAML: did not find expected '-' indicator"]


def test_invalid_yaml_in_two_files_is_reported_together(write_fleet: FleetWriter) -> None:
    # GIVEN a duplicate key in base.yaml and an alias in staging.yaml
    base = (
        "repositories:\n  platform:\n    url: ssh://git@example.com/x.git\n"
        "management:\n  region: us-west-2\nmanagement:\n  region: us-east-1\n"
    )
    env = "clusters:\n  - &c {name: a, region: us-west-2}\n  - *c\n"

    # WHEN loaded THEN both files' problems are reported
    assert problems_of(write_fleet(base=base, envs={"staging": env})) == [
        "environments/base.yaml:6:1: invalid YAML: duplicate key 'management'",
        "environments/staging.yaml:3:5: invalid YAML: aliases (*name) are not allowed; write the value out",
    ]


@pytest.mark.parametrize(
    ("text", "found"),
    [("- a\n- b\n", "a list"), ("hello\n", '"hello"'), ("42\n", "42")],
    ids=["list", "str", "int"],
)
def test_a_top_level_that_is_not_a_mapping_is_reported(write_fleet: FleetWriter, text: str, found: str) -> None:
    # GIVEN an environment file and a base file whose top level is not a mapping
    root = write_fleet(base=text, envs={"staging": text})

    # WHEN loaded THEN each file is reported with what it holds
    assert problems_of(root) == [
        f"environments/base.yaml: expected a mapping at the top level, got {found}",
        f"environments/staging.yaml: expected a mapping at the top level, got {found}",
    ]


def test_an_empty_base_file_reports_its_required_sections(write_fleet: FleetWriter) -> None:
    # GIVEN an empty base.yaml WHEN loaded THEN its two required sections are reported
    assert problems_of(write_fleet(base="")) == [
        "environments/base.yaml: repositories: required field is missing",
        "environments/base.yaml: management: required field is missing",
    ]


# -- unknown keys --------------------------------------------------------------------------------


def test_unknown_base_key_lists_the_allowed_keys(write_fleet: FleetWriter) -> None:
    # GIVEN a typo at the base file's top level WHEN loaded THEN the allowed keys are listed
    assert problems_of(write_fleet(base={**MINIMAL_BASE, "cluster_defaults": {}})) == [
        f'environments/base.yaml: cluster_defaults: unknown field; did you mean "clusterDefaults"? {BASE_ALLOWED}'
    ]


def test_unknown_environment_key_lists_the_allowed_keys(write_fleet: FleetWriter) -> None:
    # GIVEN a base-only key in an environment file WHEN loaded THEN the environment's keys are listed
    env = {"flux": {"interval": "1m"}, "clusters": [cluster()]}
    assert problems_of(write_fleet(envs={"staging": env})) == [
        f"environments/staging.yaml: flux: unknown field; {ENV_ALLOWED}"
    ]


def test_unknown_cluster_key_lists_the_cluster_keys(write_fleet: FleetWriter) -> None:
    # GIVEN a miscased key in a cluster entry WHEN loaded THEN the cluster's keys are listed
    env = {"clusters": [cluster(nodegroups=[])]}
    assert problems_of(write_fleet(envs={"staging": env})) == [
        'environments/staging.yaml: clusters[0].nodegroups: unknown field; did you mean "nodeGroups"? '
        f"{CLUSTER_ALLOWED}"
    ]


def test_unknown_node_group_key_in_base_defaults_is_reported_against_base(write_fleet: FleetWriter) -> None:
    # GIVEN an unknown node group key in base.yaml's clusterDefaults
    base = {**MINIMAL_BASE, "clusterDefaults": {"nodeGroups": [{"name": "system", "size": 3}]}}

    # WHEN loaded THEN base.yaml and the path inside clusterDefaults are named, with the allowed keys
    assert problems_of(write_fleet(base=base)) == [
        f"environments/base.yaml: clusterDefaults.nodeGroups[0].size: unknown field; {NODE_GROUP_ALLOWED}"
    ]


def test_unknown_nested_keys_in_repositories_and_management(write_fleet: FleetWriter) -> None:
    # GIVEN unknown keys in two nested base sections
    base = {
        "repositories": {"platform": {"url": "ssh://git@example.com/x.git", "ref": "main"}, "apps": {}},
        "management": {"region": "us-west-2", "nodeGroups": []},
    }

    # WHEN loaded THEN each is reported with its own allowed keys
    assert problems_of(write_fleet(base=base)) == [
        "environments/base.yaml: repositories.platform.ref: unknown field; allowed: url, branch, secretRef, path",
        "environments/base.yaml: repositories.apps: unknown field; allowed: platform, workloads",
        "environments/base.yaml: management.nodeGroups: unknown field; "
        "allowed: name, region, kubernetesVersion, packs, fluxRoleArn, bootstrap, egressCidrs",
    ]


# -- wrong types ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"clusters": {"name": "a"}}, "environments/staging.yaml: clusters: expected a list, got a mapping"),
        ({"clusters": ["a"]}, 'environments/staging.yaml: clusters[0]: expected a mapping, got "a"'),
        ({"clusters": None}, "environments/staging.yaml: clusters: expected a list, got null"),
        (
            {"clusterDefaults": []},
            "environments/staging.yaml: clusterDefaults: expected a mapping, got a list",
        ),
        ({"packs": "podinfo"}, 'environments/staging.yaml: packs: expected a mapping, got "podinfo"'),
        (
            {"clusters": [{"name": 12, "region": "us-west-2"}]},
            "environments/staging.yaml: clusters[0].name: expected a string, got 12",
        ),
        (
            {"clusters": [cluster(region=None)]},
            "environments/staging.yaml: clusters[0].region: expected a string, got null",
        ),
        (
            {"clusters": [cluster(packs=[])]},
            "environments/staging.yaml: clusters[0].packs: expected a mapping, got a list",
        ),
        (
            {"clusters": [cluster(nodeGroups=[{"name": "a", "minSize": "two"}])]},
            'environments/staging.yaml: clusters[0].nodeGroups[0].minSize: expected an integer, got "two"',
        ),
        (
            {"clusters": [cluster(nodeGroups=[{"name": "a", "minSize": 1.5}])]},
            "environments/staging.yaml: clusters[0].nodeGroups[0].minSize: expected an integer, got 1.5",
        ),
        (
            {"clusters": [cluster(nodeGroups=[{"name": "a", "labels": ["x"]}])]},
            "environments/staging.yaml: clusters[0].nodeGroups[0].labels: expected a mapping, got a list",
        ),
        (
            {"clusters": [cluster(nodeGroups=[{"name": "a", "instanceTypes": "m7i.large"}])]},
            'environments/staging.yaml: clusters[0].nodeGroups[0].instanceTypes: expected a list, got "m7i.large"',
        ),
        (
            {"clusters": [cluster(nodeGroups=[{"name": "a", "capacityType": "spot"}])]},
            "environments/staging.yaml: clusters[0].nodeGroups[0].capacityType: "
            "expected one of 'ON_DEMAND' or 'SPOT', got \"spot\"",
        ),
        (
            {"clusters": [cluster(nodeGroups=[{"name": "a", "taints": [{"key": "k", "effect": "Nope"}]}])]},
            "environments/staging.yaml: clusters[0].nodeGroups[0].taints[0].effect: "
            "expected one of 'NoSchedule', 'PreferNoSchedule' or 'NoExecute', got \"Nope\"",
        ),
    ],
    ids=[
        "clusters-mapping",
        "cluster-string",
        "clusters-null",
        "defaults-list",
        "packs-string",
        "name-int",
        "region-null",
        "cluster-packs-list",
        "size-string",
        "size-float",
        "labels-list",
        "instance-types-string",
        "capacity-type",
        "taint-effect",
    ],
)
def test_wrong_types_in_an_environment_file(write_fleet: FleetWriter, env: dict[str, Any], expected: str) -> None:
    # GIVEN one value of the wrong type WHEN loaded THEN one line names the path, the type and the value
    assert problems_of(write_fleet(envs={"staging": env})) == [expected]


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        (
            {**MINIMAL_BASE, "flux": {"interval": 10}},
            "environments/base.yaml: flux.interval: expected a string, got 10",
        ),
        ({**MINIMAL_BASE, "flux": "fast"}, 'environments/base.yaml: flux: expected a mapping, got "fast"'),
        (
            {**MINIMAL_BASE, "repositories": []},
            "environments/base.yaml: repositories: expected a mapping, got a list",
        ),
        (
            {**MINIMAL_BASE, "packs": ["metrics-server"]},
            "environments/base.yaml: packs: expected a mapping, got a list",
        ),
        (
            {**MINIMAL_BASE, "management": {"region": "us-west-2", "name": True}},
            "environments/base.yaml: management.name: expected a string, got true",
        ),
    ],
    ids=["interval-int", "flux-string", "repositories-list", "packs-list", "name-bool"],
)
def test_wrong_types_in_the_base_file(write_fleet: FleetWriter, base: dict[str, Any], expected: str) -> None:
    # GIVEN one value of the wrong type in base.yaml WHEN loaded THEN one line names it
    assert problems_of(write_fleet(base=base)) == [expected]


# -- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a/b", "../x", "UPPER", "-x", "x-", "a.b", ""])
def test_cluster_names_must_be_dns_labels(write_fleet: FleetWriter, name: str) -> None:
    # GIVEN a cluster name that is not a DNS-1123 label (some would escape their dist/ folder)
    root = write_fleet(envs={"staging": {"clusters": [cluster(name)]}})

    # WHEN loaded THEN what is allowed and the name found are shown
    assert problems_of(root) == [f'environments/staging.yaml: clusters[0].name: {DNS_HELP}, got "{name}"']


def test_cluster_names_longer_than_63_characters_are_refused(write_fleet: FleetWriter) -> None:
    # GIVEN a 64-character name WHEN loaded THEN the limit, the length and the name are shown
    root = write_fleet(envs={"staging": {"clusters": [cluster("a" * 64)]}})
    assert problems_of(root) == [
        f'environments/staging.yaml: clusters[0].name: expected at most 63 characters, got 64: "{"a" * 64}"'
    ]


@pytest.mark.parametrize("name", ["Hub", "hub/x", "../hub"])
def test_the_management_cluster_name_must_be_a_dns_label(write_fleet: FleetWriter, name: str) -> None:
    # GIVEN a bad management cluster name WHEN loaded THEN base.yaml's management.name is named
    base = {**MINIMAL_BASE, "management": {"name": name, "region": "us-west-2"}}
    assert problems_of(write_fleet(base=base)) == [f'environments/base.yaml: management.name: {DNS_HELP}, got "{name}"']


def test_node_group_names_must_be_dns_labels(write_fleet: FleetWriter) -> None:
    # GIVEN a node group name with a path separator WHEN loaded THEN its path is named
    root = write_fleet(envs={"staging": {"clusters": [cluster(nodeGroups=[{"name": "a/b"}])]}})
    assert problems_of(root) == [f'environments/staging.yaml: clusters[0].nodeGroups[0].name: {DNS_HELP}, got "a/b"']


def test_duplicate_cluster_names_within_one_environment(write_fleet: FleetWriter) -> None:
    # GIVEN two clusters called "a" in staging.yaml
    root = write_fleet(envs={"staging": {"clusters": [cluster("a"), cluster("b"), cluster("a")]}})

    # WHEN loaded THEN the second is reported with where the name was first used
    assert problems_of(root) == [
        'environments/staging.yaml: clusters[2].name: duplicate cluster name "a", '
        "already used at environments/staging.yaml: clusters[0].name"
    ]


def test_duplicate_cluster_names_across_environments(write_fleet: FleetWriter) -> None:
    # GIVEN a cluster called "shared" in production.yaml and in staging.yaml
    root = write_fleet(
        envs={
            "production": {"clusters": [cluster("shared")]},
            "staging": {"clusters": [cluster("x"), cluster("shared")]},
        }
    )

    # WHEN loaded THEN the later file (in name order) is reported, pointing at the earlier one
    assert problems_of(root) == [
        'environments/staging.yaml: clusters[1].name: duplicate cluster name "shared", '
        "already used at environments/production.yaml: clusters[0].name"
    ]


def test_a_workload_cluster_may_not_reuse_the_management_cluster_name(write_fleet: FleetWriter) -> None:
    # GIVEN a workload cluster called "hub" WHEN loaded THEN it collides with management.name
    root = write_fleet(envs={"staging": {"clusters": [cluster("hub")]}})
    assert problems_of(root) == [
        'environments/staging.yaml: clusters[0].name: duplicate cluster name "hub", '
        "already used at environments/base.yaml: management.name"
    ]


def test_duplicate_node_group_names_are_reported(write_fleet: FleetWriter) -> None:
    # GIVEN two node groups with one name WHEN loaded THEN the repeated name is shown
    root = write_fleet(envs={"staging": {"clusters": [cluster(nodeGroups=[{"name": "a"}, {"name": "a"}])]}})
    assert problems_of(root) == [
        "environments/staging.yaml: clusters[0].nodeGroups: node group names must be unique, 'a' repeated"
    ]


# -- node group sizes ----------------------------------------------------------------------------


def test_node_group_min_size_above_max_size(write_fleet: FleetWriter) -> None:
    # GIVEN minSize 5 and maxSize 3
    group = {"name": "a", "minSize": 5, "maxSize": 3, "desiredSize": 4}
    root = write_fleet(envs={"staging": {"clusters": [cluster(nodeGroups=[group])]}})

    # WHEN loaded THEN the node group is named with both values
    assert problems_of(root) == [
        "environments/staging.yaml: clusters[0].nodeGroups[0]: minSize (5) must not exceed maxSize (3)"
    ]


@pytest.mark.parametrize(
    ("desired", "expected"),
    [(4, "desiredSize (4) must lie between minSize (1) and maxSize (3)")],
)
def test_node_group_desired_size_out_of_range(write_fleet: FleetWriter, desired: int, expected: str) -> None:
    # GIVEN desiredSize above maxSize WHEN loaded THEN the three values are shown
    group = {"name": "a", "minSize": 1, "maxSize": 3, "desiredSize": desired}
    root = write_fleet(envs={"staging": {"clusters": [cluster(nodeGroups=[group])]}})
    assert problems_of(root) == [f"environments/staging.yaml: clusters[0].nodeGroups[0]: {expected}"]


def test_node_group_desired_size_zero(write_fleet: FleetWriter) -> None:
    # GIVEN desiredSize 0 (the style guide's own example)
    group = {"name": "a", "minSize": 0, "desiredSize": 0}
    root = write_fleet(envs={"production": {"clusters": [cluster("p1"), cluster("p2", nodeGroups=[group])]}})

    # WHEN loaded THEN the exact line is produced
    assert problems_of(root) == [
        "environments/production.yaml: clusters[1].nodeGroups[0].desiredSize: expected an integer >= 1, got 0"
    ]


def test_node_group_size_errors_from_base_defaults_are_reported_against_base(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN minSize > maxSize in base.yaml's clusterDefaults, used by one cluster
    base = {
        **MINIMAL_BASE,
        "clusterDefaults": {"nodeGroups": [{"name": "system", "minSize": 9, "maxSize": 3}]},
    }

    # WHEN loaded THEN base.yaml's clusterDefaults path is named
    assert problems_of(write_fleet(base=base)) == [
        "environments/base.yaml: clusterDefaults.nodeGroups[0]: minSize (9) must not exceed maxSize (3)"
    ]


def test_an_empty_node_group_list_is_refused(write_fleet: FleetWriter) -> None:
    # GIVEN nodeGroups: [] WHEN loaded THEN at least one is asked for
    root = write_fleet(envs={"staging": {"clusters": [cluster(nodeGroups=[])]}})
    assert problems_of(root) == [
        "environments/staging.yaml: clusters[0].nodeGroups: give at least one node group, or set autoMode.enabled: true"
    ]


def test_an_auto_mode_cluster_leaves_off_the_node_groups_it_inherits_with_a_note(write_fleet: FleetWriter) -> None:
    # GIVEN node groups in the base's clusterDefaults and an Auto Mode cluster that names none
    base = {**MINIMAL_BASE, "clusterDefaults": {"nodeGroups": [{"name": "system"}]}}
    env = {"clusters": [cluster("a", autoMode={"enabled": True}), cluster("b")]}

    # WHEN loaded
    loaded = load_fleet(write_fleet(base=base, envs={"staging": env}))

    # THEN the Auto Mode cluster has none, the other keeps them, and a note says where they were left off
    a, b = loaded.fleet.clusters
    assert (a.node_groups, [group.name for group in b.node_groups]) == ([], ["system"])
    assert loaded.notes == (
        'environments/base.yaml: clusterDefaults.nodeGroups: left off Auto Mode cluster "a": EKS Auto Mode launches '
        "its nodes",
    )


def test_an_auto_mode_cluster_that_names_node_groups_is_refused_there(write_fleet: FleetWriter) -> None:
    env = {"clusters": [cluster("a", autoMode={"enabled": True}, nodeGroups=[{"name": "system"}])]}
    assert problems_of(write_fleet(envs={"staging": env})) == [
        "environments/staging.yaml: clusters[0].nodeGroups: an Auto Mode cluster has no managed node groups: EKS "
        "launches its nodes (autoMode.nodePools and autoMode.customNodePools); remove nodeGroups, or set "
        "autoMode.enabled: false"
    ]


# -- kubernetesVersion, region, repository -------------------------------------------------------


def test_kubernetes_version_out_of_eks_support(write_fleet: FleetWriter) -> None:
    # GIVEN kubernetesVersion "1.28" (quoted) WHEN loaded THEN the supported versions and the end date are named
    root = write_fleet(
        envs={"staging": 'clusters:\n  - name: a\n    region: us-west-2\n    kubernetesVersion: "1.28"\n'}
    )
    assert problems_of(root) == [
        "environments/staging.yaml: clusters[0].kubernetesVersion: expected a Kubernetes version EKS supports "
        '(1.31 to 1.37), got "1.28": its extended support ended on 2025-11-26'
    ]


def test_kubernetes_version_with_a_one_digit_minor(write_fleet: FleetWriter) -> None:
    # GIVEN kubernetesVersion "1.3" (quoted) WHEN loaded THEN the expected form is shown
    root = write_fleet(
        envs={"staging": 'clusters:\n  - name: a\n    region: us-west-2\n    kubernetesVersion: "1.3"\n'}
    )
    assert problems_of(root) == [f'environments/staging.yaml: clusters[0].kubernetesVersion: {VERSION_HELP}, got "1.3"']


@pytest.mark.parametrize(("written", "found"), [("1.3", "1.3"), ("1.33", "1.33")])
def test_unquoted_kubernetes_version_asks_for_quotes(write_fleet: FleetWriter, written: str, found: str) -> None:
    # GIVEN kubernetesVersion written without quotes (YAML reads a float)
    root = write_fleet(
        envs={"staging": f"clusters:\n  - name: a\n    region: us-west-2\n    kubernetesVersion: {written}\n"}
    )

    # WHEN loaded THEN the line shows the quoted form that is expected
    assert problems_of(root) == [
        f"environments/staging.yaml: clusters[0].kubernetesVersion: {VERSION_HELP}, got {found}: YAML reads an "
        "unquoted version as a number (1.30 becomes 1.3), so quote it"
    ]


@pytest.mark.parametrize("region", ["uswest2", "US-WEST-2", "us-west"])
def test_bad_region_in_a_cluster_entry(write_fleet: FleetWriter, region: str) -> None:
    # GIVEN a region that is not an AWS region WHEN loaded THEN an example region is shown
    root = write_fleet(envs={"staging": {"clusters": [cluster(region=region)]}})
    assert problems_of(root) == [f'environments/staging.yaml: clusters[0].region: {REGION_HELP}, got "{region}"']


def test_missing_region_is_reported_against_the_cluster_entry(write_fleet: FleetWriter) -> None:
    # GIVEN a cluster without a region and no default WHEN loaded THEN the entry is named
    root = write_fleet(envs={"staging": {"clusters": [{"name": "a"}]}})
    assert problems_of(root) == ["environments/staging.yaml: clusters[0].region: required field is missing"]


def test_bad_region_in_base_defaults_is_reported_against_base(write_fleet: FleetWriter) -> None:
    # GIVEN a bad region in base.yaml's clusterDefaults, not overridden
    base = {**MINIMAL_BASE, "clusterDefaults": {"region": "US"}}
    root = write_fleet(base=base, envs={"staging": {"clusters": [{"name": "a"}]}})

    # WHEN loaded THEN base.yaml's clusterDefaults.region is named
    assert problems_of(root) == [
        'environments/base.yaml: clusterDefaults.region: expected an AWS region such as us-west-2, got "US"'
    ]


def test_bad_region_in_environment_defaults_is_reported_against_the_environment(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN a good region in the base defaults and a bad one in staging's defaults
    base = {**MINIMAL_BASE, "clusterDefaults": {"region": "us-west-2"}}
    env = {"clusterDefaults": {"region": "US"}, "clusters": [{"name": "a"}]}

    # WHEN loaded THEN staging.yaml's clusterDefaults.region is named
    assert problems_of(write_fleet(base=base, envs={"staging": env})) == [
        f'environments/staging.yaml: clusterDefaults.region: {REGION_HELP}, got "US"'
    ]


def test_a_bad_default_overridden_by_the_entry_is_not_reported(write_fleet: FleetWriter) -> None:
    # GIVEN a bad region in base defaults that the only cluster overrides
    base = {**MINIMAL_BASE, "clusterDefaults": {"region": "US"}}

    # WHEN loaded THEN the merged cluster is valid
    (a,) = load_fleet(write_fleet(base=base, envs={"staging": {"clusters": [cluster("a")]}})).fleet.clusters
    assert a.region == "us-west-2"


@pytest.mark.parametrize("url", ["git@github.com:org/fleet.git", "http://example.com/fleet.git", "fleet"])
def test_bad_repository_url(write_fleet: FleetWriter, url: str) -> None:
    # GIVEN a URL Flux cannot use WHEN loaded THEN ssh:// or https:// is asked for
    base = {**MINIMAL_BASE, "repositories": {"platform": {"url": url}}}
    assert problems_of(write_fleet(base=base)) == [
        f'environments/base.yaml: repositories.platform.url: expected an ssh:// or https:// Git URL, got "{url}"'
    ]


def test_missing_repository_url(write_fleet: FleetWriter) -> None:
    # GIVEN a platform repository without url WHEN loaded THEN the url is required
    base = {**MINIMAL_BASE, "repositories": {"platform": {"branch": "main"}}}
    assert problems_of(write_fleet(base=base)) == [
        "environments/base.yaml: repositories.platform.url: required field is missing"
    ]


def test_absolute_repository_path(write_fleet: FleetWriter) -> None:
    # GIVEN an absolute path WHEN loaded THEN a relative path is asked for
    base = {**MINIMAL_BASE, "repositories": {"platform": {"url": "ssh://x/y.git", "path": "/dist"}}}
    assert problems_of(write_fleet(base=base)) == [
        "environments/base.yaml: repositories.platform.path: expected a relative path such as dist/platform "
        "(no leading '/', no '..'), got \"/dist\""
    ]


def test_repository_path_with_parent_segments_shows_the_value(write_fleet: FleetWriter) -> None:
    # GIVEN a path that leaves the repository
    base = {**MINIMAL_BASE, "repositories": {"platform": {"url": "ssh://x/y.git", "path": "dist/../../etc"}}}

    # WHEN loaded THEN the line says what is allowed and shows the path found
    (line,) = problems_of(write_fleet(base=base))
    assert line.startswith("environments/base.yaml: repositories.platform.path: ")
    assert line.endswith(', got "dist/../../etc"')


# -- clusterDefaults may not set name or packs ---------------------------------------------------


def test_name_and_packs_in_base_cluster_defaults(write_fleet: FleetWriter) -> None:
    # GIVEN name and packs in base.yaml's clusterDefaults
    base = {**MINIMAL_BASE, "clusterDefaults": {"name": "x", "packs": {"podinfo": {}}}}

    # WHEN loaded THEN each is refused with where it belongs
    assert problems_of(write_fleet(base=base)) == [
        "environments/base.yaml: clusterDefaults.name: not allowed here; set it in each cluster's own entry",
        "environments/base.yaml: clusterDefaults.packs: not allowed here; set it in the top-level 'packs' section",
    ]


def test_name_and_packs_in_environment_cluster_defaults(write_fleet: FleetWriter) -> None:
    # GIVEN name and packs in staging.yaml's clusterDefaults
    env = {"clusterDefaults": {"packs": {}, "name": "x"}, "clusters": [cluster()]}

    # WHEN loaded THEN each is refused, in a fixed order
    assert problems_of(write_fleet(envs={"staging": env})) == [
        f"environments/staging.yaml: clusterDefaults.name: {NAME_NOT_ALLOWED}",
        f"environments/staging.yaml: clusterDefaults.packs: {PACKS_NOT_ALLOWED}",
    ]


def test_unknown_keys_in_cluster_defaults_are_reported_against_defaults(write_fleet: FleetWriter) -> None:
    # GIVEN a typo in staging's clusterDefaults WHEN loaded THEN the defaults path is named
    env = {"clusterDefaults": {"regoin": "us-west-2"}, "clusters": [cluster()]}
    assert problems_of(write_fleet(envs={"staging": env})) == [
        f'environments/staging.yaml: clusterDefaults.regoin: unknown field; did you mean "region"? {CLUSTER_ALLOWED}'
    ]


# -- all problems at once ------------------------------------------------------------------------


def test_several_problems_in_one_cluster_are_reported_together(write_fleet: FleetWriter) -> None:
    # GIVEN one cluster entry with three problems
    entry = {"name": "A", "region": "nowhere", "nodeGroups": [{"name": "g", "desiredSize": 0}], "extra": 1}

    # WHEN loaded THEN all three are reported, in field order
    assert problems_of(write_fleet(envs={"staging": {"clusters": [entry]}})) == [
        f'environments/staging.yaml: clusters[0].name: {DNS_HELP}, got "A"',
        f'environments/staging.yaml: clusters[0].region: {REGION_HELP}, got "nowhere"',
        "environments/staging.yaml: clusters[0].nodeGroups[0].desiredSize: expected an integer >= 1, got 0",
        f"environments/staging.yaml: clusters[0].extra: unknown field; {CLUSTER_ALLOWED}",
    ]


def test_several_problems_in_two_files_are_reported_together(write_fleet: FleetWriter) -> None:
    # GIVEN problems in two clusters of production.yaml and one of staging.yaml
    production = {
        "clusters": [
            cluster("p-1", nodeGroups=[{"name": "g", "minSize": 0, "desiredSize": 0}]),
            cluster("p-2", region="eu"),
            cluster("p-3"),
        ]
    }
    staging = {"clusters": [cluster("Staging/1"), cluster("p-3")]}

    # WHEN loaded
    problems = problems_of(write_fleet(envs={"production": production, "staging": staging}))

    # THEN every problem of both files is listed, files in name order, one line each
    assert problems == [
        "environments/production.yaml: clusters[0].nodeGroups[0].desiredSize: expected an integer >= 1, got 0",
        f'environments/production.yaml: clusters[1].region: {REGION_HELP}, got "eu"',
        f'environments/staging.yaml: clusters[0].name: {DNS_HELP}, got "Staging/1"',
        'environments/staging.yaml: clusters[1].name: duplicate cluster name "p-3", '
        "already used at environments/production.yaml: clusters[2].name",
    ]


def test_problems_in_base_and_in_an_environment_file_are_reported_together(write_fleet: FleetWriter) -> None:
    # GIVEN an unknown key in base.yaml and a badly named environment file and an invalid one
    root = write_fleet(
        base={**MINIMAL_BASE, "extra": 1},
        envs={"Prod": {"clusters": []}, "staging": "clusters: [\n"},
    )

    # WHEN loaded THEN all three files are reported
    assert problems_of(root) == [
        f"environments/base.yaml: extra: unknown field; {BASE_ALLOWED}",
        'environments/Prod.yaml: environment name "Prod" must be a DNS-1123 label '
        "(lower-case letters, digits and '-'); rename the file",
        "environments/staging.yaml:2:1: invalid YAML: did not find expected node content",
    ]


def test_a_problem_in_base_does_not_hide_cluster_problems(write_fleet: FleetWriter) -> None:
    # GIVEN a bad flux.interval in base.yaml and a bad cluster name in staging.yaml
    base = {**MINIMAL_BASE, "flux": {"interval": "10 minutes"}}
    root = write_fleet(base=base, envs={"staging": {"clusters": [cluster("S")]}})

    # WHEN loaded THEN both problems are reported at once, base.yaml first
    assert problems_of(root) == [
        'environments/base.yaml: flux.interval: expected a duration such as 30s, 5m or 1h30m, got "10 minutes"',
        f'environments/staging.yaml: clusters[0].name: {DNS_HELP}, got "S"',
    ]


def test_an_invalid_base_still_lends_its_cluster_defaults(write_fleet: FleetWriter) -> None:
    # GIVEN a base without repositories whose clusterDefaults hold the region and a bad node group
    base = {
        "management": {"region": "us-west-2"},
        "clusterDefaults": {"region": "us-west-2", "nodeGroups": [{"name": "g", "minSize": 5, "maxSize": 1}]},
    }
    root = write_fleet(base=base, envs={"staging": {"clusters": [{"name": "a"}]}})

    # WHEN loaded THEN the cluster is checked against those defaults: no missing region, the node group named
    assert problems_of(root) == [
        "environments/base.yaml: repositories: required field is missing",
        "environments/base.yaml: clusterDefaults.nodeGroups[0]: minSize (5) must not exceed maxSize (1)",
    ]


def test_a_cluster_with_problems_still_claims_its_name(write_fleet: FleetWriter) -> None:
    # GIVEN a cluster "x" with a bad region in production.yaml and another "x" in staging.yaml
    root = write_fleet(
        envs={
            "production": {"clusters": [cluster("x", region="eu")]},
            "staging": {"clusters": [cluster("x")]},
        }
    )

    # WHEN loaded THEN both the region and the duplicate name are reported
    assert problems_of(root) == [
        f'environments/production.yaml: clusters[0].region: {REGION_HELP}, got "eu"',
        'environments/staging.yaml: clusters[0].name: duplicate cluster name "x", '
        "already used at environments/production.yaml: clusters[0].name",
    ]


def test_an_unknown_top_level_key_does_not_hide_cluster_problems(write_fleet: FleetWriter) -> None:
    # GIVEN an unknown key and a bad cluster region in the same file
    root = write_fleet(envs={"staging": {"cluster_defaults": {}, "clusters": [cluster(region="nowhere")]}})

    # WHEN loaded THEN both problems are reported at once
    assert sorted(problems_of(root)) == sorted(
        [
            'environments/staging.yaml: cluster_defaults: unknown field; did you mean "clusterDefaults"? '
            f"{ENV_ALLOWED}",
            f'environments/staging.yaml: clusters[0].region: {REGION_HELP}, got "nowhere"',
        ]
    )


@pytest.mark.parametrize(
    ("base_defaults", "expected"),
    [
        (
            {"region": "US"},
            f'environments/base.yaml: clusterDefaults.region: {REGION_HELP}, got "US"',
        ),
        (
            {"region": "us-west-2", "name": "x"},
            f"environments/base.yaml: clusterDefaults.name: {NAME_NOT_ALLOWED}",
        ),
    ],
    ids=["bad-value", "forbidden-key"],
)
def test_a_bad_default_shared_by_several_clusters_is_reported_once(
    write_fleet: FleetWriter, base_defaults: dict[str, Any], expected: str
) -> None:
    # GIVEN a bad base default used by three clusters in two environments
    base = {**MINIMAL_BASE, "clusterDefaults": base_defaults}
    root = write_fleet(
        base=base,
        envs={
            "production": {"clusters": [{"name": "p"}]},
            "staging": {"clusters": [{"name": "a"}, {"name": "b"}]},
        },
    )

    # WHEN loaded THEN the problem is one line
    assert problems_of(root) == [expected]


def test_config_error_is_a_fluxplane_error_whose_message_is_the_lines(write_fleet: FleetWriter) -> None:
    # GIVEN two problems
    root = write_fleet(envs={"staging": {"clusters": [cluster("A"), cluster("B")]}})

    # WHEN loaded THEN the error is a FluxplaneError and its message is the lines joined by newlines
    with pytest.raises(FluxplaneError) as exc:
        load_fleet(root)
    assert isinstance(exc.value, ConfigError)
    assert str(exc.value) == "\n".join(
        [
            f'environments/staging.yaml: clusters[0].name: {DNS_HELP}, got "A"',
            f'environments/staging.yaml: clusters[1].name: {DNS_HELP}, got "B"',
        ]
    )


# -- values AWS does not have (fluxplane.config.awsdata) ---------------------------------------------

OVERRIDE = "environments/base.yaml"


def test_a_misspelt_instance_type_is_refused_where_it_is_written(write_fleet: FleetWriter) -> None:
    # GIVEN a node group whose instance type has two letters swapped
    group = {"name": "system", "instanceTypes": ["m7i.lrage", "m6i.xlarge"]}
    root = write_fleet(envs={"production": {"clusters": [cluster("p-1", nodeGroups=[group])]}})

    # WHEN loaded THEN that item is named with the type it is closest to, and how to add a newer type
    assert problems_of(root) == [
        "environments/production.yaml: clusters[0].nodeGroups[0].instanceTypes[0]: unknown EC2 instance type "
        '"m7i.lrage"; did you mean "m7i.large"? (a type newer than fluxplane\'s data: add it to '
        f"awsData.instanceTypes in {OVERRIDE})"
    ]


def test_a_misspelt_region_is_refused(write_fleet: FleetWriter) -> None:
    root = write_fleet(envs={"staging": {"clusters": [cluster(region="eu-wst-1")]}})
    assert problems_of(root) == [
        'environments/staging.yaml: clusters[0].region: unknown AWS region "eu-wst-1"; did you mean "eu-west-1"? '
        "(a region newer than fluxplane's data: add it with its availability zones to awsData.regions in "
        f"{OVERRIDE})"
    ]


def test_a_kubernetes_version_eks_does_not_have_is_refused(write_fleet: FleetWriter) -> None:
    root = write_fleet(envs={"staging": {"clusters": [cluster(kubernetesVersion="1.99")]}})
    assert problems_of(root) == [
        "environments/staging.yaml: clusters[0].kubernetesVersion: expected a Kubernetes version EKS supports "
        '(1.31 to 1.37), got "1.99" (a version newer than fluxplane\'s data: add it to awsData.kubernetesVersions '
        f"in {OVERRIDE})"
    ]


def test_more_availability_zones_than_the_region_has_are_refused(write_fleet: FleetWriter) -> None:
    # GIVEN six zones in ca-central-1, which has three
    root = write_fleet(
        envs={"staging": {"clusters": [cluster(region="ca-central-1", network={"availabilityZones": 6})]}}
    )

    # WHEN loaded THEN the region's zones are listed
    assert problems_of(root) == [
        "environments/staging.yaml: clusters[0].network.availabilityZones: ca-central-1 has 3 availability zones "
        "(ca-central-1a, ca-central-1b, ca-central-1d), got 6; use at most 3, or list your account's zones there "
        f"under awsData.regions in {OVERRIDE}"
    ]


def test_the_default_three_zones_do_not_fit_a_two_zone_region(write_fleet: FleetWriter) -> None:
    # GIVEN a cluster in us-west-1 (two zones for newer accounts) that keeps the default of three
    root = write_fleet(envs={"staging": {"clusters": [cluster(region="us-west-1")]}})

    # WHEN loaded THEN the default is refused where the cluster is defined
    assert problems_of(root)[0].startswith(
        "environments/staging.yaml: clusters[0].network.availabilityZones: us-west-1 has 2 availability zones "
    )


def test_a_cluster_with_another_problem_still_has_its_aws_values_checked(write_fleet: FleetWriter) -> None:
    # GIVEN a cluster with a bad desiredSize, a misspelt region and a misspelt instance type
    group = {"name": "system", "instanceTypes": ["m7i.lrage"], "desiredSize": 0}
    root = write_fleet(envs={"staging": {"clusters": [cluster(region="eu-wst-1", nodeGroups=[group])]}})

    # WHEN loaded THEN all three are reported in one run
    problems = problems_of(root)
    assert [line.split(": ")[1] for line in problems] == [
        "clusters[0].nodeGroups[0].desiredSize",
        "clusters[0].region",
        "clusters[0].nodeGroups[0].instanceTypes[0]",
    ]


def test_the_hub_and_the_sealing_key_are_checked_too(write_fleet: FleetWriter) -> None:
    # GIVEN a base file whose management region and version, and sealing key region, AWS does not have
    base = {
        **MINIMAL_BASE,
        "management": {"name": "hub", "region": "us-wets-2", "kubernetesVersion": "1.29"},
        "sealingKey": {"region": "eu-centrall-1"},
    }

    # WHEN loaded THEN each is reported against base.yaml
    assert problems_of(write_fleet(base=base)) == [
        'environments/base.yaml: management.region: unknown AWS region "us-wets-2"; did you mean "us-west-2"? '
        "(a region newer than fluxplane's data: add it with its availability zones to awsData.regions in "
        f"{OVERRIDE})",
        "environments/base.yaml: management.kubernetesVersion: expected a Kubernetes version EKS supports "
        '(1.31 to 1.37), got "1.29": its extended support ended on 2026-03-23',
        'environments/base.yaml: sealingKey.region: unknown AWS region "eu-centrall-1"; did you mean '
        '"eu-central-1"? (a region newer than fluxplane\'s data: add it with its availability zones to '
        f"awsData.regions in {OVERRIDE})",
    ]


def test_aws_data_admits_a_newer_type_region_and_version(write_fleet: FleetWriter) -> None:
    # GIVEN a base file that adds a type, a region with its zones and a version fluxplane's data lacks
    base = {
        **MINIMAL_BASE,
        "awsData": {
            "instanceTypes": ["m99z.large"],
            "regions": {"xx-new-1": ["xx-new-1a", "xx-new-1b", "xx-new-1c"]},
            "kubernetesVersions": ["1.38"],
        },
    }
    entry = cluster(
        region="xx-new-1", kubernetesVersion="1.38", nodeGroups=[{"name": "g", "instanceTypes": ["m99z.large"]}]
    )

    # WHEN loaded THEN the cluster is accepted, and the fleet keeps the additions for synth
    fleet = load_fleet(write_fleet(base=base, envs={"staging": {"clusters": [entry]}})).fleet
    assert fleet.clusters[0].region == "xx-new-1"
    assert fleet.aws_data.regions == {"xx-new-1": ["xx-new-1a", "xx-new-1b", "xx-new-1c"]}


def test_aws_data_is_checked_for_its_shape(write_fleet: FleetWriter) -> None:
    # GIVEN awsData with a malformed type, a zone of another region and an unquoted version
    base = {
        **MINIMAL_BASE,
        "awsData": {
            "instanceTypes": ["M9G.LARGE"],
            "regions": {"xx-new-1": ["xx-new-1a", "xx-old-1b"]},
            "kubernetesVersions": ["1.38", "1.38"],
        },
    }

    # WHEN loaded THEN each is reported where it is written
    assert problems_of(write_fleet(base=base)) == [
        "environments/base.yaml: awsData.instanceTypes[0]: expected an EC2 instance type such as m7i.large, got "
        '"M9G.LARGE"',
        "environments/base.yaml: awsData.regions: zones of xx-new-1 are named xx-new-1 and a letter (xx-new-1a, "
        'xx-new-1b, ...), got "xx-old-1b"',
        'environments/base.yaml: awsData.kubernetesVersions: each entry once, "1.38" repeated',
    ]


def test_aws_data_cannot_bring_back_a_version_eks_ended(write_fleet: FleetWriter) -> None:
    base = {**MINIMAL_BASE, "awsData": {"kubernetesVersions": ["1.30"]}}
    assert problems_of(write_fleet(base=base)) == [
        "environments/base.yaml: awsData.kubernetesVersions[0]: EKS ended extended support for Kubernetes 1.30 on "
        "2026-07-23, so it cannot be added; use 1.31 to 1.37"
    ]


def test_an_invalid_base_still_lends_its_aws_data(write_fleet: FleetWriter) -> None:
    # GIVEN a base file with a bad repository URL whose awsData adds a region a cluster uses
    base = {
        **MINIMAL_BASE,
        "repositories": {"platform": {"url": "git@example.com:org/fleet.git"}},
        "awsData": {"regions": {"xx-new-1": ["xx-new-1a", "xx-new-1b", "xx-new-1c"]}},
    }
    root = write_fleet(base=base, envs={"staging": {"clusters": [cluster(region="xx-new-1")]}})

    # WHEN loaded THEN only the URL is reported, not the region awsData admits
    assert problems_of(root) == [
        "environments/base.yaml: repositories.platform.url: expected an ssh:// or https:// Git URL, got "
        '"git@example.com:org/fleet.git"'
    ]


# -- what the hub needs to reach a workload cluster's API server ---------------------------------------


@pytest.mark.parametrize(
    ("endpoint", "egress", "expected"),
    [
        (
            {"publicAccess": False},
            [],
            "clusters[0].endpoint.publicAccess: the hub reaches this API server over the internet "
            "(endpoint.fromHub: public, the default), so publicAccess must be true; or set endpoint.fromHub: "
            "private and connect the hub's VPC to the cluster's (VPC peering or a Transit Gateway)",
        ),
        (
            {"publicAccessCidrs": ["203.0.113.0/24"]},
            [],
            "clusters[0].endpoint.publicAccessCidrs: admits only 203.0.113.0/24, so the hub gets in only if its "
            "traffic leaves from there: list the ranges it leaves from (its NAT gateways' addresses) in "
            f"management.egressCidrs in {OVERRIDE}, or set endpoint.fromHub: private",
        ),
        (
            {"publicAccessCidrs": ["203.0.113.0/24"]},
            ["203.0.113.7/32", "198.51.100.9/32"],
            "clusters[0].endpoint.publicAccessCidrs: admits only 203.0.113.0/24, which locks out the hub: "
            f"management.egressCidrs in {OVERRIDE} has 198.51.100.9/32 outside those ranges; add it to "
            "publicAccessCidrs, or set endpoint.fromHub: private",
        ),
        (
            {"fromHub": "private", "privateAccess": False},
            [],
            "clusters[0].endpoint.privateAccess: the hub reaches this API server inside the cluster's VPC "
            "(endpoint.fromHub: private), so privateAccess must be true; or set endpoint.fromHub: public",
        ),
    ],
    ids=["public-endpoint-off", "no-egress-ranges", "egress-outside", "private-endpoint-off"],
)
def test_an_endpoint_the_hub_cannot_reach_is_refused(
    write_fleet: FleetWriter, endpoint: dict[str, Any], egress: list[str], expected: str
) -> None:
    # GIVEN a cluster endpoint, and the hub's egress ranges
    base = {**MINIMAL_BASE, "management": {**MINIMAL_BASE["management"], "egressCidrs": egress}}
    root = write_fleet(base=base, envs={"staging": {"clusters": [cluster(endpoint=endpoint)]}})

    # WHEN loaded THEN the field that locks the hub out is named, with what to do
    assert problems_of(root) == [f"environments/staging.yaml: {expected}"]


@pytest.mark.parametrize(
    ("endpoint", "egress"),
    [
        ({}, []),
        ({"publicAccessCidrs": ["203.0.113.0/24", "0.0.0.0/0"]}, []),
        ({"publicAccessCidrs": ["203.0.113.0/24", "198.51.100.0/24"]}, ["203.0.113.7/32", "198.51.100.0/25"]),
        ({"publicAccess": False, "fromHub": "private"}, []),
        ({"fromHub": "private", "publicAccessCidrs": ["203.0.113.0/24"]}, []),
    ],
    ids=["defaults", "open-to-all", "egress-inside", "private-only", "private-with-narrow-public"],
)
def test_an_endpoint_the_hub_can_reach_is_accepted(
    write_fleet: FleetWriter, endpoint: dict[str, Any], egress: list[str]
) -> None:
    base = {**MINIMAL_BASE, "management": {**MINIMAL_BASE["management"], "egressCidrs": egress}}
    root = write_fleet(base=base, envs={"staging": {"clusters": [cluster(endpoint=endpoint)]}})
    assert load_fleet(root).fleet.clusters[0].endpoint.from_hub == endpoint.get("fromHub", "public")


# -- hostile but schema-shaped values, located one line each ------------------------------------


def test_hostile_values_are_refused_one_located_line_each(write_fleet: FleetWriter) -> None:
    # GIVEN a label key with a space, a taint key with a newline, a tag key with a newline (from clusterDefaults)
    # and a zero Flux interval
    base = {**MINIMAL_BASE, "flux": {"interval": "0s"}, "clusterDefaults": {"tags": {"team\nowner": "a"}}}
    group = {
        "name": "workers",
        "labels": {"bad key!": "x"},
        "taints": [{"key": "gpu\nkey", "effect": "NoSchedule"}],
    }
    root = write_fleet(base=base, envs={"staging": {"clusters": [cluster(nodeGroups=[group])]}})

    # WHEN loaded THEN each is one line at its file and field, with the value found and what is allowed
    found = problems_of(root)
    assert found == [
        'environments/base.yaml: flux.interval: expected a duration above zero such as 30s, 5m or 1h30m, got "0s": '
        "at zero Flux reconciles without pause",
        'environments/base.yaml: clusterDefaults.tags["team\\nowner"]: expected an AWS tag key of 1 to 128 Unicode '
        'letters, digits, spaces and _ . : / = + - @, got "team\\nowner", which has "\\n"',
        'environments/staging.yaml: clusters[0].nodeGroups[0].labels["bad key!"]: expected a label key such as team '
        "or example.com/team (an optional DNS subdomain prefix and '/', then a name of at most 63 letters, digits, "
        "'-', '_' and '.' that starts and ends with a letter or digit), got \"bad key!\"",
        "environments/staging.yaml: clusters[0].nodeGroups[0].taints[0].key: expected a taint key such as dedicated "
        "or example.com/gpu (an optional DNS subdomain prefix and '/', then a name of at most 63 letters, digits, "
        "'-', '_' and '.' that starts and ends with a letter or digit), got \"gpu\\nkey\"",
    ]
    assert all("\n" not in line for line in found)


@pytest.mark.parametrize("step", ["flux", "sealed-secrets", "external-secrets"])
def test_clusters_whose_bootstrap_chains_would_clash_are_refused_at_both(write_fleet: FleetWriter, step: str) -> None:
    # GIVEN cluster 'staging-1' and, in another environment, 'staging-1-<step>', the name of one of its steps
    envs = {"staging": {"clusters": [cluster()]}, "production": {"clusters": [cluster(f"staging-1-{step}")]}}

    # WHEN loaded THEN one line names both clusters where they are set
    assert problems_of(write_fleet(envs=envs)) == [
        f"environments/production.yaml: clusters[0].name: 'staging-1-{step}' clashes with cluster 'staging-1' "
        f"(environments/staging.yaml: clusters[0].name): the hub's bootstrap chain of 'staging-1' has step {step!r}, "
        f"which fluxplane names 'staging-1-{step}' like the chain of this cluster; rename one of the two clusters"
    ]


def test_a_cluster_named_after_a_shared_bootstrap_step_is_located(write_fleet: FleetWriter) -> None:
    root = write_fleet(envs={"staging": {"clusters": [cluster("secret-store")]}})
    assert problems_of(root) == [
        "environments/staging.yaml: clusters[0].name: 'secret-store' is taken: the hub's bootstrap chains share a "
        "step of that name (spokes/steps/secret-store), which fluxplane names like the chain of this cluster; "
        "choose another name"
    ]


def test_clusters_that_share_only_a_prefix_are_fine(write_fleet: FleetWriter) -> None:
    envs = {"staging": {"clusters": [cluster("staging-1"), cluster("staging-1-fluxes"), cluster("staging-1-build")]}}
    assert [c.name for c in load_fleet(write_fleet(envs=envs)).fleet.clusters] == [
        "staging-1",
        "staging-1-fluxes",
        "staging-1-build",
    ]


# -- existing clusters ------------------------------------------------------------------------------

EXISTING = {"mode": "registered", "externalSecretsRoleArn": "arn:aws:iam::111122223333:role/staging-1-external-secrets"}


def test_an_existing_clusters_problems_are_located_in_its_file(write_fleet: FleetWriter) -> None:
    # GIVEN an observed cluster without its VPC's id or range, in an environment file
    existing = {**EXISTING, "mode": "observed", "subnetIds": ["subnet-0a1b2c3d", "subnet-0b2c3d4e"]}
    env = {"clusters": [cluster(kubernetesVersion="1.34", existing=existing)]}
    # WHEN loaded THEN the missing id is named at its field, in the cluster's entry
    assert problems_of(write_fleet(envs={"staging": env})) == [
        "environments/staging.yaml: clusters[0].existing.vpcId: mode observed imports the cluster's VPC by its id: "
        "give it (vpc-...)"
    ]
    # AND with the id, the missing range is named at network.cidr
    env = {"clusters": [cluster(kubernetesVersion="1.34", existing={**existing, "vpcId": "vpc-0a1b2c3d"})]}
    assert problems_of(write_fleet(envs={"staging": env})) == [
        "environments/staging.yaml: clusters[0].network.cidr: an existing cluster's VPC range is recorded from the "
        "definition, never allocated: give its VPC's CIDR"
    ]


def test_an_existing_cluster_names_the_version_it_runs(write_fleet: FleetWriter) -> None:
    # GIVEN a registered cluster whose definition names no version, and none recorded
    env = {"clusters": [cluster(network={"cidr": "10.64.0.0/16"}, existing=EXISTING)]}
    # WHEN loaded THEN the newest version EKS offers is not assumed: the definition must say
    assert problems_of(write_fleet(envs={"staging": env})) == [
        "environments/staging.yaml: clusters[0].kubernetesVersion: an existing cluster's version is recorded from the "
        "definition: give the version it runs (aws eks describe-cluster --name staging-1 --query cluster.version), "
        'quoted: "1.NN"'
    ]
    # AND named in clusterDefaults, it is taken from there, and the range as given
    base = {**MINIMAL_BASE, "clusterDefaults": {"kubernetesVersion": "1.33"}}
    (loaded,) = load_fleet(write_fleet(base=base, envs={"staging": env})).fleet.clusters
    assert (loaded.kubernetes_version, str(loaded.network.cidr)) == ("1.33", "10.64.0.0/16")
