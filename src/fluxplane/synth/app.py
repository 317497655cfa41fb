"""FleetApp: the cdk8s App of a fleet. Builds every chart from a FleetPlan.

``FleetApp.synth()`` finishes the tree, runs the whole-tree checks, renders and writes dist/
atomically, whether it is called by ``fluxplane synth`` or by ``cdk8s synth`` (cdk8s.yaml).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cdk8s

from fluxplane.charts.addon_identities import DIRECTORY as ADDON_IDENTITIES_DIR
from fluxplane.charts.addon_identities import AddonIdentitiesChart, AddonRole, ClusterIdentities
from fluxplane.charts.cloud import CLOUD_DIR, CloudChart
from fluxplane.charts.cluster import ClusterChart
from fluxplane.charts.spokes import DIRECTORY as SPOKES_DIR
from fluxplane.charts.spokes import (
    PARENT,
    BootstrapCharts,
    Built,
    ChainFolder,
    ChainInputs,
    ClusterBuilder,
    SpokesChart,
)
from fluxplane.charts.tenants import TenantsChart
from fluxplane.config.hub import IDENTITIES_STEP, cluster_namespace
from fluxplane.config.models import WorkloadCluster
from fluxplane.constructs.app_resources import GROUP, VERSION, AppDatabase
from fluxplane.constructs.base import TypedResource, node_of
from fluxplane.constructs.health import composite_health
from fluxplane.constructs.kustomization import escaped
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.props import FLUX_NAMESPACE
from fluxplane.core.layout import LAYERS, PLATFORM, RepositoryLayout, cluster_dir, workloads_layout
from fluxplane.errors import ConfigError, TreeError
from fluxplane.files import output_dir
from fluxplane.packs import versions
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.synth.catalogue import Catalogue
from fluxplane.synth.plan import ClusterPlan, FleetPlan

#: What every workload cluster's bootstrap installs: the pins of fluxplane.packs.versions.
BOOTSTRAP_CHARTS = BootstrapCharts(
    external_secrets=versions.EXTERNAL_SECRETS,
    sealed_secrets=versions.SEALED_SECRETS,
    flux2=versions.FLUX2,
    flux_operator=versions.FLUX_OPERATOR,
    flux_distribution=versions.FLUX_DISTRIBUTION,
    flux_registry=versions.FLUX_REGISTRY,
)
#: The hub pack whose kinds apps' AWS resources and add-ons' IAM roles are.
APP_COMPOSITIONS = "app-compositions"
#: How long a cluster's chain waits for its add-ons' roles and its apps' resources.
APP_RESOURCES_TIMEOUT = "20m"
#: ... and when they include a database: RDS takes 10 to 40 minutes to make one (longer with a standby), and the
#: database is Ready only once its credentials are on the cluster.
DATABASE_TIMEOUT = "45m"
#: The hub's Kustomization that makes the management cluster's own add-on roles (fluxplane.charts.addon_identities).
ADDON_IDENTITIES = "addon-identities"


class FleetApp(cdk8s.App):
    """The construct tree of a fleet: one ClusterChart per cluster, one CatalogueChart per add-on.

    ``reused`` names workload clusters whose own files synth takes from its cache
    (fluxplane.synth.cache), with the add-on roles they declared: they get no charts of their own,
    but the catalogue folders they start from and everything the hub makes for them are built as in
    a full synth.
    """

    def __init__(
        self,
        plan: FleetPlan,
        *,
        outdir: str | os.PathLike[str] | None = None,
        reused: Mapping[str, Sequence[AddonRole]] | None = None,
    ) -> None:
        # cdk8s's App writes relative to where it runs, the project's root
        super().__init__(outdir=str(output_dir(Path(), outdir)))
        self.plan = plan
        self.reused = {name: tuple(roles) for name, roles in (reused or {}).items() if name != plan.hub.name}
        #: Per workload cluster in an account of its own: the account's name, which its provider config has.
        self._accounts = {cluster.name: cluster.account for cluster in plan.fleet.clusters if cluster.account}
        #: The clusters that make their apps' resources themselves (appResources: spoke).
        self._spoke_resources = frozenset(c.name for c in plan.fleet.clusters if c.app_resources == "spoke")
        self.layout = RepositoryLayout(PLATFORM, plan.fleet.repositories.platform)
        self.workloads = workloads_layout(plan.fleet.repositories)
        self.clusters: dict[str, ClusterChart] = {}
        #: Per workload cluster with apps: its tenants (the workloads repository's clusters/<cluster>/).
        self.tenants: dict[str, TenantsChart] = {}
        self.catalogue = Catalogue(self, plan, self.layout)
        #: Per cluster: the IAM roles its add-ons declared (made on the hub, fluxplane.charts.addon_identities).
        self._roles: dict[str, list[AddonRole]] = {}
        #: The hub pack that builds the workload clusters (Pack.builds_clusters), with its config.
        self._builder: tuple[Pack, PackConfig] | None = None
        self._finished = False
        for cluster in plan.clusters:
            if cluster.name in self.reused:
                self._add_reused(cluster)
            else:
                self._add_cluster(cluster)
        self.spokes: SpokesChart | None = None
        hub = self.clusters[plan.hub.name]
        self.addon_identities: AddonIdentitiesChart | None = None
        if any(self._roles.values()):
            self._add_addon_identities(hub)
        self.cloud: CloudChart | None = None
        if APP_COMPOSITIONS in hub.pack_kustomizations and any(not p.app.aws.empty for p in plan.apps):
            self._add_cloud()
        if self._builder is not None and plan.fleet.clusters:
            self._add_spokes(hub, self._builder)

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
            bootstrap=management.bootstrap if cluster.name == management.name else "fluxplane",
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
                if p.app.aws.path and p.app.repository.secret_ref and p.cluster not in self._spoke_resources
            }
        chart.add_sealed_secrets(tuple(item for item in cluster.sealed_secrets if item.namespace not in moved))
        registry = self.plan.registry
        by_layer: dict[str, list[str]] = {layer: [] for layer in LAYERS}
        for name, config in cluster.packs.items():
            for pack in self.catalogue.parts(registry.get(name)):
                if pack.builds_clusters:
                    # bound once per workload cluster, in that cluster's chain (fluxplane.charts.spokes)
                    self._builder = (pack, config)
                    continue
                self._add_pack(chart, cluster, pack, config, by_layer)
        for layer in LAYERS:
            files = [item for item in cluster.manifests if item.layer == layer]
            if files:
                by_layer[layer].append(chart.add_plain_manifests(layer, files).name)
        lower: list[str] = []
        for layer in LAYERS:
            for name in by_layer[layer]:
                for dependency in lower:
                    chart.pack_kustomizations[name].depends_on(dependency)
            if by_layer[layer]:
                lower = by_layer[layer]
        if placements:
            infrastructure = by_layer["configs"] or by_layer["controllers"]
            self.tenants[cluster.name] = TenantsChart(
                self,
                f"tenants-{cluster.name}",
                layout=self.workloads,
                cluster=cluster.name,
                placements=placements,
                flux=self.plan.fleet.flux,
                sealed=[item for item in cluster.sealed_secrets if item.namespace in tenant_namespaces],
                infrastructure=[chart.pack_kustomizations[name] for name in infrastructure],
                app_resources=cluster.name in self._spoke_resources,
                tags=next((c.tags for c in self.plan.fleet.clusters if c.name == cluster.name), {}),
            )
            tenants = chart.add_tenants(self.workloads)
            made = self.tenants[cluster.name]
            if made.resources_directory is not None:
                resources = chart.add_app_resources(made.resources_directory, timeout=APP_RESOURCES_TIMEOUT)
                resources.depends_on(tenants)
                resources.depends_on(chart.pack_kustomizations[APP_COMPOSITIONS])
                for composite in made.composites:
                    resources.add_health_check(composite)
                for kind in sorted({composite.kind for composite in made.composites}):
                    resources.add_health_check_expr(composite_health(f"{GROUP}/{VERSION}", kind))

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
        return tuple(
            posixpath.join(self.layout.key, folder, cluster) + "/"
            for folder in (SPOKES_DIR, ADDON_IDENTITIES_DIR, CLOUD_DIR)
        )

    def shared_prefixes(self, cluster: ClusterPlan) -> tuple[str, ...]:
        """The shared folders under dist/ that ``cluster``'s files are drawn against (fluxplane.synth.cache).

        The catalogue folders its packs start from (the base and its environment's overlay), and the
        steps every spoke's chain shares.
        """
        return (*self.catalogue.prefixes(cluster), posixpath.join(self.layout.key, SPOKES_DIR, "steps") + "/")

    def roles_of(self, cluster: str) -> tuple[AddonRole, ...]:
        """The IAM roles ``cluster``'s add-ons declared, in order."""
        return tuple(self._roles.get(cluster, ()))

    def _add_pack(
        self, chart: ClusterChart, cluster: ClusterPlan, pack: Pack, config: PackConfig, by_layer: dict[str, list[str]]
    ) -> None:
        """One pack (or part of one) on one cluster: its variant, its Kustomization, its gates and order."""
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
        for required in pack.requires:
            kustomization.depends_on(required)
        by_layer[pack.layer].append(pack.name)

    def _add_spokes(self, hub: ClusterChart, builder: tuple[Pack, PackConfig]) -> None:
        """The hub builds and bootstraps each workload cluster in a chain of its own (fluxplane.charts.spokes)."""
        pack, config = builder
        fleet = self.plan.fleet

        def build(manifest: Manifest, cluster: WorkloadCluster) -> Built:
            # Applied by the cluster's chain with post-build substitution: the user's text, escaped.
            context = PackContext(manifest, fleet, cluster=escaped(cluster))
            pack.bind(context, escaped(config))
            return Built(tuple(context.health_checks), tuple(context.health_check_exprs), context.timeout)

        identities: dict[str, ChainFolder] = {}
        if self.addon_identities is not None:
            for cluster, folder in self.addon_identities.folders.items():
                if cluster != fleet.management.name:
                    composites = self.addon_identities.composites[cluster]
                    identities[cluster] = self._chain_folder(folder, composites, "AddonIdentity")
        resources: dict[str, ChainFolder] = {}
        if self.cloud is not None:
            for cluster, folder in self.cloud.folders.items():
                resources[cluster] = self._chain_folder(folder, self.cloud.composites[cluster], None)
        inputs = ChainInputs(
            identities=identities,
            resources=resources,
            variables={cluster.name: cluster.variables for cluster in self.plan.clusters},
        )
        self.spokes = SpokesChart(
            self,
            "spokes",
            layout=self.layout,
            fleet=fleet,
            builder=ClusterBuilder(pack=pack.name, requires=pack.requires, bind=build),
            charts=BOOTSTRAP_CHARTS,
            inputs=inputs,
            reused=frozenset(self.reused),
        )
        # Applies every cluster's namespace and chain, and waits for none of them: each chain is gated on
        # its own cluster, so one cluster's trouble stays in its chain.
        hub.add_pack(PARENT, "configs", self.spokes.directory)

    @staticmethod
    def _chain_folder(folder: str, composites: Sequence[TypedResource[Any]], kind: str | None) -> ChainFolder:
        kinds = [kind] if kind else sorted({composite.kind for composite in composites})
        return ChainFolder(
            directory=folder,
            checks=tuple(composites),
            exprs=tuple(composite_health(f"{GROUP}/{VERSION}", name) for name in kinds),
            requires=(APP_COMPOSITIONS,),
            timeout=DATABASE_TIMEOUT if AppDatabase.kind in kinds else APP_RESOURCES_TIMEOUT,
        )

    def _add_addon_identities(self, hub: ClusterChart) -> None:
        """The hub makes the add-ons' IAM roles, each cluster's in its hub namespace."""
        management = self.plan.fleet.management.name
        if APP_COMPOSITIONS not in hub.pack_kustomizations:
            needing = sorted({f"{role.pack} ({cluster})" for cluster, roles in self._roles.items() for role in roles})
            raise ConfigError(
                f"environments/base.yaml: management.packs: {', '.join(needing)} need IAM roles (EKS Pod Identity), "
                f"which the hub makes with the {APP_COMPOSITIONS!r} pack; enable it ({APP_COMPOSITIONS}: {{}})"
            )
        tags = {cluster.name: cluster.tags for cluster in self.plan.fleet.clusters}
        self.addon_identities = AddonIdentitiesChart(
            self,
            "addon-identities",
            layout=self.layout,
            clusters=[
                ClusterIdentities(
                    cluster=cluster.name,
                    region=cluster.variables["cluster_region"],
                    variables=cluster.variables,
                    tags=tags.get(cluster.name, {}),
                    identities=tuple(self._roles.get(cluster.name, ())),
                    applier=(FLUX_NAMESPACE, ADDON_IDENTITIES)
                    if cluster.name == management
                    else (cluster_namespace(cluster.name), IDENTITIES_STEP),
                    own_namespace=cluster.name == management,
                    account=self._accounts.get(cluster.name),
                )
                for cluster in self.plan.clusters
                if cluster.name not in self.reused
            ],
        )
        folder = self.addon_identities.folders.get(management)
        if folder is None:
            return
        kustomization = hub.add_pack(ADDON_IDENTITIES, "configs", folder, timeout=APP_RESOURCES_TIMEOUT)
        kustomization.depends_on(APP_COMPOSITIONS)
        for composite in self.addon_identities.composites[management]:
            kustomization.add_health_check(composite)
        kustomization.add_health_check_expr(composite_health(f"{GROUP}/{VERSION}", "AddonIdentity"))

    def _add_cloud(self) -> None:
        """What apps need in AWS, in each cluster's hub namespace (fluxplane.charts.cloud), applied by its chain."""
        tags = {cluster.name: cluster.tags for cluster in self.plan.fleet.clusters}
        self.cloud = CloudChart(
            self,
            "cloud",
            layout=self.layout,
            placements=[placement for placement in self.plan.apps if placement.cluster not in self.reused],
            tags=tags,
            flux=self.plan.fleet.flux,
            sealed=self.plan.hub.sealed_secrets,
            accounts=self._accounts,
            spokes=self._spoke_resources,
            networks={c.name: str(c.network.cidr) for c in self.plan.fleet.clusters if c.network.cidr is not None},
        )

    # -- synthesis ------------------------------------------------------------------------------

    def finish(self) -> None:
        """Close the tree: entry-point kustomization.yaml files, including cdk8s-made custom.yaml."""
        if self._finished:
            return
        self._finished = True
        with_custom = jsii_children_by_chart(self)
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

    def synth(self) -> None:
        """Check, render and write the fleet into ``outdir`` atomically (cdk8s's App.synth contract)."""
        from fluxplane.synth import paused_gc
        from fluxplane.synth.render import render_app
        from fluxplane.synth.writer import write_tree

        with paused_gc():
            files = render_app(self)
        write_tree(files, Path(self.outdir))


def jsii_children_by_chart(app: Any) -> dict[Any, list[Any]]:
    """cdk8s (jsii) constructs below each chart, found in one bridge call for the whole app.

    Constructs that are neither fluxplane charts nor below one are listed under the key None.
    """
    from fluxplane.charts.base import FleetChart

    found: dict[Any, list[Any]] = {}
    charts: dict[str, Any] = {}
    for construct in app.node.find_all():
        if construct is app:
            continue
        if isinstance(construct, FleetChart):
            charts[node_of(construct).path] = construct
            continue
        path = construct.node.path
        owner = charts.get(path.split("/", 1)[0])
        found.setdefault(owner, []).append(construct)
    return found
