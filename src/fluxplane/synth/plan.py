"""Resolve the definition against the installed packs, before any construct exists.

Planning is pure Python and fast: every pack section of every cluster is validated here, all problems
reported together, so bad input never starts the JavaScript runtime. One module, though long: each check
reads the clusters as resolved here and adds to the one list of problems reported together.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from fluxplane.config import awsdata
from fluxplane.config.apps import RESOURCE_KINDS, Placement, app_path
from fluxplane.config.compatibility import ceilings, newest_supported, published, unsupported
from fluxplane.config.hub import KEYLESS_FLUX, cluster_namespace, kubeconfig_secret
from fluxplane.config.loader import LoadedFleet
from fluxplane.config.manifests import ManifestFile
from fluxplane.config.merge import Origins
from fluxplane.config.models import Fleet, ManagementCluster, WorkloadCluster
from fluxplane.config.network import FollowedVersion
from fluxplane.config.problems import describe_validation_error
from fluxplane.config.secrets import SealedFile, secret_path
from fluxplane.constructs.props import FLUX_NAMESPACE
from fluxplane.core.layout import cluster_variables
from fluxplane.errors import ConfigError
from fluxplane.kinds import APP_KINDS
from fluxplane.packs import versions
from fluxplane.packs.api import APP_RESOURCES, AWS_PROVIDERS, CAPABILITIES, OFFERS, PROVIDES, ClusterKind, PackConfig
from fluxplane.packs.registry import PackRegistry, section_key

#: The environment name the management cluster's variables carry.
MANAGEMENT_ENVIRONMENT = "management"
#: The built-in pack that builds the workload clusters on the hub (Pack.builds_clusters).
CLUSTER_BUILDER = "workload-clusters"
#: How to run a newer controller the hub's bootstrap installs on a workload cluster.
PINNED = "upgrade fluxplane first: the hub's bootstrap installs the version it pins"

_Cluster = TypeVar("_Cluster", ManagementCluster, WorkloadCluster)


@dataclass(frozen=True)
class Controller:
    """A controller of the platform itself on a cluster, beside its packs: its name in the compatibility tables
    (fluxplane.config.compatibility), the version it runs, and how to run a newer one."""

    name: str
    version: str
    upgrade: str


def platform_controllers(fleet: Fleet, cluster: ManagementCluster | WorkloadCluster) -> tuple[Controller, ...]:
    """The platform's controllers on ``cluster`` that are not packs: the hub's Flux (``flux.version``, which the user
    installs), and on a workload cluster what the hub's bootstrap installs (fluxplane.charts.spokes): External
    Secrets, Sealed Secrets and, unless the cluster runs a Flux of its own, Flux. Crossplane is a pack."""
    if isinstance(cluster, ManagementCluster):
        return (Controller("flux", fleet.flux.version, "upgrade the hub's Flux first, and set flux.version"),)
    found = [
        Controller("external-secrets", versions.EXTERNAL_SECRETS.version, PINNED),
        Controller("sealed-secrets", versions.SEALED_SECRETS.version, PINNED),
    ]
    if cluster.bootstrap == "fluxplane":
        flux = versions.FLUX2_APP_VERSION if cluster.flux_installer == "flux2-chart" else versions.FLUX_DISTRIBUTION
        found.insert(0, Controller("flux", flux, PINNED))
    return tuple(found)


def pack_versions(packs: Mapping[str, PackConfig], registry: PackRegistry) -> dict[str, str]:
    """The version of each of ``packs``: the one its config names, or the pack's own."""
    found = {}
    for name in sorted(packs):
        config = packs[name]
        version = (
            getattr(config, "version", None) if _version_beside_fields(type(config)) else vars(config).get("version")
        )
        found[name] = str(version) if version is not None else registry.get(name).version
    return found


@functools.cache
def _version_beside_fields(config: type[PackConfig]) -> bool:
    """Whether a config of this type can have a ``version`` that is not one of its fields (a property, a private
    attribute, an extra field). When it cannot, the field is read from the config's own values: asking pydantic
    for an attribute a model lacks costs an exception it formats, and most packs have no version to give."""
    return (
        hasattr(config, "version")
        or "version" in config.__private_attributes__
        or config.model_config.get("extra") == "allow"
    )


