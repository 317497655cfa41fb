"""ClusterChart: a cluster's entry point, ``clusters/<cluster>/`` in the platform repository.

Flux on the cluster syncs this folder (``flux-system`` Kustomization). It holds the sync objects,
the cluster's variables for post-build substitution, and one Flux Kustomization per add-on, split
into ``infrastructure.yaml`` (controllers and configs layers) and ``apps.yaml``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from fluxplane.charts.base import FleetChart
from fluxplane.config.manifests import PLAIN_MANIFESTS, ManifestFile
from fluxplane.config.models import FluxSettings, Repository
from fluxplane.config.secrets import SealedFile
from fluxplane.constructs.base import Construct, node_of, resources_below
from fluxplane.constructs.config_map import ConfigMap, ConfigMapProps
from fluxplane.constructs.git_repository import GitRepository, GitRepositoryProps, GitRepositoryRef
from fluxplane.constructs.kustomization import Kustomization, KustomizationProps, PostBuild
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.props import (
    DURATION,
    FLUX_NAMESPACE,
    KUSTOMIZE_CONTROLLER,
    CrossNamespaceSourceReference,
    LocalObjectReference,
    SubstituteReference,
)
from fluxplane.constructs.raw import RawObject
from fluxplane.core.layout import (
    APP_RESOURCES,
    AUTO_MODE,
    CLUSTER_VARS,
    CLUSTER_VARS_FILE,
    LAYER_DIRS,
    SYNC_SOURCE,
    TENANTS,
    WORKLOADS_SOURCE,
    RepositoryLayout,
    cluster_dir,
    cluster_vars_file,
    plain_manifests,
)
from fluxplane.errors import ConstructError

#: The folder of a cluster's entry point that holds its Flux sync objects (``flux bootstrap`` writes the same).
SYNC_FOLDER = "flux-system"
#: Who writes a cluster's ``flux-system/`` folder (see ``ManagementCluster.bootstrap``).
Bootstrap = Literal["fluxplane", "flux", "flux-operator"]


def sync_folder(repository: str, cluster: str) -> str:
    """The folder (relative to dist/, with a final slash) of ``cluster``'s Flux sync objects in ``repository``
    (a layout key: ``platform``)."""
    return f"{repository}/{cluster_dir(cluster)}/{SYNC_FOLDER}/"


#: The label of a pack's Kustomization that names its layer.
LAYER_LABEL = "fluxplane.io/layer"
#: The folder of a cluster's entry point that holds, by layer, the definition's plain manifests and what its
#: cdk8s charts make for the cluster.
MANIFESTS_FOLDER = "manifests"


#: The source of a cluster's own Kustomizations: the platform repository, as the cluster's sync checks it out.
SYNC_SOURCE_REF = CrossNamespaceSourceReference(kind="GitRepository", name=SYNC_SOURCE)
#: The post-build variables of an add-on's Kustomization: the cluster's (CLUSTER_VARS).
CLUSTER_VARIABLES = PostBuild(substitute_from=(SubstituteReference(kind="ConfigMap", name=CLUSTER_VARS),))


class ClusterChart(FleetChart):
    """The files under ``clusters/<cluster>/``."""

    def __init__(
        self,
        scope: Any,
        construct_id: str,
        *,
        layout: RepositoryLayout,
        cluster: str,
        variables: dict[str, str],
        flux: FluxSettings,
        bootstrap: Bootstrap = "fluxplane",
    ) -> None:
        super().__init__(scope, construct_id, layout=layout, directory=cluster_dir(cluster))
        self.cluster = cluster
        self.flux = flux
        repository = layout.repository

        #: The folders (relative to dist/) another tool writes. Their files are built all the same, for the
        #: checks and the README graphs (the tool writes the same objects), but not written.
        self.owned_elsewhere: tuple[str, ...] = () if bootstrap == "fluxplane" else (sync_folder(layout.key, cluster),)
        sync_dir = posixpath.join(self.directory, SYNC_FOLDER)
        sync = self.add_manifest("sync", posixpath.join(sync_dir, "gotk-sync.yaml"))
        self.source = self._source(sync, "source", SYNC_SOURCE, repository)
        self.sync = Kustomization(
            sync,
            "kustomization",
            KustomizationProps(
                name=SYNC_SOURCE,
                interval=flux.interval,
                retry_interval=flux.retry_interval,
                timeout=flux.timeout,
                path=layout.flux_path(self.directory),
                source_ref=SYNC_SOURCE_REF,
                prune=True,
                service_account_name=KUSTOMIZE_CONTROLLER,
            ),
        )
        self.add_kustomization_file("sync-kustomization", sync_dir).config.add_resource("gotk-sync.yaml")

        vars_file = self.add_manifest("vars", cluster_vars_file(cluster))
        self.variables = ConfigMap(
            vars_file, "cluster-vars", ConfigMapProps(name=CLUSTER_VARS, namespace=FLUX_NAMESPACE, data=variables)
        )
        self._infrastructure: Manifest | None = None
        self._apps: Manifest | None = None
        self._tenants: Manifest | None = None
        self._secrets_dir: str | None = None
        self.pack_kustomizations: dict[str, Kustomization] = {}
        #: The files of the definition's plain manifests and cdk8s charts, by the path of the file each becomes
        #: (relative to the repository's folder): what messages name an object of theirs by.
        self.manifest_files: dict[str, ManifestFile] = {}
        self._workloads: RepositoryLayout | None = None
        self._tenants_source = SYNC_SOURCE

    @staticmethod
    def _source(scope: Any, construct_id: str, name: str, repository: Repository) -> GitRepository:
        """The GitRepository ``name`` of ``repository``'s branch, checked every minute."""
        return GitRepository(
            scope,
            construct_id,
            GitRepositoryProps(
                name=name,
                interval="1m",
                url=repository.url,
                ref=GitRepositoryRef(branch=repository.branch),
                secret_ref=LocalObjectReference(name=repository.secret_ref) if repository.secret_ref else None,
            ),
        )

    @property
    def secrets_dir(self) -> str:
        """``clusters/<cluster>/secrets``: the cluster's sealed secrets, from environments/secrets/."""
        return posixpath.join(self.directory, "secrets")

    def add_sealed_secrets(self, sealed: tuple[SealedFile, ...]) -> None:
        """Carry the definition's sealed secrets into ``secrets/``, one file each, listed by a kustomization."""
        if not sealed:
            return
        self._secrets_dir = self.secrets_dir
        scope = Construct(self, "sealed-secrets")
        listing = self.add_kustomization_file("kustomization", self.secrets_dir, scope=scope).config
        for item in sorted(sealed, key=lambda item: item.relative_path):
            manifest = self.add_manifest(
                f"{item.namespace}.{item.name}", posixpath.join(self.secrets_dir, item.relative_path), scope
            )
            RawObject(manifest, "sealed-secret", item.document)
            listing.add_resource(item.relative_path)

    def _layer_file(self, layer: str) -> Manifest:
        if layer == "apps":
            if self._apps is None:
                self._apps = self.add_manifest("apps", posixpath.join(self.directory, "apps.yaml"))
            return self._apps
        if self._infrastructure is None:
            self._infrastructure = self.add_manifest(
                "infrastructure", posixpath.join(self.directory, "infrastructure.yaml")
            )
        return self._infrastructure

    def add_pack(
        self, pack: str, layer: str, directory: str, *, wait: bool = False, timeout: str | None = None
    ) -> Kustomization:
        """The Flux Kustomization that applies ``directory`` (an add-on's catalogue or overlay folder).

        ``wait`` health-checks everything applied; use it when the add-on declares no health gate.
        ``timeout`` replaces the fleet's default wait for add-ons that take long to become healthy.
        """
        if timeout is not None and not re.fullmatch(DURATION, timeout):
            raise ConstructError(
                f"{node_of(self).path}: timeout of pack {pack!r} must be a duration such as 30m, got {timeout!r}"
            )
        kustomization = Kustomization(
            self._layer_file(layer),
            pack,
            KustomizationProps(
                name=pack,
                labels={LAYER_LABEL: layer},
                interval=self.flux.interval,
                retry_interval=self.flux.retry_interval,
                timeout=timeout or self.flux.timeout,
                path=self.layout.flux_path(directory),
                source_ref=SYNC_SOURCE_REF,
                prune=True,
                wait=wait or None,
                service_account_name=KUSTOMIZE_CONTROLLER,
                post_build=CLUSTER_VARIABLES,
            ),
        )
        self.pack_kustomizations[pack] = kustomization
        return kustomization

    def add_plain_manifests(self, layer: str, files: Sequence[ManifestFile]) -> Kustomization:
        """``manifests/<layer>/``: the plain manifests of environments/manifests/ for this cluster's ``layer``
        (``environment/`` and ``cluster/`` files as given), applied by the Flux Kustomization ``manifests-<layer>``,
        which waits for everything it applies. Cluster variables are substituted in them, as in every layer."""
        directory = posixpath.join(self.directory, MANIFESTS_FOLDER, layer)
        listing = self.add_kustomization_file(f"manifests-{layer}-kustomization", directory).config
        for index, item in enumerate(files):
            relative = posixpath.join(item.scope, item.name)
            manifest = self.add_manifest(f"manifests-{layer}-{index}", posixpath.join(directory, relative))
            self.manifest_files[manifest.path] = item
            for number, document in enumerate(item.documents):
                RawObject(manifest, f"object-{number}", document)
            listing.add_resource(relative)
        return self.add_pack(plain_manifests(layer), layer, directory, wait=True)

    def add_auto_mode(self, files: Mapping[str, Sequence[Mapping[str, Any]]]) -> Kustomization:
        """``auto-mode/``: what an EKS Auto Mode cluster applies itself (fluxplane.packs.auto_mode), by file name,
        applied by the Flux Kustomization ``auto-mode`` in the controllers layer, which waits for everything it
        applies (EKS serves its kinds from the start)."""
        directory = posixpath.join(self.directory, AUTO_MODE)
        listing = self.add_kustomization_file("auto-mode-kustomization", directory).config
        for name, documents in files.items():
            manifest = self.add_manifest(f"auto-mode-{name}", posixpath.join(directory, name))
            for number, document in enumerate(documents):
                RawObject(manifest, f"object-{number}", dict(document))
            listing.add_resource(name)
        return self.add_pack(AUTO_MODE, "controllers", directory, wait=True)

    def add_tenants(self, workloads: RepositoryLayout) -> Kustomization:
        """``tenants.yaml``: the Flux Kustomization that applies this cluster's tenants from the workloads repository.

        It runs as kustomize-controller (it creates namespaces and RBAC); each tenant's own
        Kustomization then runs as the tenant's account.
        """
        self._tenants = self.add_manifest("tenants", posixpath.join(self.directory, "tenants.yaml"))
        source = SYNC_SOURCE
        repository = workloads.repository
        if (repository.url, repository.branch) != (self.layout.repository.url, self.layout.repository.branch):
            source = WORKLOADS_SOURCE
            self._source(self._tenants, "source", WORKLOADS_SOURCE, repository)
        self._workloads = workloads
        self._tenants_source = source
        return Kustomization(
            self._tenants,
            TENANTS,
            KustomizationProps(
                name=TENANTS,
                interval=self.flux.interval,
                retry_interval=self.flux.retry_interval,
                timeout=self.flux.timeout,
                path=workloads.flux_path(cluster_dir(self.cluster)),
                source_ref=CrossNamespaceSourceReference(kind="GitRepository", name=source),
                prune=True,
                service_account_name=KUSTOMIZE_CONTROLLER,
            ),
        )

    def add_app_resources(self, directory: str, *, timeout: str) -> Kustomization:
        """The Flux Kustomization ``app-resources`` (in ``tenants.yaml``): the resources the apps' definitions name,
        in their namespaces, on a cluster that makes them itself. It runs as kustomize-controller, like the tenants,
        and the app-compositions pack's admission policy holds each object to its namespace's app."""
        if self._workloads is None:
            raise ConstructError(f"cluster {self.cluster!r}: add the tenants before their resources")
        return Kustomization(
            self._tenants,
            APP_RESOURCES,
            KustomizationProps(
                name=APP_RESOURCES,
                interval=self.flux.interval,
                retry_interval=self.flux.retry_interval,
                timeout=timeout,
                path=self._workloads.flux_path(directory),
                source_ref=CrossNamespaceSourceReference(kind="GitRepository", name=self._tenants_source),
                prune=True,
                wait=True,
                service_account_name=KUSTOMIZE_CONTROLLER,
            ),
        )

    def finish(self, *, custom: bool = False, sparse: bool = False) -> None:
        """Write ``kustomization.yaml`` listing the entry point's files (``custom.yaml`` when cdk8s made one).

        With ``sparse``, each GitRepository of the cluster checks out only what its Kustomizations read
        (check_out_sources), unless cdk8s objects of the user's, which fluxplane cannot read, are in the chart.
        """
        if sparse and not custom:
            self.check_out_sources()
        entry = self.add_kustomization_file("kustomization", self.directory).config
        entry.add_resource(SYNC_FOLDER)
        entry.add_resource(CLUSTER_VARS_FILE)
        if self._secrets_dir is not None:
            entry.add_resource("secrets")
        for manifest in (self._infrastructure, self._apps, self._tenants):
            if manifest is not None:
                entry.add_resource(posixpath.basename(manifest.path))
        if custom:
            entry.add_resource(posixpath.basename(self.custom_path))

    def check_out_sources(self) -> None:
        """Give the cluster's GitRepositories a sparse checkout: the folders its Flux Kustomizations read.

        Per repository, a Kustomization's path under ``clusters/<name>/`` needs that cluster folder; any other
        path needs the top folder it lies in (``infrastructure/``, ``apps/``); a pack's overlay in the cluster
        folder also reads its layer's catalogue folder (``../../../../apps/<pack>/...``). A Kustomization whose
        path lies outside its repository's folder leaves that repository whole. The cluster folders of the other
        clusters, and the hub's own folders, are what a cluster no longer fetches.
        """
        prefixes: dict[str, list[str]] = {SYNC_SOURCE: [self.layout.prefix]}
        if self._workloads is not None:
            shared = (self._workloads.repository.url, self._workloads.repository.branch) == (
                self.layout.repository.url,
                self.layout.repository.branch,
            )
            prefixes.setdefault(SYNC_SOURCE if shared else WORKLOADS_SOURCE, []).append(self._workloads.prefix)
        resources = list(resources_below(self))
        sources = {
            resource.name: resource
            for resource in resources
            if isinstance(resource, GitRepository) and resource.name in prefixes
        }
        needed: dict[str, set[str]] = {name: set() for name in sources}
        whole: set[str] = set()
        # each repository's folders, the longest first
        folders_of = {
            name: sorted((posixpath.normpath(prefix) for prefix in folders), key=len, reverse=True)
            for name, folders in prefixes.items()
        }
        for resource in resources:
            if not isinstance(resource, Kustomization):
                continue
            ref = resource.props.source_ref
            name = ref.name if ref.kind == "GitRepository" and ref.namespace in (None, FLUX_NAMESPACE) else None
            if name not in sources:
                continue
            assert name is not None
            path = posixpath.normpath(resource.props.path.removeprefix("./"))
            # the repository folder the path lies in: the longest that holds it
            prefix = next((f for f in folders_of[name] if f == "." or path.startswith(f + "/")), None)
            if prefix is None:
                whole.add(name)
                continue
            parts = (path if prefix == "." else path[len(prefix) + 1 :]).split("/")
            top = parts[:2] if parts[0] == "clusters" else parts[:1]
            needed[name].add(_in_repository(prefix, *top))
            layer = (resource.props.labels or {}).get(LAYER_LABEL)
            own = resource.name == AUTO_MODE or resource.name.startswith(f"{PLAIN_MANIFESTS}-")
            if parts[0] == "clusters" and layer in LAYER_DIRS and not own:
                needed[name].add(_in_repository(prefix, LAYER_DIRS[layer].split("/")[0]))
        for name, source in sources.items():
            if name not in whole and needed[name]:
                source.check_out_only(*sorted(needed[name]))


def _in_repository(prefix: str, *parts: str) -> str:
    """``parts`` below the repository folder ``prefix`` (``.`` for the repository's root), as Git names it."""
    return posixpath.join(*parts) if prefix == "." else posixpath.join(prefix, *parts)
