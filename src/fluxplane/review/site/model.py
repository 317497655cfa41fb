"""What the fleet pages show, read once from the definition and the dist/ it wrote.

The definition is loaded as synth loads it (fluxplane.synth.Pipeline.load: pure Python, no rendering); dist/ is
read from disk as Flux reads it, so the pages show what is committed. Each answer comes from the module that owns
it: ``fluxplane versions``' report (fluxplane.review.versions) for every cluster's Kubernetes version, EKS support and
readiness for the next version and the version of every pack; the EKS calendar (fluxplane.config.awsdata) for the
support timeline; ``fluxplane graph``'s walk (fluxplane.synth.graph) for each cluster's Flux dependency graph; the
fleet's accounts (fluxplane.config.accounts) and the apps' AWS names (fluxplane.config.apps).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from fluxplane import synth
from fluxplane.config import awsdata
from fluxplane.config.accounts import FleetAccount, fleet_accounts
from fluxplane.config.apps import App, aws_names
from fluxplane.config.models import ManagementCluster, WorkloadCluster
from fluxplane.core.layout import PLATFORM, RepositoryLayout, workloads_layout
from fluxplane.core.tree import LazyDocuments, repositories_of
from fluxplane.errors import FluxplaneError
from fluxplane.packs.api import PackConfig
from fluxplane.review import versions as versions_report
from fluxplane.synth.graph import FluxTree, Graph
from fluxplane.synth.guard import read_tree
from fluxplane.synth.plan import FleetPlan
from fluxplane.system.files import output_dir

#: The AWS resource kinds of an app, by their field under ``aws``, as a reader names them.
RESOURCE_NOUNS = {
    "tables": "DynamoDB table",
    "queues": "SQS queue",
    "buckets": "S3 bucket",
    "databases": "RDS database",
}


class SiteError(FluxplaneError):
    """``fluxplane site`` cannot build the pages (no dist/, a bad --base, an output folder it cannot write)."""


@dataclass(frozen=True)
class Cluster:
    """One cluster as the pages show it."""

    name: str
    #: The environment's name; ``management`` for the hub.
    environment: str
    hub: bool
    region: str
    #: The account's name under ``accounts``, or None for the hub's own; its 12-digit id when known.
    account: str | None
    account_id: str | None
    #: How its nodes run: ``Auto Mode``, its node groups, or what the definition leaves to another tool.
    nodes: tuple[str, ...]
    #: ``created`` (the hub builds it), or the ``existing.mode`` of a cluster another tool built.
    origin: str
    versions: versions_report.ClusterVersions
    release: awsdata.Release | None
    graph: Graph


@dataclass(frozen=True)
class AwsResource:
    """One AWS resource of an app on one cluster."""

    noun: str
    name: str


@dataclass(frozen=True)
class SitePlacement:
    """One app on one cluster, with the AWS resources it has there."""

    cluster: str
    environment: str
    region: str
    account: str | None
    resources: tuple[AwsResource, ...]


@dataclass(frozen=True)
class AppPage:
    """One app, with every cluster it runs on."""

    app: App
    placements: tuple[SitePlacement, ...]


@dataclass(frozen=True)
class Addon:
    """One pack: the version each cluster runs, and the newest fluxplane pins."""

    name: str
    description: str
    newest: str
    #: Cluster name to the version it runs, for the clusters that enable the pack.
    versions: Mapping[str, str]

    def behind(self, cluster: str) -> bool:
        """Whether ``cluster`` runs a version older than the newest."""
        version = self.versions.get(cluster)
        return version is not None and version_key(version) < version_key(self.newest)


@dataclass(frozen=True)
class PullRequestChange:
    """The pull request's change against ``--base``: ``fluxplane diff``'s and ``fluxplane plan``'s reports."""

    ref: str
    commit: str
    summary: str
    diff: str
    plan: str


@dataclass(frozen=True)
class SiteContent:
    """Everything the pages show."""

    hub: str
    today: date
    #: The hub first, then every environment's clusters in definition order.
    clusters: tuple[Cluster, ...]
    #: (name, file, clusters) of each environment, the management cluster's first.
    environments: tuple[tuple[str, str, tuple[str, ...]], ...]
    accounts: tuple[FleetAccount, ...]
    addons: tuple[Addon, ...]
    apps: tuple[AppPage, ...]
    #: The EKS releases the fleet's clusters run, oldest first.
    releases: tuple[awsdata.Release, ...]
    change: PullRequestChange | None = None

    def cluster(self, name: str) -> Cluster:
        return next(cluster for cluster in self.clusters if cluster.name == name)


_NUMBER = re.compile(r"\d+")


def version_key(version: str) -> tuple[int, ...]:
    """A version's numbers, for ordering (``v1.10.0`` after ``1.9.2``); a text with none sorts first."""
    return tuple(int(number) for number in _NUMBER.findall(version))


def _nodes(cluster: ManagementCluster | WorkloadCluster) -> tuple[str, ...]:
    if isinstance(cluster, ManagementCluster):
        return ("built before the fleet (the hub's own)",)
    if cluster.auto_mode is not None and cluster.auto_mode.enabled:
        pools = [*cluster.auto_mode.node_pools, *(pool.name for pool in cluster.auto_mode.custom_node_pools)]
        return (f"EKS Auto Mode: node pools {', '.join(str(pool) for pool in pools)}",)
    return tuple(
        f"node group {group.name}: {', '.join(group.instance_types)}, {group.min_size} to {group.max_size} nodes"
        + (" (spot)" if group.capacity_type == "SPOT" else "")
        for group in cluster.node_groups
    )


