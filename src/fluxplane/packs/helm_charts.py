"""Helm charts of the definition's own: ``environments/charts/<name>.yaml``, each a pack called ``<name>``.

Adding one chart, the most common change a platform team makes, needs no Python: a file names the chart,
its version and namespace, and which packs it needs first; clusters then enable it like any pack
(``packs: {<name>: {}}`` in base.yaml, an environment or a cluster), with per-environment and per-cluster
``version`` and ``values`` overrides. Each file becomes a :class:`~fluxplane.packs.api.Pack` with the same
Flux objects as the built-in chart packs: a HelmRepository (``https://``) or an OCIRepository
(``oci://``), a HelmRelease into the chart's namespace, the Namespace, and a health gate on the release.

A file is validated on its own, with its location in every message: the name (a DNS-1123 label that no
installed pack has, nor a Flux object fluxplane makes in flux-system), the repository URL and its scheme
(without credentials, and for ``oci://`` without a tag or digest), the chart (named for ``https://``, part of
the URL for ``oci://``), a semver version, the namespace (its own: no platform namespace, none a pack or
another chart installs into), the layer, and ``requires`` naming installed packs or other charts.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, create_model, field_validator

from fluxplane.config.hub import platform_namespace, platform_namespaces_text
from fluxplane.config.merge import Layer as Source
from fluxplane.config.merge import Origins
from fluxplane.config.models import DNS_LABEL, DnsLabel, Model
from fluxplane.config.problems import ProblemList, read_mapping, show, show_url
from fluxplane.constructs.kustomization import escaped
from fluxplane.constructs.namespace import Namespace
from fluxplane.core.layout import OWN_FLUX_OBJECTS
from fluxplane.packs import versions
from fluxplane.packs.api import Layer, Pack, PackConfig, PackContext, exact_version, split_pack
from fluxplane.packs.helm import chart_release, oci_chart_release
from fluxplane.packs.registry import PackRegistry, find_cycle
from fluxplane.packs.versions import Chart

#: Where the definition's charts live, relative to the project.
CHARTS_DIR = "environments/charts"
#: A chart repository URL: https:// for a Helm repository, oci:// for an OCI registry (no spaces or quotes).
_URL = r"(https|oci)://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~%!$&'()*+,;=:@/-]*)?"
#: A chart's name in its repository (Helm: lower-case letters, digits, '-', '_' and '.').
_CHART = r"[a-z0-9]([a-z0-9._-]*[a-z0-9])?"


def _fullmatch(pattern: str, expected: str) -> Callable[[str], str]:
    """A check that a string matches ``pattern`` whole, naming what was ``expected`` and what was found."""

    def check(value: str) -> str:
        if re.fullmatch(pattern, value) is None:
            raise ValueError(f"expected {expected}, got {show(value)}")
        return value

    return check


_CHART_NAME = _fullmatch(_CHART, "a chart name (lower-case letters, digits, '.', '_', '-')")


def _repository(value: str) -> str:
    """A chart repository URL that Flux can read as written: no credentials (the URL is written to Git, and
    messages show it with them hidden), and an oci:// URL of the chart without a tag or digest, which the
    OCIRepository takes from the chart's version."""
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@", value):
        raise ValueError(
            f"must not hold credentials (a user or token before '@'), got {show_url(value)}: the URL is written "
            "to Git; use a public repository's URL"
        )
    if re.fullmatch(_URL, value) is None:
        raise ValueError(f"expected an https:// Helm repository or the oci:// URL of the chart, got {show_url(value)}")
    path = value.removeprefix("oci://").partition("/")[2] if value.startswith("oci://") else ""
    if "@" in path:
        raise ValueError(
            f"the oci:// URL ends in a digest ({show('@' + path.partition('@')[2])}), but Flux takes the chart's "
            "tag from version: give the URL without it, and the chart's version in version"
        )
    if ":" in path.rsplit("/", 1)[-1]:
        raise ValueError(
            f"the oci:// URL ends in a tag ({show(':' + path.rsplit(':', 1)[-1])}), but Flux takes the chart's tag "
            "from version: give the URL without it, and the tag in version"
        )
    return value


def _own_namespace(value: str) -> str:
    if platform_namespace(value):
        raise ValueError(
            f"{show(value)} is a platform namespace; a chart's namespace is its own (its pack makes the Namespace "
            f"and deletes it when the chart is switched off), not {platform_namespaces_text()}"
        )
    return value


