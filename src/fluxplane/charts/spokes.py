"""SpokesChart: ``spokes/``, the hub's chain for each workload cluster: build it, then bootstrap it.

One module, though long: a step's order, folder, content and health gate change together (adding a step
touches STEPS, the objects it applies and HEALTH_EXPRS), and all of them are one chart's ``spokes/`` tree.

Every workload cluster has a chain of its own on the hub, in its hub namespace (next to its
EKSCluster and kubeconfig Secret), so a cluster that never gets Ready holds up nothing but its own
chain. Each Flux Kustomization of the chain waits for the one before and is gated on the health of
what it applied; the first ones wait only for the hub's shared platform (the Compositions):

1. ``cluster``: the cluster itself, as the hub's cluster-building pack renders it (workload-clusters:
   its EKSCluster), waiting for ``eks-compositions``;
2. ``addon-identities``: the IAM roles of its add-ons (fluxplane.charts.addon_identities), and
   ``app-resources``: its apps' AWS resources (fluxplane.charts.cloud), both after ``cluster`` and the
   hub's pack of their kinds (the one that provides ``app-resources``: app-compositions);
3. ``external-secrets``: External Secrets Operator on the spoke (a HelmRelease through the kubeconfig),
   its service account bound by IRSA to the role the composition made for it, after ``cluster`` and
   the add-on roles, so the add-ons' pods start with their credentials;
4. ``secret-store``: a ClusterSecretStore for AWS Secrets Manager that authenticates as that account and
   serves the sealing key's namespace alone (tenants may write ExternalSecrets in theirs);
5. ``sealing-key``: an ExternalSecret that materializes the fleet's Sealed Secrets key pair as the
   ``kubernetes.io/tls`` Secret the controller picks up (label ``sealed-secrets-key: active``);
6. ``sealed-secrets``: the Sealed Secrets controller (key renewal off: the key pair is the fleet's);
7. ``flux``: Flux itself, from the flux2 Helm chart, or, for a cluster with ``fluxInstaller:
   flux-operator``, the Flux Operator's chart, then ``flux-instance``: the FluxInstance the operator installs
   Flux from (the same lockdown; its ``sync`` left to the next steps, so the hand-over is the same);
8. ``git-credentials``: the spoke's sealed Git credentials (environments/secrets/<cluster>/);
9. ``flux-sync``: the spoke's GitRepository and root Kustomization (clusters/<cluster>/flux-system),
   after which the spoke reconciles itself.

The last two hand objects over to the spoke's own Flux, so the hub does not prune them. A cluster that runs a
Flux of its own (``bootstrap: flux`` or ``flux-operator``) keeps it: its chain ends with ``sealed-secrets``, and
its own Flux syncs its entry point, secrets included. A registered cluster's ``cluster`` step applies what the
definition records of it (fluxplane.packs.workload_clusters) and, when the hub reaches it with a kubeconfig, the
sealed Secret the user provides for it. The hub's
``spoke-bootstrap`` Kustomization applies every cluster's namespace and chain and waits for none of
them. Objects whose deletion deletes something live carry the annotation naming the Kustomization
that applies them (fluxplane.config.hub.APPLIED_BY).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fluxplane.charts.base import FleetChart
from fluxplane.config.accounts import sealing_key_region
from fluxplane.config.hub import (
    ACCOUNT_LABEL,
    BUILD_STEP,
    EXTERNAL_SECRETS_NAMESPACE,
    IDENTITIES_STEP,
    RESOURCES_STEP,
    SEALED_SECRETS_NAMESPACE,
    applied_by,
    bootstrap_values,
    cluster_namespace,
    hub_access_config_map,
    kubeconfig_secret,
)
from fluxplane.config.models import Fleet, WorkloadCluster
from fluxplane.constructs.base import Construct, Resource, annotate
from fluxplane.constructs.external_secrets import (
    AwsAuth,
    AwsProvider,
    ClusterSecretStore,
    ClusterSecretStoreProps,
    ExternalSecret,
    ExternalSecretData,
    ExternalSecretProps,
    JwtAuth,
    RemoteRef,
    SecretStoreProvider,
    SecretStoreRef,
    ServiceAccountSelector,
    StoreCondition,
    Target,
    TargetTemplate,
    TemplateMetadata,
)
from fluxplane.constructs.health import conditions_health, ready_health
from fluxplane.constructs.helm_release import (
    DEFAULT_INSTALL,
    DEFAULT_POST_RENDER_STRATEGY,
    DEFAULT_UPGRADE,
    ChartReference,
    HelmChartSourceReference,
    HelmChartTemplate,
    HelmChartTemplateSpec,
    HelmRelease,
    HelmReleaseProps,
    ValuesReference,
)
from fluxplane.constructs.helm_repository import Chart, HelmRepository, HelmRepositoryProps
from fluxplane.constructs.kustomization import Kustomization, KustomizationProps, PostBuild, escaped
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.namespace import Namespace, NamespaceProps
from fluxplane.constructs.oci_repository import (
    HELM_CHART_LAYER,
    LayerSelector,
    OCIRepository,
    OCIRepositoryProps,
    OCIRepositoryRef,
)
from fluxplane.constructs.props import (
    FLUX_NAMESPACE,
    CrossNamespaceSourceReference,
    CustomHealthCheck,
    KubeConfigReference,
    LocalObjectReference,
    NamespacedObjectKindReference,
    SecretKeyReference,
)
from fluxplane.constructs.raw import RawObject
from fluxplane.core.layout import SPOKE_BOOTSTRAP, SYNC_SOURCE, RepositoryLayout, cluster_dir

DIRECTORY = "spokes"
SECRET_STORE = "fleet-secrets-manager"
SEALED_SECRETS_CONTROLLER = "sealed-secrets-controller"
SEALING_KEY_SECRET = "sealed-secrets-key"
#: The flux2 chart's values that lock a spoke's Flux down for tenants.
FLUX_LOCKDOWN: dict[str, Any] = {
    "multitenancy": {"enabled": True, "defaultServiceAccount": "default", "privileged": True}
}
#: The same lockdown for a FluxInstance (Flux Operator): no cross-namespace references, tenants' objects run
#: as their namespace's ``default`` account; kustomize-controller keeps its own rights for the platform's.
FLUX_INSTANCE_LOCKDOWN: dict[str, Any] = {"multitenant": True, "tenantDefaultServiceAccount": "default"}
#: The Flux controllers a FluxInstance installs: those fluxplane's objects need.
FLUX_COMPONENTS = ("source-controller", "kustomize-controller", "helm-controller", "notification-controller")
#: The bootstrap steps of every spoke's chain, in order (after the cluster, its roles and resources).
STEPS = (
    "external-secrets",
    "secret-store",
    "sealing-key",
    "sealed-secrets",
    "flux",
    "flux-instance",
    "git-credentials",
    "flux-sync",
)


#: The steps that install Flux on a cluster and hand it its sync: none for a cluster that runs a Flux of its own.
FLUX_STEPS = ("flux", "flux-instance", "git-credentials", "flux-sync")


def chain_steps(installer: str, git_credentials: bool, bootstrap: str = "fluxplane") -> tuple[str, ...]:
    """The bootstrap steps of a cluster's chain, in order: ``flux-instance`` for a cluster whose Flux the
    Flux Operator installs, ``git-credentials`` when the platform repository needs credentials, and none of
    FLUX_STEPS for a cluster whose Flux is its own (``bootstrap`` other than ``fluxplane``)."""
    return tuple(
        step
        for step in STEPS
        if (step != "git-credentials" or git_credentials)
        and (step != "flux-instance" or installer == "flux-operator")
        and (step not in FLUX_STEPS or bootstrap == "fluxplane")
    )


def kube_config(cluster: str, access: str) -> KubeConfigReference:
    """The Flux ``kubeConfig`` of the hub's objects that target ``cluster``: its kubeconfig Secret, or for keyless
    access (``hubAccess: keyless``) the ConfigMap that describes the cluster."""
    if access == "keyless":
        return KubeConfigReference(config_map_ref=LocalObjectReference(name=hub_access_config_map(cluster)))
    secret = kubeconfig_secret(cluster)
    return KubeConfigReference(secret_ref=SecretKeyReference(name=secret.name, key=secret.key))


#: The step after which a spoke reconciles itself.
LAST_STEP = "flux-sync"

READY_CLUSTER_SECRET_STORE = ready_health("external-secrets.io/v1", "ClusterSecretStore")
READY_EXTERNAL_SECRET = ready_health("external-secrets.io/v1", "ExternalSecret")
#: The Sealed Secrets controller sets Synced False when it cannot unseal a secret.
SYNCED_SEALED_SECRET = conditions_health("bitnami.com/v1alpha1", "SealedSecret", ("Synced",), failed="Synced")
#: How the steps that apply custom resources to the spoke judge them (the others apply HelmReleases).
HEALTH_EXPRS = {
    "secret-store": READY_CLUSTER_SECRET_STORE,
    "sealing-key": READY_EXTERNAL_SECRET,
    "git-credentials": SYNCED_SEALED_SECRET,
}


@dataclass(frozen=True)
class Built:
    """What a cluster-building pack declared for one cluster: health gates and how long to wait."""

    health_checks: tuple[NamespacedObjectKindReference, ...] = ()
    health_check_exprs: tuple[CustomHealthCheck, ...] = ()
    timeout: str | None = None


@dataclass(frozen=True)
class ClusterBuilder:
    """The hub pack that builds clusters: its name, the hub Kustomizations it needs, a bind per cluster."""

    pack: str
    requires: tuple[str, ...]
    bind: Callable[[Manifest, WorkloadCluster], Built]


@dataclass(frozen=True)
class ChainFolder:
    """A folder of a cluster's own objects that its chain applies once the cluster is Ready."""

    directory: str
    checks: tuple[Resource, ...] = ()
    exprs: tuple[CustomHealthCheck, ...] = ()
    #: The hub Kustomizations (in flux-system) that serve the objects' kinds.
    requires: tuple[str, ...] = ()
    timeout: str | None = None


