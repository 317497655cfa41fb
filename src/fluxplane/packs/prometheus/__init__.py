"""prometheus: kube-prometheus-stack, remote-writing to Amazon Managed Service for Prometheus.

The Prometheus operator runs one Prometheus that scrapes the cluster (kubelets, node-exporter,
kube-state-metrics and every ServiceMonitor and PodMonitor) and remote-writes to an AMP workspace,
signing with SigV4 as the IAM role EKS Pod Identity gives its service account. AMP keeps the
long-term data, so local retention is short; dashboards and alerting usually sit on the workspace
(Amazon Managed Grafana, the AMP alert manager), so the chart's Grafana and Alertmanager are off
unless switched on. EKS runs the control plane, so the chart's scrapes of kube-controller-manager,
kube-scheduler and etcd would only ever be down, and kube-proxy's metrics listen on localhost: all
four are off.

The workspace ID has no sensible default: the base file may set it only for a fleet-wide workspace,
otherwise each environment (or cluster) sets its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field, field_validator

from fluxplane.config.models import AWS_REGION
from fluxplane.config.problems import show
from fluxplane.packs import versions
from fluxplane.sdk import (
    SUBSTITUTED,
    Namespace,
    NamespaceProps,
    Pack,
    PackContext,
    ReleaseConfig,
    chart_release,
    keep_service_account,
)

#: Where the chart runs, and the fixed name of the Prometheus server's service account: the
#: Pod Identity association binds the IAM role to exactly this pair.
NAMESPACE = "monitoring"
SERVICE_ACCOUNT = "prometheus"
REMOTE_WRITE_POLICY = "arn:aws:iam::aws:policy/AmazonPrometheusRemoteWriteAccess"

#: AMP's workspace ID pattern (``[0-9A-Za-z][-.0-9A-Z_a-z]*``, at most 64 characters) under the ``ws-`` prefix.
WORKSPACE_ID = r"ws-[0-9A-Za-z][-.0-9A-Za-z_]{0,60}"
#: The Prometheus operator's Duration, without the bare ``0``.
PROMETHEUS_DURATION = r"(?=.)([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?"
CLUSTER_REGION = "${cluster_region}"


def _matching(pattern: str, expected: str) -> Callable[[str], str]:
    regex = re.compile(pattern)

    def check(value: str) -> str:
        if not regex.fullmatch(value):
            raise ValueError(f"expected {expected}, got {show(value)}")
        return value

    return check


WorkspaceId = Annotated[
    str, AfterValidator(_matching(WORKSPACE_ID, "an AMP workspace ID such as ws-12345678-abcd-ef01-2345-6789abcdef01"))
]
PrometheusDuration = Annotated[
    str, AfterValidator(_matching(PROMETHEUS_DURATION, "a Prometheus duration such as 30s, 12h or 2d"))
]
WorkspaceRegion = Annotated[
    str,
    AfterValidator(
        _matching(
            re.escape(CLUSTER_REGION) + "|" + AWS_REGION.removeprefix("^").removesuffix("$"),
            "${cluster_region} or an AWS region such as us-west-2",
        )
    ),
]


class PrometheusConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    workspace_id: WorkspaceId = Field(
        alias="workspaceId",
        description="ID of the AMP workspace to remote-write to (ws-...); no default: set it per environment "
        "or cluster, or in the base file for a fleet-wide workspace.",
        examples=["ws-12345678-abcd-ef01-2345-6789abcdef01"],
    )
    workspace_region: Annotated[WorkspaceRegion, SUBSTITUTED] = Field(
        CLUSTER_REGION,
        alias="workspaceRegion",
        description="Region of the AMP workspace: ${cluster_region}, the cluster's own, by default; set it when "
        "clusters of several regions share one workspace.",
    )
    retention: PrometheusDuration = Field(
        "1d", description="How long Prometheus keeps samples locally; AMP keeps the long-term copy."
    )
    replicas: int = Field(
        1, ge=1, le=5, description="Prometheus replicas; AMP de-duplicates their samples (cluster and __replica__)."
    )
    scrape_interval: PrometheusDuration = Field(
        "30s", alias="scrapeInterval", description="Default interval between scrapes."
    )
    select_all_monitors: bool = Field(
        True,
        alias="selectAllMonitors",
        description="Use every ServiceMonitor, PodMonitor, Probe, ScrapeConfig and PrometheusRule in the "
        "cluster, not only those labelled for this Helm release.",
    )
    grafana: bool = Field(False, description="Run the chart's Grafana (off: query AMP from Amazon Managed Grafana).")
    alertmanager: bool = Field(False, description="Run the chart's Alertmanager (off: alert from AMP).")
    version: str = Field(versions.KUBE_PROMETHEUS_STACK.version, description="kube-prometheus-stack chart version.")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")

    @field_validator("values")
    @classmethod
    def _keep_service_account(cls, values: dict[str, Any]) -> dict[str, Any]:
        return keep_service_account(values, NAMESPACE, SERVICE_ACCOUNT, under="prometheus")


def remote_write_url(workspace_id: str, region: str = CLUSTER_REGION) -> str:
    """The remote-write endpoint of AMP workspace ``workspace_id`` in ``region``."""
    return f"https://aps-workspaces.{region}.amazonaws.com/workspaces/{workspace_id}/api/v1/remote_write"


#: How long Flux waits for the stack to be healthy.
INSTALL_TIMEOUT = "15m"


def bind(ctx: PackContext, config: PrometheusConfig) -> None:
    Namespace(ctx.scope, "namespace", NamespaceProps(name=NAMESPACE))
    release = chart_release(
        ctx.scope,
        name="kube-prometheus-stack",
        chart=versions.KUBE_PROMETHEUS_STACK,
        version=config.version,
        target_namespace=NAMESPACE,
        identity=config,
    )
    select_own_release = not config.select_all_monitors
    release.add_values(
        {
            "prometheus": {
                "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
                "prometheusSpec": {
                    "replicas": config.replicas,
                    "retention": config.retention,
                    "scrapeInterval": config.scrape_interval,
                    "externalLabels": {"cluster": "${cluster_name}"},
                    "replicaExternalLabelName": "__replica__",
                    "remoteWrite": [
                        {
                            "url": remote_write_url(config.workspace_id, config.workspace_region),
                            "sigv4": {"region": config.workspace_region},
                        }
                    ],
                    "serviceMonitorSelectorNilUsesHelmValues": select_own_release,
                    "podMonitorSelectorNilUsesHelmValues": select_own_release,
                    "probeSelectorNilUsesHelmValues": select_own_release,
                    "scrapeConfigSelectorNilUsesHelmValues": select_own_release,
                    "ruleSelectorNilUsesHelmValues": select_own_release,
                },
            },
            "grafana": {"enabled": config.grafana},
            "alertmanager": {"enabled": config.alertmanager},
            "nodeExporter": {"enabled": True},
            "kubeStateMetrics": {"enabled": True},
            "kubeControllerManager": {"enabled": False},
            "kubeScheduler": {"enabled": False},
            "kubeEtcd": {"enabled": False},
            "kubeProxy": {"enabled": False},
        }
    )
    release.add_values(config.values)
    ctx.add_pod_identity(
        "remote-write", namespace=NAMESPACE, service_account=SERVICE_ACCOUNT, managed_policies=(REMOTE_WRITE_POLICY,)
    )
    ctx.add_health_check(release)
    # The first install pulls the operator, Prometheus and the exporters and waits for them all.
    ctx.timeout = INSTALL_TIMEOUT


PACK = Pack(
    name="prometheus",
    version="1.0.0",
    description="kube-prometheus-stack remote-writing to Amazon Managed Service for Prometheus",
    config=PrometheusConfig,
    layer="controllers",
    bind=bind,
    namespaces=(NAMESPACE,),
    # the Prometheus operator's: ServiceMonitor, PodMonitor, PrometheusRule, Probe, ScrapeConfig, Prometheus, ...
    crds=("monitoring.coreos.com",),
)
