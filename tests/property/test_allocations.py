"""A cluster's address range is a contract: changes to other clusters never move it.

Each example is a sequence of changes a platform team makes over time, each one loaded the way synth
loads it (environments/ with the recorded environments/allocations.yaml) and recorded the way synth
records it: add a cluster, remove one, rename one, pin one with ``network.cidr``, take a pin away.
After every accepted change, every cluster the change did not touch has the same VPC range and the
same subnets as before. A pin that takes another cluster's range is refused, and then nothing moves.
The pool is small (16 blocks), so names hashing to taken blocks and pins onto taken ranges are common.
"""

from __future__ import annotations

import itertools
import tempfile
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fluxplane.config.loader import load_fleet
from fluxplane.config.network import ALLOCATIONS_FILE, allocations_text, subnet_plan
from fluxplane.errors import ConfigError

POOL = IPv4Network("10.0.0.0/12")
BLOCKS = list(POOL.subnets(new_prefix=16))
BASE: dict[str, Any] = {
    "repositories": {"platform": {"url": "ssh://git@example.com/org/fleet.git"}},
    "management": {"name": "hub", "region": "us-west-2"},
    "clusterNetwork": {"pool": str(POOL), "prefixLength": 16},
}
names = st.from_regex(r"[a-z]{1,3}-[a-z0-9]{1,3}", fullmatch=True)
OPERATIONS = ("add", "remove", "rename", "pin", "unpin")


def _fresh(taken: frozenset[str]) -> st.SearchStrategy[str]:
    """A cluster name not in ``taken``."""
    return names.filter(lambda name: name not in taken)


def _load(root: Path, clusters: dict[str, str | None]) -> dict[str, tuple[IPv4Network, Any]] | ConfigError:
    """Write the definition, load it as synth does, record the allocations; each cluster's VPC and subnets."""
    env_dir = root / "environments"
    entries = [
        {"name": name, "region": "us-west-2", **({"network": {"cidr": pin}} if pin else {})}
        for name, pin in clusters.items()
    ]
    (env_dir / "fleet.yaml").write_text(yaml.safe_dump({"clusters": entries}, sort_keys=False))
    try:
        fleet = load_fleet(root).fleet
    except ConfigError as exc:
        return exc
    ranges = {cluster.name: cluster.network.cidr for cluster in fleet.clusters if cluster.network.cidr}
    (env_dir / ALLOCATIONS_FILE).write_text(allocations_text(ranges, {}))
    return {
        name: (cidr, subnet_plan(cidr, ("us-west-2a", "us-west-2b", "us-west-2c"))) for name, cidr in ranges.items()
    }


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_changes_to_other_clusters_never_move_an_existing_cluster(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "environments").mkdir()
        (root / "environments" / "base.yaml").write_text(yaml.safe_dump(BASE))
        # GIVEN a few clusters, allocated and recorded
        clusters: dict[str, str | None] = dict.fromkeys(data.draw(st.lists(names, min_size=1, max_size=4, unique=True)))
        state = _load(root, clusters)
        assert not isinstance(state, ConfigError), state
        for _ in range(data.draw(st.integers(1, 8), label="changes")):
            # WHEN one change is made to the definition
            operation = data.draw(st.sampled_from(OPERATIONS), label="operation")
            changed = dict(clusters)
            touched: set[str] = set()
            fresh = _fresh(frozenset(clusters))
            if (operation == "add" and len(clusters) < len(BLOCKS) // 2) or not clusters:
                new = data.draw(fresh, label="added")
                changed[new] = None
            elif operation in ("add", "remove"):
                touched.add(data.draw(st.sampled_from(sorted(clusters)), label="removed"))
                del changed[next(iter(touched))]
            elif operation == "rename":
                old = data.draw(st.sampled_from(sorted(clusters)), label="renamed")
                new = data.draw(fresh, label="to")
                touched.add(old)
                changed = {new if name == old else name: pin for name, pin in clusters.items()}
            elif operation == "pin":
                name = data.draw(st.sampled_from(sorted(clusters)), label="pinned")
                touched.add(name)
                changed[name] = str(data.draw(st.sampled_from(BLOCKS), label="cidr"))
            else:
                name = data.draw(st.sampled_from(sorted(clusters)), label="unpinned")
                changed[name] = None
            after = _load(root, changed)
            if isinstance(after, ConfigError):
                # THEN a refused change is a pin onto a range that is taken, and nothing is recorded
                assert operation == "pin", after.problems
                assert all("overlaps" in line for line in after.problems), after.problems
                assert _load(root, clusters) == state
                continue
            # THEN every cluster the change did not touch keeps its VPC range and its subnets, and
            # taking a pin away keeps the range the cluster has
            for name, allocation in state.items():
                if name not in touched:
                    assert after[name] == allocation, (operation, name)
            # AND no two clusters share addresses
            networks = sorted(cidr for cidr, _ in after.values())
            assert all(not a.overlaps(b) for a, b in itertools.pairwise(networks))
            clusters, state = changed, after
