"""The hub's features, each switched on by what a pack provides, never by the pack's name.

* :class:`AppResources`, for the pack that provides ``app-resources`` (Pack.provides, the app kinds):
  the add-ons' IAM roles (fluxplane.charts.addon_identities) and the apps' AWS resources
  (fluxplane.charts.cloud, and a tenant's own on a cluster that makes them), applied after that pack.
* :class:`SpokeBootstrap`, for the pack that builds the workload clusters (Pack.builds_clusters): each
  cluster's chain on the hub (fluxplane.charts.spokes), which builds it, applies its roles and
  resources once it is Ready, and bootstraps it.

A third-party pack that declares the capability gets the same feature as the built-in one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from fluxplane.charts.addon_identities import AddonIdentitiesChart, AddonRole, ClusterIdentities
from fluxplane.charts.cloud import CloudChart
from fluxplane.charts.cluster import ClusterChart
from fluxplane.charts.spokes import (
    BootstrapCharts,
    Built,
    ChainFolder,
    ChainInputs,
    ClusterBuilder,
    SpokesChart,
)
from fluxplane.charts.tenants import TenantsChart
from fluxplane.config.hub import IDENTITIES_STEP, cluster_namespace, kubeconfig_secret
from fluxplane.config.models import WorkloadCluster
from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.kustomization import Kustomization, escaped
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.props import FLUX_NAMESPACE
from fluxplane.core.layout import ADDON_IDENTITIES, SPOKE_BOOTSTRAP, RepositoryLayout
from fluxplane.errors import ConfigError
from fluxplane.kinds import APP_KINDS
from fluxplane.kinds.app_database import AppDatabase
from fluxplane.kinds.app_identity import ADDON_KIND
from fluxplane.packs import versions
from fluxplane.packs.api import APP_RESOURCES, Pack, PackConfig, PackContext
from fluxplane.synth.plan import ClusterPlan, FleetPlan, builders, offered

#: What every workload cluster's bootstrap installs: the pins of fluxplane.packs.versions.
BOOTSTRAP_CHARTS = BootstrapCharts(
    external_secrets=versions.EXTERNAL_SECRETS,
    sealed_secrets=versions.SEALED_SECRETS,
    flux2=versions.FLUX2,
    flux_operator=versions.FLUX_OPERATOR,
    flux_distribution=versions.FLUX_DISTRIBUTION,
    flux_registry=versions.FLUX_REGISTRY,
)
#: How long a cluster's chain waits for its add-ons' roles and its apps' resources.
APP_RESOURCES_TIMEOUT = "20m"
#: ... and when they include a database: RDS takes 10 to 40 minutes to make one (longer with a standby), and the
#: database is Ready only once its credentials are on the cluster.
DATABASE_TIMEOUT = "45m"


class AppResources:
    """The add-ons' roles and the apps' AWS resources, made of the kinds of the pack that provides them.

    ``reused`` names workload clusters whose hub folders synth takes from its cache: they get none here.
    """

    def __init__(self, plan: FleetPlan, layout: RepositoryLayout, *, reused: Collection[str] = ()) -> None:
        self.plan = plan
        self.layout = layout
        self.reused = frozenset(reused)
        #: The hub's pack that provides the app kinds, if one does: what the hub applies of them waits for it.
        self.pack = plan.provider(plan.hub, APP_RESOURCES)
        #: Per workload cluster in an account of its own: the account's name, which its provider config has.
        self.accounts = {cluster.name: cluster.account for cluster in plan.fleet.clusters if cluster.account}
        #: The clusters that make their apps' resources themselves (appResources: spoke).
        self.spokes = frozenset(c.name for c in plan.fleet.clusters if c.app_resources == "spoke")
        self.identities: AddonIdentitiesChart | None = None
        self.cloud: CloudChart | None = None

    def add_tenant_resources(
        self, chart: ClusterChart, cluster: ClusterPlan, tenants: TenantsChart, applied: Kustomization
    ) -> None:
        """A cluster that makes its apps' resources applies them after its tenants (``applied``) and after its
        own pack of the kinds, which planning makes sure it has."""
        if tenants.resources_directory is None:
            return
        resources = chart.add_app_resources(tenants.resources_directory, timeout=APP_RESOURCES_TIMEOUT)
        resources.depends_on(applied)
        kinds = self.plan.provider(cluster, APP_RESOURCES)
        if kinds is not None:
            resources.depends_on(chart.pack_kustomizations[kinds])
        for composite in tenants.composites:
            resources.add_health_check(composite)
        for kind in sorted({composite.kind for composite in tenants.composites}):
            resources.add_health_check_expr(APP_KINDS[kind].health_check())

    def add_identities(self, scope: Any, hub: ClusterChart, roles: Mapping[str, Sequence[AddonRole]]) -> None:
        """The hub makes the add-ons' IAM roles, each cluster's in its hub namespace; the management cluster's
        own with a Kustomization of the hub's (ADDON_IDENTITIES), the others' with their chains."""
        if not any(roles.values()):
            return
        if self.pack is None:
            needing = sorted({f"{role.pack} ({cluster})" for cluster, found in roles.items() for role in found})
            named = offered(self.plan.registry, APP_RESOURCES)
            makes = (
                f"the {named[0]!r} pack; enable it ({named[0]}: {{}})"
                if named
                else f"a pack that provides {APP_RESOURCES!r}; install and enable one"
            )
            raise ConfigError(
                f"environments/base.yaml: management.packs: {', '.join(needing)} need IAM roles (EKS Pod Identity), "
                f"which the hub makes with {makes}"
            )
        management = self.plan.hub.name
        tags = {cluster.name: cluster.tags for cluster in self.plan.fleet.clusters}
        self.identities = AddonIdentitiesChart(
            scope,
            "addon-identities",
            layout=self.layout,
            clusters=[
                ClusterIdentities(
                    cluster=cluster.name,
                    region=cluster.variables["cluster_region"],
                    variables=cluster.variables,
                    tags=tags.get(cluster.name, {}),
                    identities=tuple(roles.get(cluster.name, ())),
                    applier=(FLUX_NAMESPACE, ADDON_IDENTITIES)
                    if cluster.name == management
                    else (cluster_namespace(cluster.name), IDENTITIES_STEP),
                    own_namespace=cluster.name == management,
                    account=self.accounts.get(cluster.name),
                )
                for cluster in self.plan.clusters
                if cluster.name not in self.reused
            ],
        )
        folder = self.identities.folders.get(management)
        if folder is None:
            return
        kustomization = hub.add_pack(ADDON_IDENTITIES, "configs", folder, timeout=APP_RESOURCES_TIMEOUT)
        kustomization.depends_on(self.pack)
        for composite in self.identities.composites[management]:
            kustomization.add_health_check(composite)
        kustomization.add_health_check_expr(ADDON_KIND.health_check())

    def add_cloud(self, scope: Any) -> None:
        """What apps need in AWS, in each cluster's hub namespace (fluxplane.charts.cloud), applied by its chain:
        with the app kinds on the hub, for apps that ask for some."""
        if self.pack is None or all(placement.app.aws.empty for placement in self.plan.apps):
            return
        tags = {cluster.name: cluster.tags for cluster in self.plan.fleet.clusters}
        self.cloud = CloudChart(
            scope,
            "cloud",
            layout=self.layout,
            placements=[placement for placement in self.plan.apps if placement.cluster not in self.reused],
            tags=tags,
            flux=self.plan.fleet.flux,
            sealed=self.plan.hub.sealed_secrets,
            accounts=self.accounts,
            spokes=self.spokes,
            networks={c.name: str(c.network.cidr) for c in self.plan.fleet.clusters if c.network.cidr is not None},
        )

    def chain_inputs(self) -> ChainInputs:
        """What each workload cluster's chain applies of its own once it is Ready: its roles and its resources,
        after the hub's pack of their kinds."""
        identities: dict[str, ChainFolder] = {}
        resources: dict[str, ChainFolder] = {}
        if self.identities is not None:
            for cluster, folder in self.identities.folders.items():
                if cluster != self.plan.hub.name:
                    composites = self.identities.composites[cluster]
                    identities[cluster] = self._chain_folder(folder, composites, "AddonIdentity")
        if self.cloud is not None:
            for cluster, folder in self.cloud.folders.items():
                resources[cluster] = self._chain_folder(folder, self.cloud.composites[cluster], None)
        return ChainInputs(
            identities=identities,
            resources=resources,
            variables={cluster.name: cluster.variables for cluster in self.plan.clusters},
        )

    def _chain_folder(self, folder: str, composites: Sequence[TypedResource[Any]], kind: str | None) -> ChainFolder:
        kinds = [kind] if kind else sorted({composite.kind for composite in composites})
        return ChainFolder(
            directory=folder,
            checks=tuple(composites),
            exprs=tuple(APP_KINDS[name].health_check() for name in kinds),
            # Roles and resources are made only when the hub has the pack (add_identities, add_cloud).
            requires=(self.pack,) if self.pack is not None else (),
            timeout=DATABASE_TIMEOUT if AppDatabase.kind in kinds else APP_RESOURCES_TIMEOUT,
        )


