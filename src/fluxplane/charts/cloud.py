"""CloudChart: ``cloud/<cluster>/`` in the platform repository, what the hub builds in AWS for apps.

Per app on a workload cluster that needs AWS, in the cluster's hub namespace: an ``AppIdentity``
(the app's IAM role, assumable through EKS Pod Identity by exactly the app's service account) and one
``AppTable``, ``AppQueue`` or ``AppBucket`` per resource the app asks for, each granting that role
access to that resource only. The hub applies the folder after the app kinds' XRDs are served and the
cluster's EKSCluster exists (fluxplane.synth.app).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import Any

from fluxplane.charts.base import FleetChart
from fluxplane.charts.layout import RepositoryLayout
from fluxplane.config.apps import Placement, physical_name, queue_name
from fluxplane.config.hub import cluster_namespace
from fluxplane.constructs.app_resources import AppBucket, AppIdentity, AppQueue, AppTable
from fluxplane.constructs.base import TypedResource

#: Labels that say which app and cluster an app composite belongs to.
APP_LABEL = "fluxplane.io/app"
CLUSTER_LABEL = "fluxplane.io/cluster"


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
    ) -> None:
        super().__init__(scope, construct_id, layout=layout, directory="cloud")
        #: Every composite, for the hub Kustomization's health checks.
        self.composites: list[TypedResource[Any]] = []
        listing = self.add_kustomization_file("kustomization", self.directory).config
        for placement in sorted(placements, key=lambda p: (p.cluster, p.app.name)):
            if placement.app.aws.empty:
                continue
            path = f"{placement.cluster}/{placement.app.name}.yaml"
            manifest = self.add_manifest(
                f"{placement.cluster}.{placement.app.name}", posixpath.join(self.directory, path)
            )
            self._app(manifest, placement, tags.get(placement.cluster, {}))
            listing.add_resource(path)

    def _app(self, scope: Any, placement: Placement, cluster_tags: dict[str, str]) -> None:
        app, cluster = placement.app, placement.cluster
        namespace = cluster_namespace(cluster)
        labels = {APP_LABEL: app.name, CLUSTER_LABEL: cluster}
        common = {
            "namespace": namespace,
            "labels": labels,
            "region": placement.region,
            "tags": {**cluster_tags, "app": app.name},
        }
        self.composites.append(
            AppIdentity(
                scope,
                "identity",
                {
                    **common,
                    "name": app.name,
                    "clusterName": cluster,
                    "serviceAccountNamespace": app.target_namespace,
                    "serviceAccount": app.name,
                },
            )
        )
        for table in app.aws.tables:
            keys = [(table.hash_key, table.hash_key_type)]
            if table.range_key is not None:
                keys.append((table.range_key, table.range_key_type))
            self.composites.append(
                AppTable(
                    scope,
                    f"table-{table.name}",
                    {
                        **common,
                        "name": f"{app.name}-table-{table.name}",
                        "app": app.name,
                        "tableName": physical_name(cluster, app.name, table.name),
                        "hashKey": table.hash_key,
                        "rangeKey": table.range_key,
                        "attributes": [{"name": name, "type": kind} for name, kind in keys],
                    },
                )
            )
        for queue in app.aws.queues:
            self.composites.append(
                AppQueue(
                    scope,
                    f"queue-{queue.name}",
                    {
                        **common,
                        "name": f"{app.name}-queue-{queue.name}",
                        "app": app.name,
                        "queueName": queue_name(cluster, app.name, queue),
                        "fifo": queue.fifo,
                        "visibilityTimeoutSeconds": queue.visibility_timeout_seconds,
                        "messageRetentionSeconds": queue.message_retention_seconds,
                    },
                )
            )
        for bucket in app.aws.buckets:
            self.composites.append(
                AppBucket(
                    scope,
                    f"bucket-{bucket.name}",
                    {
                        **common,
                        "name": f"{app.name}-bucket-{bucket.name}",
                        "app": app.name,
                        "bucketName": physical_name(cluster, app.name, bucket.name),
                        "versioning": "Enabled" if bucket.versioning else "Disabled",
                    },
                )
            )
