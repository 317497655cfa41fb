"""``fluxplane versions``: which version runs where, and what blocks each cluster's next upgrade.

For every cluster: its Kubernetes version and where it stands in EKS support, the version of every pack
enabled on it and of the platform's controllers that are not packs (Flux, External Secrets, Sealed Secrets),
the API versions its objects use (what its controllers must serve), and a readiness verdict for its next
Kubernetes minor version. An upgrade is blocked by:

* a version EKS does not offer (fluxplane's calendar and ``awsData``);
* a controller, the platform's or an add-on, whose project publishes the Kubernetes versions it supports
  (fluxplane.config.compatibility) and whose version on the cluster supports none as new as the next one;
* an object the cluster's Flux applies in an API version Kubernetes stops serving by then (the Kubernetes
  deprecated API migration guide, below).

Objects in API versions their project deprecates (a Kyverno ClusterPolicy) are listed beside, blocking nothing.

Everything is read from the definition and what synth renders from it, so the report is the same on every
machine; only the EKS support column reads today's date.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from fluxplane import synth
from fluxplane.config import awsdata
from fluxplane.config.compatibility import outgrown, unsupported
from fluxplane.core.tree import FleetWalk, LazyDocuments
from fluxplane.synth.plan import FleetPlan, pack_versions

#: Core API versions Kubernetes stopped serving, by (apiVersion, kind): the release that removed it, and what
#: replaces it (kubernetes.io, "Deprecated API Migration Guide": v1.25 to v1.32, the last with removals).
REMOVED_APIS: dict[tuple[str, str], tuple[str, str]] = {
    ("batch/v1beta1", "CronJob"): ("1.25", "batch/v1"),
    ("discovery.k8s.io/v1beta1", "EndpointSlice"): ("1.25", "discovery.k8s.io/v1"),
    ("events.k8s.io/v1beta1", "Event"): ("1.25", "events.k8s.io/v1"),
    ("autoscaling/v2beta1", "HorizontalPodAutoscaler"): ("1.25", "autoscaling/v2"),
    ("policy/v1beta1", "PodDisruptionBudget"): ("1.25", "policy/v1"),
    ("policy/v1beta1", "PodSecurityPolicy"): ("1.25", "Pod Security admission"),
    ("node.k8s.io/v1beta1", "RuntimeClass"): ("1.25", "node.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema"): ("1.26", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration"): ("1.26", "flowcontrol.apiserver.k8s.io/v1"),
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler"): ("1.26", "autoscaling/v2"),
    ("storage.k8s.io/v1beta1", "CSIStorageCapacity"): ("1.27", "storage.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema"): ("1.29", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta2", "PriorityLevelConfiguration"): ("1.29", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema"): ("1.32", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta3", "PriorityLevelConfiguration"): ("1.32", "flowcontrol.apiserver.k8s.io/v1"),
}


#: API versions still served but deprecated by their project, by (apiVersion, kind): what replaces them. They
#: block nothing yet; a later release of the add-on removes them.
DEPRECATED_APIS: dict[tuple[str, str], str] = {
    ("kyverno.io/v1", "ClusterPolicy"): "policies.kyverno.io/v1 ValidatingPolicy (the kyverno pack's policyKind)",
    ("kyverno.io/v1", "Policy"): "policies.kyverno.io/v1 NamespacedValidatingPolicy",
    ("apiextensions.crossplane.io/v1", "CompositeResourceDefinition"): "apiextensions.crossplane.io/v2",
}


#: The readiness of a cluster on the newest Kubernetes version EKS offers.
NEWEST = "newest: EKS offers no later version yet (fluxplane's calendar, or awsData.kubernetesVersions)"


@dataclass(frozen=True)
class ClusterVersions:
    """One cluster: what it runs, and whether it can move to the next Kubernetes minor version."""

    name: str
    environment: str
    kubernetes: str
    #: Where its version stands in EKS support today (standard, extended, or ended).
    support: str
    #: Pack name to the version enabled on this cluster.
    packs: Mapping[str, str]
    #: The platform's controllers on it that are not packs (fluxplane.synth.plan.platform_controllers), by name, with
    #: their version.
    controllers: Mapping[str, str]
    #: The API versions (``group/version``) of what the cluster's Flux applies to it, sorted.
    apis: tuple[str, ...]
    #: The next Kubernetes minor version, and what blocks the upgrade to it (nothing: ready).
    next: str
    blockers: tuple[str, ...]
    #: Add-ons that already run outside the Kubernetes versions their project supports.
    outside: tuple[str, ...] = ()
    #: Objects in API versions their project deprecates (DEPRECATED_APIS), with what replaces them.
    deprecated: tuple[str, ...] = ()
    #: Whether it runs the newest version EKS offers: there is nothing to upgrade to, so nothing blocks.
    newest: bool = False

    @property
    def verdict(self) -> str:
        """The readiness in a word: ``newest``, ``ready`` or ``blocked``."""
        if self.newest:
            return "newest"
        return "blocked" if self.blockers else "ready"


def _support(version: str, facts: awsdata.AwsFacts, today: date) -> str:
    release = facts.releases.get(version)
    if release is None:
        return "not in the EKS calendar"
    if today < release.end_of_standard_support:
        return f"standard until {release.end_of_standard_support.isoformat()}"
    if today < release.end_of_extended_support:
        return f"extended (paid) until {release.end_of_extended_support.isoformat()}"
    return f"ended {release.end_of_extended_support.isoformat()}"


def _blockers(
    target: str,
    facts: awsdata.AwsFacts,
    on_it: Mapping[str, str],
    upgrades: Mapping[str, str],
    objects: Iterable[tuple[str, str]],
) -> list[str]:
    found = []
    if facts.version_problem(target) is not None:
        found.append(f"EKS does not offer Kubernetes {target} (fluxplane's calendar, or awsData.kubernetesVersions)")
    wanted = awsdata.minor(target)
    found += [
        f"{supports}: {upgrades.get(name, f'upgrade {name} first')}" for name, supports in outgrown(target, on_it)
    ]
    counts: dict[tuple[str, str], int] = {}
    for api_version, kind in objects:
        removed = REMOVED_APIS.get((api_version, kind))
        if removed is not None and awsdata.minor(removed[0]) <= wanted:
            counts[(api_version, kind)] = counts.get((api_version, kind), 0) + 1
    for (api_version, kind), count in sorted(counts.items()):
        since, replacement = REMOVED_APIS[(api_version, kind)]
        found.append(
            f"{count} {kind} in {api_version}, which Kubernetes stopped serving in {since}: move to {replacement}"
        )
    return found


def _deprecated(objects: Iterable[tuple[str, str]]) -> list[str]:
    counts: dict[tuple[str, str], int] = {}
    for key in objects:
        if key in DEPRECATED_APIS:
            counts[key] = counts.get(key, 0) + 1
    return [
        f"{count} {kind} in {api_version}, deprecated: move to {DEPRECATED_APIS[(api_version, kind)]}"
        for (api_version, kind), count in sorted(counts.items())
    ]


def collect(plan: FleetPlan, files: Mapping[str, str], today: date) -> list[ClusterVersions]:
    """Every cluster of ``plan`` (the hub first) as ``files`` (synth's rendering of it) has it."""
    fleet = plan.fleet
    facts = awsdata.facts(fleet.aws_data)
    tree = FleetWalk(LazyDocuments({}, files))
    environments = {cluster.name: env.name for env in fleet.environments for cluster in env.clusters}
    versions = {cluster.name: cluster.kubernetes_version for cluster in (fleet.management, *fleet.clusters)}
    found = []
    for planned in plan.clusters:
        objects = [
            (str(placed.doc.get("apiVersion")), str(placed.doc.get("kind"))) for _, placed in tree.applied(planned.name)
        ]
        version = versions[planned.name]
        target = f"1.{awsdata.minor(version) + 1}"
        on_it = plan.running(planned)
        upgrades = {controller.name: controller.upgrade for controller in planned.controllers}
        newest = facts.version_problem(target) is not None and all(
            awsdata.minor(offered) <= awsdata.minor(version) for offered in facts.supported_versions
        )
        found.append(
            ClusterVersions(
                name=planned.name,
                environment=environments.get(planned.name, "management"),
                kubernetes=version,
                support=_support(version, facts, today),
                packs=pack_versions(planned.packs, plan.registry),
                controllers={controller.name: controller.version for controller in planned.controllers},
                apis=tuple(sorted({api for api, _ in objects})),
                next=target,
                blockers=() if newest else tuple(_blockers(target, facts, on_it, upgrades, objects)),
                outside=tuple(f"{text}, and the cluster runs {version}" for _, text in unsupported(version, on_it)),
                deprecated=tuple(_deprecated(objects)),
                newest=newest,
            )
        )
    return found


def _rows(clusters: Sequence[ClusterVersions], controllers: bool = False) -> list[tuple[str, str, str]]:
    """(pack, version, clusters) for each version of each pack in use, by pack then version; or of each of the
    platform's controllers."""
    where: dict[tuple[str, str], list[str]] = {}
    for cluster in clusters:
        for name, version in (cluster.controllers if controllers else cluster.packs).items():
            where.setdefault((name, version), []).append(cluster.name)
    return [(name, version, ", ".join(names)) for (name, version), names in sorted(where.items())]


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]