class SpokeBootstrap:
    """Each workload cluster's chain on the hub, built by the hub's pack that builds clusters."""

    def __init__(self, plan: FleetPlan, layout: RepositoryLayout, *, reused: Collection[str] = ()) -> None:
        self.plan = plan
        self.layout = layout
        self.reused = frozenset(reused)
        found = builders(plan.hub, plan.registry)
        #: The hub's pack that builds the workload clusters, with its config (planning allows one at most).
        self.builder: tuple[Pack, PackConfig] | None = (
            (plan.registry.get(found[0]), plan.hub.packs[found[0]]) if found else None
        )
        self.spokes: SpokesChart | None = None

    def kubeconfigs(self) -> dict[str, dict[str, Any]]:
        """The sealed kubeconfig Secrets the user provides for registered clusters the hub reaches with one
        (WorkloadCluster.provided_kubeconfig), by cluster: hub secrets of the cluster's namespace, which its chain
        applies, not the hub's entry point (planning makes sure each is there)."""
        hub = {(item.namespace, item.name): item for item in self.plan.hub.sealed_secrets}
        found = {}
        for cluster in self.plan.fleet.clusters:
            secret = kubeconfig_secret(cluster.name)
            item = hub.get((secret.namespace, secret.name))
            if cluster.provided_kubeconfig and item is not None:
                found[cluster.name] = item.document
        return found

    def add(self, scope: Any, hub: ClusterChart, inputs: ChainInputs) -> None:
        """The chains, with what each applies besides its bootstrap (``inputs``), when there are clusters to build."""
        if self.builder is None or not self.plan.fleet.clusters:
            return
        pack, config = self.builder
        fleet = self.plan.fleet
        # Applied by each cluster's chain with post-build substitution: the user's text, escaped (the config once,
        # for every cluster: it is frozen, and escaping gives it back as is when there is nothing to escape).
        escaped_config = escaped(config)

        def build(manifest: Manifest, cluster: WorkloadCluster) -> Built:
            context = PackContext(manifest, fleet, cluster=escaped(cluster))
            pack.apply(context, escaped_config)
            return Built(tuple(context.health_checks), tuple(context.health_check_exprs), context.timeout)

        self.spokes = SpokesChart(
            scope,
            "spokes",
            layout=self.layout,
            fleet=fleet,
            builder=ClusterBuilder(pack=pack.name, requires=pack.requires, bind=build),
            charts=BOOTSTRAP_CHARTS,
            inputs=replace(inputs, kubeconfigs=self.kubeconfigs()),
            reused=self.reused,
        )
        # Applies every cluster's namespace and chain, and waits for none of them: each chain is gated on
        # its own cluster, so one cluster's trouble stays in its chain.
        hub.add_pack(SPOKE_BOOTSTRAP, "configs", self.spokes.directory)
