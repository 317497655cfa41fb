"""CloudChart: ``cloud/<cluster>/`` in the platform repository, what the hub builds in AWS for apps.

Each cluster's folder is applied by that cluster's own chain on the hub (its Kustomization
``app-resources``, fluxplane.charts.spokes), once the cluster is Ready, so apps on one cluster never
wait for another cluster.

Per app on a workload cluster that needs AWS, in the cluster's hub namespace: an ``AppIdentity``
(the app's IAM role, assumable through EKS Pod Identity by exactly the app's service account) and one
``AppTable``, ``AppQueue`` or ``AppBucket`` per resource the app asks for, each granting that role
access to that resource only.

An ``AppDatabase`` per database of the app joins them in either mode: it lives in the cluster's VPC, which
the hub's EKSCluster owns, and delivers its credentials to the app's namespace on the cluster.

A cluster that makes its apps' resources itself (``appResources: spoke``) gets only the identities and
databases here, the identities made with the composition that lets each role use the resources named after
its app (fluxplane.packs.app_compositions); :func:`resource_composites` then go to the app's namespace on
the cluster (fluxplane.charts.tenants).

An app whose ``aws.path`` names a folder of its repository also gets, in the same namespace, a Flux
Kustomization that applies that folder as the service account ``<app>-cloud``, which may manage only
AppTable, AppQueue and AppBucket objects; the ``app-compositions`` pack's admission policy lets that
account make, change and delete only objects whose ``spec.app`` is the app, and change or delete only
those its own Kustomization applied.

The cluster's chain applies the folder with Flux's post-build substitution, so the definition's text
in it (the cluster's tags, the app's repository) is escaped to reach AWS and the hub as written.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fluxplane.charts.base import FleetChart
from fluxplane.config.apps import GitRefSpec, Placement, composite_name, physical_name, queue_name
from fluxplane.config.hub import RESOURCES_STEP, applied_by, cluster_namespace
from fluxplane.config.models import FluxSettings
from fluxplane.config.secrets import SealedFile
from fluxplane.constructs.base import Construct, TypedResource, annotate
from fluxplane.constructs.composite_resource_definition import CompositionReference
from fluxplane.constructs.git_repository import GitRepository, GitRepositoryProps, GitRepositoryRef
from fluxplane.constructs.kustomization import Kustomization, KustomizationProps, PostBuild, escaped
from fluxplane.constructs.props import CrossNamespaceSourceReference, LocalObjectReference
from fluxplane.constructs.raw import RawObject
from fluxplane.constructs.rbac import PolicyRule, Role, RoleBinding, RoleBindingProps, RoleProps, RoleRef, Subject
from fluxplane.constructs.service_account import ServiceAccount, ServiceAccountProps
from fluxplane.core.layout import RepositoryLayout
from fluxplane.kinds import REQUESTABLE
from fluxplane.kinds.app import GROUP, REQUEST_ACCOUNT_SUFFIX
from fluxplane.kinds.app_bucket import AppBucket, AppBucketProps
from fluxplane.kinds.app_database import AppDatabase, AppDatabaseProps
from fluxplane.kinds.app_identity import SPOKE_IDENTITY, AppIdentity, AppIdentityProps, CompositeMachinery
from fluxplane.kinds.app_queue import AppQueue, AppQueueProps
from fluxplane.kinds.app_table import AppTable, AppTableProps, Attribute

#: The folder of the platform repository holding the apps' composites: their IAM roles and AWS resources.
CLOUD_DIR = "cloud"
#: What an app's request account may do with the requestable kinds: what kustomize-controller needs to apply them,
#: wait for them and prune them, one object at a time (no ``deletecollection``, no ``*``). The ``app-compositions``
#: pack's admission policy holds each write and delete to the app's own objects.
REQUEST_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")
#: Labels that say which app and cluster an app composite belongs to.
APP_LABEL = "fluxplane.io/app"
CLUSTER_LABEL = "fluxplane.io/cluster"


@dataclass(frozen=True)
class CompositeFields:
    """What the composites of one app on one cluster share: where they live, their labels, region, account, tags."""

    namespace: str
    labels: dict[str, str]
    region: str
    tags: dict[str, str]
    #: The ClusterProviderConfig of the cluster's account, or None for the hub's own.
    provider_config_name: str | None = None


class CloudChart(FleetChart):
    """The app composites of every workload cluster, one file per (cluster, app)."""

    def __init__(
        self,
        scope: Any,
        construct_id: str,
        *,
        layout: RepositoryLayout,
        placements: Iterable[Placement],
        tags: dict[str, dict[str, str]],
        flux: FluxSettings,
        sealed: Iterable[SealedFile] = (),
        accounts: Mapping[str, str] | None = None,
        spokes: Iterable[str] = (),
        networks: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(scope, construct_id, layout=layout, directory=CLOUD_DIR)
        self.flux = flux
        #: Per cluster: its VPC's CIDR, which its apps' databases admit.
        self._networks = dict(networks or {})
        #: The clusters that make their apps' resources themselves (``appResources: spoke``): the hub makes the
        #: apps' identities alone, and applies none of the apps' own requests.
        self._spokes = frozenset(spokes)
        #: Per cluster in an account of its own: that account's name, its provider config.
        self._accounts = dict(accounts or {})
        #: Per cluster with apps that need AWS: its folder, and its composites (for its Kustomization's
        #: health checks).
        self.folders: dict[str, str] = {}
        self.composites: dict[str, list[TypedResource[Any]]] = {}
        #: The hub's sealed secrets by (namespace, name): apps' Git credentials for their own requests.
        self._sealed = {(item.namespace, item.name): item for item in sealed}
        listings: dict[str, Any] = {}
        for placement in sorted(placements, key=lambda p: (p.cluster, p.app.name)):
            if placement.app.aws.empty:
                continue
            placement = dataclasses.replace(placement, app=escaped(placement.app))
            cluster = placement.cluster
            folder = posixpath.join(self.directory, cluster)
            if cluster not in listings:
                cluster_scope = Construct(self, cluster)
                listings[cluster] = self.add_kustomization_file("kustomization", folder, scope=cluster_scope).config
                self.folders[cluster] = folder
            listing = listings[cluster]
            path = f"{placement.app.name}.yaml"
            secret = placement.app.repository.secret_ref
            requests = placement.app.aws.path is not None and cluster not in self._spokes
            if requests and secret is not None:
                # Listed before the app's file, so the GitRepository finds its credentials.
                credentials = f"{secret}.yaml"
                if credentials not in listing.resources:
                    sealed_file = self.add_manifest(f"{cluster}.{secret}", posixpath.join(folder, credentials))
                    document = self._sealed[(cluster_namespace(cluster), secret)].document
                    RawObject(sealed_file, "sealed-secret", escaped(document))
                    listing.add_resource(credentials)
            manifest = self.add_manifest(f"{cluster}.{placement.app.name}", posixpath.join(folder, path))
            self._app(manifest, placement, escaped(tags.get(cluster, {})))
            if requests:
                self._requests(manifest, placement)
            annotate(manifest, applied_by(cluster_namespace(cluster), RESOURCES_STEP))
            listing.add_resource(path)

    def _app(self, scope: Any, placement: Placement, cluster_tags: dict[str, str]) -> None:
        app, cluster = placement.app, placement.cluster
        spoke = cluster in self._spokes
        common = CompositeFields(
            namespace=cluster_namespace(cluster),
            labels={APP_LABEL: app.name, CLUSTER_LABEL: cluster},
            region=placement.region,
            tags={**cluster_tags, "app": app.name},
            provider_config_name=self._accounts.get(cluster),
        )
        self.composites.setdefault(cluster, []).append(
            AppIdentity(
                scope,
                "identity",
                AppIdentityProps(
                    name=app.name,
                    namespace=common.namespace,
                    labels=common.labels,
                    region=common.region,
                    provider_config_name=common.provider_config_name,
                    tags=common.tags,
                    cluster_name=cluster,
                    service_account_namespace=app.target_namespace,
                    service_account=app.name,
                    # The cluster makes the app's resources; the role may use those named after the app.
                    crossplane=(
                        CompositeMachinery(composition_ref=CompositionReference(name=SPOKE_IDENTITY)) if spoke else None
                    ),
                ),
            )
        )
        if not spoke:
            self.composites[cluster].extend(resource_composites(scope, placement, common))
        self.composites[cluster].extend(
            AppDatabase(
                scope,
                f"database-{database.name}",
                AppDatabaseProps(
                    name=composite_name(app.name, "database", database.name),
                    namespace=common.namespace,
                    labels=common.labels,
                    region=common.region,
                    provider_config_name=common.provider_config_name,
                    tags=common.tags,
                    app=app.name,
                    app_namespace=app.target_namespace,
                    cluster_name=cluster,
                    vpc_cidr=self._networks[cluster],
                    identifier=physical_name(cluster, app.name, database.name),
                    engine=database.engine,
                    engine_version=database.engine_version,
                    instance_class=database.instance_class,
                    allocated_storage=database.allocated_storage,
                    max_allocated_storage=database.max_allocated_storage,
                    multi_az=database.multi_az,
                    database_name=database.db_name,
                    username=database.username,
                    backup_retention_days=database.backup_retention_days,
                    deletion_protection=database.deletion_protection,
                ),
            )
            for database in app.aws.databases
        )

    def _requests(self, scope: Any, placement: Placement) -> None:
        """Apply the app's own requests (``aws.path`` of its repository) as the app's hub account."""
        app, cluster = placement.app, placement.cluster
        namespace = cluster_namespace(cluster)
        account = request_account(app.name)
        labels = {APP_LABEL: app.name, CLUSTER_LABEL: cluster}
        ServiceAccount(scope, "requests-account", ServiceAccountProps(name=account, namespace=namespace, labels=labels))
        Role(
            scope,
            "requests-role",
            RoleProps(
                name=account,
                namespace=namespace,
                labels=labels,
                rules=(PolicyRule(api_groups=(GROUP,), resources=tuple(REQUESTABLE.values()), verbs=REQUEST_VERBS),),
            ),
        )
        RoleBinding(
            scope,
            "requests-binding",
            RoleBindingProps(
                name=account,
                namespace=namespace,
                labels=labels,
                role_ref=RoleRef(kind="Role", name=account),
                subjects=(Subject(kind="ServiceAccount", name=account, namespace=namespace),),
            ),
        )
        app_source(scope, "requests-source", placement, namespace)
        requests_kustomization(
            scope, "requests", placement, self.flux, name=account, namespace=namespace, labels=labels, account=account
        )


def app_source(scope: Any, construct_id: str, placement: Placement, namespace: str) -> GitRepository:
    """The GitRepository of the app of ``placement``, in ``namespace``: the hub's, for the app's own requests, or
    the app's tenant's on its cluster (fluxplane.charts.tenants)."""
    repository = placement.app.repository
    return GitRepository(
        scope,
        construct_id,
        GitRepositoryProps(
            name=placement.app.name,
            namespace=namespace,
            interval="5m",
            url=repository.url,
            ref=git_ref(repository.ref),
            secret_ref=LocalObjectReference(name=repository.secret_ref) if repository.secret_ref else None,
        ),
    )


def git_ref(ref: GitRefSpec) -> GitRepositoryRef:
    """The Flux GitRepository ``spec.ref`` of an app's ``repository.ref``."""
    return GitRepositoryRef(tag=ref.tag, semver=ref.semver, branch=ref.branch)