class ChartSpec(Model):
    """One ``environments/charts/<name>.yaml``: a Helm chart installed as the pack ``<name>``."""

    repository: Annotated[str, AfterValidator(_repository)] = Field(
        description="The chart repository: an https:// Helm repository URL (a HelmRepository), or the oci:// "
        "URL of the chart itself in a registry (an OCIRepository), e.g. oci://ghcr.io/stefanprodan/charts/podinfo."
    )
    chart: str | None = Field(
        None,
        validate_default=True,
        description="The chart's name in an https:// repository; not allowed with oci:// (the URL names it).",
    )
    version: Annotated[str, AfterValidator(exact_version)] = Field(
        description="The chart version every cluster starts from (semver, e.g. 6.7.1)."
    )
    namespace: Annotated[DnsLabel, AfterValidator(_own_namespace)] = Field(
        description="The namespace the chart installs into; the pack creates it. Its own: not a platform namespace, "
        "nor one another pack or chart installs into."
    )
    layer: Layer = Field(
        "controllers",
        description="Where it sits in each cluster's order: controllers, configs (after every controller) or apps.",
    )
    requires: list[DnsLabel] = Field(
        default_factory=list, description="Packs (built-in, installed or other charts) installed first."
    )
    health: Literal["release", "none"] = Field(
        "release",
        description="What Flux waits for before the layers after it: the HelmRelease Ready (release), or nothing.",
    )
    values: dict[str, Any] = Field(default_factory=dict, description="Helm values for every cluster.")
    description: str = Field("", max_length=200, description="One line for people: what the chart is for.")

    @field_validator("chart")
    @classmethod
    def _chart(cls, value: str | None, info: ValidationInfo) -> str | None:
        repository = info.data.get("repository") or ""
        if value is None and repository.startswith("https://"):
            raise ValueError("required with an https:// repository (the chart's name in it)")
        if value is not None and repository.startswith("oci://"):
            raise ValueError("not allowed with an oci:// repository: its URL names the chart")
        return value if value is None else _CHART_NAME(value)


def _bind(name: str, spec: ChartSpec) -> Any:
    def bind(ctx: PackContext, config: Any) -> None:
        Namespace(ctx.scope, "namespace", {"name": spec.namespace})
        if spec.chart is None:
            release = oci_chart_release(
                ctx.scope, name=name, url=spec.repository, version=config.version, target_namespace=spec.namespace
            )
        else:
            release = chart_release(
                ctx.scope,
                name=name,
                chart=Chart(spec.repository, spec.chart, spec.version),
                version=config.version,
                target_namespace=spec.namespace,
            )
        # the file's values, escaped for post-build substitution as the config's are, then the cluster's
        release.add_values(escaped(spec.values))
        release.add_values(config.values)
        if spec.health == "release":
            ctx.add_health_check(release)

    return bind


