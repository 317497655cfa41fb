"""Tests for fluxplane.packs.kyverno: its config model, its documents and its health gate."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.constructs import NamespacedObjectKindReference
from fluxplane.packs import versions
from fluxplane.packs.api import split_pack
from fluxplane.packs.kyverno import PACK, KyvernoConfig
from fluxplane.testing import bind_pack

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kyverno"}}
REPOSITORY = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "HelmRepository",
    "metadata": {"name": "kyverno", "namespace": "flux-system"},
    "spec": {"interval": "1h", "url": "https://kyverno.github.io/kyverno/"},
}
EXCLUDED = ["flux-system", "kube-node-lease", "kube-public", "kube-system", "kyverno", "logging", "monitoring"]
PODS = {"any": [{"resources": {"kinds": ["Pod"]}}]}


def _release(values: dict[str, Any], version: str = versions.KYVERNO.version) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "kyverno", "namespace": "flux-system"},
        "spec": {
            "interval": "30m",
            "chart": {
                "spec": {
                    "chart": "kyverno",
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": "kyverno"},
                }
            },
            "releaseName": "kyverno",
            "targetNamespace": "kyverno",
            "serviceAccountName": "helm-controller",
            "postRenderStrategy": "nohooks",
            "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
            "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}},
            "driftDetection": {"mode": "enabled"},
            "values": values,
        },
    }


def test_config_defaults() -> None:
    # GIVEN no values WHEN the config is made
    # THEN the baseline level in Audit, the platform's namespaces left out, and an HA admission controller
    assert PACK.config() == KyvernoConfig.model_validate(
        {
            "enabled": True,
            "level": "baseline",
            "failureAction": "Audit",
            "excludedNamespaces": EXCLUDED,
            "replicas": 3,
            "version": versions.KYVERNO.version,
            "values": {},
        }
    )


@pytest.mark.parametrize(
    ("data", "loc", "kind"),
    [
        ({"level": "privileged"}, ("level",), "literal_error"),
        ({"failureAction": "audit"}, ("failureAction",), "literal_error"),
        ({"validationFailureAction": "Audit"}, ("validationFailureAction",), "extra_forbidden"),
        ({"excludedNamespaces": ["Kube_System"]}, ("excludedNamespaces", 0), "string_pattern_mismatch"),
        ({"excludedNamespaces": ["a", "b", "a"]}, ("excludedNamespaces",), "value_error"),
        ({"replicas": 0}, ("replicas",), "greater_than_equal"),
        ({"replicas": 11}, ("replicas",), "less_than_equal"),
        ({"replicas": 2}, ("replicas",), "value_error"),
    ],
)
def test_config_refuses_bad_values(data: dict[str, Any], loc: tuple[str | int, ...], kind: str) -> None:
    # GIVEN one bad value WHEN validated THEN exactly that field fails
    with pytest.raises(ValidationError) as exc:
        KyvernoConfig.model_validate(data)
    assert [(e["loc"], e["type"]) for e in exc.value.errors()] == [(loc, kind)]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"replicas": 2}, "expected 1, or 3 or more \\(Kyverno's minimum for high availability\\), got 2"),
        ({"excludedNamespaces": ["a", "b", "a", "b"]}, "namespaces must not repeat, got 'a', 'b' twice"),
    ],
)
def test_config_messages(data: dict[str, Any], message: str) -> None:
    # GIVEN two replicas or a repeated namespace WHEN validated THEN the message says what is allowed
    with pytest.raises(ValidationError, match=message):
        KyvernoConfig.model_validate(data)


def test_default_documents() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, KyvernoConfig())

    # THEN the namespace, the chart with three admission controllers, and one ClusterPolicy that audits
    # every Pod outside the platform's namespaces against the latest baseline standard, per rule
    assert ctx.objects == [
        NAMESPACE,
        REPOSITORY,
        _release({"admissionController": {"replicas": 3}}),
        {
            "apiVersion": "kyverno.io/v1",
            "kind": "ClusterPolicy",
            "metadata": {"name": "pod-security-baseline"},
            "spec": {
                "background": True,
                "rules": [
                    {
                        "name": "baseline",
                        "match": PODS,
                        "exclude": {"any": [{"resources": {"namespaces": EXCLUDED}}]},
                        "validate": {
                            "failureAction": "Audit",
                            "podSecurity": {"level": "baseline", "version": "latest"},
                        },
                    }
                ],
            },
        },
    ]
    assert ctx.pod_identities == []


def test_enforced_restricted_level_without_exclusions() -> None:
    # GIVEN the restricted level enforced everywhere, with one admission controller
    config = KyvernoConfig.model_validate(
        {"level": "restricted", "failureAction": "Enforce", "excludedNamespaces": [], "replicas": 1}
    )

    # WHEN bound
    documents = bind_pack(PACK, config).objects

    # THEN the policy is named after its level and has no exclude block
    assert documents[2]["spec"]["values"] == {"admissionController": {"replicas": 1}}
    assert documents[3] == {
        "apiVersion": "kyverno.io/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "pod-security-restricted"},
        "spec": {
            "background": True,
            "rules": [
                {
                    "name": "restricted",
                    "match": PODS,
                    "validate": {
                        "failureAction": "Enforce",
                        "podSecurity": {"level": "restricted", "version": "latest"},
                    },
                }
            ],
        },
    }


def test_version_and_values_are_merged_last() -> None:
    # GIVEN another chart version and values that override the replicas and enable the reports' monitor
    config = KyvernoConfig.model_validate(
        {
            "version": "3.6.4",
            "values": {
                "admissionController": {"replicas": 5},
                "reportsController": {"serviceMonitor": {"enabled": True}},
            },
        }
    )

    # WHEN bound THEN the release asks for that version and the user's values win, key by key
    assert bind_pack(PACK, config).objects[2] == _release(
        {"admissionController": {"replicas": 5}, "reportsController": {"serviceMonitor": {"enabled": True}}},
        version="3.6.4",
    )


def test_health_check_is_the_helm_release() -> None:
    # GIVEN the default config WHEN bound THEN the pack is gated on its HelmRelease, with no CEL checks
    ctx = bind_pack(PACK, KyvernoConfig())
    assert ctx.health_checks == [
        NamespacedObjectKindReference(
            api_version="helm.toolkit.fluxcd.io/v2", kind="HelmRelease", name="kyverno", namespace="flux-system"
        )
    ]
    assert ctx.health_check_exprs == []


def test_split_applies_the_policy_after_the_controllers() -> None:
    # GIVEN the pack as synth splits it WHEN both halves are bound with the default config
    kinds = []
    for half in split_pack(PACK):
        ctx = bind_pack(half, KyvernoConfig())
        kinds.append((half.name, half.layer, [d["kind"] for d in ctx.objects]))

    # THEN the ClusterPolicy waits in kyverno-configs for the release
    assert kinds == [
        ("kyverno", "controllers", ["Namespace", "HelmRepository", "HelmRelease"]),
        ("kyverno-configs", "configs", ["ClusterPolicy"]),
    ]
