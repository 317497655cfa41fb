"""Load ``environments/`` into a :class:`~fluxplane.config.models.Fleet`.

``environments/base.yaml`` holds what the fleet shares; every other ``environments/<env>.yaml`` is
one environment, merged over the base (see :mod:`fluxplane.config.merge`). Workload clusters start
from ``clusterDefaults`` (base, then the environment's) and override it. All problems across all
files are collected and raised together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from fluxplane.config import models
from fluxplane.config.merge import Layer, Loc, Origins, deep_merge
from fluxplane.config.network import Claim, allocate
from fluxplane.config.problems import describe_validation_error, show
from fluxplane.config.yamlfile import read_yaml
from fluxplane.errors import ConfigError

BASE_FILE = "base.yaml"
FORBIDDEN_DEFAULTS = ("name", "packs")


@dataclass(frozen=True)
class LoadedFleet:
    fleet: models.Fleet
    #: Per cluster name: the origins of its merged ``packs`` mapping.
    pack_origins: dict[str, Origins] = field(default_factory=dict)
    #: Per environment name: the origins of its merged ``packs`` mapping; "" for the base file's.
    environment_pack_origins: dict[str, Origins] = field(default_factory=dict)


class _Problems:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def validate(self, model: type[BaseModel], data: Any, origins: Origins, mount: Loc = ()) -> Any:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            self.lines.extend(describe_validation_error(exc, model, origins, mount))
            return None


def _display(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _read_mapping(path: Path, display: str, problems: _Problems) -> dict[str, Any] | None:
    try:
        data = read_yaml(path, display)
    except ConfigError as exc:
        problems.lines.extend(exc.problems)
        return None
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.lines.append(f"{display}: expected a mapping at the top level, got {show(data)}")
        return None
    return data


#: Checks one cluster's merged ``packs`` mapping; returns problem lines (the pack registry's, given by synth).
PackCheck = Callable[[dict[str, Any], Origins], list[str]]


def load_fleet(root: Path, check_packs: PackCheck | None = None) -> LoadedFleet:
    """Read and validate ``<root>/environments``; raise ConfigError listing every problem.

    ``check_packs`` is run over every cluster's packs when other problems were found, so that one run
    reports pack problems (an unknown pack, a bad value) together with the rest; without other
    problems, synth validates the packs itself.
    """
    env_dir = root / "environments"
    problems = _Problems()
    base_path = env_dir / BASE_FILE
    base_display = _display(root, base_path)
    if not env_dir.is_dir():
        raise ConfigError(
            f"{env_dir}: folder not found; create it with {BASE_FILE} and one file per environment "
            "(see the README's 'The fleet definition')"
        )
    env_paths = sorted(
        p
        for p in env_dir.iterdir()
        if p.suffix in (".yaml", ".yml") and p.name != BASE_FILE and not p.name.startswith(".")
    )
    base_raw = _read_mapping(base_path, base_display, problems)
    if not env_paths:
        problems.lines.append(
            f"{_display(root, env_dir)}: no environment files; add one per environment, e.g. staging.yaml"
        )

    base_model: models.BaseFile | None = None
    if base_raw is not None:
        base_model = problems.validate(models.BaseFile, base_raw, Origins([Layer(base_display, base_raw)]))

    environments: list[models.Environment] = []
    pack_origins: dict[str, Origins] = {}
    pack_sections: list[tuple[dict[str, Any], Origins]] = []
    claims: list[Claim] = []
    env_pack_origins: dict[str, Origins] = {}
    seen_clusters: dict[str, str] = {}
    if base_model is not None:
        seen_clusters[base_model.management.name] = f"{base_display}: management.name"
        base_packs_origins = Origins([Layer(base_display, base_model.packs, prefix=("packs",))])
        env_pack_origins[""] = base_packs_origins
        pack_origins[base_model.management.name] = (
            Origins([Layer(base_display, base_model.management.packs, prefix=("management", "packs"))])
            + base_packs_origins
        )
        pack_sections.append(
            (deep_merge(base_model.packs, base_model.management.packs), pack_origins[base_model.management.name])
        )

    for env_path in env_paths:
        env_display = _display(root, env_path)
        name = env_path.stem
        if env_path.suffix == ".yml":
            problems.lines.append(f"{env_display}: use the .yaml extension")
            continue
        if not models.is_dns_label(name):
            problems.lines.append(
                f"{env_display}: environment name {show(name)} must be a DNS-1123 label "
                "(lower-case letters, digits and '-'); rename the file"
            )
            continue
        env_raw = _read_mapping(env_path, env_display, problems)
        if env_raw is None:
            continue
        env_file = problems.validate(models.EnvironmentFile, env_raw, Origins([Layer(env_display, env_raw)]))
        if env_file is None:
            # Still check the clusters, so one run reports every problem of the file.
            env_file = _lenient_environment(env_raw)
        # Even when the base file has problems, check the environment against what the base holds,
        # so that one run reports the problems of every file.
        shared = base_model or _SharedParts.from_raw(base_raw)
        environment = _build_environment(
            name,
            env_display,
            env_file,
            base_display,
            shared,
            problems,
            pack_origins,
            seen_clusters,
            pack_sections,
            claims,
        )
        env_pack_origins[name] = Origins(
            [Layer(env_display, env_file.packs, prefix=("packs",))]
        ) + env_pack_origins.get("", Origins([]))
        if environment is not None:
            environments.append(environment)

    if base_model is not None and not problems.lines:
        cidrs, found = allocate(claims, base_model.cluster_network, f"{base_display}: clusterNetwork.pool")
        problems.lines.extend(found)
        environments = [_with_cidrs(environment, cidrs) for environment in environments]
    if problems.lines:
        if check_packs is not None:
            for sections, origins in pack_sections:
                problems.lines.extend(check_packs(sections, origins))
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
    )
    return LoadedFleet(fleet=fleet, pack_origins=pack_origins, environment_pack_origins=env_pack_origins)


def _with_cidrs(environment: models.Environment, cidrs: dict[str, IPv4Network]) -> models.Environment:
    clusters = tuple(
        cluster.model_copy(update={"network": cluster.network.model_copy(update={"cidr": cidrs[cluster.name]})})
        for cluster in environment.clusters
    )
    return environment.model_copy(update={"clusters": clusters})


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


def _build_environment(
    name: str,
    env_display: str,
    env_file: models.EnvironmentFile,
    base_display: str,
    base: models.BaseFile | _SharedParts,
    problems: _Problems,
    pack_origins: dict[str, Origins],
    seen_clusters: dict[str, str],
    pack_sections: list[tuple[dict[str, Any], Origins]],
    claims: list[Claim],
) -> models.Environment | None:
    start = len(problems.lines)
    for display, defaults, prefix in (
        (base_display, base.cluster_defaults, ("clusterDefaults",)),
        (env_display, env_file.cluster_defaults, ("clusterDefaults",)),
    ):
        for key in FORBIDDEN_DEFAULTS:
            if key in defaults:
                where = "each cluster's own entry" if key == "name" else "the top-level 'packs' section"
                problems.lines.append(f"{display}: {'.'.join((*prefix, key))}: not allowed here; set it in {where}")
    defaults = deep_merge(base.cluster_defaults, env_file.cluster_defaults)
    env_packs = deep_merge(base.packs, env_file.packs)
    env_pack_origins = Origins(
        [
            Layer(env_display, env_file.packs, prefix=("packs",)),
            Layer(base_display, base.packs, prefix=("packs",)),
        ]
    )
    pack_sections.append((env_packs, env_pack_origins))
    clusters: list[models.WorkloadCluster] = []
    for index, entry in enumerate(env_file.clusters):
        if not isinstance(entry, dict):
            continue  # reported by the environment file's own validation
        merged = deep_merge(defaults, entry)
        origins = Origins(
            [
                Layer(env_display, entry, mount=(), prefix=("clusters", index)),
                Layer(env_display, env_file.cluster_defaults, mount=(), prefix=("clusterDefaults",)),
                Layer(base_display, base.cluster_defaults, mount=(), prefix=("clusterDefaults",)),
            ]
        )
        # Duplicates are checked on the name as written, so a cluster with other problems still claims it.
        raw_name = merged.get("name") if isinstance(merged, dict) else None
        where = f"{env_display}: clusters[{index}].name"
        if isinstance(raw_name, str):
            if raw_name in seen_clusters:
                problems.lines.append(
                    f"{where}: duplicate cluster name {show(raw_name)}, already used at {seen_clusters[raw_name]}"
                )
                continue
            seen_clusters[raw_name] = where
        cluster = problems.validate(models.WorkloadCluster, merged, origins)
        if cluster is None:
            continue
        clusters.append(cluster.model_copy(update={"packs": deep_merge(env_packs, cluster.packs)}))
        pack_origins[cluster.name] = (
            Origins([Layer(env_display, entry.get("packs", {}), prefix=("clusters", index, "packs"))])
            + env_pack_origins
        )
        pack_sections.append((clusters[-1].packs, pack_origins[cluster.name]))
        claims.append(Claim(cluster.name, cluster.network.cidr, origins))
    if len(problems.lines) > start:
        return None
    return models.Environment(name=name, file=env_display, packs=env_packs, clusters=tuple(clusters))