def running(versions: Mapping[str, str], controllers: Iterable[Controller]) -> dict[str, str]:
    """Every controller by name, with its version: the packs' (``versions``, pack_versions), then ``controllers``."""
    return {**versions, **{controller.name: controller.version for controller in controllers}}


def _started(
    cluster: _Cluster,
    on_it: Mapping[str, str],
    followed: FollowedVersion | None,
    problems: list[str],
    held_back: dict[str, str],
    fleet: Fleet,
) -> _Cluster:
    """``cluster`` on the newest Kubernetes version EKS offers that every controller on it supports, when it is new:
    its definition names no version and none is recorded for it. A recorded version is a contract: kept as it is."""
    if followed is None or followed.recorded is not None:
        return cluster
    offered = awsdata.facts(fleet.aws_data).supported_versions
    newest = max(offered, key=awsdata.minor)
    version = newest_supported(offered, on_it)
    if version is None:
        narrowing = {name: on_it[name] for name in on_it if any(unsupported(v, {name: on_it[name]}) for v in offered)}
        problems.append(
            f"{followed.definition}: no Kubernetes version EKS offers is supported by every controller cluster "
            f"{cluster.name!r} runs ({'; '.join(published(narrowing))}); set kubernetesVersion, or versions of the "
            "packs whose ranges meet"
        )
        return cluster
    if version != newest:
        held_back[cluster.name] = (
            f"{cluster.name}: kubernetesVersion {version}, the newest every controller on it supports "
            f"({ceilings(newest, on_it)}; EKS offers {newest})"
        )
    return (
        cluster if version == cluster.kubernetes_version else cluster.model_copy(update={"kubernetes_version": version})
    )


@dataclass(frozen=True)
class ClusterPlan:
    """One cluster as synth sees it: identity, variables and enabled packs with their configs."""

    name: str
    environment: str | None
    variables: dict[str, str]
    packs: dict[str, PackConfig]
    sealed_secrets: tuple[SealedFile, ...] = ()
    #: Plain manifests of environments/manifests/ for this cluster, its environment's first.
    manifests: tuple[ManifestFile, ...] = ()
    #: The platform's controllers on it that are not packs (platform_controllers).
    controllers: tuple[Controller, ...] = ()


@dataclass(frozen=True)
class FleetPlan:
    fleet: Fleet
    registry: PackRegistry
    #: Every cluster, the management cluster among them.
    clusters: tuple[ClusterPlan, ...]
    base_configs: dict[str, PackConfig]
    environment_configs: dict[tuple[str, str], PackConfig]
    #: Every app on every cluster it runs on.
    apps: tuple[Placement, ...] = ()
    #: What synth tells the user without refusing: packs left off a cluster they cannot work on.
    notes: tuple[str, ...] = ()
    #: The clusters whose version follows environments/allocations.yaml (LoadedFleet.followed_versions).
    followed_versions: Mapping[str, FollowedVersion] = field(default_factory=dict)
    #: By new cluster that starts below the newest version EKS offers: the note that says which controllers hold it
    #: back. Said once synth has recorded the version (environments/allocations.yaml), not among ``notes``.
    held_back: Mapping[str, str] = field(default_factory=dict)
    #: The project the definition was loaded from (load_plan), where synth records its allocations; None for a
    #: plan made another way.
    root: Path | None = None

    def provider(self, cluster: ClusterPlan, capability: str) -> str | None:
        """The pack enabled on ``cluster`` that provides ``capability`` (Pack.provides), if one does.

        Planning refuses two on one cluster, so the feature it switches on has one pack to follow.
        """
        found = providing(cluster.packs, self.registry, capability)
        return found[0] if found else None

    def running(self, cluster: ClusterPlan) -> dict[str, str]:
        """Every controller on ``cluster`` by name, with its version: its packs, then the platform's."""
        return running(pack_versions(cluster.packs, self.registry), cluster.controllers)

    def __post_init__(self) -> None:
        if not any(cluster.name == self.fleet.management.name for cluster in self.clusters):
            raise ValueError(f"the management cluster {self.fleet.management.name!r} has no plan among the clusters")

    @property
    def hub(self) -> ClusterPlan:
        """The management cluster's plan: the hub, which builds the workload clusters and serves them.

        Found by name among ``clusters``, whatever their order, so a plan whose clusters are replaced
        (``dataclasses.replace``, as load_plan does when it adds plain manifests) keeps its hub.
        """
        return next(cluster for cluster in self.clusters if cluster.name == self.fleet.management.name)


