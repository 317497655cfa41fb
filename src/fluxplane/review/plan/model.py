"""What a plan holds: each AWS resource the change creates, updates, replaces, deletes, starts or stops managing, or
only reads, and each
Kubernetes release or package installed or upgraded and object whose change is destructive, in report order."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

# The actions are the verdicts of the one-resource judgement, which the replacement guard makes too.
from fluxplane.synth.cloud import CREATE, DELETE, FORGET, IMPORT, MANAGE, REPLACE, UPDATE

__all__ = [
    "ACTIONS",
    "CREATE",
    "DELETE",
    "FORGET",
    "IMPORT",
    "MANAGE",
    "REINSTALL",
    "REPLACE",
    "UPDATE",
    "KubernetesChange",
    "Plan",
    "PlanBase",
    "ResourceChange",
    "ordered",
]

#: The order resources are listed in within a group: what loses something first.
ACTIONS = (DELETE, REPLACE, MANAGE, UPDATE, CREATE, FORGET, IMPORT)


@dataclass(frozen=True)
class ResourceChange:
    """One AWS resource the change acts on, where it lives, and why."""

    action: str
    #: The AWS account (its id when the tree says it), the region ("global" for IAM), and the cluster whose
    #: Crossplane manages the resource.
    account: str
    region: str
    cluster: str
    api_version: str
    kind: str
    #: How a reader names its kind ("RDS instance") and the resource (its AWS name when the tree holds it).
    noun: str
    name: str
    #: Where the tree declares it: the object, or the composite that composes it and its name there.
    source: str
    #: The fields that change (an update or a replacement), dotted below ``spec``.
    fields: tuple[str, ...] = ()
    #: Why it is replaced (the fields AWS cannot change in place), or what its deletion destroys.
    reasons: tuple[str, ...] = ()
    #: It holds data that a replacement or a deletion loses (fluxplane.kinds).
    data: bool = False

    @property
    def destroys(self) -> bool:
        return self.action in (REPLACE, DELETE)

    @property
    def where(self) -> str:
        return f"account {self.account}, {self.region}, cluster {self.cluster}"


#: A HelmRelease uninstalled and installed again (its release target changes).
REINSTALL = "reinstall"


@dataclass(frozen=True)
class KubernetesChange:
    """A release or package installed or upgraded, or an object whose change is destructive, on one cluster."""

    #: ``create`` and ``update`` (a release or package installed, upgraded); ``reinstall``, ``replace`` (its update
    #: is refused: made anew) and ``delete`` (it takes more with it), which are destructive.
    action: str
    cluster: str
    repository: str
    api_version: str
    kind: str
    namespace: str
    name: str
    reason: str

    @property
    def label(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"

    @property
    def destructive(self) -> bool:
        return self.action not in (CREATE, UPDATE)

    @property
    def gate(self) -> str:
        """The action ``--fail-on`` counts it as."""
        return REPLACE if self.action == REINSTALL else self.action


@dataclass(frozen=True)
class PlanBase:
    """What the plan compares with: the ref as given, its commit, and where its tree came from."""

    ref: str
    commit: str
    #: ``committed``: the dist/ committed at the ref; ``synthesized``: its definition synthesized;
    #: ``empty``: the ref has neither.
    source: str


@dataclass
class Plan:
    """Everything ``fluxplane plan`` found, in report order (data-bearing resources first)."""

    base: PlanBase
    resources: list[ResourceChange] = field(default_factory=list)
    #: Releases and packages installed or upgraded, and destructive changes, cluster by cluster.
    kubernetes: list[KubernetesChange] = field(default_factory=list)
    #: Composites not rendered (the reason), walks that could not be followed.
    notes: list[str] = field(default_factory=list)
    #: How much of the trees the plan read: changed files, clusters walked, composites rendered.
    scope: str = ""

    def count(self, action: str) -> int:
        return sum(1 for change in self.resources if change.action == action)

    @property
    def data_bearing(self) -> list[ResourceChange]:
        return [change for change in self.resources if change.data and change.destroys]

    @property
    def destructive(self) -> list[KubernetesChange]:
        return [change for change in self.kubernetes if change.destructive]

    def gated(self, gates: Iterable[str]) -> list[str]:
        """The gates of ``gates`` this plan meets (``--fail-on``, fluxplane.commands.plan.GATES), in the order given:
        an action; ``data``, a data-bearing resource replaced or deleted; ``destructive``, anything replaced or
        deleted, destructive Kubernetes changes included."""
        met = []
        for gate in gates:
            if gate == "data":
                hit = bool(self.data_bearing)
            elif gate == "destructive":
                hit = any(change.destroys for change in self.resources) or bool(self.destructive)
            else:
                hit = self.count(gate) > 0 or any(change.gate == gate for change in self.kubernetes)
            if hit:
                met.append(gate)
        return met


def ordered(changes: Iterable[ResourceChange]) -> list[ResourceChange]:
    """Data-bearing resources that are replaced or deleted first, then by account, region, cluster, action, name."""
    return sorted(
        changes,
        key=lambda change: (
            not (change.data and change.destroys),
            change.account,
            change.region,
            change.cluster,
            ACTIONS.index(change.action),
            change.noun,
            change.name,
            change.source,
        ),
    )
