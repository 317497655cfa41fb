"""Helm charts of the definition's own: ``environments/charts/<name>.yaml``, each a pack called ``<name>``.

Adding one chart, the most common change a platform team makes, needs no Python: a file names the chart,
its version and namespace, and which packs it needs first; clusters then enable it like any pack
(``packs: {<name>: {}}`` in base.yaml, an environment or a cluster), with per-environment and per-cluster
``version``, ``values``, ``releaseName`` and ``storageNamespace`` overrides. Each file becomes a
:class:`~fluxplane.packs.api.Pack` with the same Flux objects as the built-in chart packs: a HelmRepository
(``https://``) or an OCIRepository (``oci://``), a HelmRelease into the chart's namespace, the Namespace when the
chart has its own, and a health gate on the release. The file may name the release and where Helm keeps it, so
that a release that runs already is taken over rather than installed again, and takes the HelmRelease settings
``install``, ``upgrade``, ``test``, ``timeout`` and ``driftDetection`` (over the fleet's defaults).

A file is validated on its own, with its location in every message: the name (a DNS-1123 label that no
installed pack has, nor a Flux object fluxplane makes in flux-system), the repository URL and its scheme
(without credentials, and for ``oci://`` without a tag or digest), the chart (named for ``https://``, part of
the URL for ``oci://``), a semver version or range, the namespace (its own: no platform namespace, none a pack
or another chart installs into; or ``targetNamespace``, one that exists without it: Kubernetes' own, or one of
a pack or chart it requires), the release's name and storage, the layer, and ``requires`` naming installed packs
or other charts.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from fluxplane.config.hub import kubernetes_namespace, platform_namespace, platform_namespaces_text
from fluxplane.config.merge import Layer as Source
from fluxplane.config.merge import Origins
from fluxplane.config.models import DNS_LABEL, DnsLabel, Duration, Model
from fluxplane.config.problems import ProblemList, read_mapping, show, show_url
from fluxplane.constructs.helm_release import DriftDetection, Install, Test, Upgrade
from fluxplane.constructs.kustomization import escaped
from fluxplane.constructs.namespace import Namespace, NamespaceProps
from fluxplane.constructs.props import FLUX_NAMESPACE
from fluxplane.core.layout import OWN_FLUX_OBJECTS
from fluxplane.packs import versions
from fluxplane.packs.api import Layer, Pack, PackContext, split_pack, version_or_range
from fluxplane.packs.helm import ReleaseConfig, ReleaseName, ReleaseSettings, chart_release, oci_chart_release
from fluxplane.packs.registry import PackRegistry, find_cycle
from fluxplane.packs.versions import Chart

#: Where the definition's charts live, relative to the project.
CHARTS_DIR = "environments/charts"
#: The key of a chart's pack config schema that holds the digest of its file (the synth cache's key covers it).
_CHART_DIGEST = "x-fluxplane-chart"
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
        existing = "; targetNamespace installs into it without making it" if kubernetes_namespace(value) else ""
        raise ValueError(
            f"{show(value)} is a platform namespace; a chart's namespace is its own (its pack makes the Namespace "
            f"and deletes it when the chart is switched off), not {platform_namespaces_text()}{existing}"
        )
    return value


def _existing_namespace(value: str) -> str:
    """A namespace a chart installs into without making it: not one of fluxplane's own machinery."""
    if platform_namespace(value) and not kubernetes_namespace(value):
        raise ValueError(
            f"{show(value)} is where fluxplane's own machinery runs (Flux, Crossplane, the secrets controllers), "
            "which a chart could take down with it: Helm takes over an object of the same name, and deletes it "
            "when the chart is uninstalled; choose the chart's own namespace"
        )
    return value


