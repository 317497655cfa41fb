"""Keep ``environments/allocations.yaml``: the VPC range of every workload cluster and the Kubernetes version
of every cluster, recorded in Git.

The loader allocates (fluxplane.config.network); synth records what it allocated beside the
definition, so the next run, on any machine, gives every existing cluster the same range whatever
else changed. ``synth --check`` reports the file stale like a file of dist/.
"""

from __future__ import annotations

import stat
from pathlib import Path

from fluxplane.config.network import ALLOCATIONS_FILE, allocations_text
from fluxplane.errors import OutputError
from fluxplane.synth.plan import FleetPlan
from fluxplane.system import transaction

#: The recorded file, relative to the project root.
ALLOCATIONS = f"environments/{ALLOCATIONS_FILE}"


def recorded_text(plan: FleetPlan) -> str:
    """What the recorded file holds for ``plan``: every workload cluster's VPC range, and every cluster's
    Kubernetes version (the hub's included)."""
    fleet = plan.fleet
    return allocations_text(
        {cluster.name: cluster.network.cidr for cluster in fleet.clusters if cluster.network.cidr},
        {cluster.name: cluster.kubernetes_version for cluster in (fleet.management, *fleet.clusters)},
    )


def stale(root: Path, plan: FleetPlan) -> bool:
    """Whether the recorded file differs from what synth would write (False when nothing to record)."""
    target = root / ALLOCATIONS
    if not plan.fleet.clusters and not target.exists():
        return False
    try:
        if not stat.S_ISREG(target.stat().st_mode):  # a FIFO would block: replaced by the recorded file
            return True
        return target.read_text(encoding="utf-8") != recorded_text(plan)
    except (OSError, UnicodeDecodeError):
        return True


def write(root: Path, plan: FleetPlan) -> bool:
    """Write the recorded file when it changes, through :func:`fluxplane.system.transaction.commit`; True when
    it was written. A symlink in its place is refused rather than followed: the file belongs to the project.
    """
    if not stale(root, plan):
        return False
    try:
        transaction.commit(root, {ALLOCATIONS: recorded_text(plan)})
    except OSError as exc:
        raise OutputError(f"{ALLOCATIONS}: cannot write: {exc.strerror or exc}; nothing was written") from None
    return True
