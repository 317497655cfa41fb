"""The hub packs that follow from the fleet: eks-compositions and workload-clusters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.config.hub import cluster_namespace, kubeconfig_secret
from fluxplane.config.loader import load_fleet
from fluxplane.config.models import Fleet
from fluxplane.errors import PackError
from fluxplane.kinds import eks_api as eks
from fluxplane.packs import eks_compositions, workload_clusters
from fluxplane.packs.api import Pack
from fluxplane.synth import load_plan
from fluxplane.testing import BoundPack, bind_pack
from tests.conftest import ROOT, FleetWriter

XRD_API = "apiextensions.crossplane.io/v2"
XR_API = "platform.fluxplane.io/v1alpha1"
ESTABLISHED = "status.?conditions.orValue([]).exists(c, c.type == 'Established' && c.status == 'True')"
NOT_ESTABLISHED = "status.?conditions.orValue([]).exists(c, c.type == 'Established' && c.status == 'False')"
READY = "status.?conditions.orValue([]).exists(c, c.type == 'Ready' && c.status == 'True')"
NOT_SYNCED = "status.?conditions.orValue([]).exists(c, c.type == 'Synced' && c.status == 'False')"


def _bind(
    pack: Pack, fleet: Fleet | None, values: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], BoundPack]:
    bound = bind_pack(pack, values or {}, fleet=fleet)
    return bound.objects, bound


def _heads(documents: list[dict[str, Any]]) -> list[tuple[str, str | None, str]]:
    return [(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in documents]


def _cluster(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "region": "us-west-2", **fields}


SMALL = _cluster("small", network={"availabilityZones": 2, "natGateways": "Single"})


def _fleet(write_fleet: FleetWriter, envs: dict[str, Any]) -> Fleet:
    return load_fleet(write_fleet(envs=envs)).fleet


# -- eks-compositions --------------------------------------------------------------------------------


def test_the_example_fleet_gets_the_xrd_a_config_map_grant_and_one_composition_per_shape() -> None:
    # GIVEN the example fleet: four 3-zone clusters the hub creates, one of them keyless, one in EKS Auto Mode, an
    # observed one with three subnets, and a registered one
    fleet = load_plan(ROOT).fleet

    # WHEN eks-compositions is bound
    documents, context = _bind(eks_compositions.PACK, fleet)

    # THEN the XRD, Crossplane's ConfigMap grant and the four shapes' Compositions are written (none for the
    # registered cluster)
    assert _heads(documents) == [
        ("CompositeResourceDefinition", None, "eksclusters.platform.fluxplane.io"),
        ("ClusterRole", None, "crossplane-compose-config-maps"),
        ("Composition", None, "eks-3-zones-auto-mode"),
        ("Composition", None, "eks-3-zones-1-node-group"),
        ("Composition", None, "eks-3-zones-1-node-group-keyless"),
        ("Composition", None, "eks-observed-3-subnets-1-node-group"),
    ]
    xrd, grant, *compositions = documents
    assert xrd["apiVersion"] == XRD_API
    assert xrd["spec"]["versions"][0]["schema"] == {"openAPIV3Schema": eks.xrd_schema()}
    assert grant == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": "crossplane-compose-config-maps",
            "labels": {"rbac.crossplane.io/aggregate-to-crossplane": "true"},
        },
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
            }
        ],
    }
    shapes = {shape.name: shape for shape in map(eks.composition_of, fleet.clusters) if shape is not None}
    for composition in compositions:
        shape = shapes[composition["metadata"]["name"]]
        assert composition["metadata"]["labels"] == shape.labels
        assert composition["spec"]["pipeline"] == eks.composition_props(shape).dump()["pipeline"]
    # AND the pack is healthy once the XRD is Established (a namespaced XRD is never Offered), failed when not
    assert [check.dump() for check in context.health_checks] == [
        {"apiVersion": XRD_API, "kind": "CompositeResourceDefinition", "name": "eksclusters.platform.fluxplane.io"}
    ]
    assert [expr.dump() for expr in context.health_check_exprs] == [
        {
            "apiVersion": XRD_API,
            "kind": "CompositeResourceDefinition",
            "current": ESTABLISHED,
            "failed": NOT_ESTABLISHED,
        }
    ]
    assert context.timeout is None


def test_clusters_of_the_same_shape_share_a_composition(write_fleet: FleetWriter) -> None:
    # GIVEN a 2-zone single-NAT cluster and two 3-zone clusters in two environments
    fleet = _fleet(
        write_fleet,
        {"production": {"clusters": [_cluster("prod-a"), SMALL]}, "staging": {"clusters": [_cluster("stage-a")]}},
    )

    # WHEN eks-compositions is bound THEN one Composition per distinct shape is written, in shape order
    documents, _ = _bind(eks_compositions.PACK, fleet)
    assert [name for kind, _, name in _heads(documents) if kind == "Composition"] == [
        "eks-2-zones-1-node-group-single-nat",
        "eks-3-zones-1-node-group",
    ]


def test_a_fleet_without_workload_clusters_still_gets_the_api(write_fleet: FleetWriter) -> None:
    # GIVEN a fleet whose only environment has no clusters WHEN bound THEN the XRD is written, no Composition
    documents, _ = _bind(eks_compositions.PACK, _fleet(write_fleet, {"staging": {"clusters": []}}))
    assert [kind for kind, _, _ in _heads(documents)] == ["CompositeResourceDefinition", "ClusterRole"]


# -- workload-clusters -------------------------------------------------------------------------------


def _build(fleet: Fleet, name: str, values: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], BoundPack]:
    """workload-clusters bound for one cluster of ``fleet``, as a cluster's chain binds it."""
    (cluster,) = [cluster for cluster in fleet.clusters if cluster.name == name]
    bound = bind_pack(workload_clusters.PACK, values or {}, fleet=fleet, cluster=cluster)
    return bound.objects, bound


