"""VPC address allocation: every workload cluster gets a CIDR that overlaps no other, and keeps it.

A changed VPC CIDR replaces the VPC, i.e. destroys the cluster, so an allocation is a contract.
Clusters that give ``network.cidr`` keep it. The others keep the range recorded for them in
``environments/allocations.yaml``, which synth writes and Git keeps: once a cluster has a range,
only an explicit change to that cluster (its ``network.cidr``) moves it. Adding, removing, renaming
or pinning other clusters never does; a pin that overlaps another cluster's range is refused.

A cluster that has no range yet gets a free block of ``clusterNetwork.prefixLength`` from
``clusterNetwork.pool``, chosen from a hash of its name and probing forward past taken blocks, in name
order, so the choice does not depend on the order of the definition files. Without a recorded file
(a fleet written before there was one) this gives every cluster the range it always had.

The recorded file is state that arrives with pull requests, so it is read strictly and checked
like the definition: unknown keys, malformed ranges and overlaps are errors with the file and key.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from fluxplane.config.merge import Layer, Origins
from fluxplane.config.models import DNS_LABEL, ClusterNetwork, KubernetesVersion, Model
from fluxplane.config.problems import ProblemList, read_mapping

#: The recorded allocations, in environments/ beside the definition they belong to.
ALLOCATIONS_FILE = "allocations.yaml"

ALLOCATIONS_HEADER = """\
# The VPC range of every workload cluster, kept by `fluxplane synth` so that a change to one cluster
# never moves another (a changed range replaces a cluster's VPC). Commit it with dist/; synth adds
# new clusters and drops removed ones. To move a cluster on purpose, set its network.cidr.
"""
VERSIONS_HEADER = """\
# The Kubernetes version of every cluster, kept so that a new default never upgrades a cluster: one
# without kubernetesVersion stays on its version here. To upgrade it, set kubernetesVersion (one minor
# version at a time, as EKS upgrades).
"""


def _vpc_sized(value: IPv4Network) -> IPv4Network:
    if not 16 <= value.prefixlen <= 22:
        raise ValueError(f"a VPC CIDR must be /16 to /22, got {value}")
    return value


_ClusterName = Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)]


class Allocations(Model):
    """``environments/allocations.yaml``: each workload cluster's VPC range, as synth allocated it, and
    each cluster's Kubernetes version."""

    clusters: dict[_ClusterName, Annotated[IPv4Network, AfterValidator(_vpc_sized)]] = Field(
        default_factory=dict, description="VPC CIDR per workload cluster."
    )
    kubernetes_versions: dict[_ClusterName, KubernetesVersion] | None = Field(
        None, alias="kubernetesVersions", description="Kubernetes version per cluster, the hub's included."
    )


@dataclass(frozen=True)
class Recorded:
    """The allocations read from the recorded file, and how messages name an entry of it.

    ``versions`` is None for a file written before versions were recorded (or no file).
    """

    cidrs: Mapping[str, IPv4Network]
    display: str = f"environments/{ALLOCATIONS_FILE}"
    versions: Mapping[str, str] | None = None

    def where(self, cluster: str) -> str:
        return f"{self.display}: clusters.{cluster}"

    def version_where(self, cluster: str) -> str:
        return f"{self.display}: kubernetesVersions.{cluster}"

    def version_of(self, cluster: str, legacy: str, *, hub: bool = False) -> str | None:
        """The version recorded for ``cluster``; for a file from before versions were recorded, ``legacy`` (the
        default it was built with) when the file lists the cluster's range, or, for the ``hub``, any range."""
        if self.versions is not None:
            return self.versions.get(cluster)
        return legacy if (self.cidrs if hub else cluster in self.cidrs) else None


@dataclass(frozen=True)
class FollowedVersion:
    """A cluster whose definition names no ``kubernetesVersion``, so that its version follows the record.

    The record only follows the definition: synth refuses a record that alone would move such a cluster from
    the version it runs (fluxplane.synth.guard), naming both places.
    """

    #: The version recorded for the cluster; None when none is (a new cluster: the default).
    recorded: str | None
    #: Where the record keeps it (``environments/allocations.yaml: kubernetesVersions.<cluster>``).
    record: str
    #: Where the definition would name one (``environments/<env>.yaml: clusters[<i>].kubernetesVersion``).
    definition: str