@dataclass(frozen=True)
class BootstrapCharts:
    """The pinned charts a cluster's bootstrap installs, and the Flux the operator asks for (synth passes the
    pins of fluxplane.packs.versions)."""

    external_secrets: Chart
    sealed_secrets: Chart
    flux2: Chart
    flux_operator: Chart
    #: The Flux a FluxInstance asks for (a semver range), and the registry it comes from.
    flux_distribution: str
    flux_registry: str


@dataclass(frozen=True)
class ChainInputs:
    """What a cluster's chain applies besides its bootstrap: its add-ons' roles and its apps' resources.

    ``variables`` are each cluster's post-build variables (cluster_name, ...), substituted in what the
    chain applies from the hub's folders (it also turns ``$${`` back into ``${``, which IAM policies keep).
    ``kubeconfigs`` are the sealed kubeconfig Secrets the user provides for registered clusters the hub reaches
    with one (WorkloadCluster.provided_kubeconfig), by cluster: the chain's ``cluster`` step applies each.
    """

    identities: Mapping[str, ChainFolder] = field(default_factory=dict)
    resources: Mapping[str, ChainFolder] = field(default_factory=dict)
    variables: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    kubeconfigs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


class SpokesChart(FleetChart):
    """The files under ``spokes/``: shared step content and one chain per workload cluster."""

    def __init__(
        self,
        scope: Any,
        construct_id: str,
        *,
        layout: RepositoryLayout,
        fleet: Fleet,
        builder: ClusterBuilder,
        charts: BootstrapCharts,
        inputs: ChainInputs | None = None,
        reused: frozenset[str] = frozenset(),
    ) -> None:
        """``reused`` names clusters whose chains synth takes from its cache (fluxplane.synth.cache): listed,
        not built."""
        super().__init__(scope, construct_id, layout=layout, directory=DIRECTORY)
        self.fleet = fleet
        self.builder = builder
        self.charts = charts
        self.inputs = inputs or ChainInputs()
        #: Per cluster: the chain's Kustomizations by step name.
        self.chains: dict[str, dict[str, Kustomization]] = {}
        #: Per cluster: the Flux ``kubeConfig`` that reaches it (kubeconfig Secret or keyless).
        self._access = {cluster.name: kube_config(cluster.name, cluster.hub_access) for cluster in fleet.clusters}
        environments = {cluster.name: env.name for env in fleet.environments for cluster in env.clusters}
        listing = self.add_kustomization_file("kustomization", self.directory).config
        self._sources()
        listing.add_resource("sources.yaml")
        self._secret_store_dir = self._secret_store()
        self._sealing_key_dir = self._sealing_key()
        for cluster in sorted(fleet.clusters, key=lambda cluster: cluster.name):
            if cluster.name not in reused:
                self._chain(cluster, environments[cluster.name])
            listing.add_resource(cluster.name)

    # -- shared ---------------------------------------------------------------------------------

    def _sources(self) -> None:
        sources = self.add_manifest("sources", posixpath.join(self.directory, "sources.yaml"))
        for chart in (self.charts.external_secrets, self.charts.sealed_secrets, self.charts.flux2):
            HelmRepository(sources, chart.chart, HelmRepositoryProps(name=chart.chart, url=chart.repository))
        if any(c.flux_installer == "flux-operator" and c.bootstrap == "fluxplane" for c in self.fleet.clusters):
            chart = self.charts.flux_operator
            OCIRepository(
                sources,
                chart.chart,
                OCIRepositoryProps(
                    name=chart.chart,
                    url=chart.url,
                    ref=OCIRepositoryRef(tag=chart.version),
                    layer_selector=LayerSelector(media_type=HELM_CHART_LAYER, operation="copy"),
                ),
            )

    def _folder(self, construct_id: str, directory: str, file_name: str, scope: Any = None) -> Manifest:
        manifest = self.add_manifest(construct_id, posixpath.join(directory, file_name), scope)
        self.add_kustomization_file(f"{construct_id}-kustomization", directory, scope=scope).config.add_resource(
            file_name
        )
        return manifest

    def _secret_store(self) -> str:
        directory = posixpath.join(self.directory, "steps", "secret-store")
        manifest = self._folder("secret-store", directory, "secret-store.yaml")
        region = sealing_key_region(self.fleet)
        account = EXTERNAL_SECRETS_NAMESPACE
        ClusterSecretStore(
            manifest,
            "store",
            ClusterSecretStoreProps(
                name=SECRET_STORE,
                provider=SecretStoreProvider(
                    aws=AwsProvider(
                        service="SecretsManager",
                        region=region,
                        auth=AwsAuth(
                            jwt=JwtAuth(service_account_ref=ServiceAccountSelector(name=account, namespace=account))
                        ),
                    )
                ),
                # The sealing key's namespace only: tenants may write ExternalSecrets in theirs.
                conditions=(StoreCondition(namespaces=(SEALED_SECRETS_NAMESPACE,)),),
            ),
        )
        return directory

    def _sealing_key(self) -> str:
        directory = posixpath.join(self.directory, "steps", "sealing-key")
        manifest = self._folder("sealing-key", directory, "sealing-key.yaml")
        secret = self.fleet.sealing_key.secret_name
        ExternalSecret(
            manifest,
            "key",
            ExternalSecretProps(
                name=SEALING_KEY_SECRET,
                namespace=SEALED_SECRETS_NAMESPACE,
                refresh_interval="1h",
                secret_store_ref=SecretStoreRef(kind="ClusterSecretStore", name=SECRET_STORE),
                target=Target(
                    name=SEALING_KEY_SECRET,
                    creation_policy="Owner",
                    # Keep the key if the ExternalSecret goes: sealed secrets in Git depend on it.
                    deletion_policy="Retain",
                    template=TargetTemplate(
                        type="kubernetes.io/tls",
                        metadata=TemplateMetadata(labels={"sealedsecrets.bitnami.com/sealed-secrets-key": "active"}),
                    ),
                ),
                data=tuple(
                    ExternalSecretData(secret_key=key, remote_ref=RemoteRef(key=secret, property=key))
                    for key in ("tls.crt", "tls.key")
                ),
            ),
        )
        return directory

    # -- per cluster ----------------------------------------------------------------------------

    def _release(
        self, cluster: str, step: str, chart: Chart, target: str, release: str, values: dict[str, Any]
    ) -> tuple[str, HelmRelease]:
        directory = posixpath.join(self.directory, cluster, step)
        manifest = self._folder(f"{cluster}-{step}", directory, f"{step}.yaml")
        oci = chart.repository.startswith("oci://")
        source = HelmChartSourceReference(kind="HelmRepository", name=chart.chart, namespace=FLUX_NAMESPACE)
        config = bootstrap_values(cluster)
        props = HelmReleaseProps(
            name=step,
            namespace=cluster_namespace(cluster),
            annotations=applied_by(cluster_namespace(cluster), step),
            release_name=release,
            target_namespace=target,
            storage_namespace=target,
            kube_config=self._access[cluster],
            chart_ref=ChartReference(kind="OCIRepository", name=chart.chart, namespace=FLUX_NAMESPACE) if oci else None,
            chart=None
            if oci
            else HelmChartTemplate(
                spec=HelmChartTemplateSpec(chart=chart.chart, version=chart.version, source_ref=source)
            ),
            install=DEFAULT_INSTALL.model_copy(update={"create_namespace": True}),
            upgrade=DEFAULT_UPGRADE,
            post_render_strategy=DEFAULT_POST_RENDER_STRATEGY,
            values=values,
            values_from=(
                ValuesReference(
                    kind="ConfigMap",
                    name=config.name,
                    values_key=config.external_secrets_role_arn_key,
                    target_path=r"serviceAccount.annotations.eks\.amazonaws\.com/role-arn",
                ),
            )
            if step == "external-secrets"
            else None,
        )
        return directory, HelmRelease(manifest, "release", props)

    def _flux_instance(self, cluster: str) -> str:
        """``<cluster>/flux-instance/``: the FluxInstance the operator installs the cluster's Flux from."""
        directory = posixpath.join(self.directory, cluster, "flux-instance")
        manifest = self._folder(f"{cluster}-flux-instance", directory, "flux-instance.yaml")
        RawObject(
            manifest,
            "instance",
            {
                "apiVersion": "fluxcd.controlplane.io/v1",
                "kind": "FluxInstance",
                # The operator accepts one FluxInstance, named flux, in its own namespace.
                "metadata": {"name": "flux", "namespace": FLUX_NAMESPACE},
                "spec": {
                    "distribution": {"version": self.charts.flux_distribution, "registry": self.charts.flux_registry},
                    "components": list(FLUX_COMPONENTS),
                    "cluster": {"type": "aws", **FLUX_INSTANCE_LOCKDOWN},
                },
            },
        )
        return directory

    def _step(
        self,
        file: Manifest,
        cluster: str,
        name: str,
        directory: str,
        *,
        prune: bool = True,
        wait: bool | None = None,
        timeout: str | None = None,
        post_build: PostBuild | None = None,
        kube_config: KubeConfigReference | None = None,
    ) -> Kustomization:
        """A Kustomization of ``cluster``'s chain that applies ``directory`` in the cluster's hub namespace; ``timeout``
        replaces the fleet's."""
        fleet = self.fleet
        return Kustomization(
            file,
            name,
            KustomizationProps(
                name=name,
                namespace=cluster_namespace(cluster),
                annotations=applied_by(FLUX_NAMESPACE, SPOKE_BOOTSTRAP),
                interval=fleet.flux.interval,
                retry_interval=fleet.flux.retry_interval,
                timeout=timeout or fleet.flux.timeout,
                path=self.layout.flux_path(directory),
                source_ref=CrossNamespaceSourceReference(
                    kind="GitRepository", name=SYNC_SOURCE, namespace=FLUX_NAMESPACE
                ),
                prune=prune,
                wait=wait,
                post_build=post_build,
                kube_config=kube_config,
            ),
        )

    def _variables(self, cluster: str) -> PostBuild | None:
        variables = self.inputs.variables.get(cluster)
        return PostBuild(substitute=dict(variables)) if variables else None

    def _build(self, file: Manifest, cluster: WorkloadCluster) -> Kustomization:
        """The chain's first step: the cluster itself, as the cluster-building pack renders it."""
        scope = Construct(self, f"{cluster.name}-build")
        directory = posixpath.join(self.directory, cluster.name, BUILD_STEP)
        manifest = self._folder("cluster", directory, f"{BUILD_STEP}.yaml", scope)
        built = self.builder.bind(manifest, cluster)
        kubeconfig = self.inputs.kubeconfigs.get(cluster.name)
        if kubeconfig is not None:
            # Applied with the chain's variables: the document as sealed, escaped.
            RawObject(manifest, "kubeconfig", escaped(dict(kubeconfig)))
            built = replace(built, health_check_exprs=(*built.health_check_exprs, SYNCED_SEALED_SECRET))
        annotate(manifest, applied_by(cluster_namespace(cluster.name), BUILD_STEP))
        step = self._step(
            file,
            cluster.name,
            BUILD_STEP,
            directory,
            post_build=self._variables(cluster.name),
            wait=True if not built.health_checks else None,
            timeout=built.timeout,
        )
        for required in self.builder.requires:
            step.depends_on(required, namespace=FLUX_NAMESPACE)
        for check in built.health_checks:
            step.add_health_check(check)
        for expr in built.health_check_exprs:
            step.add_health_check_expr(expr)
        return step

    def _after_build(
        self, file: Manifest, cluster: str, name: str, folder: ChainFolder, build: Kustomization
    ) -> Kustomization:
        """A step that applies ``folder`` once the cluster is Ready and its kinds are served."""
        step = self._step(
            file,
            cluster,
            name,
            folder.directory,
            post_build=self._variables(cluster),
            wait=True if not folder.checks else None,
            timeout=folder.timeout,
        )
        step.depends_on(build)
        for required in folder.requires:
            step.depends_on(required, namespace=FLUX_NAMESPACE)
        for check in folder.checks:
            step.add_health_check(check)
        for expr in folder.exprs:
            step.add_health_check_expr(expr)
        return step

    def _chain(self, cluster: WorkloadCluster, environment: str) -> None:
        name = cluster.name
        namespace = cluster_namespace(name)
        directory = posixpath.join(self.directory, name)
        self.add_kustomization_file(f"{name}-kustomization", directory).config.add_resource("bootstrap.yaml")
        file = self.add_manifest(f"{name}-bootstrap", posixpath.join(directory, "bootstrap.yaml"))
        Namespace(
            file,
            "namespace",
            NamespaceProps(
                name=namespace,
                labels={
                    "fluxplane.io/cluster": name,
                    "fluxplane.io/environment": environment,
                    **({ACCOUNT_LABEL: cluster.account} if cluster.account else {}),
                },
                annotations=applied_by(FLUX_NAMESPACE, SPOKE_BOOTSTRAP),
            ),
        )
        chain: dict[str, Kustomization] = {BUILD_STEP: self._build(file, cluster)}
        for step, inputs in ((IDENTITIES_STEP, self.inputs.identities), (RESOURCES_STEP, self.inputs.resources)):
            applied = inputs.get(name)
            if applied is not None:
                chain[step] = self._after_build(file, name, step, applied, chain[BUILD_STEP])
        remote = self._access[name]
        repository = self.fleet.repositories.platform
        steps = chain_steps(
            cluster.flux_installer, git_credentials=repository.secret_ref is not None, bootstrap=cluster.bootstrap
        )
        releases = {
            "external-secrets": self._release(
                name,
                "external-secrets",
                self.charts.external_secrets,
                EXTERNAL_SECRETS_NAMESPACE,
                "external-secrets",
                {"installCRDs": True, "serviceAccount": {"name": EXTERNAL_SECRETS_NAMESPACE}},
            ),
            "sealed-secrets": self._release(
                name,
                "sealed-secrets",
                self.charts.sealed_secrets,
                SEALED_SECRETS_NAMESPACE,
                SEALED_SECRETS_CONTROLLER,
                # The key pair is the fleet's, fetched from Secrets Manager: the controller must not
                # make its own, or sealing offline with the fleet's certificate would stop working.
                {"fullnameOverride": SEALED_SECRETS_CONTROLLER, "keyrenewperiod": "0"},
            ),
        }
        if "flux" in steps:
            # Multi-tenancy lockdown: no cross-namespace references, and a Kustomization or HelmRelease
            # that names no account runs as its namespace's `default` account, which holds no rights.
            # The platform's own objects name kustomize-controller or helm-controller; tenants name theirs.
            releases["flux"] = (
                self._release(name, "flux", self.charts.flux2, FLUX_NAMESPACE, "flux2", FLUX_LOCKDOWN)
                if cluster.flux_installer == "flux2-chart"
                else self._release(name, "flux", self.charts.flux_operator, FLUX_NAMESPACE, "flux-operator", {})
            )
        folders = {
            **{step: folder for step, (folder, _) in releases.items()},
            "secret-store": self._secret_store_dir,
            "sealing-key": self._sealing_key_dir,
            "git-credentials": posixpath.join(cluster_dir(name), "secrets"),
            "flux-sync": posixpath.join(cluster_dir(name), "flux-system"),
        }
        if "flux-instance" in steps:
            folders["flux-instance"] = self._flux_instance(name)
        # The bootstrap starts once the cluster is Ready and its add-ons' roles exist.
        previous: list[str] = [step for step in (BUILD_STEP, IDENTITIES_STEP) if step in chain]
        for step in steps:
            on_spoke = step not in releases
            kustomization = self._step(
                file,
                name,
                step,
                folders[step],
                # What the spoke's own Flux takes over is never pruned by the hub.
                prune=step not in ("git-credentials", "flux-sync"),
                kube_config=remote if on_spoke else None,
                wait=True if on_spoke else None,
            )
            for dependency in previous:
                kustomization.depends_on(dependency)
            if not on_spoke:
                kustomization.add_health_check(releases[step][1])
            expr = HEALTH_EXPRS.get(step)
            if expr is not None:
                kustomization.add_health_check_expr(expr)
            chain[step] = kustomization
            previous = [step]
        self.chains[name] = chain