ONE_NAMESPACE = (
    "give namespace (the chart's own, which its pack makes) or targetNamespace (one that exists without the chart)"
)


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
    version: Annotated[str, AfterValidator(version_or_range)] = Field(
        description="The chart version every cluster starts from (semver, e.g. 6.7.1), or a semver range (6.7.x, "
        ">=6.7.0 <6.8.0), of which Flux installs the newest and every newer one published."
    )
    namespace: Annotated[DnsLabel, AfterValidator(_own_namespace)] | None = Field(
        None,
        description="The namespace the chart installs into; the pack creates it. Its own: not a platform namespace, "
        "nor one another pack or chart installs into. Give this or targetNamespace.",
    )
    target_namespace: Annotated[DnsLabel, AfterValidator(_existing_namespace)] | None = Field(
        None,
        alias="targetNamespace",
        description="Instead of namespace: a namespace that exists without the chart, which the pack neither makes "
        "nor deletes: Kubernetes' own (kube-system, default), or one a pack or chart in requires installs into.",
    )
    release_name: ReleaseName | None = Field(
        None,
        alias="releaseName",
        description="The Helm release's name (default: the file's name); a running release's name (helm ls -A) takes "
        "that release over. Clusters may set their own.",
    )
    storage_namespace: DnsLabel | None = Field(
        None,
        alias="storageNamespace",
        description="Where Helm keeps the release's records: flux-system (default) or the chart's namespace. Clusters "
        "may set their own.",
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
    timeout: Duration | None = Field(
        None, description="Time to wait for each Kubernetes operation of a Helm action (default: Flux's, 5m)."
    )
    install: Install | None = Field(
        None,
        description="How Helm installs the release (HelmRelease spec.install: remediation, strategy, crds, timeout), "
        "merged over the fleet's defaults (CRDs created and replaced, 3 retries).",
    )
    upgrade: Upgrade | None = Field(
        None,
        description="How Helm upgrades the release (HelmRelease spec.upgrade: remediation, strategy, crds, "
        "cleanupOnFail, timeout), merged over the fleet's defaults (CRDs replaced, 3 retries, then a rollback).",
    )
    test: Test | None = Field(
        None, description="Whether the chart's Helm tests run after each install and upgrade (HelmRelease spec.test)."
    )
    drift_detection: DriftDetection | None = Field(
        None,
        alias="driftDetection",
        description="What Flux does when the cluster differs from the release (mode: enabled, the default, warn or "
        "disabled; ignore: fields that are not drift).",
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

    @field_validator("target_namespace")
    @classmethod
    def _not_both(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("namespace") is not None:
            raise ValueError(f"{ONE_NAMESPACE}, not both")
        return value

    @model_validator(mode="after")
    def _one_namespace(self) -> ChartSpec:
        if self.namespace is None and self.target_namespace is None:
            raise ValueError(ONE_NAMESPACE)
        return self

    @field_validator("storage_namespace")
    @classmethod
    def _stored_where_no_app_runs(cls, value: str | None, info: ValidationInfo) -> str | None:
        installs_into = info.data.get("namespace") or info.data.get("target_namespace")
        if value is not None and installs_into is not None and value not in (FLUX_NAMESPACE, installs_into):
            raise ValueError(
                f"{show(value)} is neither {show(FLUX_NAMESPACE)} nor the chart's namespace, {show(installs_into)}: "
                "Helm's records of the release hold its values, and stay where no app can read or change them"
            )
        return value

    def installs_into(self) -> str:
        """The namespace the release installs into: the chart's own, or the existing one it targets."""
        return self.namespace or self.target_namespace or ""

    def settings(self) -> ReleaseSettings:
        return ReleaseSettings(
            timeout=self.timeout,
            install=self.install,
            upgrade=self.upgrade,
            test=self.test,
            drift_detection=self.drift_detection,
        )


def _bind(name: str, spec: ChartSpec) -> Any:
    def bind(ctx: PackContext, config: Any) -> None:
        if spec.namespace is not None:
            Namespace(ctx.scope, "namespace", NamespaceProps(name=spec.namespace))
        settings = escaped(spec.settings())
        if spec.chart is None:
            release = oci_chart_release(
                ctx.scope,
                name=name,
                url=spec.repository,
                version=config.version,
                target_namespace=spec.installs_into(),
                identity=config,
                settings=settings,
            )
        else:
            release = chart_release(
                ctx.scope,
                name=name,
                chart=Chart(spec.repository, spec.chart, spec.version),
                version=config.version,
                target_namespace=spec.installs_into(),
                identity=config,
                settings=settings,
            )
        # the file's values, escaped for post-build substitution as the config's are, then the cluster's
        release.add_values(escaped(spec.values))
        release.add_values(config.values)
        if spec.health == "release":
            ctx.add_health_check(release)

    return bind


def chart_pack(name: str, spec: ChartSpec) -> Pack:
    """The pack of the chart ``name``; its config holds the per-cluster ``version``, ``values``, ``releaseName``
    and ``storageNamespace``, whose defaults are the file's."""
    digest = hashlib.sha256(json.dumps(spec.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()
    # The spec's digest in the schema: the synth cache's key covers every pack's schema.
    base = type(
        f"_HelmChartBase_{name.replace('-', '_')}",
        (ReleaseConfig,),
        {
            "__module__": __name__,
            "release_namespace": spec.installs_into(),
            "model_config": ConfigDict(
                extra="forbid", frozen=True, populate_by_name=False, json_schema_extra={_CHART_DIGEST: digest}
            ),
        },
    )
    model: type[BaseModel] = create_model(
        f"HelmChart_{name.replace('-', '_')}",
        __base__=base,
        __doc__=f"The Helm chart {name} ({CHARTS_DIR}/{name}.yaml).",
        __validators__={"_semver": field_validator("version")(_version_or_range)},
        release_name=(
            ReleaseName | None,
            Field(spec.release_name, alias="releaseName", description="Helm release name (default: the file's)."),
        ),
        storage_namespace=(
            DnsLabel | None,
            Field(
                spec.storage_namespace,
                alias="storageNamespace",
                description="Where Helm keeps the release: flux-system or the chart's namespace (default: the file's).",
            ),
        ),
        version=(str, Field(spec.version, description="Chart version or semver range (default: the file's).")),
        values=(dict[str, Any], Field(default_factory=dict, description="Helm values, merged over the file's.")),
    )
    origin = f"Helm chart {spec.chart or spec.repository.rsplit('/', 1)[-1]} from {spec.repository}"
    return Pack(
        name=name,
        version=spec.version,
        description=spec.description or origin,
        config=cast(type[ReleaseConfig], model),
        layer=spec.layer,
        bind=_bind(name, spec),
        requires=tuple(spec.requires),
        namespaces=(spec.installs_into(),),
    )


def chart_file(pack: Pack) -> str | None:
    """The chart file ``pack`` is made from (``environments/charts/<name>.yaml``, chart_pack); None for another pack."""
    extra = pack.config.model_config.get("json_schema_extra")
    return f"{CHARTS_DIR}/{pack.name}.yaml" if isinstance(extra, dict) and _CHART_DIGEST in extra else None


def _version_or_range(cls: Any, value: Any) -> Any:
    """A chart's version, per cluster too, may be a range, as the file's may."""
    return version_or_range(value)


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
        if spec.namespace is None:
            continue
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


def _target_problems(specs: dict[str, tuple[ChartSpec, str]], installed: PackRegistry) -> list[str]:
    """A chart's targetNamespace exists without it: Kubernetes makes it (default, kube-*), or a pack or chart the
    chart requires installs into it, which Flux then applies first, on every cluster the chart is enabled on."""
    problems = []
    for spec, shown in specs.values():
        target = spec.target_namespace
        if target is None or kubernetes_namespace(target):
            continue
        required: dict[str, tuple[str, ...]] = {}
        for name in spec.requires:
            if name in installed:
                required[name] = installed.get(name).namespaces
            elif name in specs:
                required[name] = (specs[name][0].installs_into(),)
        theirs = sorted({namespace for namespaces in required.values() for namespace in namespaces})
        if target in theirs:
            continue
        problems.append(
            f"{shown}: targetNamespace: {show(target)} is neither Kubernetes' own (default, kube-*) nor one the packs "
            f"and charts it requires install into ({', '.join(theirs) if theirs else 'it requires none'}), so it may "
            "not exist where the chart is enabled: add the pack or chart that installs into it to requires, or give "
            "it as namespace, the chart's own"
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
    problems.lines.extend(_target_problems(specs, installed))
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
