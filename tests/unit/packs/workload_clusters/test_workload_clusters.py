"""The workload-clusters hub pack (fluxplane.packs.workload_clusters): each cluster's composite resource and the
ProviderConfig that reaches it, bound one cluster at a time."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from fluxplane.config.hub import cluster_namespace, kubeconfig_secret
from fluxplane.config.loader import load_fleet
from fluxplane.errors import PackError
from fluxplane.kinds import eks_api as eks
from fluxplane.packs import eks_compositions, workload_clusters
from fluxplane.synth import load_plan
from tests.conftest import ROOT, FleetWriter
from tests.support.hub import SMALL, bind, build, cluster, fleet_of, heads

XR_API = "platform.fluxplane.io/v1alpha1"
READY = "status.?conditions.orValue([]).exists(c, c.type == 'Ready' && c.status == 'True')"
NOT_SYNCED = "status.?conditions.orValue([]).exists(c, c.type == 'Synced' && c.status == 'False')"


def test_each_example_cluster_gets_a_composite_and_a_spoke_provider_config() -> None:
    # GIVEN the example fleet
    fleet = load_plan(ROOT).fleet
    clusters = {cluster.name: cluster for cluster in fleet.clusters}
    for name in ("production-use1", "production-usw2", "staging-usw2"):
        # WHEN workload-clusters is bound for the cluster
        documents, context = build(fleet, name)
        # THEN it gets its EKSCluster and a ProviderConfig, in its hub namespace
        assert heads(documents) == [
            ("EKSCluster", cluster_namespace(name), name),
            ("ProviderConfig", cluster_namespace(name), "spoke"),
        ]
        composite, provider_config = documents
        assert composite["apiVersion"] == XR_API
        assert composite["spec"]["crossplane"]["compositionRef"]["name"] == eks.shape_of(clusters[name]).name
        secret = kubeconfig_secret(name)
        assert composite["spec"]["kubeconfigSecretName"] == secret.name
        assert provider_config == {
            "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
            "kind": "ProviderConfig",
            "metadata": {"name": "spoke", "namespace": cluster_namespace(name)},
            "spec": {
                "credentials": {
                    "source": "Secret",
                    "secretRef": {"name": secret.name, "namespace": secret.namespace, "key": "value"},
                }
            },
        }
        # AND its own composite resource alone is health-checked, judged by Ready, for up to 45 minutes
        assert [check.dump() for check in context.health_checks] == [
            {"apiVersion": XR_API, "kind": "EKSCluster", "name": name, "namespace": cluster_namespace(name)}
        ]
        assert [expr.dump() for expr in context.health_check_exprs] == [
            {"apiVersion": XR_API, "kind": "EKSCluster", "current": READY, "failed": NOT_SYNCED}
        ]
        assert context.timeout == "45m"


def test_only_keyless_composites_name_the_hubs_flux_role() -> None:
    fleet = load_plan(ROOT).fleet
    hub_access = {
        name: build(fleet, name)[0][0]["spec"].get("hubAccess")
        for name in ("production-use1", "production-usw2", "staging-usw2")
    }
    assert hub_access == {
        "production-use1": {
            "principalArn": fleet.management.flux_role_arn,
            "configMapName": "production-use1-hub-access",
        },
        "production-usw2": None,
        "staging-usw2": None,
    }


def test_the_timeout_follows_the_config(write_fleet: FleetWriter) -> None:
    # GIVEN a pack config with a longer timeout WHEN bound THEN the cluster's Kustomization waits that long
    _, context = build(fleet_of(write_fleet, {"staging": {"clusters": [SMALL]}}), "small", {"timeout": "90m"})
    assert context.timeout == "90m"


def test_a_malformed_timeout_is_refused() -> None:
    with pytest.raises(ValidationError, match="String should match pattern"):
        workload_clusters.PACK.config.model_validate({"timeout": "an hour"})


def test_the_pack_builds_clusters_on_the_hub_one_at_a_time() -> None:
    # GIVEN the pack WHEN bound without a cluster THEN it says what it needs
    assert workload_clusters.PACK.builds_clusters
    with pytest.raises(PackError, match=r"^workload-clusters: the pack builds one workload cluster at a time"):
        bind(workload_clusters.PACK, load_plan(ROOT).fleet)


def test_the_fleet_packs_sit_in_the_hub_chain() -> None:
    assert (eks_compositions.PACK.layer, eks_compositions.PACK.requires) == (
        "configs",
        ("crossplane-provider-configs",),
    )
    assert (workload_clusters.PACK.layer, workload_clusters.PACK.requires) == ("configs", ("eks-compositions",))


ESO_ROLE = "arn:aws:iam::111122223333:role/old-external-secrets"
REGISTERED = cluster(
    "old",
    kubernetesVersion="1.33",
    network={"cidr": "10.64.0.0/16"},
    hubAccess="keyless",
    existing={
        "mode": "registered",
        "externalSecretsRoleArn": ESO_ROLE,
        "clusterArn": "arn:aws:eks:us-west-2:111122223333:cluster/old",
    },
)
OBSERVED = cluster(
    "seen",
    kubernetesVersion="1.33",
    network={"cidr": "10.65.0.0/16"},
    existing={
        "mode": "observed",
        "externalSecretsRoleArn": ESO_ROLE,
        "vpcId": "vpc-0e1f2a3b4c5d60718",
        "subnetIds": ["subnet-0a1b2c3d4e5f60718", "subnet-0b2c3d4e5f6071829"],
    },
)
EXISTING_BASE = {
    "repositories": {"platform": {"url": "ssh://git@example.com/org/fleet.git", "secretRef": None}},
    "management": {
        "name": "hub",
        "region": "us-west-2",
        "fluxRoleArn": "arn:aws:iam::111122223333:role/hub-flux",
        "packs": {},
    },
}


def test_a_registered_cluster_gets_no_composite_and_no_aws_object_only_what_its_chain_reads(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN a registered cluster the hub reaches keyless
    fleet = load_fleet(write_fleet(base=EXISTING_BASE, envs={"staging": {"clusters": [REGISTERED]}})).fleet

    # WHEN workload-clusters is bound for it
    documents, context = build(fleet, "old")

    # THEN nothing of Crossplane or AWS is written: no EKSCluster, no ProviderConfig, no managed resource, only the
    # ConfigMaps of External Secrets' role and of keyless access, from the definition
    assert documents == [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "old-bootstrap", "namespace": "old"},
            "data": {"external-secrets-role-arn": ESO_ROLE},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "old-hub-access", "namespace": "old"},
            "data": {"cluster": "arn:aws:eks:us-west-2:111122223333:cluster/old", "provider": "aws"},
        },
    ]
    # AND nothing to wait for but what it applies (the chain's step waits for all of it), within the default time
    assert (context.health_checks, context.health_check_exprs, context.timeout) == ([], [], None)
    # AND no Composition is written for it
    compositions, _ = bind(eks_compositions.PACK, fleet)
    assert [kind for kind, _, _ in heads(compositions)] == ["CompositeResourceDefinition", "ClusterRole"]


def test_an_observed_cluster_gets_a_composite_of_an_importing_composition(write_fleet: FleetWriter) -> None:
    # GIVEN an observed cluster beside one the hub creates
    envs = {"staging": {"clusters": [OBSERVED, cluster("new"), REGISTERED]}}
    fleet = load_fleet(write_fleet(base=EXISTING_BASE, envs=envs)).fleet

    # WHEN workload-clusters is bound for it THEN it gets its EKSCluster, of the observed Composition, and the
    # ProviderConfig that reaches it through the kubeconfig ClusterAuth writes
    documents, context = build(fleet, "seen")
    assert heads(documents) == [("EKSCluster", "seen", "seen"), ("ProviderConfig", "seen", "spoke")]
    assert documents[0]["spec"]["crossplane"]["compositionRef"] == {"name": "eks-observed-2-subnets-1-node-group"}
    assert documents[0]["spec"]["existing"]["vpcId"] == "vpc-0e1f2a3b4c5d60718"
    assert context.timeout == "45m"
    # AND the Compositions are the created cluster's, then the imported one's
    compositions, _ = bind(eks_compositions.PACK, fleet)
    assert [name for kind, _, name in heads(compositions) if kind == "Composition"] == [
        "eks-3-zones-1-node-group",
        "eks-observed-2-subnets-1-node-group",
    ]
