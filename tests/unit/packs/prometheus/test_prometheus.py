"""Tests for fluxplane.packs.prometheus: its config model, its documents, its Pod Identity and its health gate."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.constructs import NamespacedObjectKindReference
from fluxplane.packs import versions
from fluxplane.packs.api import PodIdentity
from fluxplane.packs.prometheus import PACK, PrometheusConfig, remote_write_url
from fluxplane.testing import BoundPack, bind_pack

WORKSPACE = "ws-12345678-abcd-ef01-2345-6789abcdef01"
REMOTE_WRITE = f"https://aps-workspaces.${{cluster_region}}.amazonaws.com/workspaces/{WORKSPACE}/api/v1/remote_write"

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "monitoring"}}
REPOSITORY = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "HelmRepository",
    "metadata": {"name": "kube-prometheus-stack", "namespace": "flux-system"},
    "spec": {"interval": "1h", "url": "https://prometheus-community.github.io/helm-charts"},
}
DEFAULT_VALUES: dict[str, Any] = {
    "prometheus": {
        "serviceAccount": {"create": True, "name": "prometheus"},
        "prometheusSpec": {
            "replicas": 1,
            "retention": "1d",
            "scrapeInterval": "30s",
            "externalLabels": {"cluster": "${cluster_name}"},
            "replicaExternalLabelName": "__replica__",
            "remoteWrite": [{"url": REMOTE_WRITE, "sigv4": {"region": "${cluster_region}"}}],
            "serviceMonitorSelectorNilUsesHelmValues": False,
            "podMonitorSelectorNilUsesHelmValues": False,
            "probeSelectorNilUsesHelmValues": False,
            "scrapeConfigSelectorNilUsesHelmValues": False,
            "ruleSelectorNilUsesHelmValues": False,
        },
    },
    "grafana": {"enabled": False},
    "alertmanager": {"enabled": False},
    "nodeExporter": {"enabled": True},
    "kubeStateMetrics": {"enabled": True},
    "kubeControllerManager": {"enabled": False},
    "kubeScheduler": {"enabled": False},
    "kubeEtcd": {"enabled": False},
    "kubeProxy": {"enabled": False},
}


def _release(values: dict[str, Any], version: str = "91.5.0") -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "kube-prometheus-stack", "namespace": "flux-system"},
        "spec": {
            "interval": "30m",
            "chart": {
                "spec": {
                    "chart": "kube-prometheus-stack",
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": "kube-prometheus-stack"},
                }
            },
            "releaseName": "kube-prometheus-stack",
            "targetNamespace": "monitoring",
            "serviceAccountName": "helm-controller",
            "postRenderStrategy": "nohooks",
            "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
            "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}},
            "driftDetection": {"mode": "enabled"},
            "values": values,
        },
    }


def _config(**section: Any) -> PrometheusConfig:
    return PrometheusConfig.model_validate({"workspaceId": WORKSPACE, **section})


def _values(ctx: BoundPack) -> dict[str, Any]:
    release = ctx.objects[-1]
    assert release["kind"] == "HelmRelease"
    return release["spec"]["values"]  # type: ignore[no-any-return]


def test_config_defaults() -> None:
    # GIVEN only a workspace ID WHEN the config is made
    # THEN the cluster's region, one replica keeping a day, 30s scrapes, every monitor, no Grafana or Alertmanager
    assert _config() == PrometheusConfig(
        enabled=True,
        workspaceId=WORKSPACE,
        workspaceRegion="${cluster_region}",
        retention="1d",
        replicas=1,
        scrapeInterval="30s",
        selectAllMonitors=True,
        grafana=False,
        alertmanager=False,
        version=versions.KUBE_PROMETHEUS_STACK.version,
        values={},
    )
    assert versions.KUBE_PROMETHEUS_STACK == (
        "https://prometheus-community.github.io/helm-charts",
        "kube-prometheus-stack",
        "91.5.0",
    )


def test_workspace_id_is_required() -> None:
    # GIVEN no values (the pack's defaults are incomplete) WHEN validated THEN the workspace ID is missing
    with pytest.raises(ValidationError) as exc:
        PrometheusConfig.model_validate({})
    assert [(e["loc"], e["type"]) for e in exc.value.errors()] == [(("workspaceId",), "missing")]


def test_config_takes_camel_case_keys_only() -> None:
    # GIVEN the Python field name instead of the documented key WHEN validated THEN it is refused
    with pytest.raises(ValidationError, match=r"workspace_id\n  Extra inputs are not permitted"):
        PrometheusConfig.model_validate({"workspaceId": WORKSPACE, "workspace_id": WORKSPACE})


@pytest.mark.parametrize(
    ("section", "loc", "message"),
    [
        ({"workspaceId": "12345678"}, "workspaceId", r'expected an AMP workspace ID such as ws-\S+, got "12345678"'),
        ({"workspaceId": "ws-"}, "workspaceId", 'got "ws-"'),
        ({"workspaceId": "ws-a/b"}, "workspaceId", 'got "ws-a/b"'),
        ({"workspaceId": "ws-" + "a" * 62}, "workspaceId", "expected an AMP workspace ID"),
        ({"retention": "10 days"}, "retention", 'expected a Prometheus duration such as 30s, 12h or 2d, got "10 days"'),
        ({"retention": ""}, "retention", 'got ""'),
        ({"retention": "0"}, "retention", 'got "0"'),
        ({"scrapeInterval": "30"}, "scrapeInterval", 'expected a Prometheus duration such as 30s, 12h or 2d, got "30"'),
        ({"workspaceRegion": "mars-1"}, "workspaceRegion", r"expected \$\{cluster_region\} or an AWS region"),
        ({"replicas": 0}, "replicas", "greater than or equal to 1"),
        ({"replicas": 6}, "replicas", "less than or equal to 5"),
        ({"grafana": "maybe"}, "grafana", "valid boolean"),
        (
            {"values": {"prometheus": {"serviceAccount": {"name": "other"}}}},
            "values",
            "must not set prometheus.serviceAccount.create or .name: the Pod Identity role is bound to service "
            "account monitoring/prometheus",
        ),
        ({"values": {"prometheus": {"serviceAccount": {"create": False}}}}, "values", "must not set"),
    ],
)
def test_config_refuses_bad_values(section: dict[str, Any], loc: str, message: str) -> None:
    # GIVEN one bad field WHEN validated THEN that field alone is refused, saying what was expected
    with pytest.raises(ValidationError) as exc:
        PrometheusConfig.model_validate({"workspaceId": WORKSPACE, **section})
    errors = exc.value.errors()
    assert [e["loc"] for e in errors] == [(loc,)]
    assert re.search(message, errors[0]["msg"]), errors[0]["msg"]


@pytest.mark.parametrize(
    "section",
    [
        {"workspaceId": "ws-41det8a1-2c67-6a1a-9381-9b83d3d78ef7"},
        {"workspaceRegion": "us-east-1"},
        {"retention": "2w3d12h"},
        {"scrapeInterval": "500ms"},
        {"values": {"prometheus": {"serviceAccount": {"annotations": {"team": "platform"}}}}},
    ],
)
def test_config_accepts_good_values(section: dict[str, Any]) -> None:
    # GIVEN values in the documented forms WHEN validated THEN they are kept as given
    config = _config(**section)
    dumped = config.model_dump(by_alias=True)
    assert {key: dumped[key] for key in section} == section


def test_default_documents() -> None:
    # GIVEN only a workspace ID WHEN bound
    ctx = bind_pack(PACK, _config())

    # THEN the namespace, the chart's repository and a release remote-writing to the workspace are produced
    assert ctx.objects == [NAMESPACE, REPOSITORY, _release(DEFAULT_VALUES)]


def test_remote_write_url() -> None:
    # GIVEN a workspace and a region WHEN the endpoint is made THEN it is AMP's remote-write path in that region
    assert remote_write_url("ws-1", "eu-west-1") == (
        "https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-1/api/v1/remote_write"
    )
    assert remote_write_url("ws-1") == (
        "https://aps-workspaces.${cluster_region}.amazonaws.com/workspaces/ws-1/api/v1/remote_write"
    )


def test_workspace_region_signs_and_targets_that_region() -> None:
    # GIVEN a workspace in us-east-1 shared by clusters of other regions WHEN bound
    values = _values(bind_pack(PACK, _config(workspaceRegion="us-east-1")))

    # THEN the endpoint and the SigV4 signature both use us-east-1
    assert values["prometheus"]["prometheusSpec"]["remoteWrite"] == [
        {
            "url": f"https://aps-workspaces.us-east-1.amazonaws.com/workspaces/{WORKSPACE}/api/v1/remote_write",
            "sigv4": {"region": "us-east-1"},
        }
    ]


def test_typed_settings_reach_the_chart() -> None:
    # GIVEN every typed setting changed
    config = _config(
        retention="7d",
        replicas=2,
        scrapeInterval="1m",
        selectAllMonitors=False,
        grafana=True,
        alertmanager=True,
    )

    # WHEN bound
    values = _values(bind_pack(PACK, config))

    # THEN each lands on its chart value
    spec = values["prometheus"]["prometheusSpec"]
    assert (spec["retention"], spec["replicas"], spec["scrapeInterval"]) == ("7d", 2, "1m")
    assert [spec[f"{kind}SelectorNilUsesHelmValues"] for kind in ("serviceMonitor", "podMonitor", "probe")] == [
        True,
        True,
        True,
    ]
    assert (spec["scrapeConfigSelectorNilUsesHelmValues"], spec["ruleSelectorNilUsesHelmValues"]) == (True, True)
    assert (values["grafana"], values["alertmanager"]) == ({"enabled": True}, {"enabled": True})


def test_custom_version_pins_the_chart() -> None:
    # GIVEN another chart version WHEN bound THEN the release asks for that version
    ctx = bind_pack(PACK, _config(version="80.0.0"))
    assert ctx.objects[-1] == _release(DEFAULT_VALUES, version="80.0.0")


def test_values_are_merged_last() -> None:
    # GIVEN values that add an external label, resources and a Grafana setting
    config = _config(
        values={
            "prometheus": {
                "prometheusSpec": {
                    "externalLabels": {"team": "platform"},
                    "resources": {"requests": {"memory": "2Gi"}},
                }
            },
            "grafana": {"adminPassword": "x"},
        }
    )

    # WHEN bound
    values = _values(bind_pack(PACK, config))

    # THEN mappings merge key by key: the cluster label stays, the pack's own settings stay
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["externalLabels"] == {"cluster": "${cluster_name}", "team": "platform"}
    assert spec["resources"] == {"requests": {"memory": "2Gi"}}
    assert spec["remoteWrite"] == DEFAULT_VALUES["prometheus"]["prometheusSpec"]["remoteWrite"]
    assert values["grafana"] == {"enabled": False, "adminPassword": "x"}


def test_pod_identity_is_the_prometheus_service_account() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, _config())

    # THEN one role with AWS's remote-write policy is declared, for the service account the chart creates
    assert ctx.pod_identities == [
        PodIdentity(
            name="remote-write",
            namespace="monitoring",
            service_account="prometheus",
            managed_policies=("arn:aws:iam::aws:policy/AmazonPrometheusRemoteWriteAccess",),
            policy=None,
        )
    ]
    release = ctx.objects[-1]
    identity = ctx.pod_identities[0]
    assert identity.namespace == release["spec"]["targetNamespace"]
    assert identity.service_account == release["spec"]["values"]["prometheus"]["serviceAccount"]["name"]
    assert release["spec"]["values"]["prometheus"]["serviceAccount"]["create"] is True
    assert "annotations" not in release["spec"]["values"]["prometheus"]["serviceAccount"]


def test_health_check_is_the_helm_release() -> None:
    # GIVEN the default config WHEN bound THEN the pack is gated on its HelmRelease, with no CEL checks
    ctx = bind_pack(PACK, _config())
    assert ctx.health_checks == [
        NamespacedObjectKindReference(
            api_version="helm.toolkit.fluxcd.io/v2",
            kind="HelmRelease",
            name="kube-prometheus-stack",
            namespace="flux-system",
        )
    ]
    assert ctx.health_check_exprs == []


def test_flux_waits_longer_for_the_stack_than_for_a_single_controller() -> None:
    assert bind_pack(PACK, _config()).timeout == "15m"