def read_dist(root: Path) -> dict[str, str]:
    """The files of the project's dist/ by their path below it; SiteError when there is none."""
    dist = output_dir(root)
    if not dist.is_dir():
        raise SiteError(f"{dist}: no such folder; run 'fluxplane synth' first, the pages show the dist/ it writes")
    return {path: data.decode("utf-8", errors="replace") for path, data in sorted(read_tree(dist).items())}


def _newest(name: str, config: PackConfig, plan: FleetPlan) -> str:
    """The version fluxplane pins for a pack: its config's default ``version`` (a chart's), else the pack's own."""
    field = type(config).model_fields.get("version")
    if field is not None and isinstance(field.default, str):
        return field.default
    return plan.registry.get(name).version


def _addons(plan: FleetPlan, clusters: tuple[Cluster, ...]) -> tuple[Addon, ...]:
    pins: dict[str, str] = {}
    for planned in plan.clusters:
        for name, config in planned.packs.items():
            pins.setdefault(name, _newest(name, config, plan))
    found = []
    for name in sorted(pins):
        versions = {
            cluster.name: cluster.versions.packs[name] for cluster in clusters if name in cluster.versions.packs
        }
        newest = max([pins[name], *versions.values()], key=version_key)
        found.append(Addon(name, plan.registry.get(name).description, newest, versions))
    return tuple(found)


def _apps(plan: FleetPlan, accounts: Mapping[str, str | None]) -> tuple[AppPage, ...]:
    by_app: dict[str, list[SitePlacement]] = {}
    apps: dict[str, App] = {}
    for placement in plan.apps:
        apps[placement.app.name] = placement.app
        resources = tuple(
            AwsResource(RESOURCE_NOUNS[kind], name) for kind, _, name in aws_names(placement.cluster, placement.app)
        )
        by_app.setdefault(placement.app.name, []).append(
            SitePlacement(
                placement.cluster,
                placement.environment,
                placement.region,
                accounts.get(placement.cluster),
                resources,
            )
        )
    return tuple(AppPage(apps[name], tuple(by_app[name])) for name in sorted(apps))


def collect(plan: FleetPlan, files: Mapping[str, str], today: date) -> SiteContent:
    """The pages' content for ``plan``, as ``files`` (dist/) has it, with EKS support as of ``today``."""
    fleet = plan.fleet
    facts = awsdata.facts(fleet.aws_data)
    reports = {report.name: report for report in versions_report.collect(plan, files, today)}
    repositories = fleet.repositories
    tree = FluxTree(
        LazyDocuments({}, files),
        repositories=repositories_of(
            [RepositoryLayout(PLATFORM, repositories.platform), workloads_layout(repositories)]
        ),
        hub=fleet.management.name,
    )
    ids = {account.name: account.id for account in fleet_accounts(fleet)}
    definitions: list[tuple[ManagementCluster | WorkloadCluster, str]] = [(fleet.management, "management")]
    definitions += [
        (cluster, environment.name) for environment in fleet.environments for cluster in environment.clusters
    ]
    clusters = []
    for definition, environment in definitions:
        account = None if isinstance(definition, ManagementCluster) else definition.account
        existing = None if isinstance(definition, ManagementCluster) else definition.existing
        report = reports[definition.name]
        clusters.append(
            Cluster(
                name=definition.name,
                environment=environment,
                hub=isinstance(definition, ManagementCluster),
                region=definition.region,
                account=account,
                account_id=ids.get(account),
                nodes=_nodes(definition),
                origin="hub" if isinstance(definition, ManagementCluster) else existing.mode if existing else "created",
                versions=report,
                release=facts.releases.get(report.kubernetes),
                graph=tree.graph(definition.name),
            )
        )
    environments: list[tuple[str, str, tuple[str, ...]]] = [
        ("management", "environments/base.yaml", (fleet.management.name,))
    ]
    environments += [
        (environment.name, environment.file, tuple(cluster.name for cluster in environment.clusters))
        for environment in fleet.environments
    ]
    in_use = {cluster.versions.kubernetes for cluster in clusters}
    releases = tuple(
        sorted(
            (release for version, release in facts.releases.items() if version in in_use),
            key=lambda release: awsdata.minor(release.version),
        )
    )
    done = tuple(clusters)
    return SiteContent(
        hub=fleet.management.name,
        today=today,
        clusters=done,
        environments=tuple(environments),
        accounts=tuple(fleet_accounts(fleet)),
        addons=_addons(plan, done),
        apps=_apps(plan, {cluster.name: cluster.account for cluster in done}),
        releases=releases,
    )


def load(root: Path, today: date) -> SiteContent:
    """The pages' content for the project under ``root``: its definition, and the dist/ it committed."""
    files = read_dist(root)
    pipeline = synth.Pipeline(root)
    with synth.paused_gc():
        plan = pipeline.load()
    return collect(plan, files, today)


__all__ = [
    "Addon",
    "AppPage",
    "AwsResource",
    "Cluster",
    "PullRequestChange",
    "SiteContent",
    "SiteError",
    "SitePlacement",
    "collect",
    "load",
    "read_dist",
    "version_key",
]
