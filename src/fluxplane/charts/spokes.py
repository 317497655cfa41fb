"""SpokesChart: ``spokes/``, the hub's remote bootstrap of every workload cluster.

Once Crossplane has built a workload cluster, Flux on the hub makes it self-managing, secrets first.
Per cluster, in its hub namespace (next to its EKSCluster and kubeconfig Secret), a chain of Flux
Kustomizations, each waiting for the one before and gated on the health of what it applied:

1. ``external-secrets``: External Secrets Operator on the spoke (a HelmRelease through the kubeconfig),
   its service account bound by IRSA to the role the composition made for it;
2. ``secret-store``: a ClusterSecretStore for AWS Secrets Manager that authenticates as that account;
3. ``sealing-key``: an ExternalSecret that materializes the fleet's Sealed Secrets key pair as the
   ``kubernetes.io/tls`` Secret the controller picks up (label ``sealed-secrets-key: active``);
4. ``sealed-secrets``: the Sealed Secrets controller (key renewal off: the key pair is the fleet's);
5. ``flux``: Flux itself, from the flux2 Helm chart;
6. ``git-credentials``: the spoke's sealed Git credentials (environments/secrets/<cluster>/);
7. ``flux-sync``: the spoke's GitRepository and root Kustomization (clusters/<cluster>/flux-system),
   after which the spoke reconciles itself.

The last two hand objects over to the spoke's own Flux, so the hub does not prune them.
"""

from __future__ import annotations

import posixpath
from typing import Any

from fluxplane.charts.base import FleetChart
from fluxplane.charts.layout import RepositoryLayout, cluster_dir
from fluxplane.config.hub import (
    EXTERNAL_SECRETS_NAMESPACE,
    SEALED_SECRETS_NAMESPACE,
    bootstrap_values,
    cluster_namespace,
    kubeconfig_reference,
)
from fluxplane.config.models import Fleet
from fluxplane.constructs.external_secrets import ClusterSecretStore, ExternalSecret
from fluxplane.constructs.health import conditions_health
from fluxplane.constructs.helm_release import DEFAULT_INSTALL, DEFAULT_UPGRADE, HelmRelease
from fluxplane.constructs.helm_repository import HelmRepository
from fluxplane.constructs.kustomization import Kustomization
from fluxplane.constructs.props import FLUX_NAMESPACE
from fluxplane.packs import versions

SYNC_SOURCE = "flux-system"
SECRET_STORE = "fleet-secrets-manager"
SEALED_SECRETS_CONTROLLER = "sealed-secrets-controller"
SEALING_KEY_SECRET = "sealed-secrets-key"
#: The flux2 chart's values that lock a spoke's Flux down for tenants.
FLUX_LOCKDOWN: dict[str, Any] = {
    "multitenancy": {"enabled": True, "defaultServiceAccount": "default", "privileged": True}
}
#: The steps of every spoke's chain, in order.
STEPS = ("external-secrets", "secret-store", "sealing-key", "sealed-secrets", "flux", "git-credentials", "flux-sync")
#: The step after which a spoke reconciles itself.
LAST_STEP = "flux-sync"

READY_CLUSTER_SECRET_STORE = conditions_health("external-secrets.io/v1", "ClusterSecretStore", ("Ready",))
READY_EXTERNAL_SECRET = conditions_health("external-secrets.io/v1", "ExternalSecret", ("Ready",))
SYNCED_SEALED_SECRET = conditions_health("bitnami.com/v1alpha1", "SealedSecret", ("Synced",))
#: How the steps that apply custom resources to the spoke judge them (the others apply HelmReleases).
HEALTH_EXPRS = {
    "secret-store": READY_CLUSTER_SECRET_STORE,
    "sealing-key": READY_EXTERNAL_SECRET,
    "git-credentials": SYNCED_SEALED_SECRET,
}


