"""SpokesChart (fluxplane.charts.spokes): the hub's chain for each workload cluster, built with a stand-in for the
cluster-building pack."""

from __future__ import annotations

from typing import Any

import cdk8s
import pytest

from fluxplane.charts.spokes import (
    Built,
    ChainFolder,
    ChainInputs,
    ClusterBuilder,
    SpokesChart,
    chain_steps,
    kube_config,
)
from fluxplane.config.loader import load_fleet
from fluxplane.config.models import WorkloadCluster
from fluxplane.constructs.config_map import ConfigMap
from fluxplane.constructs.manifest import Manifest
from fluxplane.core.layout import PLATFORM, RepositoryLayout
from fluxplane.synth.features import BOOTSTRAP_CHARTS
from tests.conftest import FleetWriter

#: Where a step of cluster ``a``'s chain lives in the platform repository.
SPOKE = "./dist/platform/spokes/a"
#: What every step of a chain carries: it is applied by the hub's spoke-bootstrap Kustomization.
APPLIED_BY = {"fluxplane.io/applied-by": "flux-system/spoke-bootstrap"}


def _bind(manifest: Manifest, cluster: WorkloadCluster) -> Built:
    ConfigMap(manifest, "built", {"name": "built", "namespace": cluster.name, "data": {}})
    return Built()


def spokes(
    write_fleet: FleetWriter,
    clusters: list[dict[str, Any]],
    reused: frozenset[str] = frozenset(),
    inputs: ChainInputs | None = None,
) -> SpokesChart:
    """The chart of a fleet whose staging environment holds ``clusters``, with ``inputs``; the builder writes
    one ConfigMap."""
    fleet = load_fleet(write_fleet(envs={"staging": {"clusters": clusters}})).fleet
    return SpokesChart(
        cdk8s.App(),
        "spokes",
        layout=RepositoryLayout(PLATFORM, fleet.repositories.platform),
        fleet=fleet,
        builder=ClusterBuilder(pack="build", requires=("eks-compositions",), bind=_bind),
        charts=BOOTSTRAP_CHARTS,
        reused=reused,
        inputs=inputs,
    )


def documents(chart: SpokesChart, path: str) -> list[dict[str, Any]]:
    (file,) = [file for file in chart.files if file.path == path]
    return file.documents()


@pytest.mark.parametrize(
    ("installer", "credentials", "bootstrap", "steps"),
    [
        (
            "flux2",
            False,
            "fluxplane",
            ("external-secrets", "secret-store", "sealing-key", "sealed-secrets", "flux", "flux-sync"),
        ),
        (
            "flux2",
            True,
            "fluxplane",
            (
                "external-secrets",
                "secret-store",
                "sealing-key",
                "sealed-secrets",
                "flux",
                "git-credentials",
                "flux-sync",
            ),
        ),
        (
            "flux-operator",
            False,
            "fluxplane",
            ("external-secrets", "secret-store", "sealing-key", "sealed-secrets", "flux", "flux-instance", "flux-sync"),
        ),
        ("flux-operator", True, "flux", ("external-secrets", "secret-store", "sealing-key", "sealed-secrets")),
    ],
)
def test_the_bootstrap_steps_follow_the_installer_the_credentials_and_who_bootstraps_flux(
    installer: str, credentials: bool, bootstrap: str, steps: tuple[str, ...]
) -> None:
    # GIVEN how a cluster gets its Flux and whether the platform repository needs credentials
    # WHEN its chain's bootstrap steps are chosen THEN flux-instance only with the operator, git-credentials only with
    # credentials, and none of Flux's steps when the cluster runs a Flux of its own
    assert chain_steps(installer, credentials, bootstrap) == steps


def test_a_cluster_s_chain_runs_each_step_after_the_one_before(write_fleet: FleetWriter) -> None:
    # GIVEN a fleet with one workload cluster, whose platform repository needs no credentials
    chart = spokes(write_fleet, [{"name": "a", "region": "us-west-2"}])

    # WHEN its chain is built
    bootstrap = documents(chart, "spokes/a/bootstrap.yaml")

    # THEN the cluster's namespace comes first, then one Kustomization per step, in order, in that namespace
    assert list(chart.chains["a"]) == [
        "cluster",
        "external-secrets",
        "secret-store",
        "sealing-key",
        "sealed-secrets",
        "flux",
        "flux-sync",
    ]
    assert [(doc["kind"], doc["metadata"]["name"]) for doc in bootstrap] == [
        ("Namespace", "a"),
        *[("Kustomization", step) for step in chart.chains["a"]],
    ]
    steps = {doc["metadata"]["name"]: doc for doc in bootstrap[1:]}
    assert {doc["metadata"]["namespace"] for doc in steps.values()} == {"a"}
    assert all(doc["metadata"]["annotations"] == APPLIED_BY for doc in steps.values())
    # AND the first step waits for the hub's builder pack and for what it applied (no health gate declared)
    assert steps["cluster"]["spec"]["dependsOn"] == [{"name": "eks-compositions", "namespace": "flux-system"}]
    assert steps["cluster"]["spec"]["wait"] is True
    assert steps["cluster"]["spec"]["path"] == f"{SPOKE}/cluster"
    # AND every later step waits for the one before it
    names = list(steps)
    assert [steps[name]["spec"]["dependsOn"] for name in names[1:]] == [[{"name": before}] for before in names[:-1]]
    # AND the steps that apply to the spoke itself reach it through its kubeconfig Secret
    reached = {name for name, doc in steps.items() if "kubeConfig" in doc["spec"]}
    assert reached == {"secret-store", "sealing-key", "flux-sync"}
    assert steps["flux-sync"]["spec"]["kubeConfig"] == {"secretRef": {"name": "a-kubeconfig", "key": "value"}}
    assert steps["flux-sync"]["spec"]["path"] == "./dist/platform/clusters/a/flux-system"
    # AND what the builder pack wrote for the cluster is the first step's folder, each object naming that step as
    # what applies it
    assert documents(chart, "spokes/a/cluster/cluster.yaml") == [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "built", "namespace": "a", "annotations": {"fluxplane.io/applied-by": "a/cluster"}},
        }
    ]