def chart_pack(name: str, spec: ChartSpec) -> Pack:
    """The pack of the chart ``name``; its config holds the per-cluster ``version`` and ``values``."""
    digest = hashlib.sha256(json.dumps(spec.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()
    # The spec's digest in the schema: the synth cache's key covers every pack's schema.
    base = type(
        f"_HelmChartBase_{name.replace('-', '_')}",
        (PackConfig,),
        {
            "__module__": __name__,
            "model_config": ConfigDict(
                extra="forbid", frozen=True, populate_by_name=False, json_schema_extra={"x-fluxplane-chart": digest}
            ),
        },
    )
    model: type[BaseModel] = create_model(
        f"HelmChart_{name.replace('-', '_')}",
        __base__=base,
        __doc__=f"The Helm chart {name} ({CHARTS_DIR}/{name}.yaml).",
        version=(str, Field(spec.version, description="Chart version (default: the chart file's).")),
        values=(dict[str, Any], Field(default_factory=dict, description="Helm values, merged over the file's.")),
    )
    origin = f"Helm chart {spec.chart or spec.repository.rsplit('/', 1)[-1]} from {spec.repository}"
    return Pack(
        name=name,
        version=spec.version,
        description=spec.description or origin,
        config=cast(type[PackConfig], model),
        layer=spec.layer,
        bind=_bind(name, spec),
        requires=tuple(spec.requires),
        namespaces=(spec.namespace,),
    )


def _taken_names(installed: PackRegistry) -> dict[str, str]:
    """The names a chart may not take, each with whose it is: a chart's Kustomization, HelmRelease and chart
    source are named after it, in flux-system, where fluxplane's own objects (fluxplane.core.layout), the
    sources of the hub's bootstrap chain and each installed pack as synth applies it (split_pack) have theirs."""
    taken = dict(OWN_FLUX_OBJECTS)
    for chart in versions.BOOTSTRAP:
        taken[chart.chart] = f"the hub's Flux source of the {chart.chart} chart (its workload clusters' bootstrap)"
    for pack in installed:
        for part in split_pack(pack)[1:]:
            taken[part.name] = f"the Kustomization of the custom resources of pack {pack.name!r}"
    return taken


def _namespace_problems(specs: dict[str, tuple[ChartSpec, str]], installed: PackRegistry) -> list[str]:
    """A chart's namespace is its own: its pack makes the Namespace, and deletes it when the chart is switched
    off, so no installed pack installs into it (Pack.namespaces), nor another chart (the first file keeps it).
    The platform's namespaces are refused with the file (ChartSpec)."""
    owners: dict[str, list[str]] = {}
    for pack in installed:
        for namespace in pack.namespaces:
            owners.setdefault(namespace, []).append(repr(pack.name))
    charts: dict[str, str] = {}
    problems = []
    for spec, shown in specs.values():
        namespace = spec.namespace
        if namespace in owners:
            whose = f"pack{'s' if len(owners[namespace]) > 1 else ''} {' and '.join(owners[namespace])}"
        elif namespace in charts:
            whose = f"{charts[namespace]} too"
        else:
            charts[namespace] = shown
            continue
        problems.append(
            f"{shown}: namespace: {show(namespace)} is the namespace of {whose}; a chart's namespace is its own "
            "(its pack makes the Namespace, and deletes it when the chart is switched off): choose one no pack or "
            f"other chart installs into (taken: {', '.join(sorted({*owners, *charts}))})"
        )
    return problems


def load_chart_packs(root: Path, installed: PackRegistry, display: Any) -> tuple[list[Pack], list[str]]:
    """The packs of ``<root>/environments/charts/*.yaml``, and the problems found, each with its file.

    ``display`` turns a path into the name messages use; ``installed`` is what a chart may require and must
    not be named after.
    """
    folder = root / CHARTS_DIR
    if folder.is_symlink():
        return [], [f"{display(folder)}: a symbolic link; the definition's folders are its own"]
    if not folder.is_dir():
        return [], []
    problems = ProblemList()
    specs: dict[str, tuple[ChartSpec, str]] = {}
    taken = _taken_names(installed)
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        shown = display(path)
        if path.is_symlink() or path.is_dir() or path.suffix != ".yaml":
            problems.lines.append(
                f"{shown}: not a chart file; {CHARTS_DIR}/ holds one <name>.yaml file per chart, not links"
            )
            continue
        if not re.fullmatch(DNS_LABEL, path.stem) or len(path.stem) > 53:
            problems.lines.append(
                f"{shown}: chart pack name {show(path.stem)} must be a DNS-1123 label of at most 53 characters "
                "(a Helm release name); rename the file"
            )
            continue
        if path.stem in installed:
            problems.lines.append(
                f"{shown}: {show(path.stem)} is an installed pack's name; rename the file (installed: "
                f"{', '.join(installed.names)})"
            )
            continue
        if path.stem in taken:
            problems.lines.append(
                f"{shown}: {show(path.stem)} is the name of {taken[path.stem]}, in flux-system, where the chart's "
                "Kustomization, HelmRelease and source would take it too; rename the file"
            )
            continue
        raw = read_mapping(path, shown, problems)
        if raw is None:
            continue
        spec = problems.validate(ChartSpec, raw, Origins([Source(shown, raw)]))
        if spec is not None:
            specs[path.stem] = (spec, shown)
    problems.lines.extend(_namespace_problems(specs, installed))
    known = set(installed.names) | set(specs)
    for spec, shown in specs.values():
        for index, required in enumerate(spec.requires):
            if required not in known:
                problems.lines.append(
                    f"{shown}: requires[{index}]: {show(required)} is neither an installed pack nor a chart of "
                    f"{CHARTS_DIR}/ (known: {', '.join(sorted(known))})"
                )
    cycle = find_cycle({name: tuple(spec.requires) for name, (spec, _) in specs.items()})
    if cycle:
        problems.lines.append(f"{CHARTS_DIR}/: charts require each other in a cycle: {' -> '.join(cycle)}")
    if problems.lines:
        return [], problems.lines
    return [chart_pack(name, spec) for name, (spec, _) in sorted(specs.items())], []