def requests_kustomization(
    scope: Any,
    construct_id: str,
    placement: Placement,
    flux: FluxSettings,
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    account: str,
) -> Kustomization:
    """The Flux Kustomization that applies an app's own requests (``aws.path`` of its repository) in ``namespace`` as
    ``account``, with the app's and cluster's variables: the hub's in the cluster's hub namespace, or a cluster's own
    in the app's namespace (fluxplane.charts.tenants)."""
    app = placement.app
    return Kustomization(
        scope,
        construct_id,
        KustomizationProps(
            name=name,
            namespace=namespace,
            labels=dict(labels),
            interval=flux.interval,
            retry_interval=flux.retry_interval,
            timeout=flux.timeout,
            path="./" + str(app.aws.path).removeprefix("./") if app.aws.path != "." else "./",
            source_ref=CrossNamespaceSourceReference(kind="GitRepository", name=app.name),
            prune=True,
            wait=True,
            service_account_name=account,
            target_namespace=namespace,
            post_build=PostBuild(
                substitute={
                    "app": app.name,
                    "app_namespace": app.target_namespace,
                    "cluster_name": placement.cluster,
                    "cluster_region": placement.region,
                }
            ),
        ),
    )


def request_account(app: str) -> str:
    """The hub service account an app's own requests are applied as (the admission policy knows the suffix)."""
    return f"{app}{REQUEST_ACCOUNT_SUFFIX}"