def _next(cluster: ClusterVersions) -> str:
    """The NEXT column: the next minor version, or none for a cluster on the newest EKS offers."""
    return "-" if cluster.newest else cluster.next


def _ready(cluster: ClusterVersions) -> str:
    """The READY column: ``yes``, ``no``, or ``newest`` for a cluster with nothing to upgrade to."""
    return "newest" if cluster.newest else "no" if cluster.blockers else "yes"


def _readiness(cluster: ClusterVersions) -> str:
    """The readiness line's head: ``<cluster> <version> -> <next>: ready`` (or ``blocked``), or, on the newest
    version EKS offers, that it is."""
    if cluster.newest:
        return f"{cluster.name} {cluster.kubernetes}: {NEWEST}"
    return f"{cluster.name} {cluster.kubernetes} -> {cluster.next}: {cluster.verdict}"


def text(clusters: Sequence[ClusterVersions]) -> str:
    """The report for a terminal."""
    lines = ["clusters:"]
    rows = [("CLUSTER", "ENVIRONMENT", "KUBERNETES", "EKS SUPPORT", "NEXT", "READY")]
    rows += [(c.name, c.environment, c.kubernetes, c.support, _next(c), _ready(c)) for c in clusters]
    lines += ["  " + line for line in _table(rows)]
    lines += ["", "packs:"]
    lines += ["  " + line for line in _table([("PACK", "VERSION", "CLUSTERS"), *_rows(clusters)])]
    lines += ["", "the platform's controllers:"]
    lines += ["  " + line for line in _table([("CONTROLLER", "VERSION", "CLUSTERS"), *_rows(clusters, True)])]
    lines += ["", "APIs the clusters' objects use:"]
    lines += [f"  {c.name}: {', '.join(c.apis) or 'none'}" for c in clusters]
    lines += ["", "upgrade readiness:"]
    for cluster in clusters:
        lines.append(f"  {_readiness(cluster)}")
        lines += [f"    - {blocker}" for blocker in cluster.blockers]
        lines += [f"    ! now: {outside}" for outside in cluster.outside]
        lines += [f"    ~ {deprecated}" for deprecated in cluster.deprecated]
    return "\n".join(lines) + "\n"