def _unique(lines: list[str]) -> list[str]:
    return list(dict.fromkeys(lines))


def _missing_git_credentials(loaded: LoadedFleet) -> list[str]:
    """The hub hands each workload cluster its Git credentials as a SealedSecret: it must exist."""
    secret = loaded.fleet.repositories.platform.secret_ref
    if secret is None:
        return []
    problems = []
    for cluster in loaded.fleet.clusters:
        sealed = {(item.namespace, item.name) for item in loaded.sealed_secrets.get(cluster.name, ())}
        # A cluster that runs a Flux of its own has its Git credentials from its own bootstrap.
        if cluster.bootstrap == "fluxplane" and (FLUX_NAMESPACE, secret) not in sealed:
            problems.append(
                f"{secret_path(Path(), cluster.name, FLUX_NAMESPACE, secret).as_posix()}: missing; the hub gives "
                f"cluster {cluster.name!r} its Git credentials (repositories.platform.secretRef {secret!r}) from it: "
                f"fluxplane seal --cluster {cluster.name} --namespace {FLUX_NAMESPACE} --name {secret} "
                "--from-file identity=<deploy key> --from-file known_hosts=<known_hosts>"
            )
    return problems


def _missing_kubeconfigs(loaded: LoadedFleet) -> list[str]:
    """The hub reaches a registered cluster without keyless access with a kubeconfig the user seals for it."""
    hub = loaded.fleet.management.name
    sealed = {(item.namespace, item.name) for item in loaded.sealed_secrets.get(hub, ())}
    problems = []
    for cluster in loaded.fleet.clusters:
        secret = kubeconfig_secret(cluster.name)
        if cluster.provided_kubeconfig and (secret.namespace, secret.name) not in sealed:
            problems.append(
                f"{secret_path(Path(), hub, secret.namespace, secret.name).as_posix()}: missing; the hub reaches "
                f"registered cluster {cluster.name!r} with it (or set hubAccess: keyless): fluxplane seal --cluster "
                f"{hub} --namespace {secret.namespace} --name {secret.name} --from-file {secret.key}=<kubeconfig>"
            )
    return problems


def _missing_workloads_credentials(loaded: LoadedFleet) -> list[str]:
    """A workloads repository of its own is read on every cluster with apps, with its own credentials."""
    workloads, platform = loaded.fleet.repositories.workloads, loaded.fleet.repositories.platform
    if (
        workloads is None
        or workloads.secret_ref is None
        or (workloads.url, workloads.branch)
        == (
            platform.url,
            platform.branch,
        )
    ):
        return []
    secret, problems = workloads.secret_ref, []
    for cluster in dict.fromkeys(placement.cluster for placement in loaded.apps):
        sealed = {(item.namespace, item.name) for item in loaded.sealed_secrets.get(cluster, ())}
        if (FLUX_NAMESPACE, secret) not in sealed:
            problems.append(
                f"{secret_path(Path(), cluster, FLUX_NAMESPACE, secret).as_posix()}: missing; cluster {cluster!r} "
                f"reads its tenants from the workloads repository with it (repositories.workloads.secretRef "
                f"{secret!r}): fluxplane seal --cluster {cluster} --namespace {FLUX_NAMESPACE} --name {secret} "
                "--from-file identity=<deploy key> --from-file known_hosts=<known_hosts>"
            )
    return problems