def read_allocations(path: Path, display: str, problems: ProblemList) -> Recorded:
    """The recorded allocations at ``path`` (none when the file does not exist), problems recorded."""
    if not path.exists() and not path.is_symlink():
        return Recorded({}, display)
    raw = read_mapping(path, display, problems)
    if raw is None:
        return Recorded({}, display)
    found = problems.validate(Allocations, raw, Origins([Layer(display, raw)]))
    if found is None:
        return Recorded({}, display)
    return Recorded(found.clusters, display, found.kubernetes_versions)


def allocations_text(cidrs: Mapping[str, IPv4Network], versions: Mapping[str, str]) -> str:
    """The recorded file for ``cidrs`` and ``versions``: each section's header, then one line per cluster, by
    name (versions quoted: a YAML 1.2 reader takes 1.30 for a number)."""
    ranges = "".join(f"  {name}: {cidrs[name]}\n" for name in sorted(cidrs))
    text = f"{ALLOCATIONS_HEADER}clusters:\n{ranges}" if cidrs else f"{ALLOCATIONS_HEADER}clusters: {{}}\n"
    if versions:
        lines = "".join(f'  {name}: "{versions[name]}"\n' for name in sorted(versions))
        text += f"\n{VERSIONS_HEADER}kubernetesVersions:\n{lines}"
    return text


@dataclass(frozen=True)
class Claim:
    """A cluster asking for an address range: ``cidr`` when given, else None (allocate)."""

    cluster: str
    cidr: IPv4Network | None
    origins: Origins


@dataclass(frozen=True)
class _Range:
    """A range that is taken: whose it is, and where the definition or the recorded file says so."""

    network: IPv4Network
    owner: str | None  # None for clusterNetwork.reserved
    where: str
    recorded: bool = False

    def describe(self) -> str:
        if self.owner is None:
            return "a reserved range"
        how = "its allocated range, " if self.recorded else ""
        return f"cluster {self.owner!r} ({how}{self.where})"


def _overlaps(ranges: Sequence[_Range]) -> list[tuple[_Range, _Range]]:
    """Pairs (later, earlier) of overlapping ranges, in address order."""
    found = []
    previous: _Range | None = None
    end = -1
    # IPv4Network's own order (its address, then its mask), by numbers: a thousand clusters' ranges are sorted. A range
    # overlaps one before it (which starts no later) when it starts before the furthest end so far, ``previous``'s.
    for item in sorted(
        ranges, key=lambda item: (int(item.network.network_address), item.network.prefixlen, item.owner or "")
    ):
        if previous is not None and int(item.network.network_address) <= end:
            found.append((item, previous))
        last = int(item.network.broadcast_address)
        if previous is None or last > end:
            previous, end = item, last
    return found


class _Blocks:
    """The ``/prefix_length`` blocks of ``pool``, in address order, and which are free: those no range of ``used``
    overlaps and none given yet. Neither the blocks (thousands in a large pool) nor their states are listed: a block is
    made from its index when given, and held against the used ranges that start at or before its end, by the
    furthest end among them (a sweep, not every pair)."""

    def __init__(self, pool: IPv4Network, prefix_length: int, used: Sequence[IPv4Network]) -> None:
        self.start = int(pool.network_address)
        self.prefix_length = prefix_length
        self.size = 1 << (32 - prefix_length)
        self.count = pool.num_addresses // self.size
        spans = sorted((int(network.network_address), int(network.broadcast_address)) for network in used)
        self.starts = [start for start, _ in spans]
        self.furthest: list[int] = []
        for _, end in spans:
            self.furthest.append(max(end, self.furthest[-1]) if self.furthest else end)
        self.given: set[int] = set()

    def free(self, index: int) -> bool:
        if index in self.given:
            return False
        first = self.start + index * self.size
        before = bisect.bisect_right(self.starts, first + self.size - 1)
        return before == 0 or self.furthest[before - 1] < first

    def give(self, index: int) -> IPv4Network:
        self.given.add(index)
        return IPv4Network((self.start + index * self.size, self.prefix_length))