def markdown(clusters: Sequence[ClusterVersions]) -> str:
    """The report as Markdown, for a pull request or a wiki page."""

    def table(rows: Sequence[Sequence[str]]) -> list[str]:
        return [
            "| " + " | ".join(rows[0]) + " |",
            "|" + "---|" * len(rows[0]),
            *("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows[1:]),
        ]

    lines = ["## Clusters", ""]
    lines += table(
        [("cluster", "environment", "Kubernetes", "EKS support", "next", "ready")]
        + [
            (c.name, c.environment, c.kubernetes, c.support, _next(c), "**no**" if c.blockers else _ready(c))
            for c in clusters
        ]
    )
    lines += ["", "## Packs", ""]
    lines += table([("pack", "version", "clusters"), *_rows(clusters)])
    lines += ["", "## The platform's controllers", ""]
    lines += table([("controller", "version", "clusters"), *_rows(clusters, True)])
    lines += ["", "## APIs the clusters' objects use", ""]
    lines += [f"- **{c.name}**: {', '.join(f'`{api}`' for api in c.apis) or 'none'}" for c in clusters]
    lines += ["", "## Upgrade readiness", ""]
    for cluster in clusters:
        step = cluster.kubernetes if cluster.newest else f"{cluster.kubernetes} → {cluster.next}"
        lines.append(f"- **{cluster.name}** {step}: {NEWEST if cluster.newest else cluster.verdict}")
        lines += [f"  - {blocker}" for blocker in cluster.blockers]
        lines += [f"  - :warning: now: {outside}" for outside in cluster.outside]
        lines += [f"  - deprecated: {deprecated}" for deprecated in cluster.deprecated]
    return "\n".join(lines) + "\n"


def project_versions(root: Path, today: date) -> list[ClusterVersions]:
    """Every cluster of the definition under ``root``, as synth renders it, with EKS support as of ``today``."""
    pipeline = synth.Pipeline(root)
    with synth.paused_gc():
        plan = pipeline.load()
        files = pipeline.build(plan)
    return collect(plan, files, today)
