"""The hub's packs bound as a fleet's chain binds them, for their tests: a pack for the whole fleet, workload-clusters
for one cluster, and the kind, namespace and name of what they write."""

from __future__ import annotations

from typing import Any

from fluxplane.config.loader import load_fleet
from fluxplane.config.models import Fleet
from fluxplane.packs import workload_clusters
from fluxplane.packs.api import Pack
from fluxplane.testing import BoundPack, bind_pack
from tests.conftest import FleetWriter

#: A cluster of two zones behind one NAT gateway: a shape of its own, unlike the example's.
SMALL: dict[str, Any] = {
    "name": "small",
    "region": "us-west-2",
    "network": {"availabilityZones": 2, "natGateways": "Single"},
}


def bind(
    pack: Pack, fleet: Fleet | None = None, values: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], BoundPack]:
    """``pack`` bound with ``values`` for ``fleet``: the objects it writes, and what it declares beside them."""
    bound = bind_pack(pack, values or {}, fleet=fleet)
    return bound.objects, bound


def build(fleet: Fleet, name: str, values: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], BoundPack]:
    """workload-clusters bound for one cluster of ``fleet``, as a cluster's chain binds it."""
    (cluster,) = [cluster for cluster in fleet.clusters if cluster.name == name]
    bound = bind_pack(workload_clusters.PACK, values or {}, fleet=fleet, cluster=cluster)
    return bound.objects, bound


def heads(documents: list[dict[str, Any]]) -> list[tuple[str, str | None, str]]:
    """Each document's kind, namespace and name."""
    return [(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in documents]


def cluster(name: str, **fields: Any) -> dict[str, Any]:
    """A workload cluster's definition in us-west-2, ``fields`` over it."""
    return {"name": name, "region": "us-west-2", **fields}


def fleet_of(write_fleet: FleetWriter, envs: dict[str, Any]) -> Fleet:
    """The fleet of ``envs``, written and loaded."""
    return load_fleet(write_fleet(envs=envs)).fleet