def resource_composites(scope: Any, placement: Placement, common: CompositeFields) -> list[TypedResource[Any]]:
    """The table, queue and bucket composites of the app of ``placement`` (``common``: their shared fields): in the
    cluster's hub namespace, or in the app's namespace on a cluster that makes them itself."""
    app, cluster = placement.app, placement.cluster
    made: list[TypedResource[Any]] = []
    for table in app.aws.tables:
        keys = [(table.hash_key, table.hash_key_type)]
        if table.range_key is not None:
            keys.append((table.range_key, table.range_key_type))
        made.append(
            AppTable(
                scope,
                f"table-{table.name}",
                AppTableProps(
                    name=composite_name(app.name, "table", table.name),
                    namespace=common.namespace,
                    labels=common.labels,
                    region=common.region,
                    provider_config_name=common.provider_config_name,
                    tags=common.tags,
                    app=app.name,
                    table_name=physical_name(cluster, app.name, table.name),
                    hash_key=table.hash_key,
                    range_key=table.range_key,
                    attributes=tuple(Attribute(name=name, type=kind) for name, kind in keys),
                ),
            )
        )
    for queue in app.aws.queues:
        made.append(
            AppQueue(
                scope,
                f"queue-{queue.name}",
                AppQueueProps(
                    name=composite_name(app.name, "queue", queue.name),
                    namespace=common.namespace,
                    labels=common.labels,
                    region=common.region,
                    provider_config_name=common.provider_config_name,
                    tags=common.tags,
                    app=app.name,
                    queue_name=queue_name(cluster, app.name, queue),
                    fifo=queue.fifo,
                    visibility_timeout_seconds=queue.visibility_timeout_seconds,
                    message_retention_seconds=queue.message_retention_seconds,
                ),
            )
        )
    for bucket in app.aws.buckets:
        made.append(
            AppBucket(
                scope,
                f"bucket-{bucket.name}",
                AppBucketProps(
                    name=composite_name(app.name, "bucket", bucket.name),
                    namespace=common.namespace,
                    labels=common.labels,
                    region=common.region,
                    provider_config_name=common.provider_config_name,
                    tags=common.tags,
                    app=app.name,
                    bucket_name=physical_name(cluster, app.name, bucket.name),
                    versioning="Enabled" if bucket.versioning else "Disabled",
                ),
            )
        )
    return made