def test_the_spokes_folder_lists_its_sources_and_every_cluster_even_one_reused(write_fleet: FleetWriter) -> None:
    # GIVEN two clusters, one whose chain synth takes from its cache
    chart = spokes(
        write_fleet, [{"name": "a", "region": "us-west-2"}, {"name": "b", "region": "us-west-2"}], frozenset({"b"})
    )

    # THEN spokes/ lists the Helm sources and both clusters' folders, but only the other cluster's chain is built
    assert documents(chart, "spokes/kustomization.yaml") == [
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": ["sources.yaml", "a", "b"],
        }
    ]
    assert list(chart.chains) == ["a"]
    assert not [file.path for file in chart.files if file.path.startswith("spokes/b/")]
    # AND without a cluster that installs Flux with the Flux Operator, the sources are the three Helm repositories
    assert [(doc["kind"], doc["metadata"]["name"]) for doc in documents(chart, "spokes/sources.yaml")] == [
        ("HelmRepository", "external-secrets"),
        ("HelmRepository", "sealed-secrets"),
        ("HelmRepository", "flux2"),
    ]


def test_a_cluster_with_a_flux_of_its_own_ends_its_chain_with_sealed_secrets(write_fleet: FleetWriter) -> None:
    # GIVEN a cluster whose Flux was bootstrapped by flux itself
    chart = spokes(write_fleet, [{"name": "a", "region": "us-west-2", "bootstrap": "flux"}])

    # THEN its chain installs no Flux and hands nothing over: it ends with the Sealed Secrets controller
    assert list(chart.chains["a"]) == ["cluster", "external-secrets", "secret-store", "sealing-key", "sealed-secrets"]
    assert not [file.path for file in chart.files if file.path.startswith("spokes/a/flux")]


def test_a_cluster_whose_flux_the_operator_installs_gets_its_chart_and_a_flux_instance(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN a cluster that installs Flux with the Flux Operator
    chart = spokes(write_fleet, [{"name": "a", "region": "us-west-2", "fluxInstaller": "flux-operator"}])

    # THEN the operator's chart is a source, and the chain installs the operator, then the FluxInstance
    kinds = [(doc["kind"], doc["metadata"]["name"]) for doc in documents(chart, "spokes/sources.yaml")]
    assert kinds[-1] == ("OCIRepository", BOOTSTRAP_CHARTS.flux_operator.chart)
    assert list(chart.chains["a"])[-3:] == ["flux", "flux-instance", "flux-sync"]


def test_the_add_on_roles_and_app_resources_come_after_the_cluster_and_before_its_bootstrap(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN a cluster with add-on roles and app resources, the latter served by the hub's app-compositions
    inputs = ChainInputs(
        identities={"a": ChainFolder(directory="spokes/a/addon-identities")},
        resources={"a": ChainFolder(directory="spokes/a/app-resources", requires=("app-compositions",), timeout="45m")},
        variables={"a": {"cluster_name": "a"}},
    )

    # WHEN its chain is built
    chart = spokes(write_fleet, [{"name": "a", "region": "us-west-2"}], inputs=inputs)
    steps = {doc["metadata"]["name"]: doc["spec"] for doc in documents(chart, "spokes/a/bootstrap.yaml")[1:]}

    # THEN both follow the cluster, the resources also the hub's pack of their kinds, each with the cluster's
    # variables; the bootstrap waits for the cluster and its roles, not for the apps' resources
    assert list(chart.chains["a"])[:3] == ["cluster", "addon-identities", "app-resources"]
    assert steps["addon-identities"]["dependsOn"] == [{"name": "cluster"}]
    assert steps["app-resources"]["dependsOn"] == [
        {"name": "cluster"},
        {"name": "app-compositions", "namespace": "flux-system"},
    ]
    assert (steps["app-resources"]["timeout"], steps["app-resources"]["wait"]) == ("45m", True)
    assert steps["app-resources"]["postBuild"] == {"substitute": {"cluster_name": "a"}}
    assert steps["external-secrets"]["dependsOn"] == [{"name": "cluster"}, {"name": "addon-identities"}]


@pytest.mark.parametrize(
    ("access", "reference"),
    [
        ("kubeconfig", {"secretRef": {"name": "a-kubeconfig", "key": "value"}}),
        ("keyless", {"configMapRef": {"name": "a-hub-access"}}),
    ],
)
def test_flux_reaches_a_cluster_by_its_secret_or_its_config_map(access: str, reference: dict[str, Any]) -> None:
    assert kube_config("a", access).dump() == reference
