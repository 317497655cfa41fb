"""Flux HelmRelease (``helm.toolkit.fluxcd.io/v2``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import StringConstraints, model_validator

from fluxplane.config.merge import deep_merge
from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import (
    DNS_SUBDOMAIN,
    FLUX_NAMESPACE,
    DependsOn,
    Duration,
    KubeConfigReference,
    Label,
    Name,
    PatchSelector,
    Props,
    dependency_entry,
    dumped,
    ordered,
    plain_copy,
)


class HelmChartSourceReference(Props):
    """``chart.spec.sourceRef``: where helm-controller fetches the chart from."""

    kind: Literal["HelmRepository", "GitRepository", "Bucket"]
    """Kind of the source: ``HelmRepository``, ``GitRepository`` or ``Bucket``."""
    name: Name
    """Name of the source."""
    namespace: Label | None = None
    """Namespace of the source. Default: not set (the HelmRelease's namespace)."""
    api_version: str | None = None
    """API version of the source. Default: not set (Flux finds the source by kind and name)."""


class HelmChartTemplateSpec(Props):
    """``chart.spec``: the chart, its version and its source, for the HelmChart Flux creates."""

    chart: str
    """Name of the chart in a HelmRepository, or its path in a GitRepository or Bucket."""
    version: str | None = None
    """SemVer range of chart versions, of which the latest is used; ignored for GitRepository and Bucket sources.
    Default: not set (``"*"``, the latest version)."""
    source_ref: HelmChartSourceReference
    """The source the chart comes from."""
    interval: Duration | None = None
    """How often Flux checks the source for a new chart. Default: not set (the HelmRelease's ``interval``)."""
    reconcile_strategy: Literal["ChartVersion", "Revision"] | None = None
    """What makes a new chart artifact: a new chart version (``ChartVersion``) or a new source revision
    (``Revision``). Default: not set (Flux's default, ``ChartVersion``)."""
    values_files: tuple[str, ...] | None = None
    """Values files in the source, merged in order (the last wins), used in place of the chart's ``values.yaml``.
    Default: not set (the chart's ``values.yaml``)."""


class HelmChartTemplate(Props):
    """A HelmRelease's ``chart``: the template of the HelmChart Flux creates for it."""

    spec: HelmChartTemplateSpec
    """The chart, its version and its source."""


class ChartReference(Props):
    """A HelmRelease's ``chartRef``: a source object that holds the chart artifact."""

    kind: Literal["OCIRepository", "HelmChart", "ExternalArtifact"]
    """Kind of the source: ``OCIRepository``, ``HelmChart`` or ``ExternalArtifact``."""
    name: Name
    """Name of the source."""
    namespace: Label | None = None
    """Namespace of the source. Default: not set (the HelmRelease's namespace)."""
    api_version: str | None = None
    """API version of the source. Default: not set (Flux finds the source by kind and name)."""


class ValuesReference(Props):
    """A ``valuesFrom`` entry: Helm values from a ConfigMap or Secret."""

    kind: Literal["Secret", "ConfigMap"]
    """Kind of the object: ``Secret`` or ``ConfigMap``."""
    name: Name
    """Name of the object, in the HelmRelease's namespace."""
    values_key: str | None = None
    """Data key that holds the values file (or, with ``targetPath``, the single value). Default: not set
    (``values.yaml``)."""
    target_path: str | None = None
    """YAML dot-notation path the value is merged at; the key then holds one flat value. Default: not set (the values
    are merged at the root)."""
    optional: bool | None = None
    """Whether a missing object is ignored (any other error still fails). Default: not set (Flux's default,
    ``false``)."""


#: A Helm release name, as Helm checks it (chartutil.ValidateReleaseName): a DNS-1123 subdomain of at most 53
#: characters, which leaves charts 10 of a 63-character name for what they add to it.
ReleaseName = Annotated[str, StringConstraints(pattern=DNS_SUBDOMAIN, max_length=53)]


class Remediation(Props):
    """What helm-controller does when a Helm install (or, as UpgradeRemediation, an upgrade) fails."""

    retries: int | None = None
    """How many times a failed action is retried, with remediation between attempts (an uninstall after an install,
    ``strategy`` after an upgrade); negative means no limit. Default: not set (0)."""
    remediate_last_failure: bool | None = None
    """Whether the last failure is remediated too, once no retries remain. Default: not set (``false``; for an
    upgrade, ``true`` when ``retries`` is above 0)."""
    ignore_test_failures: bool | None = None
    """Whether Helm tests that fail after the action leave the release alone (no remediation). Default: not set
    (``test.ignoreFailures``)."""


class UpgradeRemediation(Remediation):
    """What helm-controller does when a Helm upgrade fails."""

    strategy: Literal["rollback", "uninstall"] | None = None
    """How a failed upgrade is remediated: ``rollback`` or ``uninstall``. Default: not set (Flux's default,
    ``rollback``)."""


class Strategy(Props):
    """How helm-controller goes on after a failed install or upgrade (``install.strategy``, ``upgrade.strategy``)."""

    name: Literal["RemediateOnFailure", "RetryOnFailure"]
    """``RemediateOnFailure`` remediates as ``remediation`` says (uninstall, roll back) between its retries;
    ``RetryOnFailure`` leaves the failed release in place and retries it with an upgrade every ``retryInterval``."""
    retry_interval: Duration | None = None
    """How long to wait before trying a failed action again; only with ``RetryOnFailure``. Default: not set (Flux's
    default, ``5m``)."""

    @model_validator(mode="after")
    def _interval_with_retry(self) -> Strategy:
        if self.retry_interval is not None and self.name != "RetryOnFailure":
            raise ValueError(f"retryInterval applies to name 'RetryOnFailure' only, got name {self.name!r}")
        return self


class Install(Props):
    """A HelmRelease's ``install``: how Helm installs the release."""

    crds: Literal["Skip", "Create", "CreateReplace"] | None = None
    """What happens to the CRDs in the chart's ``crds/`` directory: ``Skip``, ``Create`` (new CRDs only) or
    ``CreateReplace`` (existing ones updated too). Default: not set (Flux's default, ``Create``)."""
    create_namespace: bool | None = None
    """Whether Helm creates the target namespace if it is missing (it is never deleted). Default: not set
    (``false``)."""
    remediation: Remediation | None = None
    """What to do when the install fails. Default: not set (no remediation)."""
    strategy: Strategy | None = None
    """How helm-controller goes on after a failed install. Default: not set (Flux's default, ``RemediateOnFailure``)."""
    timeout: Duration | None = None
    """Time to wait for each Kubernetes operation of the install, such as a hook's Job. Default: the HelmRelease's
    ``timeout``."""


class Upgrade(Props):
    """A HelmRelease's ``upgrade``: how Helm upgrades the release."""

    crds: Literal["Skip", "Create", "CreateReplace"] | None = None
    """What happens to the CRDs in the chart's ``crds/`` directory: ``Skip``, ``Create`` (new CRDs only) or
    ``CreateReplace`` (existing ones updated too). Default: not set (Flux's default, ``Skip``)."""
    remediation: UpgradeRemediation | None = None
    """What to do when the upgrade fails. Default: not set (no remediation)."""
    strategy: Strategy | None = None
    """How helm-controller goes on after a failed upgrade. Default: not set (Flux's default, ``RemediateOnFailure``)."""
    cleanup_on_fail: bool | None = None
    """Whether resources a failed upgrade created are deleted. Default: not set (``false``)."""
    timeout: Duration | None = None
    """Time to wait for each Kubernetes operation of the upgrade, such as a hook's Job. Default: the HelmRelease's
    ``timeout``."""


class TestFilter(Props):
    """A ``test.filters`` entry: one of the chart's tests, run alone or left out."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=253)]
    """Name of the test (its Pod's name in the chart)."""
    exclude: bool | None = None
    """Whether the test is left out (the others run) rather than run (alone with the other named ones). Default: not
    set (``false``)."""


class Test(Props):
    """A HelmRelease's ``test``: whether helm-controller runs the chart's Helm tests after an install or upgrade."""

    enable: bool | None = None
    """Whether the tests run. Default: not set (``false``)."""
    filters: tuple[TestFilter, ...] | None = None
    """Tests to run, or to leave out. Default: not set (every test of the chart)."""
    ignore_failures: bool | None = None
    """Whether failed tests leave the release alone (no remediation). Default: not set (``false``)."""
    timeout: Duration | None = None
    """Time to wait for each Kubernetes operation of the tests. Default: the HelmRelease's ``timeout``."""


class DriftIgnoreRule(Props):
    """A ``driftDetection.ignore`` entry: fields whose difference from the release is not drift."""

    paths: tuple[str, ...]
    """JSON Pointers (RFC 6901) to the fields, such as ``/spec/replicas``."""
    target: PatchSelector | None = None
    """The objects the paths are ignored in. Default: not set (every object of the release)."""


class DriftDetection(Props):
    """A HelmRelease's ``driftDetection``: what Flux does when the cluster differs from the release."""

    mode: Literal["enabled", "warn", "disabled"] = "enabled"
    """``enabled`` corrects differences between the Helm manifest and the cluster, ``warn`` reports them,
    ``disabled`` ignores them. Default: ``"enabled"`` (Flux's own default is ``disabled``)."""
    ignore: tuple[DriftIgnoreRule, ...] | None = None
    """Fields whose differences are not drift, such as replicas an autoscaler sets. Default: not set (none)."""


#: How helm-controller passes a chart's hooks to its post-renderers (``postRenderStrategy``, Flux 2.9 and newer):
#: ``nohooks`` leaves them out (Helm 3's way, Flux's default before 2.9), ``combined`` renders them with the other
#: templates in one stream (Helm 4's way, Flux's default from 2.9), ``separate`` in a stream of their own.
PostRenderStrategy = Literal["nohooks", "combined", "separate"]


class HelmReleaseProps(Props):
    """Props of a HelmRelease: the chart, where it goes, and how helm-controller reconciles it."""

    name: Name
    """``metadata.name`` of the HelmRelease."""
    namespace: Label = FLUX_NAMESPACE
    """Namespace of the HelmRelease. Default: ``"flux-system"``."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    annotations: dict[str, str] | None = None
    """``metadata.annotations``. Default: none."""
    interval: Duration = "30m"
    """How often helm-controller reconciles the release. Default: ``"30m"``."""
    chart: HelmChartTemplate | None = None
    """Template of the HelmChart Flux creates from a HelmRepository, GitRepository or Bucket; set this or
    ``chart_ref``. Default: not set."""
    chart_ref: ChartReference | None = None
    """Source object that holds the chart artifact, such as an OCIRepository; set this or ``chart``. Default: not
    set."""
    release_name: ReleaseName | None = None
    """Name of the Helm release: a DNS-1123 subdomain of at most 53 characters, as Helm takes it. Default: not set
    (``<targetNamespace>-<name>``, or ``<name>`` without a target namespace; helm-controller shortens one longer than
    53 characters, fluxplane.synth.hazards.release_target)."""
    target_namespace: Label | None = None
    """Namespace the release installs into. Default: not set (the HelmRelease's namespace)."""
    storage_namespace: Label | None = None
    """Namespace of Helm's storage of the release. Default: not set (the HelmRelease's namespace)."""
    kube_config: KubeConfigReference | None = None
    """Kubeconfig of a remote cluster to install on. Default: not set (the cluster helm-controller runs in)."""
    service_account_name: Name | None = None
    """The ServiceAccount helm-controller impersonates for the release; a ServiceAccount's name is a DNS-1123
    subdomain, as Kubernetes has it (longer than a label may be). Default: not set (the controller's own account, or
    its ``--default-service-account``)."""
    depends_on: tuple[DependsOn, ...] | None = None
    """HelmReleases that must be ready before this one is reconciled; ``depends_on()`` adds more. Default: not set
    (none)."""
    timeout: Duration | None = None
    """Time to wait for each Kubernetes operation of a Helm action, such as a hook's Job. Default: not set (Flux's
    default, ``5m``)."""
    install: Install | None = None
    """How Helm installs the release. Default: not set (Flux's defaults)."""
    upgrade: Upgrade | None = None
    """How Helm upgrades the release. Default: not set (Flux's defaults)."""
    test: Test | None = None
    """Whether the chart's Helm tests run after an install or upgrade. Default: not set (they do not)."""
    drift_detection: DriftDetection | None = None
    """What Flux does when the cluster differs from the release. Default: not set (Flux's default, ``disabled``)."""
    post_render_strategy: PostRenderStrategy | None = None
    """Whether the chart's hooks (its Jobs and what they need) go through the post-renderers too: ``nohooks``,
    ``combined`` or ``separate`` (PostRenderStrategy). Every release runs at least Flux's own post-renderer, which
    labels each object with the HelmRelease it came from. Default: not set (Flux's default: ``combined`` from Flux
    2.9, ``nohooks`` before)."""
    values_from: tuple[ValuesReference, ...] | None = None
    """ConfigMaps and Secrets with values, merged in order; ``values`` is merged over them. Default: not set (none)."""
    values: dict[str, Any] | None = None
    """Helm values of the release, merged over ``values_from``; ``add_values()`` deep-merges more. Default: not set
    (none)."""

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
#: Hooks stay out of the post-renderers, as before Flux 2.9 made ``combined`` its default. fluxplane gives a release
#: no post-renderers of its own, so ``combined`` would only add Flux's origin labels to the hooks' Jobs, at the price
#: of running every hook of the catalogue (cert-manager's startupapicheck, kube-prometheus-stack's admission-webhook
#: patch Jobs, Kyverno's migration and clean-up Jobs, Envoy Gateway's certgen, the flux2 chart's flux-check and
#: migration Jobs) through kustomize's resource map, where a hook with the kind, namespace and name of another
#: object fails the whole release. With ``nohooks`` a fleet renders its hooks as the charts write them, whichever
#: Flux it runs (a Flux older than 2.9 drops the field and does the same).
DEFAULT_POST_RENDER_STRATEGY: PostRenderStrategy = "nohooks"


class HelmRelease(TypedResource[HelmReleaseProps]):
    """A Helm release reconciled by helm-controller. ``add_values`` deep-merges more values."""

    api_version = "helm.toolkit.fluxcd.io/v2"
    kind = "HelmRelease"
    props_class = HelmReleaseProps

    def __init__(self, scope: Any, construct_id: str, props: HelmReleaseProps) -> None:
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