def test_each_example_cluster_gets_a_composite_and_a_spoke_provider_config() -> None:
    # GIVEN the example fleet
    fleet = load_plan(ROOT).fleet
    clusters = {cluster.name: cluster for cluster in fleet.clusters}
    for name in ("production-use1", "production-usw2", "staging-usw2"):
        # WHEN workload-clusters is bound for the cluster
        documents, context = _build(fleet, name)
        # THEN it gets its EKSCluster and a ProviderConfig, in its hub namespace
        assert _heads(documents) == [
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
        name: _build(fleet, name)[0][0]["spec"].get("hubAccess")
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
    _, context = _build(_fleet(write_fleet, {"staging": {"clusters": [SMALL]}}), "small", {"timeout": "90m"})
    assert context.timeout == "90m"


def test_a_malformed_timeout_is_refused() -> None:
    with pytest.raises(ValidationError, match="String should match pattern"):
        workload_clusters.PACK.config.model_validate({"timeout": "an hour"})


def test_the_pack_builds_clusters_on_the_hub_one_at_a_time() -> None:
    # GIVEN the pack WHEN bound without a cluster THEN it says what it needs
    assert workload_clusters.PACK.builds_clusters
    with pytest.raises(PackError, match=r"^workload-clusters: the pack builds one workload cluster at a time"):
        _bind(workload_clusters.PACK, load_plan(ROOT).fleet)


def test_eks_compositions_needs_a_fleet() -> None:
    with pytest.raises(
        PackError, match=r"^eks-compositions: the pack writes the Compositions the fleet's clusters use; bind it"
    ):
        _bind(eks_compositions.PACK, None)


def test_removing_a_cluster_removes_exactly_its_composition_when_no_other_has_its_shape(
    write_fleet: FleetWriter, tmp_path: Path
) -> None:
    # GIVEN a fleet of three clusters, and the same fleet without one of them
    clusters = [_cluster("alpha"), SMALL, _cluster("gamma", region="eu-west-1")]
    before = load_fleet(write_fleet(envs={"staging": {"clusters": clusters}}, root=tmp_path / "before")).fleet
    after = load_fleet(write_fleet(envs={"staging": {"clusters": [clusters[0], clusters[2]]}}, root=tmp_path / "after"))
    # WHEN the others are built THEN nothing of theirs changed
    for name in ("alpha", "gamma"):
        assert _build(before, name)[0] == _build(after.fleet, name)[0]
    # AND its Composition goes, as no other cluster has its shape
    compositions_before, _ = _bind(eks_compositions.PACK, before)
    compositions_after, _ = _bind(eks_compositions.PACK, after.fleet)
    assert _heads([d for d in compositions_before if d not in compositions_after]) == [
        ("Composition", None, "eks-2-zones-1-node-group-single-nat")
    ]
    assert [d for d in compositions_before if d in compositions_after] == compositions_after


def test_the_fleet_packs_sit_in_the_hub_chain() -> None:
    assert (eks_compositions.PACK.layer, eks_compositions.PACK.requires) == (
        "configs",
        ("crossplane-provider-configs",),
    )
    assert (workload_clusters.PACK.layer, workload_clusters.PACK.requires) == ("configs", ("eks-compositions",))


# -- existing clusters -----------------------------------------------------------------------------------

ESO_ROLE = "arn:aws:iam::111122223333:role/old-external-secrets"
REGISTERED = _cluster(
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
OBSERVED = _cluster(
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
    documents, context = _build(fleet, "old")

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
    compositions, _ = _bind(eks_compositions.PACK, fleet)
    assert [kind for kind, _, _ in _heads(compositions)] == ["CompositeResourceDefinition", "ClusterRole"]


def test_an_observed_cluster_gets_a_composite_of_an_importing_composition(write_fleet: FleetWriter) -> None:
    # GIVEN an observed cluster beside one the hub creates
    envs = {"staging": {"clusters": [OBSERVED, _cluster("new"), REGISTERED]}}
    fleet = load_fleet(write_fleet(base=EXISTING_BASE, envs=envs)).fleet

    # WHEN workload-clusters is bound for it THEN it gets its EKSCluster, of the observed Composition, and the
    # ProviderConfig that reaches it through the kubeconfig ClusterAuth writes
    documents, context = _build(fleet, "seen")
    assert _heads(documents) == [("EKSCluster", "seen", "seen"), ("ProviderConfig", "seen", "spoke")]
    assert documents[0]["spec"]["crossplane"]["compositionRef"] == {"name": "eks-observed-2-subnets-1-node-group"}
    assert documents[0]["spec"]["existing"]["vpcId"] == "vpc-0e1f2a3b4c5d60718"
    assert context.timeout == "45m"
    # AND the Compositions are the created cluster's, then the imported one's
    compositions, _ = _bind(eks_compositions.PACK, fleet)
    assert [name for kind, _, name in _heads(compositions) if kind == "Composition"] == [
        "eks-3-zones-1-node-group",
        "eks-observed-2-subnets-1-node-group",
    ]