def _overlap_line(item: _Range, other: _Range, reserved_where: str) -> str:
    """A line about ``item`` overlapping ``other``, placed where the user can act on it."""
    if item.owner is None:  # a reserved range laid over a cluster's: the reserved list is what changed
        item, other = other, item
    if other.owner is None and item.recorded:
        return (
            f"{reserved_where}: {other.network} overlaps {item.network} of cluster {item.owner!r} ({item.where}); "
            "a cluster's range never moves by itself: reserve another range, or move the cluster explicitly with "
            "its network.cidr"
        )
    if item.recorded and not other.recorded:
        item, other = other, item
    if item.recorded and other.recorded:
        return (
            f"{item.where}: {item.network} overlaps {other.network} of cluster {other.owner!r} ({other.where}); "
            "two clusters were given one range (two changes merged at once?): delete the line of the cluster "
            "that is not built yet, and synth allocates it again"
        )
    pin = "; a pin may not take another cluster's range: pick a free one" if other.recorded else ""
    return f"{item.where}: {item.network} overlaps {other.network} of {other.describe()}{pin}"


def allocate(
    claims: Sequence[Claim],
    settings: ClusterNetwork,
    settings_where: str,
    recorded: Recorded | None = None,
    reserved_where: str | None = None,
) -> tuple[dict[str, IPv4Network], list[str]]:
    """CIDR per cluster, and problem lines (overlaps, an exhausted pool).

    A cluster keeps its ``network.cidr``, else its range in ``recorded``, else gets a free block.
    Entries of ``recorded`` for clusters not claimed (removed ones) are ignored.
    """
    recorded = recorded or Recorded({})
    reserved_where = reserved_where or settings_where
    problems: list[str] = []
    fixed: list[_Range] = [_Range(network, None, reserved_where) for network in settings.reserved]
    result: dict[str, IPv4Network] = {}
    for claim in claims:
        if claim.cidr is not None:
            fixed.append(_Range(claim.cidr, claim.cluster, claim.origins.describe(("network", "cidr"))))
            result[claim.cluster] = claim.cidr
        elif claim.cluster in recorded.cidrs:
            network = recorded.cidrs[claim.cluster]
            fixed.append(_Range(network, claim.cluster, recorded.where(claim.cluster), recorded=True))
            result[claim.cluster] = network
    for item, other in _overlaps(fixed):
        if item.owner is None and other.owner is None:
            continue  # reserved ranges may overlap each other
        problems.append(_overlap_line(item, other, reserved_where))

    blocks = _Blocks(settings.pool, settings.prefix_length, [item.network for item in fixed])
    left_out: list[str] = []
    for claim in sorted((claim for claim in claims if claim.cluster not in result), key=lambda claim: claim.cluster):
        if left_out:
            left_out.append(claim.cluster)
            continue
        start = int.from_bytes(hashlib.sha256(claim.cluster.encode()).digest()[:8], "big") % blocks.count
        for step in range(blocks.count):
            index = (start + step) % blocks.count
            if blocks.free(index):
                result[claim.cluster] = blocks.give(index)
                break
        else:
            left_out.append(claim.cluster)
    if left_out:
        shown = ", ".join(repr(name) for name in left_out[:3])
        more = f" and {len(left_out) - 3} more" if len(left_out) > 3 else ""
        problems.append(
            f"{settings_where}: no free /{settings.prefix_length} left in {settings.pool} ({blocks.count} blocks) "
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
    start, size = int(vpc.network_address), vpc.num_addresses

    def part(index: int, parts: int) -> IPv4Network:
        """The ``index``-th of ``parts`` equal subnets of the VPC (what ``vpc.subnets`` lists, without the list)."""
        return IPv4Network((start + index * (size // parts), vpc.prefixlen + parts.bit_length() - 1))

    return tuple(
        ZoneSubnets(zone=zone, public=part(48 + index, 64), private=part(index, 8)) for index, zone in enumerate(zones)
    )
