"""The shape most add-ons share: a chart from a Helm repository, released with the fleet's defaults.

A pack that releases a chart this way configures the release's identity with :class:`ReleaseConfig`: the name
Helm knows it by and the namespace Helm keeps its records in. Those, with the namespace it installs into, are
what helm-controller finds a release by; a release installed before (by hand, or by another Flux repository)
is taken over where it is when they match, and installed a second time when they do not (the old one stays, or
is pruned with everything it installed).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Self, TypeVar

from pydantic import AfterValidator, Field, model_validator

from fluxplane.config.merge import deep_merge
from fluxplane.config.models import DnsLabel
from fluxplane.config.problems import show
from fluxplane.constructs.helm_release import (
    DEFAULT_DRIFT_DETECTION,
    DEFAULT_INSTALL,
    DEFAULT_POST_RENDER_STRATEGY,
    DEFAULT_UPGRADE,
    ChartReference,
    DriftDetection,
    HelmChartSourceReference,
    HelmChartTemplate,
    HelmChartTemplateSpec,
    HelmRelease,
    HelmReleaseProps,
    Install,
    Test,
    Upgrade,
)
from fluxplane.constructs.helm_repository import HelmRepository, HelmRepositoryProps
from fluxplane.constructs.oci_repository import (
    HELM_CHART_LAYER,
    LayerSelector,
    OCIRepository,
    OCIRepositoryProps,
    OCIRepositoryRef,
)
from fluxplane.constructs.props import DNS_SUBDOMAIN, FLUX_NAMESPACE, HELM_CONTROLLER, Duration, Props
from fluxplane.packs.api import PackConfig, is_exact
from fluxplane.packs.versions import Chart

#: The longest name Helm gives a release (chartutil.ValidateReleaseName).
RELEASE_NAME_LENGTH = 53


def _release_name(value: str) -> str:
    if len(value) > RELEASE_NAME_LENGTH or re.fullmatch(DNS_SUBDOMAIN, value) is None:
        raise ValueError(
            "expected a Helm release name: lower-case letters, digits, '-' and '.' (a DNS-1123 subdomain), at most "
            f"{RELEASE_NAME_LENGTH} characters, got {show(value)}"
        )
    return value


#: A Helm release name, as Helm takes it.
ReleaseName = Annotated[str, AfterValidator(_release_name)]


class ReleaseConfig(PackConfig):
    """The config of a pack that installs one Helm release (chart_release, oci_chart_release), with the release's
    identity beside the pack's own fields, set like them in base.yaml, an environment or a cluster.

    A subclass names the namespace its release installs into (``release_namespace``, the ``target_namespace`` it
    binds the release with): Helm's records of the release, which hold its values and its manifest, are kept
    there or in flux-system, where no app runs (an app never runs in an add-on's namespace, nor in flux-system).
    """

    #: The namespace the pack's release installs into.
    release_namespace: ClassVar[str]

    release_name: ReleaseName | None = Field(
        None,
        alias="releaseName",
        description="Helm release name (default: the pack's); a running release's name (helm ls -A) takes that "
        "release over, and changing it reinstalls the release.",
    )
    storage_namespace: DnsLabel | None = Field(
        None,
        alias="storageNamespace",
        description="Where Helm keeps the release's records: flux-system (default) or the namespace the release "
        "installs into; changing it reinstalls the release.",
    )

    def installs_into(self) -> str:
        """The namespace the release installs into: ``release_namespace``, unless the pack's config chooses it."""
        return self.release_namespace

    @model_validator(mode="after")
    def _stored_where_no_app_runs(self) -> Self:
        allowed = (FLUX_NAMESPACE, self.installs_into())
        if self.storage_namespace is not None and self.storage_namespace not in allowed:
            raise ValueError(
                f"storageNamespace {show(self.storage_namespace)} is neither {show(FLUX_NAMESPACE)} nor the "
                f"namespace the release installs into, {show(self.installs_into())}: Helm's records of the release "
                "hold its values, and stay where no app can read or change them"
            )
        return self


class ReleaseSettings(Props):
    """How helm-controller runs a release, merged over the fleet's defaults (DEFAULT_INSTALL, DEFAULT_UPGRADE,
    DEFAULT_DRIFT_DETECTION; mappings merge, lists replace): a chart file's ``install``, ``upgrade``, ``test``,
    ``timeout`` and ``driftDetection``."""

    timeout: Duration | None = None
    """Time to wait for each Kubernetes operation of a Helm action. Default: not set (Flux's, ``5m``)."""
    install: Install | None = None
    """How Helm installs the release, over DEFAULT_INSTALL. Default: not set (DEFAULT_INSTALL)."""
    upgrade: Upgrade | None = None
    """How Helm upgrades the release, over DEFAULT_UPGRADE. Default: not set (DEFAULT_UPGRADE)."""
    test: Test | None = None
    """Whether the chart's Helm tests run. Default: not set (they do not)."""
    drift_detection: DriftDetection | None = None
    """What Flux does about drift, over DEFAULT_DRIFT_DETECTION. Default: not set (DEFAULT_DRIFT_DETECTION)."""


_Setting = TypeVar("_Setting", bound=Props)


def _over(default: _Setting, setting: _Setting | None) -> _Setting:
    if setting is None:
        return default
    return type(default).model_validate(deep_merge(default.dump(), setting.dump()))


def _release(
    scope: Any,
    name: str,
    target_namespace: str,
    identity: ReleaseConfig | None,
    settings: ReleaseSettings | None,
    *,
    chart: HelmChartTemplate | None = None,
    chart_ref: ChartReference | None = None,
) -> HelmRelease:
    if identity is not None and identity.installs_into() != target_namespace:
        raise ValueError(
            f"release {name!r} installs into {target_namespace!r}, but its config's release_namespace is "
            f"{identity.installs_into()!r}"
        )
    settings = settings or ReleaseSettings()
    return HelmRelease(
        scope,
        "release",
        HelmReleaseProps(
            name=name,
            release_name=identity.release_name if identity is not None and identity.release_name else name,
            target_namespace=target_namespace,
            storage_namespace=identity.storage_namespace if identity is not None else None,
            service_account_name=HELM_CONTROLLER,
            chart=chart,
            chart_ref=chart_ref,
            timeout=settings.timeout,
            install=_over(DEFAULT_INSTALL, settings.install),
            upgrade=_over(DEFAULT_UPGRADE, settings.upgrade),
            test=settings.test,
            drift_detection=_over(DEFAULT_DRIFT_DETECTION, settings.drift_detection),
            post_render_strategy=DEFAULT_POST_RENDER_STRATEGY,
        ),
    )


def chart_release(
    scope: Any,
    *,
    name: str,
    chart: Chart,
    version: str,
    target_namespace: str,
    repository: str | None = None,
    identity: ReleaseConfig | None = None,
    settings: ReleaseSettings | None = None,
) -> HelmRelease:
    """A HelmRepository for ``chart`` and a HelmRelease ``name`` of it into ``target_namespace``.

    Both live in flux-system (so they work under Flux's no-cross-namespace-refs lockdown); the
    release retries installs, rolls back failed upgrades and corrects drift (``settings`` changes that).
    ``version`` is a version, or a semver range of them. The release is called ``name`` and Helm keeps it in
    flux-system, unless ``identity`` (the pack's config) names it otherwise. Returns the release, for values and
    health checks.
    """
    source = HelmRepository(scope, "repository", HelmRepositoryProps(name=repository or name, url=chart.repository))
    spec = HelmChartTemplateSpec(
        chart=chart.chart, version=version, source_ref=HelmChartSourceReference(kind="HelmRepository", name=source.name)
    )
    return _release(scope, name, target_namespace, identity, settings, chart=HelmChartTemplate(spec=spec))


def oci_chart_release(
    scope: Any,
    *,
    name: str,
    url: str,
    version: str,
    target_namespace: str,
    identity: ReleaseConfig | None = None,
    settings: ReleaseSettings | None = None,
) -> HelmRelease:
    """An OCIRepository ``name`` for the chart artifact at ``url`` (tag ``version``, or the newest tag in it when
    it is a semver range) and a HelmRelease of it (``chartRef``) into ``target_namespace``, with the same
    defaults as chart_release."""
    source = OCIRepository(
        scope,
        "chart",
        OCIRepositoryProps(
            name=name,
            url=url,
            ref=OCIRepositoryRef(tag=version) if is_exact(version) else OCIRepositoryRef(semver=version),
            layer_selector=LayerSelector(media_type=HELM_CHART_LAYER, operation="copy"),
        ),
    )
    chart_ref = ChartReference(kind="OCIRepository", name=source.name)
    return _release(scope, name, target_namespace, identity, settings, chart_ref=chart_ref)


def keep_service_account(values: dict[str, Any], namespace: str, account: str, under: str = "") -> dict[str, Any]:
    """Refuse extra Helm values that rename the chart's service account or stop creating it: an add-on's
    Pod Identity role is bound to exactly ``namespace``/``account``. ``under`` is the values key that
    holds ``serviceAccount`` (``controller`` for ``controller.serviceAccount``), empty for the top level."""
    section = values.get(under) if under else values
    found = section.get("serviceAccount") if isinstance(section, dict) else None
    if isinstance(found, dict) and {"create", "name"} & found.keys():
        key = f"{under}.serviceAccount" if under else "serviceAccount"
        raise ValueError(
            f"must not set {key}.create or .name: the Pod Identity role is bound to service account "
            f"{namespace}/{account}"
        )
    return values
