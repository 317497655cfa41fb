"""FleetTree: the construct tree of a fleet. Builds every chart from a FleetPlan.

It wires: a ClusterChart per cluster with its packs and tenants, each Kustomization after what its folder
needs (fluxplane.synth.order), the folders the packs are applied from (the catalogue,
fluxplane.synth.catalogue), and the hub's features, each switched on by the pack that provides it
(fluxplane.synth.features).

The tree is plain Python: synth builds and renders it without the JavaScript runtime. The library's
:class:`~fluxplane.synth.app.FleetApp` is the same tree as a cdk8s App, for constructs built with cdk8s itself.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from fluxplane.charts.addon_identities import DIRECTORY as ADDON_IDENTITIES_DIR
from fluxplane.charts.addon_identities import AddonIdentitiesChart, AddonRole
from fluxplane.charts.cloud import CLOUD_DIR, CloudChart
from fluxplane.charts.cluster import ClusterChart
from fluxplane.charts.spokes import DIRECTORY as SPOKES_DIR
from fluxplane.charts.spokes import SpokesChart
from fluxplane.charts.tenants import TenantsChart
from fluxplane.config.hub import cluster_namespace, kubeconfig_secret
from fluxplane.constructs.base import Node
from fluxplane.core.layout import LAYERS, PLATFORM, RepositoryLayout, cluster_dir, workloads_layout
from fluxplane.errors import TreeError
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.packs.auto_mode import cluster_files as auto_mode_files
from fluxplane.synth.catalogue import Catalogue
from fluxplane.synth.features import AppResources, SpokeBootstrap
from fluxplane.synth.order import Folder, dependencies, layer_below
from fluxplane.synth.plan import ClusterPlan, FleetPlan


class FleetTree:
    """The construct tree of a fleet: one ClusterChart per cluster, one CatalogueChart per add-on.

    ``reused`` names workload clusters whose own files synth takes from its cache
    (fluxplane.synth.cache), with the add-on roles they declared: they get no charts of their own,
    but the catalogue folders they start from and everything the hub makes for them are built as in
    a full synth.
    """

    def __init__(self, plan: FleetPlan, *, reused: Mapping[str, Sequence[AddonRole]] | None = None) -> None:
        self._fluxplane_node = self._root_node()
        self.plan = plan
        self.reused = {name: tuple(roles) for name, roles in (reused or {}).items() if name != plan.hub.name}
        self.layout = RepositoryLayout(PLATFORM, plan.fleet.repositories.platform)
        self.workloads = workloads_layout(plan.fleet.repositories)
        #: The hub's folders that hold a folder per workload cluster (``hub_prefixes``).
        self.hub_folders = tuple(
            posixpath.join(self.layout.key, folder) + "/" for folder in (SPOKES_DIR, ADDON_IDENTITIES_DIR, CLOUD_DIR)
        )
        self.clusters: dict[str, ClusterChart] = {}
        #: Per workload cluster with apps: its tenants (the workloads repository's clusters/<cluster>/).
        self.tenants: dict[str, TenantsChart] = {}
        self.catalogue = Catalogue(self, plan, self.layout)
        #: Per cluster: the IAM roles its add-ons declared (made on the hub, fluxplane.charts.addon_identities).
        self._roles: dict[str, list[AddonRole]] = {}
        #: The Folder of each pack and catalogue rendering clusters apply (Folder.of_pack), by the pack's name and the
        #: rendering's identity, the rendering kept; clusters that apply one rendering share its Folder.
        self._folders: dict[tuple[str, int], tuple[Sequence[Mapping[str, Any]], Folder]] = {}
        #: The hub's features, each for the pack that provides it (fluxplane.synth.features).
        self.app_resources = AppResources(plan, self.layout, reused=self.reused)
        self.spoke_bootstrap = SpokeBootstrap(plan, self.layout, reused=self.reused)
        self._workload = {cluster.name: cluster for cluster in plan.fleet.clusters}
        self._finished = False
        for cluster in plan.clusters:
            if cluster.name in self.reused:
                self._add_reused(cluster)
            else:
                self._add_cluster(cluster)
        hub = self.clusters[plan.hub.name]
        self.app_resources.add_identities(self, hub, self._roles)
        self.app_resources.add_cloud(self)
        self.spoke_bootstrap.add(self, hub, self.app_resources.chain_inputs())

    def _root_node(self) -> Node:
        """The tree's node, the root every chart's path starts from (FleetApp's is its cdk8s App's)."""
        return Node(self, None, "", "")

    def cdk8s_children(self) -> dict[Any, list[Any]]:
        """The constructs built with cdk8s itself below each chart (FleetApp's): none in a tree of plain Python."""
        return {}

    @property
    def addon_identities(self) -> AddonIdentitiesChart | None:
        """The add-ons' IAM roles the hub makes (AppResources)."""
        return self.app_resources.identities

    @property
    def cloud(self) -> CloudChart | None:
        """The apps' AWS resources the hub makes (AppResources)."""
        return self.app_resources.cloud

    @property
    def spokes(self) -> SpokesChart | None:
        """The workload clusters' chains on the hub (SpokeBootstrap)."""
        return self.spoke_bootstrap.spokes

    # -- assembly -------------------------------------------------------------------------------

    def _add_cluster(self, cluster: ClusterPlan) -> None:
        management = self.plan.fleet.management
        chart = ClusterChart(
            self,
            f"cluster-{cluster.name}",
            layout=self.layout,
            cluster=cluster.name,
            variables=cluster.variables,
            flux=self.plan.fleet.flux,
            bootstrap=management.bootstrap
            if cluster.name == management.name
            else self._workload[cluster.name].bootstrap,
        )
        self.clusters[cluster.name] = chart
        placements = [placement for placement in self.plan.apps if placement.cluster == cluster.name]
        # An app's sealed credentials live with its tenant, after the namespace that holds them; on the
        # hub, those an app's own requests read live with the app's composites (fluxplane.charts.cloud).
        tenant_namespaces = {placement.app.target_namespace for placement in placements}
        moved = tenant_namespaces
        if cluster.name == self.plan.hub.name:
            moved = {
                cluster_namespace(p.cluster)
                for p in self.plan.apps
                if p.app.aws.path and p.app.repository.secret_ref and p.cluster not in self.app_resources.spokes
            }
        # The kubeconfigs of registered clusters live with their chains (fluxplane.charts.spokes).
        kubeconfigs = self.spoke_bootstrap.kubeconfigs() if cluster.name == self.plan.hub.name else {}
        given = {(kubeconfig_secret(name).namespace, kubeconfig_secret(name).name) for name in kubeconfigs}
        chart.add_sealed_secrets(
            tuple(
                item
                for item in cluster.sealed_secrets
                if item.namespace not in moved and (item.namespace, item.name) not in given
            )
        )
        registry = self.plan.registry
        folders: list[Folder] = []
        for name, config in cluster.packs.items():
            for pack in self.catalogue.parts(registry.get(name)):
                if pack.builds_clusters:
                    # bound once per workload cluster, in that cluster's chain (SpokeBootstrap)
                    continue
                folders.append(self._add_pack(chart, cluster, pack, config))
        workload = self._workload.get(cluster.name)
        auto_mode = auto_mode_files(workload) if workload is not None else {}
        if auto_mode:
            auto_mode_kustomization = chart.add_auto_mode(auto_mode).name
            documents = [document for part in auto_mode.values() for document in part]
            folders.append(Folder(auto_mode_kustomization, "controllers", documents))
        for layer in LAYERS:
            files = [item for item in cluster.manifests if item.layer == layer]
            if files:
                manifests = chart.add_plain_manifests(layer, files).name
                documents = [document for item in files for document in item.documents]
                folders.append(Folder(manifests, layer, documents, whole_layer=True))
        for name, waits in dependencies(folders).items():
            for dependency in waits:
                chart.pack_kustomizations[name].depends_on(dependency)
        if placements:
            # The apps' repositories are theirs: they come after the infrastructure, as the apps layer does.
            infrastructure = layer_below(folders, "apps")
            self.tenants[cluster.name] = TenantsChart(
                self,
                f"tenants-{cluster.name}",
                layout=self.workloads,
                cluster=cluster.name,
                placements=placements,
                flux=self.plan.fleet.flux,
                sealed=[item for item in cluster.sealed_secrets if item.namespace in tenant_namespaces],
                infrastructure=[chart.pack_kustomizations[name] for name in infrastructure],
                app_resources=cluster.name in self.app_resources.spokes,
                tags=next((c.tags for c in self.plan.fleet.clusters if c.name == cluster.name), {}),
            )
            applied = chart.add_tenants(self.workloads)
            self.app_resources.add_tenant_resources(chart, cluster, self.tenants[cluster.name], applied)

    def _add_reused(self, cluster: ClusterPlan) -> None:
        """A cluster whose own files are reused: the catalogue variants it starts from, and its roles."""
        self.catalogue.start(cluster)
        self._roles.setdefault(cluster.name, []).extend(self.reused[cluster.name])

    def cluster_prefixes(self, cluster: str) -> tuple[str, ...]:
        """The folders under dist/ that hold ``cluster``'s own files: its entry point, overlays, README and
        tenants, and what the hub does for it alone (``hub_prefixes``)."""
        own = tuple(
            posixpath.join(layout.key, cluster_dir(cluster)) + "/"
            for layout in dict.fromkeys((self.layout, self.workloads))
        )
        return (*own, *self.hub_prefixes(cluster))

    def hub_prefixes(self, cluster: str) -> tuple[str, ...]:
        """The folders of the hub that serve ``cluster`` alone: its chain, its add-ons' roles, its apps' resources."""
        return tuple(f"{folder}{cluster}/" for folder in self.hub_folders)

    def shared_prefixes(self, cluster: ClusterPlan) -> tuple[str, ...]:
        """The shared folders under dist/ that ``cluster``'s files are drawn against (fluxplane.synth.cache).

        The catalogue folders its packs start from (the base and its environment's overlay), and the
        steps every spoke's chain shares.
        """
        return (*self.catalogue.prefixes(cluster), posixpath.join(self.layout.key, SPOKES_DIR, "steps") + "/")

    def roles_of(self, cluster: str) -> tuple[AddonRole, ...]:
        """The IAM roles ``cluster``'s add-ons declared, in order."""
        return tuple(self._roles.get(cluster, ()))

    def _add_pack(self, chart: ClusterChart, cluster: ClusterPlan, pack: Pack, config: PackConfig) -> Folder:
        """One pack (or part of one) on one cluster: its variant, its Kustomization and its gates; what it applies,
        for its order (fluxplane.synth.order)."""
        variant = self.catalogue.variant(pack, cluster, config)
        declared: PackContext = variant.declared
        self._roles.setdefault(cluster.name, []).extend(
            AddonRole(
                pack=self.catalogue.source(pack.name),
                name=identity.name,
                namespace=identity.namespace,
                service_account=identity.service_account,
                managed_policies=identity.managed_policies,
                policy=identity.policy,
            )
            for identity in declared.pod_identities
        )
        kustomization = chart.add_pack(
            pack.name,
            pack.layer,
            variant.directory,
            # CEL expressions only say how to judge an object; Flux checks the objects listed in
            # healthChecks, or everything applied when wait is on.
            wait=not declared.health_checks,
            timeout=declared.timeout,
        )
        for check in declared.health_checks:
            kustomization.add_health_check(check)
        for expr in declared.health_check_exprs:
            kustomization.add_health_check_expr(expr)
        known = self._folders.get((pack.name, id(variant.documents)))
        if known is None:
            known = self._folders[(pack.name, id(variant.documents))] = (
                variant.documents,
                Folder.of_pack(pack, variant.documents),
            )
        return known[1]

    # -- synthesis ------------------------------------------------------------------------------

    def finish(self) -> None:
        """Close the tree: entry-point kustomization.yaml files, including cdk8s-made custom.yaml."""
        if self._finished:
            return
        self._finished = True
        with_custom = self.cdk8s_children()
        hub, sparse = self.plan.hub.name, self.plan.fleet.flux.sparse_checkout
        for name, chart in self.clusters.items():
            chart.finish(custom=chart in with_custom, sparse=sparse and name != hub)
        misplaced = [
            c.node.path for owner, found in with_custom.items() if not isinstance(owner, ClusterChart) for c in found
        ]
        if misplaced:
            raise TreeError(
                f"{path}: cdk8s constructs are written only under a cluster chart (FleetApp.clusters[...]); "
                "move it there"
                for path in misplaced
            )
