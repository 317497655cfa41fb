"""Where the hub keeps each workload cluster (fluxplane.config.hub), and the names that rules out."""

from __future__ import annotations

import pytest

from fluxplane.config.hub import (
    KubeconfigSecret,
    bootstrap_values,
    cluster_namespace,
    hub_access_config_map,
    kubeconfig_secret,
    platform_namespace,
)
from fluxplane.config.loader import load_fleet
from tests.conftest import FleetWriter
from tests.support.config import problems_of

RESERVED_HELP = (
    "a platform namespace; it must not be 'crossplane-system', 'default', 'external-secrets', 'flux-system' "
    "or any 'kube-*'"
)


def test_a_cluster_lives_in_the_hub_namespace_named_after_it() -> None:
    assert cluster_namespace("production-usw2") == "production-usw2"


def test_the_kubeconfig_secret_is_in_the_clusters_namespace_under_value() -> None:
    # GIVEN a cluster WHEN its kubeconfig Secret is named THEN it sits in its namespace, key `value`
    assert kubeconfig_secret("staging-usw2") == KubeconfigSecret(
        namespace="staging-usw2", name="staging-usw2-kubeconfig", key="value"
    )
    assert kubeconfig_secret("staging-usw2").namespace == cluster_namespace("staging-usw2")


def test_other_per_cluster_names_share_the_namespace() -> None:
    bootstrap = bootstrap_values("a")
    assert (bootstrap.namespace, bootstrap.name, bootstrap.external_secrets_role_arn_key) == (
        "a",
        "a-bootstrap",
        "external-secrets-role-arn",
    )
    assert hub_access_config_map("a") == "a-hub-access"


@pytest.mark.parametrize(
    ("name", "reserved"),
    [
        ("default", True),
        ("flux-system", True),
        ("crossplane-system", True),
        ("kube-system", True),
        ("kube-public", True),
        ("kube-node-lease", True),
        ("kube-foo", True),
        ("external-secrets", True),
        ("kube", False),
        ("kubeflow", False),
        ("my-default", False),
        ("flux-system-2", False),
        ("staging-usw2", False),
    ],
)
def test_platform_namespaces_are_kubernetes_flux_crossplane_and_the_spoke_bootstraps(name: str, reserved: bool) -> None:
    assert platform_namespace(name) is reserved


@pytest.mark.parametrize("name", ["flux-system", "default", "kube-foo", "crossplane-system", "external-secrets"])
def test_a_workload_cluster_named_like_a_hub_namespace_is_refused(write_fleet: FleetWriter, name: str) -> None:
    # GIVEN a fleet whose second production cluster is named like a namespace the hub needs
    root = write_fleet(
        envs={
            "production": {
                "clusters": [{"name": "prod-1", "region": "us-west-2"}, {"name": name, "region": "us-west-2"}]
            },
            "staging": {"clusters": [{"name": "staging-1", "region": "us-west-2"}]},
        }
    )

    # WHEN loaded THEN one line names the file, the field and the names that are not allowed
    assert problems_of(root) == [
        f"environments/production.yaml: clusters[1].name: {name!r} names the cluster's namespace on the hub, "
        + RESERVED_HELP
    ]


def test_every_reserved_cluster_name_is_reported_at_once(write_fleet: FleetWriter) -> None:
    # GIVEN two reserved names in one file
    root = write_fleet(
        envs={
            "staging": {
                "clusters": [{"name": "default", "region": "us-west-2"}, {"name": "kube-a", "region": "us-west-2"}]
            }
        }
    )

    # WHEN loaded THEN both are reported, each on its own line
    problems = problems_of(root)
    assert [line.split(": ")[:2] for line in problems] == [
        ["environments/staging.yaml", "clusters[0].name"],
        ["environments/staging.yaml", "clusters[1].name"],
    ]
    assert all(line.endswith(RESERVED_HELP) for line in problems)


def test_a_name_that_only_resembles_a_reserved_one_is_accepted(write_fleet: FleetWriter) -> None:
    root = write_fleet(envs={"staging": {"clusters": [{"name": "kubeflow", "region": "us-west-2"}]}})
    assert [cluster.name for cluster in load_fleet(root).fleet.clusters] == ["kubeflow"]
