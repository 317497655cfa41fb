"""VPC address allocation: every workload cluster gets a CIDR that overlaps no other.

Clusters that give ``network.cidr`` keep it; overlaps between them are errors. The others get a
block of ``clusterNetwork.prefixLength`` from ``clusterNetwork.pool``, chosen from a hash of the
cluster's name and probing forward past taken blocks, in name order. So a cluster's block does not
depend on the order of the definition files, and adding a cluster moves no other cluster unless
their names hash to the same block. Pin the CIDR of clusters that exist (a changed CIDR replaces
the VPC); the diff of dist/ shows every allocation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network

from fluxplane.config.merge import Origins
from fluxplane.config.models import ClusterNetwork


@dataclass(frozen=True)
class Claim:
    """A cluster asking for an address range: ``cidr`` when given, else None (allocate)."""

    cluster: str
    cidr: IPv4Network | None
    origins: Origins


def _overlaps(sorted_networks: Sequence[tuple[IPv4Network, str]]) -> list[tuple[str, str, IPv4Network, IPv4Network]]:
    found = []
    previous: tuple[IPv4Network, str] | None = None
    for network, owner in sorted_networks:
        if previous is not None and previous[0].overlaps(network):
            found.append((owner, previous[1], network, previous[0]))
        if previous is None or network.broadcast_address > previous[0].broadcast_address:
            previous = (network, owner)
    return found


def allocate(
    claims: Sequence[Claim], settings: ClusterNetwork, settings_where: str
) -> tuple[dict[str, IPv4Network], list[str]]:
    """CIDR per cluster, and problem lines (overlaps, an exhausted pool)."""
    problems: list[str] = []
    where = {claim.cluster: claim.origins.describe(("network", "cidr")) for claim in claims}
    taken: list[tuple[IPv4Network, str]] = [(network, "clusterNetwork.reserved") for network in settings.reserved]
    taken += [(claim.cidr, claim.cluster) for claim in claims if claim.cidr is not None]
    for owner, other, network, other_network in _overlaps(sorted(taken, key=lambda item: item[0])):
        other_text = "a reserved range" if other == "clusterNetwork.reserved" else f"cluster {other!r} ({where[other]})"
        problems.append(f"{where.get(owner, settings_where)}: {network} overlaps {other_network} of {other_text}")
    result = {claim.cluster: claim.cidr for claim in claims if claim.cidr is not None}

    blocks = list(settings.pool.subnets(new_prefix=settings.prefix_length))
    used = [network for network, _ in taken]
    free = [not any(block.overlaps(network) for network in used) for block in blocks]
    left_out: list[str] = []
    for claim in sorted((claim for claim in claims if claim.cidr is None), key=lambda claim: claim.cluster):
        if left_out:
            left_out.append(claim.cluster)
            continue
        start = int.from_bytes(hashlib.sha256(claim.cluster.encode()).digest()[:8], "big") % len(blocks)
        for step in range(len(blocks)):
            index = (start + step) % len(blocks)
            if free[index]:
                free[index] = False
                result[claim.cluster] = blocks[index]
                break
        else:
            left_out.append(claim.cluster)
    if left_out:
        shown = ", ".join(repr(name) for name in left_out[:3])
        more = f" and {len(left_out) - 3} more" if len(left_out) > 3 else ""
        problems.append(
            f"{settings_where}: no free /{settings.prefix_length} left in {settings.pool} ({len(blocks)} blocks) "
            f"for cluster{'s' if len(left_out) > 1 else ''} {shown}{more}; use a larger pool or a longer prefixLength"
        )
    return result, problems


#: The most zones a VPC is split over: private subnets take six of its eighths (see subnet_plan).
MAX_ZONES = 6


@dataclass(frozen=True)
class ZoneSubnets:
    """One availability zone of a VPC: its name and its public and private subnet."""

    zone: str
    public: IPv4Network
    private: IPv4Network


def subnet_plan(vpc: IPv4Network, zones: Sequence[str]) -> tuple[ZoneSubnets, ...]:
    """Split ``vpc`` over the availability zones named ``zones``, in order.

    The names come from the region's zone list (fluxplane.config.awsdata), not from letters: some
    regions skip one (ca-central-1 has a, b and d). Private subnets (nodes and pods) take eighths of
    the VPC, public subnets (load balancers, NAT) sixty-fourths of the seventh eighth; the last
    eighth stays free. A zone's subnets depend only on its position, so adding a zone moves none of
    the others.
    """
    if not 1 <= len(zones) <= MAX_ZONES:
        raise ValueError(f"zones must be 1 to {MAX_ZONES}, got {len(zones)}")
    private = list(vpc.subnets(prefixlen_diff=3))
    public = list(vpc.subnets(prefixlen_diff=6))[48:]
    return tuple(
        ZoneSubnets(zone=zone, public=public[index], private=private[index]) for index, zone in enumerate(zones)
    )