def _missing_app_credentials(loaded: LoadedFleet) -> list[str]:
    """An app whose repository needs credentials reads them from a SealedSecret in its namespace.

    When the hub reads the app's own requests (``aws.path``), it needs them too, in the cluster's hub
    namespace.
    """
    problems = []
    hub = loaded.fleet.management.name
    hub_sealed = {(item.namespace, item.name) for item in loaded.sealed_secrets.get(hub, ())}
    spokes = spoke_resources(loaded)
    for placement in loaded.apps:
        app, secret = placement.app, placement.app.repository.secret_ref
        if secret is None:
            continue
        hub_namespace = cluster_namespace(placement.cluster)
        hub_reads = app.aws.path is not None and placement.cluster not in spokes
        if hub_reads and (hub_namespace, secret) not in hub_sealed:
            problems.append(
                f"{secret_path(Path(), hub, hub_namespace, secret).as_posix()}: missing; the hub reads the requests "
                f"of app {app.name!r} (aws.path) for cluster {placement.cluster!r} with it: fluxplane seal "
                f"--cluster {hub} --namespace {hub_namespace} --name {secret} --from-file identity=<deploy key> "
                "--from-file known_hosts=<known_hosts>"
            )
        sealed = {(item.namespace, item.name) for item in loaded.sealed_secrets.get(placement.cluster, ())}
        if (app.target_namespace, secret) not in sealed:
            problems.append(
                f"{secret_path(Path(), placement.cluster, app.target_namespace, secret).as_posix()}: missing; app "
                f"{app.name!r} reads its repository with it (repository.secretRef {secret!r}) on cluster "
                f"{placement.cluster!r}: fluxplane seal --cluster {placement.cluster} --namespace "
                f"{app.target_namespace} --name {secret} --from-file identity=<deploy key> "
                "--from-file known_hosts=<known_hosts>"
            )
    return problems


#: Files of a tenant folder (fluxplane.charts.tenants) that a sealed secret of the app's namespace may not be named.
TENANT_FILES = ("kustomization", "sync", "tenant")


def _tenant_file_clashes(loaded: LoadedFleet) -> list[str]:
    """The sealed secrets of an app's namespace sit in its tenant folder as <name>.yaml, next to its own files."""
    problems = []
    for placement in loaded.apps:
        for item in loaded.sealed_secrets.get(placement.cluster, ()):
            if item.namespace == placement.app.target_namespace and item.name in TENANT_FILES:
                problems.append(
                    f"{secret_path(Path(), item.cluster, item.namespace, item.name).as_posix()}: a secret of app "
                    f"{placement.app.name!r} may not be named {item.name!r}: its tenant folder has a {item.name}.yaml "
                    "of its own; seal it under another name"
                )
    return problems


def providing(packs: Iterable[str], registry: PackRegistry, capability: str) -> list[str]:
    """The packs among ``packs`` that provide ``capability`` (Pack.provides), in order."""
    return [name for name in packs if capability in registry.get(name).provides]


def offered(registry: PackRegistry, capability: str) -> list[str]:
    """The installed packs that provide ``capability``: what a message says to enable."""
    return providing(registry.names, registry, capability)


def _named(cluster: ClusterPlan, registry: PackRegistry, capability: str) -> str | None:
    """The pack a message names for ``capability`` on ``cluster``: the one enabled there, else the first installed."""
    enabled = providing(cluster.packs, registry, capability) or offered(registry, capability)
    return enabled[0] if enabled else None


def _provider_problems(loaded: LoadedFleet, clusters: Sequence[ClusterPlan], registry: PackRegistry) -> list[str]:
    """What one pack provides on a cluster (fluxplane.synth.features) cannot be two packs' at once."""
    problems = []
    # which capabilities each pack provides, looked up once rather than for each pack of each cluster
    provides = {pack.name: set(pack.provides) & set(PROVIDES) for pack in registry}
    providers = {name for name, features in provides.items() if features}
    for cluster in clusters:
        if sum(len(provides[name]) for name in providers.intersection(cluster.packs)) < 2:
            continue  # no capability two of its packs could both provide
        for capability in PROVIDES:
            found = providing(cluster.packs, registry, capability)
            if len(found) > 1:
                where = loaded.pack_origins[cluster.name].describe((found[-1],))
                problems.append(
                    f"{where}: packs {', '.join(map(repr, found))} all provide {capability!r} on cluster "
                    f"{cluster.name!r}, which one pack does; enable only one of them"
                )
    return problems


def builders(hub: ClusterPlan, registry: PackRegistry) -> list[str]:
    """The hub's packs that build the workload clusters (Pack.builds_clusters)."""
    return [name for name in hub.packs if registry.get(name).builds_clusters]


