"""Flux HelmRelease (``helm.toolkit.fluxcd.io/v2``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import StringConstraints, model_validator

from fluxplane.config.merge import deep_merge
from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import (
    FLUX_NAMESPACE,
    DependsOn,
    Duration,
    KubeConfigReference,
    Label,
    Name,
    Props,
    dependency_entry,
    dumped,
    ordered,
    plain_copy,
)


class HelmChartSourceReference(Props):
    """``chart.spec.sourceRef``: where helm-controller fetches the chart from."""

    kind: Literal["HelmRepository", "GitRepository", "Bucket"]
    name: Name
    namespace: Label | None = None
    api_version: str | None = None


class HelmChartTemplateSpec(Props):
    chart: str
    version: str | None = None
    source_ref: HelmChartSourceReference
    interval: Duration | None = None
    reconcile_strategy: Literal["ChartVersion", "Revision"] | None = None
    values_files: tuple[str, ...] | None = None


class HelmChartTemplate(Props):
    spec: HelmChartTemplateSpec


class ChartReference(Props):
    kind: Literal["OCIRepository", "HelmChart", "ExternalArtifact"]
    name: Name
    namespace: Label | None = None
    api_version: str | None = None


class ValuesReference(Props):
    kind: Literal["Secret", "ConfigMap"]
    name: Name
    values_key: str | None = None
    target_path: str | None = None
    optional: bool | None = None


class Remediation(Props):
    retries: int | None = None
    remediate_last_failure: bool | None = None


class UpgradeRemediation(Remediation):
    strategy: Literal["rollback", "uninstall"] | None = None


class Install(Props):
    crds: Literal["Skip", "Create", "CreateReplace"] | None = None
    create_namespace: bool | None = None
    remediation: Remediation | None = None
    timeout: Duration | None = None


class Upgrade(Props):
    crds: Literal["Skip", "Create", "CreateReplace"] | None = None
    remediation: UpgradeRemediation | None = None
    cleanup_on_fail: bool | None = None
    timeout: Duration | None = None


class DriftDetection(Props):
    mode: Literal["enabled", "warn", "disabled"] = "enabled"


class HelmReleaseProps(Props):
    name: Name
    namespace: Label = FLUX_NAMESPACE
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    interval: Duration = "30m"
    chart: HelmChartTemplate | None = None
    chart_ref: ChartReference | None = None
    release_name: Annotated[str, StringConstraints(min_length=1, max_length=53)] | None = None
    target_namespace: Label | None = None
    storage_namespace: Label | None = None
    kube_config: KubeConfigReference | None = None
    #: A ServiceAccount's name: a DNS-1123 subdomain, as Kubernetes has it (longer than a label may be).
    service_account_name: Name | None = None
    depends_on: tuple[DependsOn, ...] | None = None
    timeout: Duration | None = None
    install: Install | None = None
    upgrade: Upgrade | None = None
    drift_detection: DriftDetection | None = None
    values_from: tuple[ValuesReference, ...] | None = None
    values: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_chart(self) -> HelmReleaseProps:
        if (self.chart is None) == (self.chart_ref is None):
            raise ValueError("set exactly one of chart and chartRef")
        return self


#: What a platform team expects of every release: retry installs, roll back failed upgrades, and
#: let Flux correct drift made by hand.
DEFAULT_INSTALL = Install(crds="CreateReplace", remediation=Remediation(retries=3))
DEFAULT_UPGRADE = Upgrade(crds="CreateReplace", remediation=UpgradeRemediation(retries=3, strategy="rollback"))
DEFAULT_DRIFT_DETECTION = DriftDetection(mode="enabled")


class HelmRelease(TypedResource[HelmReleaseProps]):
    """A Helm release reconciled by helm-controller. ``add_values`` deep-merges more values."""

    api_version = "helm.toolkit.fluxcd.io/v2"
    kind = "HelmRelease"
    props_class = HelmReleaseProps

    def __init__(self, scope: Any, construct_id: str, props: HelmReleaseProps | dict[str, Any]) -> None:
        super().__init__(scope, construct_id, props)
        self._values: dict[str, Any] = dict(self.props.values or {})
        self._depends_on: list[DependsOn] = list(self.props.depends_on or ())

    @property
    def values(self) -> dict[str, Any]:
        """A copy of the values as they stand."""
        return plain_copy(self._values)  # type: ignore[no-any-return]

    def add_values(self, values: dict[str, Any]) -> dict[str, Any]:
        """Merge ``values`` over the current values (mappings merge, lists replace); returns the result."""
        self._values = deep_merge(self._values, values)
        return self.values

    def depends_on(self, other: HelmRelease | str, ready_expr: str | None = None) -> DependsOn:
        """Install this release only after ``other`` is Ready (or ``ready_expr`` holds); returns the entry."""
        if isinstance(other, HelmRelease):
            namespace = other.namespace if other.namespace != self.namespace else None
            entry = dependency_entry(self.node.path, other.name, namespace, ready_expr)
        else:
            entry = dependency_entry(self.node.path, other, None, ready_expr)
        self._depends_on = [e for e in self._depends_on if (e.name, e.namespace) != (entry.name, entry.namespace)]
        self._depends_on.append(entry)
        return entry

    @property
    def dependencies(self) -> tuple[DependsOn, ...]:
        return tuple(self._depends_on)

    def spec_dict(self) -> dict[str, Any]:
        spec = super().spec_dict() or {}
        if self._depends_on:
            spec["dependsOn"] = [dumped(entry) for entry in self._depends_on]
        else:
            spec.pop("dependsOn", None)
        if self._values:
            spec["values"] = plain_copy(self._values)
        else:
            spec.pop("values", None)
        return ordered(spec, HelmReleaseProps)
