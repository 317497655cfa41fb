"""Tests for fluxplane.packs.metrics_server: its config model, its documents and its health gate."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.constructs import NamespacedObjectKindReference
from fluxplane.packs import versions
from fluxplane.packs.metrics_server import PACK, MetricsServerConfig
from fluxplane.testing import bind_pack

REPOSITORY = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "HelmRepository",
    "metadata": {"name": "metrics-server", "namespace": "flux-system"},
    "spec": {"interval": "1h", "url": "https://kubernetes-sigs.github.io/metrics-server/"},
}


def _release(values: dict[str, Any], version: str = versions.METRICS_SERVER.version) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "metrics-server", "namespace": "flux-system"},
        "spec": {
            "interval": "30m",
            "chart": {
                "spec": {
                    "chart": "metrics-server",
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": "metrics-server"},
                }
            },
            "releaseName": "metrics-server",
            "targetNamespace": "kube-system",
            "serviceAccountName": "helm-controller",
            "postRenderStrategy": "nohooks",
            "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
            "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}},
            "driftDetection": {"mode": "enabled"},
            "values": values,
        },
    }


def test_config_defaults() -> None:
    # GIVEN no values WHEN the config is made THEN one replica of the pinned chart, no extra values
    assert PACK.config() == MetricsServerConfig(
        enabled=True, replicas=1, version=versions.METRICS_SERVER.version, values={}
    )


@pytest.mark.parametrize(("replicas", "kind"), [(0, "greater_than_equal"), (11, "less_than_equal"), ("2", "int_type")])
def test_config_refuses_bad_replicas(replicas: Any, kind: str) -> None:
    # GIVEN replicas out of 1..10 or a string WHEN validated strictly from data THEN it is refused
    with pytest.raises(ValidationError) as exc:
        MetricsServerConfig.model_validate({"replicas": replicas}, strict=True)
    assert [(e["loc"], e["type"]) for e in exc.value.errors()] == [(("replicas",), kind)]


def test_default_documents() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, MetricsServerConfig())

    # THEN a HelmRepository and a HelmRelease with one replica are produced
    assert ctx.objects == [REPOSITORY, _release({"replicas": 1})]


def test_two_replicas_add_a_pod_disruption_budget() -> None:
    # GIVEN replicas: 2 WHEN bound THEN the release gets a PodDisruptionBudget keeping one pod
    ctx = bind_pack(PACK, MetricsServerConfig(replicas=2))
    assert ctx.objects == [
        REPOSITORY,
        _release({"replicas": 2, "podDisruptionBudget": {"enabled": True, "minAvailable": 1}}),
    ]


def test_custom_version_pins_the_chart() -> None:
    # GIVEN another chart version WHEN bound THEN the release asks for that version
    ctx = bind_pack(PACK, MetricsServerConfig(version="3.13.0"))
    assert ctx.objects == [REPOSITORY, _release({"replicas": 1}, version="3.13.0")]


def test_values_are_merged_last() -> None:
    # GIVEN values that override replicas, extend the PodDisruptionBudget and add args
    config = MetricsServerConfig.model_validate(
        {
            "replicas": 2,
            "values": {
                "replicas": 3,
                "podDisruptionBudget": {"minAvailable": 2},
                "args": ["--kubelet-insecure-tls"],
            },
        }
    )

    # WHEN bound
    ctx = bind_pack(PACK, config)

    # THEN the user's values win, mappings merged key by key
    assert ctx.objects == [
        REPOSITORY,
        _release(
            {
                "replicas": 3,
                "podDisruptionBudget": {"enabled": True, "minAvailable": 2},
                "args": ["--kubelet-insecure-tls"],
            }
        ),
    ]


def test_health_check_is_the_helm_release() -> None:
    # GIVEN the default config WHEN bound THEN the pack is gated on its HelmRelease, with no CEL checks
    ctx = bind_pack(PACK, MetricsServerConfig())
    assert ctx.health_checks == [
        NamespacedObjectKindReference(
            api_version="helm.toolkit.fluxcd.io/v2",
            kind="HelmRelease",
            name="metrics-server",
            namespace="flux-system",
        )
    ]
    assert ctx.health_check_exprs == []
