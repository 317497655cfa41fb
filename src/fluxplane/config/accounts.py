"""The fleet's AWS accounts: the hub's own and those ``accounts`` names, and where the sealing key lives in them.

The hub builds every workload cluster in the hub's own account or in the account the cluster names. What
each account must hold before that works (the roles the hub's Crossplane uses, the sealing key's secret
that each spoke's External Secrets reads from its own account) is made once, outside the fleet:
``fluxplane aws-setup`` writes it, ``fluxplane sealing-key`` fills the secrets, and both name the accounts
and their AWS CLI profiles from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from fluxplane.config.models import Fleet


@dataclass(frozen=True)
class FleetAccount:
    """One AWS account of the fleet."""

    #: The name under ``accounts`` in base.yaml; None for the hub's own account.
    name: str | None
    #: The 12-digit id; None when unknown (the hub's own, whose id the definition names only in its roles' ARNs).
    id: str | None
    #: The workload clusters made in it, in definition order.
    clusters: tuple[str, ...]

    @property
    def holds_sealing_key(self) -> bool:
        """Whether spokes read the sealing key here: each spoke's External Secrets reads it from its own account."""
        return bool(self.clusters)


def fleet_accounts(fleet: Fleet) -> list[FleetAccount]:
    """The hub's own account first, then every account of ``accounts`` by name."""
    hub = tuple(cluster.name for cluster in fleet.clusters if cluster.account is None)
    found = [FleetAccount(None, None, hub)]
    for name, account in sorted(fleet.accounts.items()):
        clusters = tuple(cluster.name for cluster in fleet.clusters if cluster.account == name)
        found.append(FleetAccount(name, account.id, clusters))
    return found


def profile(fleet: Fleet, account: FleetAccount) -> str:
    """The AWS CLI profile the printed commands name for ``account``: the account's name, and the hub's for the
    hub's own account (a reader replaces it with theirs)."""
    return account.name or fleet.management.name


def sealing_key_region(fleet: Fleet) -> str:
    """The region of the sealing key's secret in every account: ``sealingKey.region``, else the hub's."""
    return fleet.sealing_key.region or fleet.management.region
