"""Load ``environments/`` into a :class:`~fluxplane.config.models.Fleet`.

One module because loading is one pass: ``_Loader`` carries what each later check reads (the clusters seen so
far, their address claims, where each packs mapping came from, AWS's facts) from the base file through every
environment to the apps, so that one run reports every problem of every file.

``environments/base.yaml`` holds what the fleet shares; every other ``environments/<env>.yaml`` is
one environment, merged over the base (see :mod:`fluxplane.config.merge`). Workload clusters start
from ``clusterDefaults`` (base, then the environment's) and override it. All problems across all
files are collected and raised together.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from fluxplane.config import awsdata, models
from fluxplane.config.apps import Placement, place_apps, read_app_files
from fluxplane.config.cdk8s_charts import CDK8S_CHARTS_DIR, find_cdk8s_charts
from fluxplane.config.hub import RELEASE_STEPS
from fluxplane.config.links import ENVIRONMENTS_DIR
from fluxplane.config.links import check_links as check_links  # re-exported: edit.py takes it from here
from fluxplane.config.merge import Layer, Loc, Origins, deep_merge
from fluxplane.config.network import ALLOCATIONS_FILE, Claim, FollowedVersion, Recorded, allocate, read_allocations
from fluxplane.config.problems import ProblemList, read_mapping, show
from fluxplane.config.secrets import SealedFile, load_sealed_secrets
from fluxplane.errors import ConfigError

BASE_FILE = "base.yaml"
#: Files of environments/ that are not environments.
NOT_ENVIRONMENTS = (BASE_FILE, ALLOCATIONS_FILE)
T = TypeVar("T")
FORBIDDEN_DEFAULTS = ("name", "packs")


@dataclass(frozen=True)
class LoadedFleet:
    fleet: models.Fleet
    #: Per cluster name: the origins of its merged ``packs`` mapping.
    pack_origins: dict[str, Origins] = field(default_factory=dict)
    #: Per environment name: the origins of its merged ``packs`` mapping; "" for the base file's.
    environment_pack_origins: dict[str, Origins] = field(default_factory=dict)
    #: Per cluster name: its sealed secrets (environments/secrets/<cluster>/).
    sealed_secrets: dict[str, tuple[SealedFile, ...]] = field(default_factory=dict)
    #: Every app on every cluster it runs on (environments/apps/), by app name, then cluster order.
    apps: tuple[Placement, ...] = ()
    #: The project's cdk8s charts (charts/<module>.py) by chart name.
    cdk8s_charts: dict[str, Path] = field(default_factory=dict)
    #: The clusters (the hub's included) whose definition names no kubernetesVersion, by name: their version
    #: follows environments/allocations.yaml, which only the definition may move (fluxplane.synth.guard).
    followed_versions: dict[str, FollowedVersion] = field(default_factory=dict)
    #: What the definition does that the user should know without it being refused: an app left off a cluster of its
    #: environment it cannot run on.
    notes: tuple[str, ...] = ()


def _display(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


#: Checks one cluster's merged ``packs`` mapping; returns problem lines (the pack registry's, given by synth).
PackCheck = Callable[[dict[str, Any], Origins], list[str]]


def load_fleet(root: Path, check_packs: PackCheck | None = None, *, project: Path | None = None) -> LoadedFleet:
    """Read and validate ``<root>/environments``; raise ConfigError listing every problem.

    ``check_packs`` is run over every cluster's packs when other problems were found, so that one run
    reports pack problems (an unknown pack, a bad value) together with the rest; without other
    problems, synth validates the packs itself. ``project`` is the project whose ``charts/`` the
    definition names (default ``root``; an edit checks a copy of the definition against its project's).
    """
    return _Loader(root, check_packs, project or root).load()


class _Loader:
    """One load of environments/: the problems found so far and what later checks need."""

    def __init__(self, root: Path, check_packs: PackCheck | None, project: Path) -> None:
        self.root = root
        self.check_packs = check_packs
        self.problems = ProblemList()
        self.base_display = _display(root, root / ENVIRONMENTS_DIR / BASE_FILE)
        #: Where each cluster's merged packs came from, by cluster name.
        self.pack_origins: dict[str, Origins] = {}
        #: Where each environment's merged packs came from; "" is the base file's.
        self.env_pack_origins: dict[str, Origins] = {}
        #: Every merged packs mapping, for check_packs.
        self.pack_sections: list[tuple[dict[str, Any], Origins]] = []
        #: Every cluster's address range request, for the allocation.
        self.claims: list[Claim] = []
        #: Cluster names taken so far, and where.
        self.seen_clusters: dict[str, str] = {}
        #: The workload clusters' names among them.
        self.workload_clusters: dict[str, str] = {}
        #: The AWS facts clusters are checked against: fluxplane's data and the base file's awsData.
        self.aws: awsdata.AwsFacts = awsdata.shipped()
        #: The names of the base file's accounts, as far as it gives them: what a cluster's ``account`` may name.
        self.accounts: list[str] = []
        #: The management cluster, once the base file validates: the hub whose reach endpoints must allow.
        self.management: models.ManagementCluster | None = None
        #: environments/allocations.yaml: the recorded VPC ranges and Kubernetes versions.
        self.recorded = Recorded({})
        #: The clusters whose version follows the record (LoadedFleet.followed_versions).
        self.followed_versions: dict[str, FollowedVersion] = {}
        #: What the load tells the user without refusing (LoadedFleet.notes).
        self.notes: list[str] = []
        #: The project's cdk8s charts (charts/), which clusters name in cdk8sCharts.
        self.cdk8s_charts, found = find_cdk8s_charts(project, lambda path: _display(project, path))
        self.problems.lines.extend(found)

    def load(self) -> LoadedFleet:
        root, problems = self.root, self.problems
        env_dir = root / ENVIRONMENTS_DIR
        if not env_dir.is_dir():
            raise ConfigError(
                f"{env_dir}: folder not found; create it with {BASE_FILE} and one file per environment "
                "(see 'The fleet definition' in fluxplane's documentation)"
            )
        listed = check_links(root)
        env_paths = sorted(
            p
            for p in env_dir.iterdir()
            if p.suffix in (".yaml", ".yml") and p.name not in NOT_ENVIRONMENTS and not p.name.startswith(".")
        )
        base_raw = read_mapping(env_dir / BASE_FILE, self.base_display, problems)
        if not env_paths:
            problems.lines.append(
                f"{_display(root, env_dir)}: no environment files; add one per environment, e.g. staging.yaml"
            )
        allocations = env_dir / ALLOCATIONS_FILE
        self.recorded = read_allocations(allocations, _display(root, allocations), problems)
        self.aws = awsdata.facts(_lenient_aws_data(base_raw))
        accounts = base_raw.get("accounts") if base_raw is not None else None
        self.accounts = sorted(name for name in accounts if isinstance(name, str)) if isinstance(accounts, dict) else []
        base_raw = self._with_recorded_hub_version(base_raw)
        base_model: models.BaseFile | None = None
        base_origins = Origins([Layer(self.base_display, base_raw)])
        if base_raw is not None:
            base_model = problems.validate(models.BaseFile, base_raw, base_origins)
        self.aws = awsdata.facts(base_model.aws_data if base_model is not None else _lenient_aws_data(base_raw))
        if base_model is not None:
            self._management(base_model)
            self._check_base_facts(base_model, base_origins)

        environments: list[models.Environment] = []
        for env_path in env_paths:
            # Even when the base file has problems, check each environment against what the base
            # holds, so that one run reports the problems of every file.
            environment = self._environment(env_path, base_model or _SharedParts.from_raw(base_raw))
            if environment is not None:
                environments.append(environment)

        problems.lines.extend(chain_name_clashes(self.workload_clusters))
        known = set(self.seen_clusters) | ({base_model.management.name} if base_model is not None else set())
        sealed, found_sealed = load_sealed_secrets(root, known, listed)
        problems.lines.extend(found_sealed)

        app_files, found_apps = read_app_files(root, lambda path: _display(root, path))
        problems.lines.extend(found_apps)
        clusters = [cluster for env in environments for cluster in env.clusters]
        apps, found_placements = place_apps(
            app_files,
            {env.name: [(cluster.name, cluster.region) for cluster in env.clusters] for env in environments},
            frozenset(cluster.name for cluster in clusters if cluster.app_resources == "spoke"),
            frozenset(c.name for c in clusters if c.existing is not None and not c.existing.imported),
            self.notes,
        )
        if len(environments) == len(env_paths):
            # With an environment missing, its clusters would look unknown: report that once fixed.
            problems.lines.extend(found_placements)

        if base_model is not None and not problems.lines:
            pool = f"{self.base_display}: clusterNetwork.pool"
            reserved = f"{self.base_display}: clusterNetwork.reserved"
            cidrs, found = allocate(self.claims, base_model.cluster_network, pool, self.recorded, reserved)
            problems.lines.extend(found)
            if not found:
                environments = [_with_cidrs(environment, cidrs) for environment in environments]
        if problems.lines:
            if self.check_packs is not None:
                for sections, origins in self.pack_sections:
                    problems.lines.extend(self.check_packs(sections, origins))
            # A shared default that is wrong is wrong once, however many clusters inherit it.
            raise ConfigError(list(dict.fromkeys(problems.lines)))
        assert base_model is not None
        fleet = models.Fleet(
            repositories=base_model.repositories,
            flux=base_model.flux,
            cluster_network=base_model.cluster_network,
            management=base_model.management.model_copy(
                update={"packs": deep_merge(base_model.packs, base_model.management.packs)}
            ),
            packs=base_model.packs,
            environments=tuple(environments),
            sealing_key=base_model.sealing_key,
            teams=base_model.teams,
            accounts=base_model.accounts,
            aws_data=base_model.aws_data,
        )
        return LoadedFleet(
            fleet=fleet,
            pack_origins=self.pack_origins,
            environment_pack_origins=self.env_pack_origins,
            sealed_secrets=sealed,
            apps=apps,
            cdk8s_charts=self.cdk8s_charts,
            followed_versions=self.followed_versions,
            notes=tuple(self.notes),
        )

    def _recorded_version(self, cluster: str, definition: str, *, hub: bool = False) -> str | None:
        """The version recorded for ``cluster`` (fluxplane.config.network.Recorded.version_of), whose definition
        names none (at ``definition``), if EKS still runs it; one whose extended support has ended is reported, at
        the record, and not used."""
        version = self.recorded.version_of(cluster, models.LEGACY_KUBERNETES_VERSION, hub=hub)
        self.followed_versions[cluster] = FollowedVersion(version, self.recorded.version_where(cluster), definition)
        if version is None:
            return None
        problem = self.aws.version_problem(version)
        if problem is not None:
            self.problems.lines.append(
                f"{self.recorded.version_where(cluster)}: {problem}; the cluster runs it: set its kubernetesVersion "
                "to the next minor version to upgrade it"
            )
            return None
        return version

    def _with_recorded_hub_version(self, base_raw: dict[str, Any] | None) -> dict[str, Any] | None:
        """``base_raw`` with the hub's recorded version when it names none, so a newer default never moves it."""
        management = base_raw.get("management") if base_raw is not None else None
        if base_raw is None or not isinstance(management, dict) or "kubernetesVersion" in management:
            return base_raw
        name = management.get("name", models.ManagementCluster.model_fields["name"].default)
        definition = f"{self.base_display}: management.kubernetesVersion"
        version = self._recorded_version(name, definition, hub=True) if isinstance(name, str) else None
        if version is None:
            return base_raw
        return {**base_raw, "management": {**management, "kubernetesVersion": version}}

    def _versioned(self, merged: dict[str, Any], origins: Origins) -> dict[str, Any]:
        """A workload cluster's merged entry with its recorded version when it names none; with one it names, the
        upgrade from the recorded version checked: EKS moves a cluster one minor version up at a time."""
        name = merged.get("name")
        if not isinstance(name, str):
            return merged
        if "kubernetesVersion" not in merged:
            version = self._recorded_version(name, origins.describe(("kubernetesVersion",)))
            return merged if version is None else {**merged, "kubernetesVersion": version}
        wanted = _valid(_VERSION, merged["kubernetesVersion"])
        running = self.recorded.version_of(name, models.LEGACY_KUBERNETES_VERSION)
        if wanted is None or running is None or wanted == running:
            return merged
        how = awsdata.upgrade_refusal(running, wanted)
        if how is None:
            return merged
        if awsdata.minor(wanted) < awsdata.minor(running):
            then = "replace the cluster instead (a new name) if it must run an older version"
        else:
            then = f'set "1.{awsdata.minor(running) + 1}", synthesize, merge, and move on once the upgrade is done'
        runs = f"the cluster runs {running} ({self.recorded.version_where(name)})"
        self._report(origins, [(("kubernetesVersion",), f'{how}: {runs}, got "{wanted}"; {then}')])
        return merged

    def _without_inherited_node_groups(
        self, merged: dict[str, Any], entry: dict[str, Any], origins: Origins
    ) -> dict[str, Any]:
        """An Auto Mode cluster's merged entry without the node groups it inherits from ``clusterDefaults`` (meant for
        the clusters that have some), with a note; node groups its own entry names are the model's to refuse."""
        auto_mode = merged.get("autoMode")
        if not isinstance(auto_mode, dict) or auto_mode.get("enabled") is not True:
            return merged
        if "nodeGroups" not in merged or "nodeGroups" in entry:
            return merged
        self.notes.append(
            f"{origins.describe(('nodeGroups',))}: left off Auto Mode cluster {show(merged.get('name'))}: EKS Auto "
            "Mode launches its nodes"
        )
        return {key: value for key, value in merged.items() if key != "nodeGroups"}

    def _existing_version(self, merged: dict[str, Any], origins: Origins) -> None:
        """An existing cluster runs a version already: the definition names it, since the newest EKS offers (a new
        cluster's default) would be an upgrade of several minor versions, or a downgrade. Once recorded, the record
        keeps it, as for every cluster."""
        name = merged.get("name")
        if not isinstance(merged.get("existing"), dict) or "kubernetesVersion" in merged or not isinstance(name, str):
            return
        if self.recorded.version_of(name, models.LEGACY_KUBERNETES_VERSION) is None:
            self._report(
                origins,
                [
                    (
                        ("kubernetesVersion",),
                        "an existing cluster's version is recorded from the definition: give the version it runs "
                        f'(aws eks describe-cluster --name {name} --query cluster.version), quoted: "1.NN"',
                    )
                ],
            )

    def _management(self, base: models.BaseFile) -> None:
        self.management = base.management
        name = base.management.name
        self.seen_clusters[name] = f"{self.base_display}: management.name"
        base_packs = Origins([Layer(self.base_display, base.packs, prefix=("packs",))])
        self.env_pack_origins[""] = base_packs
        self.pack_origins[name] = (
            Origins([Layer(self.base_display, base.management.packs, prefix=("management", "packs"))]) + base_packs
        )
        self.pack_sections.append((deep_merge(base.packs, base.management.packs), self.pack_origins[name]))

    def _report(self, origins: Origins, found: list[tuple[Loc, str | None]]) -> None:
        self.problems.lines.extend(f"{origins.describe(loc)}: {problem}" for loc, problem in found if problem)

    def _check_base_facts(self, base: models.BaseFile, origins: Origins) -> None:
        """The hub's region and version, the sealing key's region and awsData against AWS's facts."""
        aws = self.aws
        found: list[tuple[Loc, str | None]] = [
            (("management", "region"), aws.region_problem(base.management.region)),
            (("management", "kubernetesVersion"), aws.version_problem(base.management.kubernetes_version)),
        ]
        if base.sealing_key.region is not None:
            found.append((("sealingKey", "region"), aws.region_problem(base.sealing_key.region)))
        for index, version in enumerate(base.aws_data.kubernetes_versions):
            found.append((("awsData", "kubernetesVersions", index), aws.added_version_problem(version)))
        self._report(origins, found)

    def _check_cluster_facts(self, merged: dict[str, Any], origins: Origins) -> None:
        """A cluster entry against AWS's facts and against what the hub needs to reach it.

        Each part is checked as far as it validates on its own, so a cluster with another problem (a
        bad desiredSize) still has its region, version, instance types and endpoint reported in the
        same run; a part that does not validate is reported by the model already.
        """
        aws = self.aws
        found: list[tuple[Loc, str | None]] = []
        region = _valid(_REGION, merged.get("region"))
        if region is not None:
            found.append((("region",), aws.region_problem(region)))
        version = _valid(_VERSION, merged.get("kubernetesVersion", models.DEFAULT_KUBERNETES_VERSION))
        if version is not None:
            found.append((("kubernetesVersion",), aws.version_problem(version)))
        network = _valid(_NETWORK, merged.get("network", {}))
        if region is not None and network is not None and aws.region_problem(region) is None:
            found.append((("network", "availabilityZones"), aws.zone_count_problem(region, network.availability_zones)))
        groups = merged.get("nodeGroups")
        for group_index, group in enumerate(groups if isinstance(groups, list) else []):
            types = _valid(_INSTANCE_TYPES, group.get("instanceTypes") if isinstance(group, dict) else None)
            for type_index, instance_type in enumerate(types or []):
                loc: Loc = ("nodeGroups", group_index, "instanceTypes", type_index)
                found.append((loc, aws.instance_type_problem(instance_type)))
        endpoint = _valid(_ENDPOINT, merged.get("endpoint", {}))
        if endpoint is not None:
            found.extend(self._reach_problems(endpoint))
        account = merged.get("account")
        if isinstance(account, str) and account not in self.accounts:
            known = ", ".join(self.accounts) or "none"
            found.append(
                (
                    ("account",),
                    f"{show(account)} is not an account of {self.base_display} (accounts: {known}); add it under "
                    "accounts with its id, so the hub's Crossplane has a provider config to reach it",
                )
            )
        charts = merged.get("cdk8sCharts")
        for chart_index, chart in enumerate(charts if isinstance(charts, list) else []):
            if isinstance(chart, str) and chart not in self.cdk8s_charts:
                known = ", ".join(sorted(self.cdk8s_charts)) or "none"
                found.append(
                    (
                        ("cdk8sCharts", chart_index),
                        f"{show(chart)} is not a chart of {CDK8S_CHARTS_DIR}/ (a {CDK8S_CHARTS_DIR}/<name>.py with "
                        f"'_' for '-'; charts: {known})",
                    )
                )
        self._report(origins, found)

    def _reach_problems(self, endpoint: models.Endpoint) -> list[tuple[Loc, str | None]]:
        """Why the hub's Flux and provider-kubernetes could not reach this API server, if they could not."""
        if endpoint.from_hub == "private":
            if endpoint.private_access:
                return []
            return [
                (
                    ("endpoint", "privateAccess"),
                    "the hub reaches this API server inside the cluster's VPC (endpoint.fromHub: private), so "
                    "privateAccess must be true; or set endpoint.fromHub: public",
                )
            ]
        if not endpoint.public_access:
            return [
                (
                    ("endpoint", "publicAccess"),
                    "the hub reaches this API server over the internet (endpoint.fromHub: public, the default), so "
                    "publicAccess must be true; or set endpoint.fromHub: private and connect the hub's VPC to the "
                    "cluster's (VPC peering or a Transit Gateway)",
                )
            ]
        allowed = endpoint.public_access_cidrs
        if self.management is None or any(network.prefixlen == 0 for network in allowed):
            return []
        admits = f"admits only {', '.join(map(str, allowed))}"
        egress = self.management.egress_cidrs
        if not egress:
            return [
                (
                    ("endpoint", "publicAccessCidrs"),
                    f"{admits}, so the hub gets in only if its traffic leaves from there: list the ranges it leaves "
                    f"from (its NAT gateways' addresses) in management.egressCidrs in {self.base_display}, or set "
                    "endpoint.fromHub: private",
                )
            ]
        outside = [network for network in egress if not any(network.subnet_of(cidr) for cidr in allowed)]
        if not outside:
            return []
        return [
            (
                ("endpoint", "publicAccessCidrs"),
                f"{admits}, which locks out the hub: management.egressCidrs in {self.base_display} has "
                f"{', '.join(map(str, outside))} outside those ranges; add {'it' if len(outside) == 1 else 'them'} "
                "to publicAccessCidrs, or set endpoint.fromHub: private",
            )
        ]

    def _environment(self, env_path: Path, base: models.BaseFile | _SharedParts) -> models.Environment | None:
        problems = self.problems
        env_display = _display(self.root, env_path)
        name = env_path.stem
        if env_path.suffix == ".yml":
            problems.lines.append(f"{env_display}: use the .yaml extension")
            return None
        if not models.is_dns_label(name):
            problems.lines.append(
                f"{env_display}: environment name {show(name)} must be a DNS-1123 label "
                "(lower-case letters, digits and '-'); rename the file"
            )
            return None
        env_raw = read_mapping(env_path, env_display, problems)
        if env_raw is None:
            return None
        env_file = problems.validate(models.EnvironmentFile, env_raw, Origins([Layer(env_display, env_raw)]))
        if env_file is None:
            # Still check the clusters, so one run reports every problem of the file.
            env_file = _lenient_environment(env_raw)
        self.env_pack_origins[name] = Origins(
            [Layer(env_display, env_file.packs, prefix=("packs",))]
        ) + self.env_pack_origins.get("", Origins([]))

        start = len(problems.lines)
        for display, defaults in ((self.base_display, base.cluster_defaults), (env_display, env_file.cluster_defaults)):
            for key in FORBIDDEN_DEFAULTS:
                if key in defaults:
                    where = "each cluster's own entry" if key == "name" else "the top-level 'packs' section"
                    problems.lines.append(f"{display}: clusterDefaults.{key}: not allowed here; set it in {where}")
        defaults = deep_merge(base.cluster_defaults, env_file.cluster_defaults)
        env_packs = deep_merge(base.packs, env_file.packs)
        env_pack_origins = Origins(
            [
                Layer(env_display, env_file.packs, prefix=("packs",)),
                Layer(self.base_display, base.packs, prefix=("packs",)),
            ]
        )
        self.pack_sections.append((env_packs, env_pack_origins))
        clusters: list[models.WorkloadCluster] = []
        for index, entry in enumerate(env_file.clusters):
            if not isinstance(entry, dict):
                continue  # reported by the environment file's own validation
            cluster = self._cluster(env_display, index, entry, defaults, env_file, base)
            if cluster is None:
                continue
            packs = deep_merge(env_packs, cluster.packs)
            preset: list[Layer] = []
            if cluster.app_resources == "spoke":
                # Under the definition's own sections, so a cluster can still set a version or more services.
                packs = deep_merge(copy.deepcopy(models.SPOKE_APP_PACKS), packs)
                preset.append(Layer(env_display, models.SPOKE_APP_PACKS, prefix=("clusters", index, "appResources")))
            clusters.append(cluster.model_copy(update={"packs": packs}))
            self.pack_origins[cluster.name] = (
                Origins([Layer(env_display, entry.get("packs", {}), prefix=("clusters", index, "packs"))])
                + env_pack_origins
                + Origins(preset)
            )
            self.pack_sections.append((clusters[-1].packs, self.pack_origins[cluster.name]))
        if len(problems.lines) > start:
            return None
        return models.Environment(name=name, file=env_display, packs=env_packs, clusters=tuple(clusters))

    def _cluster(
        self,
        env_display: str,
        index: int,
        entry: dict[str, Any],
        defaults: dict[str, Any],
        env_file: models.EnvironmentFile,
        base: models.BaseFile | _SharedParts,
    ) -> models.WorkloadCluster | None:
        merged = deep_merge(defaults, entry)
        origins = Origins(
            [
                Layer(env_display, entry, mount=(), prefix=("clusters", index)),
                Layer(env_display, env_file.cluster_defaults, mount=(), prefix=("clusterDefaults",)),
                Layer(self.base_display, base.cluster_defaults, mount=(), prefix=("clusterDefaults",)),
            ]
        )
        self._existing_version(merged, origins)
        merged = self._versioned(merged, origins)
        merged = self._without_inherited_node_groups(merged, entry, origins)
        # Duplicates are checked on the name as written, so a cluster with other problems still claims it.
        raw_name = merged.get("name")
        where = f"{env_display}: clusters[{index}].name"
        if isinstance(raw_name, str):
            if raw_name in self.seen_clusters:
                self.problems.lines.append(
                    f"{where}: duplicate cluster name {show(raw_name)}, already used at {self.seen_clusters[raw_name]}"
                )
                return None
            self.seen_clusters[raw_name] = where
            self.workload_clusters[raw_name] = where
        cluster: models.WorkloadCluster | None = self.problems.validate(models.WorkloadCluster, merged, origins)
        self._check_cluster_facts(merged, origins)
        if cluster is not None:
            self.claims.append(Claim(cluster.name, cluster.network.cidr, origins))
        return cluster


def chain_name_clashes(clusters: dict[str, str]) -> list[str]:
    """Workload clusters whose names the hub's bootstrap chains would both use.

    The chain of cluster ``a`` has a step per chart it installs (RELEASE_STEPS), whose objects are named
    ``a-<step>`` (fluxplane.charts.spokes), as the objects of cluster ``a-flux``'s own chain are named
    ``a-flux``: cluster ``a`` and cluster ``a-flux`` cannot both exist. ``clusters`` maps each workload
    cluster's name to where it is set.
    """
    problems = []
    for name, where in clusters.items():
        for step in RELEASE_STEPS:
            base = name.removesuffix(f"-{step}")
            if base != name and base in clusters:
                problems.append(
                    f"{where}: {name!r} clashes with cluster {base!r} ({clusters[base]}): the hub's bootstrap chain "
                    f"of {base!r} has step {step!r}, which fluxplane names {name!r} like the chain of this cluster; "
                    "rename one of the two clusters"
                )
    return problems


_REGION: TypeAdapter[str] = TypeAdapter(models.AwsRegion)
_VERSION: TypeAdapter[str] = TypeAdapter(models.KubernetesVersion)
_INSTANCE_TYPES: TypeAdapter[list[str]] = TypeAdapter(list[models.InstanceType])
_NETWORK: TypeAdapter[models.Network] = TypeAdapter(models.Network)
_ENDPOINT: TypeAdapter[models.Endpoint] = TypeAdapter(models.Endpoint)


def _valid(adapter: TypeAdapter[T], value: Any) -> T | None:
    """``value`` validated by ``adapter``, or None when it does not validate (or is absent)."""
    if value is None:
        return None
    try:
        return adapter.validate_python(value)
    except ValidationError:
        return None


def _with_cidrs(environment: models.Environment, cidrs: dict[str, IPv4Network]) -> models.Environment:
    clusters = tuple(
        cluster.model_copy(update={"network": cluster.network.model_copy(update={"cidr": cidrs[cluster.name]})})
        for cluster in environment.clusters
    )
    return environment.model_copy(update={"clusters": clusters})


def _lenient_aws_data(raw: dict[str, Any] | None) -> models.AwsData:
    """The awsData of a base file that failed validation, or none when that section is the problem."""
    try:
        return models.AwsData.model_validate((raw or {}).get("awsData") or {})
    except ValidationError:
        return models.AwsData()


def _lenient_environment(raw: dict[str, Any]) -> models.EnvironmentFile:
    """The usable parts of an environment file that failed validation (already reported)."""
    defaults, packs, clusters = raw.get("clusterDefaults"), raw.get("packs"), raw.get("clusters")
    return models.EnvironmentFile.model_construct(
        cluster_defaults=defaults if isinstance(defaults, dict) else {},
        packs=packs if isinstance(packs, dict) else {},
        clusters=clusters if isinstance(clusters, list) else [],
    )


@dataclass(frozen=True)
class _SharedParts:
    """The parts of the base file environments are merged over, taken from an invalid base file."""

    cluster_defaults: dict[str, Any]
    packs: dict[str, Any]

    @classmethod
    def from_raw(cls, raw: dict[str, Any] | None) -> _SharedParts:
        raw = raw or {}
        defaults, packs = raw.get("clusterDefaults"), raw.get("packs")
        return cls(
            cluster_defaults=defaults if isinstance(defaults, dict) else {},
            packs=packs if isinstance(packs, dict) else {},
        )