def _builder_problems(loaded: LoadedFleet, hub: ClusterPlan, registry: PackRegistry) -> list[str]:
    """Workload clusters need exactly one pack on the hub that builds them, or they are never built."""
    found = builders(hub, registry)
    where = "environments/base.yaml: management.packs"
    if len(found) > 1:
        return [f"{where}: {', '.join(map(repr, found))} both build the workload clusters; enable one of them"]
    if found or not loaded.fleet.clusters:
        return []
    names = [cluster.name for cluster in loaded.fleet.clusters]
    shown = ", ".join(repr(name) for name in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    installed = [pack.name for pack in registry if pack.builds_clusters] or [CLUSTER_BUILDER]
    return [
        f"{where}: workload cluster{'s' if len(names) > 1 else ''} {shown} would never be built: no pack on the "
        f"management cluster builds clusters; enable {' or '.join(map(repr, installed))} there "
        f"({installed[0]}: {{}})"
    ]


def spoke_resources(loaded: LoadedFleet) -> frozenset[str]:
    """The workload clusters that make their apps' resources themselves (``appResources: spoke``)."""
    return frozenset(cluster.name for cluster in loaded.fleet.clusters if cluster.app_resources == "spoke")


#: The kinds the hub makes for every cluster, also for one that makes its apps' resources (fluxplane.charts.cloud).
_HUB_KINDS = frozenset({"AppDatabase"})


def _kinds(placements: Iterable[Placement]) -> set[str]:
    """The resource kinds the apps of ``placements`` ask for in their definition."""
    return {kind for placement in placements for field, kind, _ in RESOURCE_KINDS if getattr(placement.app.aws, field)}


def _spoke_cloud_problems(loaded: LoadedFleet, clusters: Sequence[ClusterPlan], registry: PackRegistry) -> list[str]:
    """A cluster that makes its apps' resources needs their kinds, and the provider family members they use."""
    problems = []
    spokes = spoke_resources(loaded)
    for cluster in clusters:
        if cluster.name not in spokes:
            continue
        origins = loaded.pack_origins[cluster.name]
        if not providing(cluster.packs, registry, APP_RESOURCES):
            named = _named(cluster, registry, APP_RESOURCES)
            needs = (
                f"the {named!r} pack; do not disable it there" if named else f"a pack that provides {APP_RESOURCES!r}"
            )
            problems.append(
                f"{origins.describe((named,) if named else ())}: cluster {cluster.name!r} makes its apps' resources "
                f"(appResources: spoke), which needs {needs}, or set appResources: hub"
            )
        kinds = _kinds(p for p in loaded.apps if p.cluster == cluster.name) - _HUB_KINDS
        needed = sorted({service for kind in kinds for service in APP_KINDS[kind].services if service != "iam"})
        named = _named(cluster, registry, AWS_PROVIDERS)
        have = set(getattr(cluster.packs.get(named or ""), "services", ()))
        missing = [service for service in needed if service not in have]
        if missing:
            problems.append(
                f"{origins.describe((named, 'services') if named else ())}: cluster {cluster.name!r} makes its apps' "
                f"resources (appResources: spoke), which need the provider family members {', '.join(missing)}; "
                + ("add them" if named else f"enable a pack that provides {AWS_PROVIDERS!r}")
            )
    return problems


def _app_cloud_problems(loaded: LoadedFleet, hub: ClusterPlan, registry: PackRegistry) -> list[str]:
    """Apps that need AWS need the hub to offer the app kinds, and the providers those kinds use."""
    needing = [p for p in loaded.apps if not p.app.aws.empty]
    if not needing:
        return []
    base = "environments/base.yaml: management.packs"
    names = ", ".join(sorted({p.app.name for p in needing}))
    if not providing(hub.packs, registry, APP_RESOURCES):
        named = _named(hub, registry, APP_RESOURCES)
        enable = (
            f"{named!r} on the management cluster ({named}: {{}})"
            if named
            else f"a pack that provides {APP_RESOURCES!r} on the management cluster"
        )
        return [
            f"{base}: apps {names} need AWS resources, which the hub builds in each cluster's hub namespace; "
            f"enable {enable}"
        ]
    spokes = spoke_resources(loaded)
    kinds = {"AppIdentity"} | _kinds(needing) & _HUB_KINDS | _kinds(p for p in needing if p.cluster not in spokes)
    needed = sorted({service for kind in kinds for service in APP_KINDS[kind].services})
    named = _named(hub, registry, AWS_PROVIDERS)
    if named is None:
        return [
            f"{base}: the apps' AWS resources need the provider family members {', '.join(needed)}; enable a pack "
            f"that provides {AWS_PROVIDERS!r} on the management cluster"
        ]
    providers = hub.packs.get(named)
    have = set(getattr(providers, "services", ()))
    missing = [service for service in needed if service not in have]
    if missing:
        return [
            f"{base}.{named}.services: the apps' AWS resources need the provider family members "
            f"{', '.join(missing)}; add them (services: [{', '.join(sorted(have | set(missing)))}])"
        ]
    if "AppDatabase" in kinds and not getattr(providers, "kubernetes", False):
        names = ", ".join(sorted({p.app.name for p in needing if p.app.aws.databases}))
        return [
            f"{base}.{named}.kubernetes: apps {names} have databases, whose credentials the hub writes to the "
            "apps' namespaces with provider-kubernetes; set kubernetes: true"
        ]
    return []


def _keyless_problems(loaded: LoadedFleet) -> list[str]:
    """Keyless hub access needs a Flux that has it, and an IAM role for the hub's Flux to be let in."""
    fleet = loaded.fleet
    problems = []
    version = tuple(int(part) for part in fleet.flux.version.split("."))
    for env in fleet.environments:
        for index, cluster in enumerate(env.clusters):
            if cluster.hub_access != "keyless":
                continue
            where = f"{env.file}: clusters[{index}].hubAccess"
            if version < KEYLESS_FLUX:
                problems.append(
                    f"{where}: keyless needs Flux {KEYLESS_FLUX[0]}.{KEYLESS_FLUX[1]} or newer on the hub, "
                    f"flux.version is {fleet.flux.version!r}; upgrade Flux and set flux.version, or use kubeconfig"
                )
            if fleet.management.flux_role_arn is None:
                problems.append(
                    f"{where}: keyless needs management.fluxRoleArn, the IAM role of the hub's Flux controllers, "
                    "which the cluster then admits with an EKS access entry"
                )
    return problems


def _add_on_namespace_problems(loaded: LoadedFleet, registry: PackRegistry) -> list[str]:
    """No app runs in a namespace an add-on installs into, and no workload cluster is named after one.

    A tenant may write in its namespace: in an add-on's it could read the add-on's secrets and run as its
    service accounts, with their cluster-wide rights and AWS roles. Every installed pack counts, enabled on
    the app's clusters or not, so that enabling it later cannot hand a tenant the add-on. A workload cluster's
    name is its hub namespace, where a pack running on the hub would otherwise meet the cluster's objects.
    The platform's own namespaces are refused when the definition is read (fluxplane.config.hub).
    """
    owners: dict[str, list[str]] = {}
    for pack in registry:
        for namespace in pack.namespaces:
            owners.setdefault(namespace, []).append(pack.name)

    def installed_by(namespace: str) -> str:
        packs = owners[namespace]
        if len(packs) == 1:
            return f"which pack {packs[0]!r} installs into"
        return f"which packs {', '.join(map(repr, packs))} install into"

    problems = []
    for env in loaded.fleet.environments:
        for index, cluster in enumerate(env.clusters):
            namespace = cluster_namespace(cluster.name)
            if namespace in owners:
                problems.append(
                    f"{env.file}: clusters[{index}].name: cluster {cluster.name!r} would have namespace "
                    f"{namespace!r} on the hub, {installed_by(namespace)}; rename the cluster"
                )
    apps = {placement.app.name: placement.app for placement in loaded.apps}
    for app in apps.values():
        namespace = app.target_namespace
        if namespace in owners:
            problems.append(
                f"{app_path(Path(), app.name).as_posix()}: namespace: app {app.name!r} would run in namespace "
                f"{namespace!r}, {installed_by(namespace)}; set namespace: to another name"
            )
    return problems


def missing_secrets(loaded: LoadedFleet, hub: ClusterPlan, registry: PackRegistry) -> list[str]:
    """The sealed secrets the definition needs and environments/secrets/ lacks, each with the command that seals it."""
    problems = _missing_git_credentials(loaded) + _missing_kubeconfigs(loaded) if builders(hub, registry) else []
    return problems + _missing_app_credentials(loaded) + _missing_workloads_credentials(loaded)


def _placed(
    configs: dict[str, PackConfig],
    kind: ClusterKind,
    origins: Origins,
    registry: PackRegistry,
    problems: list[str],
    notes: list[str],
    fits: dict[tuple[str, ClusterKind], bool] | None = None,
) -> dict[str, PackConfig]:
    """The packs of ``configs`` that can work on a cluster of ``kind`` (Pack.runs_on, Pack.needs).

    A pack enabled on purpose where it cannot work is refused: in ``management.packs`` for a pack that
    runs on workload clusters only, anywhere for one of the hub's own. One the management cluster only
    inherits from base.yaml's ``packs`` (meant for every cluster) is left off the hub, with a note.
    ``fits`` keeps, for the clusters of one plan, whether each pack can work on each kind of cluster.
    """
    fits = {} if fits is None else fits
    kept: dict[str, PackConfig] = {}
    for name, config in configs.items():
        fit = fits.get((name, kind))
        if fit is None:
            fit = fits[(name, kind)] = registry.get(name).can_run_on(kind)
        if fit:
            kept[name] = config
            continue
        pack = registry.get(name)
        where = origins.describe((name,))
        if pack.runs_on not in (kind, "any"):
            why = f"it runs on {pack.placement()}"
        else:
            missing = [need for need in pack.needs if need not in OFFERS[kind]]
            why = f"it needs {'; '.join(f'{need}: {CAPABILITIES[need]}' for need in missing)}"
        if kind == "workload":
            problems.append(
                f"{where}: pack {name!r} cannot work on workload clusters: {why}; enable it under management.packs "
                "in environments/base.yaml"
            )
        elif origins.where((name,))[1].startswith("management."):
            problems.append(f"{where}: pack {name!r} cannot work on the management cluster: {why}; remove it here")
        else:
            notes.append(f"{where}: pack {name!r} is left off the management cluster: {why}")
    if len(kept) == len(configs):
        return kept  # none left off: none that a kept one requires
    for name in kept:
        for required in registry.get(name).requires:
            if required in configs and required not in kept:
                problems.append(
                    f"{origins.describe((name,))}: pack {name!r} requires {required!r}, which cannot work here"
                )
    return kept


def _without_auto_modes_work(
    configs: dict[str, PackConfig],
    cluster: str,
    origins: Origins,
    registry: PackRegistry,
    problems: list[str],
    notes: list[str],
) -> dict[str, PackConfig]:
    """The packs of ``configs`` an Auto Mode cluster runs: not those whose work EKS Auto Mode does
    (Pack.replaced_by_auto_mode), so it is not done twice. One the cluster's own entry enables is refused; one it
    inherits from its environment or the base file (meant for the clusters without Auto Mode) is left off, with a
    note."""
    kept: dict[str, PackConfig] = {}
    for name, config in configs.items():
        what = registry.get(name).replaced_by_auto_mode
        if not what:
            kept[name] = config
            continue
        where = origins.describe((name,))
        if origins.where((name,))[1].startswith("clusters["):
            problems.append(
                f"{where}: pack {name!r} is not for Auto Mode cluster {cluster!r}: EKS Auto Mode does its work itself, "
                f"{what}; remove it here"
            )
        else:
            notes.append(f"{where}: pack {name!r} is left off Auto Mode cluster {cluster!r}: EKS Auto Mode does {what}")
    for name in kept:
        for required in registry.get(name).requires:
            if required in configs and required not in kept:
                problems.append(
                    f"{origins.describe((name,))}: pack {name!r} requires {required!r}, which Auto Mode cluster "
                    f"{cluster!r} does not run (EKS Auto Mode does its work)"
                )
    return kept


def plan_fleet(loaded: LoadedFleet, registry: PackRegistry, *, require_secrets: bool = True) -> FleetPlan:
    """Resolve ``loaded`` against ``registry``; ``require_secrets=False`` lets sealed secrets still be missing."""
    fleet = loaded.fleet
    problems: list[str] = []
    notes: list[str] = []

    fits: dict[tuple[str, ClusterKind], bool] = {}
    known: dict[tuple[str, bytes], PackConfig] = {}

    def configure(sections: dict[str, object], origins: Origins, kind: ClusterKind) -> dict[str, PackConfig]:
        configs, found = registry.configure(dict(sections), origins, known)
        problems.extend(found)
        return _placed(configs, kind, origins, registry, problems, notes, fits) if not found else configs

    held_back: dict[str, str] = {}
    # By kind and a cluster's packs mapping (section_key): its packs and their versions, when working them out said
    # nothing (no problem, no note, which would name the cluster's files): a fleet's clusters share a few mappings.
    settled: dict[tuple[str, bytes], tuple[dict[str, PackConfig], dict[str, str]]] = {}

    def plan(cluster: _Cluster, environment: str | None, kind: ClusterKind) -> tuple[_Cluster, ClusterPlan]:
        """The cluster, on the version it starts on when it is new (_started), and its plan."""
        auto = getattr(cluster, "auto", False)
        key = None if auto else section_key(kind, cluster.packs)
        known_packs = settled.get(key) if key is not None else None
        if known_packs is not None:
            packs, versions = dict(known_packs[0]), known_packs[1]
        else:
            said = len(problems), len(notes)
            origins = loaded.pack_origins[cluster.name]
            packs = configure(cluster.packs, origins, kind)
            if auto:
                packs = _without_auto_modes_work(packs, cluster.name, origins, registry, problems, notes)
            versions = pack_versions(packs, registry)
            if key is not None and (len(problems), len(notes)) == said:
                settled[key] = (dict(packs), versions)
        controllers = platform_controllers(fleet, cluster)
        followed = loaded.followed_versions.get(cluster.name)
        cluster = _started(cluster, running(versions, controllers), followed, problems, held_back, fleet)
        variables = cluster_variables(
            cluster.name, cluster.region, environment or MANAGEMENT_ENVIRONMENT, cluster.kubernetes_version
        )
        return cluster, ClusterPlan(
            name=cluster.name,
            environment=environment,
            variables=variables,
            packs=packs,
            sealed_secrets=loaded.sealed_secrets.get(cluster.name, ()),
            controllers=controllers,
        )

    management, hub = plan(fleet.management, None, "management")
    clusters = [hub]
    environments = []
    environment_configs: dict[tuple[str, str], PackConfig] = {}
    for env in fleet.environments:
        for name, config in configure(env.packs, loaded.environment_pack_origins[env.name], "workload").items():
            environment_configs[(env.name, name)] = config
        started = []
        for cluster in env.clusters:
            cluster, planned = plan(cluster, env.name, "workload")
            started.append(cluster)
            clusters.append(planned)
        environments.append(env.model_copy(update={"clusters": tuple(started)}))
    fleet = fleet.model_copy(update={"management": management, "environments": tuple(environments)})
    # The catalogue base of an add-on is rendered from the fleet-wide values: the pack's defaults
    # under the base file's section. An add-on whose defaults are incomplete (a required role ARN,
    # say) and that the base file does not configure starts from the first cluster that enables it.
    base_configs: dict[str, PackConfig] = {}
    base_origins = loaded.environment_pack_origins[""]
    for planned in clusters:
        for name, config in planned.packs.items():
            if name in base_configs:
                continue
            section = fleet.packs.get(name)
            pack = registry.get(name)
            try:
                raw = {**section, "enabled": True} if isinstance(section, dict) else {}
                base_configs[name] = pack.config.model_validate(raw)
            except ValidationError as exc:
                if isinstance(section, dict):
                    problems.extend(describe_validation_error(exc, pack.config, base_origins, (name,)))
                else:
                    base_configs[name] = config
    problems.extend(_builder_problems(loaded, hub, registry))
    if require_secrets:
        problems.extend(missing_secrets(loaded, hub, registry))
    problems.extend(_keyless_problems(loaded))
    problems.extend(_add_on_namespace_problems(loaded, registry))
    problems.extend(_tenant_file_clashes(loaded))
    problems.extend(_app_cloud_problems(loaded, hub, registry))
    problems.extend(_spoke_cloud_problems(loaded, clusters, registry))
    problems.extend(_provider_problems(loaded, clusters, registry))
    if problems:
        raise ConfigError(_unique(problems))
    return FleetPlan(
        fleet=fleet,
        registry=registry,
        clusters=tuple(clusters),
        base_configs=base_configs,
        environment_configs=environment_configs,
        apps=loaded.apps,
        notes=tuple(_unique([*loaded.notes, *notes])),
        followed_versions=loaded.followed_versions,
        held_back=held_back,
    )
