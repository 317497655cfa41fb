"""The eks-compositions hub pack (fluxplane.packs.eks_compositions): the EKSCluster API and one Composition per shape
the fleet's clusters have."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.config.loader import load_fleet
from fluxplane.errors import PackError
from fluxplane.kinds import eks_api as eks
from fluxplane.packs import eks_compositions
from fluxplane.synth import load_plan
from tests.conftest import ROOT, FleetWriter
from tests.support.hub import SMALL, bind, build, cluster, fleet_of, heads

XRD_API = "apiextensions.crossplane.io/v2"
ESTABLISHED = "status.?conditions.orValue([]).exists(c, c.type == 'Established' && c.status == 'True')"
NOT_ESTABLISHED = "status.?conditions.orValue([]).exists(c, c.type == 'Established' && c.status == 'False')"


def test_the_example_fleet_gets_the_xrd_a_config_map_grant_and_one_composition_per_shape() -> None:
    # GIVEN the example fleet: four 3-zone clusters the hub creates, one of them keyless, one in EKS Auto Mode, an
    # observed one with three subnets, and a registered one
    fleet = load_plan(ROOT).fleet

    # WHEN eks-compositions is bound
    documents, context = bind(eks_compositions.PACK, fleet)

    # THEN the XRD, Crossplane's ConfigMap grant and the four shapes' Compositions are written (none for the
    # registered cluster)
    assert heads(documents) == [
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
    fleet = fleet_of(
        write_fleet,
        {"production": {"clusters": [cluster("prod-a"), SMALL]}, "staging": {"clusters": [cluster("stage-a")]}},
    )

    # WHEN eks-compositions is bound THEN one Composition per distinct shape is written, in shape order
    documents, _ = bind(eks_compositions.PACK, fleet)
    assert [name for kind, _, name in heads(documents) if kind == "Composition"] == [
        "eks-2-zones-1-node-group-single-nat",
        "eks-3-zones-1-node-group",
    ]


def test_a_fleet_without_workload_clusters_still_gets_the_api(write_fleet: FleetWriter) -> None:
    # GIVEN a fleet whose only environment has no clusters WHEN bound THEN the XRD is written, no Composition
    documents, _ = bind(eks_compositions.PACK, fleet_of(write_fleet, {"staging": {"clusters": []}}))
    assert [kind for kind, _, _ in heads(documents)] == ["CompositeResourceDefinition", "ClusterRole"]


def test_eks_compositions_needs_a_fleet() -> None:
    with pytest.raises(
        PackError, match=r"^eks-compositions: the pack writes the Compositions the fleet's clusters use; bind it"
    ):
        bind(eks_compositions.PACK, None)


def test_removing_a_cluster_removes_exactly_its_composition_when_no_other_has_its_shape(
    write_fleet: FleetWriter, tmp_path: Path
) -> None:
    # GIVEN a fleet of three clusters, and the same fleet without one of them
    clusters = [cluster("alpha"), SMALL, cluster("gamma", region="eu-west-1")]
    before = load_fleet(write_fleet(envs={"staging": {"clusters": clusters}}, root=tmp_path / "before")).fleet
    after = load_fleet(write_fleet(envs={"staging": {"clusters": [clusters[0], clusters[2]]}}, root=tmp_path / "after"))
    # WHEN the others are built THEN nothing of theirs changed
    for name in ("alpha", "gamma"):
        assert build(before, name)[0] == build(after.fleet, name)[0]
    # AND its Composition goes, as no other cluster has its shape
    compositions_before, _ = bind(eks_compositions.PACK, before)
    compositions_after, _ = bind(eks_compositions.PACK, after.fleet)
    assert heads([d for d in compositions_before if d not in compositions_after]) == [
        ("Composition", None, "eks-2-zones-1-node-group-single-nat")
    ]
    assert [d for d in compositions_before if d in compositions_after] == compositions_after