class SpokesChart(FleetChart):
    """The files under ``spokes/``: shared step content and one bootstrap chain per workload cluster."""

    def __init__(self, scope: Any, construct_id: str, *, layout: RepositoryLayout, fleet: Fleet) -> None:
        super().__init__(scope, construct_id, layout=layout, directory="spokes")
        self.fleet = fleet
        #: Per cluster: the chain's Kustomizations by step name.
        self.chains: dict[str, dict[str, Kustomization]] = {}
        #: Per cluster: the Flux ``kubeConfig`` that reaches it (kubeconfig Secret or keyless).
        self._access = {
            cluster.name: kubeconfig_reference(cluster.name, cluster.hub_access) for cluster in fleet.clusters
        }
        listing = self.add_kustomization_file("kustomization", self.directory).config
        self._sources()
        listing.add_resource("sources.yaml")
        self._secret_store_dir = self._secret_store()
        self._sealing_key_dir = self._sealing_key()
        for cluster in sorted(fleet.clusters, key=lambda cluster: cluster.name):
            self._chain(cluster.name)
            listing.add_resource(cluster.name)

    # -- shared ---------------------------------------------------------------------------------

    def _sources(self) -> None:
        sources = self.add_manifest("sources", posixpath.join(self.directory, "sources.yaml"))
        for chart in (versions.EXTERNAL_SECRETS, versions.SEALED_SECRETS, versions.FLUX2):
            HelmRepository(sources, chart.chart, {"name": chart.chart, "url": chart.repository})

    def _folder(self, construct_id: str, directory: str, file_name: str) -> Any:
        manifest = self.add_manifest(construct_id, posixpath.join(directory, file_name))
        self.add_kustomization_file(f"{construct_id}-kustomization", directory).config.add_resource(file_name)
        return manifest

    def _secret_store(self) -> str:
        directory = posixpath.join(self.directory, "steps", "secret-store")
        manifest = self._folder("secret-store", directory, "secret-store.yaml")
        region = self.fleet.sealing_key.region or self.fleet.management.region
        account = EXTERNAL_SECRETS_NAMESPACE
        ClusterSecretStore(
            manifest,
            "store",
            {
                "name": SECRET_STORE,
                "provider": {
                    "aws": {
                        "service": "SecretsManager",
                        "region": region,
                        "auth": {"jwt": {"serviceAccountRef": {"name": account, "namespace": account}}},
                    }
                },
            },
        )
        return directory

    def _sealing_key(self) -> str:
        directory = posixpath.join(self.directory, "steps", "sealing-key")
        manifest = self._folder("sealing-key", directory, "sealing-key.yaml")
        secret = self.fleet.sealing_key.secret_name
        ExternalSecret(
            manifest,
            "key",
            {
                "name": SEALING_KEY_SECRET,
                "namespace": SEALED_SECRETS_NAMESPACE,
                "refreshInterval": "1h",
                "secretStoreRef": {"kind": "ClusterSecretStore", "name": SECRET_STORE},
                "target": {
                    "name": SEALING_KEY_SECRET,
                    "creationPolicy": "Owner",
                    # Keep the key if the ExternalSecret goes: sealed secrets in Git depend on it.
                    "deletionPolicy": "Retain",
                    "template": {
                        "type": "kubernetes.io/tls",
                        "metadata": {"labels": {"sealedsecrets.bitnami.com/sealed-secrets-key": "active"}},
                    },
                },
                "data": [
                    {"secretKey": key, "remoteRef": {"key": secret, "property": key}} for key in ("tls.crt", "tls.key")
                ],
            },
        )
        return directory

    # -- per cluster ----------------------------------------------------------------------------

    def _release(
        self, cluster: str, step: str, chart: versions.Chart, target: str, release: str, values: dict[str, Any]
    ) -> tuple[str, HelmRelease]:
        directory = posixpath.join(self.directory, cluster, step)
        manifest = self._folder(f"{cluster}-{step}", directory, f"{step}.yaml")
        props: dict[str, Any] = {
            "name": step,
            "namespace": cluster_namespace(cluster),
            "releaseName": release,
            "targetNamespace": target,
            "storageNamespace": target,
            "kubeConfig": self._access[cluster],
            "chart": {
                "spec": {
                    "chart": chart.chart,
                    "version": chart.version,
                    "sourceRef": {"kind": "HelmRepository", "name": chart.chart, "namespace": FLUX_NAMESPACE},
                }
            },
            "install": DEFAULT_INSTALL.model_copy(update={"create_namespace": True}),
            "upgrade": DEFAULT_UPGRADE,
            "values": values,
        }
        if step == "external-secrets":
            config = bootstrap_values(cluster)
            props["valuesFrom"] = [
                {
                    "kind": "ConfigMap",
                    "name": config.name,
                    "valuesKey": config.external_secrets_role_arn_key,
                    "targetPath": r"serviceAccount.annotations.eks\.amazonaws\.com/role-arn",
                }
            ]
        return directory, HelmRelease(manifest, "release", props)

    def _chain(self, cluster: str) -> None:
        namespace = cluster_namespace(cluster)
        directory = posixpath.join(self.directory, cluster)
        self.add_kustomization_file(f"{cluster}-kustomization", directory).config.add_resource("bootstrap.yaml")
        file = self.add_manifest(f"{cluster}-bootstrap", posixpath.join(directory, "bootstrap.yaml"))
        remote = self._access[cluster]
        repository = self.fleet.repositories.platform
        releases = {
            "external-secrets": self._release(
                cluster,
                "external-secrets",
                versions.EXTERNAL_SECRETS,
                EXTERNAL_SECRETS_NAMESPACE,
                "external-secrets",
                {"installCRDs": True, "serviceAccount": {"name": EXTERNAL_SECRETS_NAMESPACE}},
            ),
            "sealed-secrets": self._release(
                cluster,
                "sealed-secrets",
                versions.SEALED_SECRETS,
                SEALED_SECRETS_NAMESPACE,
                SEALED_SECRETS_CONTROLLER,
                # The key pair is the fleet's, fetched from Secrets Manager: the controller must not
                # make its own, or sealing offline with the fleet's certificate would stop working.
                {"fullnameOverride": SEALED_SECRETS_CONTROLLER, "keyrenewperiod": "0"},
            ),
            # Multi-tenancy lockdown: no cross-namespace references, and a Kustomization or HelmRelease
            # that names no account runs as its namespace's `default` account, which holds no rights.
            # The platform's own objects name kustomize-controller or helm-controller; tenants name theirs.
            "flux": self._release(cluster, "flux", versions.FLUX2, FLUX_NAMESPACE, "flux2", FLUX_LOCKDOWN),
        }
        folders = {
            **{step: folder for step, (folder, _) in releases.items()},
            "secret-store": self._secret_store_dir,
            "sealing-key": self._sealing_key_dir,
            "git-credentials": posixpath.join(cluster_dir(cluster), "secrets"),
            "flux-sync": posixpath.join(cluster_dir(cluster), "flux-system"),
        }
        steps = [step for step in STEPS if step != "git-credentials" or repository.secret_ref is not None]
        chain: dict[str, Kustomization] = {}
        previous: str | None = None
        for step in steps:
            on_spoke = step not in releases
            props: dict[str, Any] = {
                "name": step,
                "namespace": namespace,
                "interval": self.fleet.flux.interval,
                "retryInterval": self.fleet.flux.retry_interval,
                "timeout": self.fleet.flux.timeout,
                "path": self.layout.flux_path(folders[step]),
                "sourceRef": {"kind": "GitRepository", "name": SYNC_SOURCE, "namespace": FLUX_NAMESPACE},
                # What the spoke's own Flux takes over is never pruned by the hub.
                "prune": step not in ("git-credentials", "flux-sync"),
                "kubeConfig": remote if on_spoke else None,
                "wait": True if on_spoke else None,
                "dependsOn": [{"name": previous}] if previous else None,
            }
            kustomization = Kustomization(file, step, props)
            if not on_spoke:
                kustomization.add_health_check(releases[step][1])
            expr = HEALTH_EXPRS.get(step)
            if expr is not None:
                kustomization.add_health_check_expr(expr)
            chain[step] = kustomization
            previous = step
        self.chains[cluster] = chain
