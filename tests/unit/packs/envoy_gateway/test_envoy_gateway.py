"""Tests for fluxplane.packs.envoy_gateway: its config model, its documents and its health gate."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.constructs import NamespacedObjectKindReference
from fluxplane.packs import versions
from fluxplane.packs.api import split_pack
from fluxplane.packs.envoy_gateway import PACK, EnvoyGatewayConfig, SharedGateway
from fluxplane.testing import bind_pack

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "envoy-gateway-system"}}
TENANTS = {
    "namespaces": {
        "from": "Selector",
        "selector": {"matchExpressions": [{"key": "fluxplane.io/tenant", "operator": "Exists"}]},
    }
}
GATEWAY_CLASS = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "GatewayClass",
    "metadata": {"name": "envoy-gateway"},
    "spec": {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"},
}


def _chart(tag: str = versions.ENVOY_GATEWAY.version) -> dict[str, Any]:
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "OCIRepository",
        "metadata": {"name": "envoy-gateway", "namespace": "flux-system"},
        "spec": {
            "interval": "10m",
            "url": "oci://docker.io/envoyproxy/gateway-helm",
            "ref": {"tag": tag},
            "layerSelector": {
                "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                "operation": "copy",
            },
        },
    }


def _release(values: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "interval": "30m",
        "chartRef": {"kind": "OCIRepository", "name": "envoy-gateway"},
        "releaseName": "envoy-gateway",
        "targetNamespace": "envoy-gateway-system",
        "serviceAccountName": "helm-controller",
        "postRenderStrategy": "nohooks",
        "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
        "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}},
        "driftDetection": {"mode": "enabled"},
    }
    if values is not None:
        spec["values"] = values
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "envoy-gateway", "namespace": "flux-system"},
        "spec": spec,
    }


def _gateway(listeners: list[dict[str, Any]], name: str = "shared", namespace: str = "envoy-gateway-system") -> Any:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"gatewayClassName": "envoy-gateway", "listeners": listeners},
    }


def test_config_defaults() -> None:
    # GIVEN no values WHEN the config is made THEN a class "envoy-gateway", an HTTP-only shared Gateway
    # open to the tenant namespaces, no NLB, and the pinned chart
    assert PACK.config() == EnvoyGatewayConfig.model_validate(
        {
            "enabled": True,
            "gatewayClass": "envoy-gateway",
            "gateway": {
                "enabled": True,
                "name": "shared",
                "namespace": "envoy-gateway-system",
                "http": True,
                "https": None,
                "allowedRoutes": "Selector",
                "routeNamespaceLabels": None,
            },
            "nlb": None,
            "version": versions.ENVOY_GATEWAY.version,
            "values": {},
        }
    )


@pytest.mark.parametrize(
    ("data", "loc", "kind"),
    [
        ({"gatewayClass": "Envoy"}, ("gatewayClass",), "string_pattern_mismatch"),
        ({"nlb": "public"}, ("nlb",), "literal_error"),
        ({"gateway": {"allowedRoutes": "Tenants"}}, ("gateway", "allowedRoutes"), "literal_error"),
        ({"gateway": {"namespace": "flux-system"}}, ("gateway", "namespace"), "value_error"),
        ({"gateway": {"namespace": "kube-system"}}, ("gateway", "namespace"), "value_error"),
        # where the spoke bootstrap installs External Secrets, and Crossplane's: pruned with the pack otherwise
        ({"gateway": {"namespace": "external-secrets"}}, ("gateway", "namespace"), "value_error"),
        ({"gateway": {"namespace": "crossplane-system"}}, ("gateway", "namespace"), "value_error"),
        ({"gateway": {"https": {}}}, ("gateway", "https", "certificateSecret"), "missing"),
        (
            {"gateway": {"https": {"certificateSecret": "t", "hostname": "A.example.com"}}},
            ("gateway", "https", "hostname"),
            "value_error",
        ),
        ({"gateway": {"routeNamespaceLabels": {"team!": "a"}}}, ("gateway", "routeNamespaceLabels"), "value_error"),
        ({"gateway": {"routeNamespaceLabels": {"team": "a b"}}}, ("gateway", "routeNamespaceLabels"), "value_error"),
        ({"gateway": {"http": False}}, ("gateway",), "value_error"),
        ({"gateway": {"allowedRoutes": "All", "routeNamespaceLabels": {"a": "b"}}}, ("gateway",), "value_error"),
    ],
)
def test_config_refuses_bad_values(data: dict[str, Any], loc: tuple[str, ...], kind: str) -> None:
    # GIVEN one bad value WHEN validated THEN exactly that field fails
    with pytest.raises(ValidationError) as exc:
        EnvoyGatewayConfig.model_validate(data)
    assert [(e["loc"], e["type"]) for e in exc.value.errors()] == [(loc, kind)]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"http": False}, "the Gateway needs a listener: set http to true or configure https"),
        (
            {"allowedRoutes": "Same", "routeNamespaceLabels": {"a": "b"}},
            "routeNamespaceLabels applies to allowedRoutes 'Selector' only, got 'Same'",
        ),
        ({"routeNamespaceLabels": {}}, "expected at least one label"),
        ({"namespace": "default"}, "the pack makes the Gateway's namespace, so it cannot be 'default'"),
        (
            {"https": {"certificateSecret": "tls", "hostname": "app_1.example.com"}},
            'expected a host name such as app.example.com .*, got "app_1.example.com"',
        ),
    ],
)
def test_config_messages(data: dict[str, Any], message: str) -> None:
    # GIVEN a Gateway without listeners, a selector it does not use, or a bad name WHEN validated
    # THEN the message says what is wrong and what was found
    with pytest.raises(ValidationError, match=message):
        SharedGateway.model_validate(data)


def test_default_documents() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, EnvoyGatewayConfig())

    # THEN the namespace, the OCI chart, a release without values, the GatewayClass and an HTTP Gateway
    # that routes from tenant namespaces may attach to
    assert ctx.objects == [
        NAMESPACE,
        _chart(),
        _release(),
        GATEWAY_CLASS,
        _gateway([{"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": TENANTS}]),
    ]
    assert ctx.pod_identities == []


def test_nlb_puts_an_envoy_proxy_on_the_gateway_class() -> None:
    # GIVEN an internal NLB WHEN bound
    documents = bind_pack(PACK, EnvoyGatewayConfig.model_validate({"nlb": "internal"})).objects

    # THEN an EnvoyProxy hands the Envoy Services to the AWS Load Balancer Controller (IP targets, internal),
    # and the GatewayClass refers to it
    assert documents[3:5] == [
        {
            "apiVersion": "gateway.envoyproxy.io/v1alpha1",
            "kind": "EnvoyProxy",
            "metadata": {"name": "envoy-gateway", "namespace": "envoy-gateway-system"},
            "spec": {
                "provider": {
                    "type": "Kubernetes",
                    "kubernetes": {
                        "envoyService": {
                            "annotations": {
                                "service.beta.kubernetes.io/aws-load-balancer-type": "external",
                                "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
                                "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
                            }
                        }
                    },
                }
            },
        },
        {
            **GATEWAY_CLASS,
            "spec": {
                "controllerName": "gateway.envoyproxy.io/gatewayclass-controller",
                "parametersRef": {
                    "group": "gateway.envoyproxy.io",
                    "kind": "EnvoyProxy",
                    "name": "envoy-gateway",
                    "namespace": "envoy-gateway-system",
                },
            },
        },
    ]


def test_https_gateway_in_its_own_namespace() -> None:
    # GIVEN an HTTPS-only Gateway in namespace "ingress", for namespaces labelled team=web
    config = EnvoyGatewayConfig.model_validate(
        {
            "gateway": {
                "name": "public",
                "namespace": "ingress",
                "http": False,
                "https": {"certificateSecret": "public-tls", "hostname": "*.${cluster_name}.example.com"},
                "routeNamespaceLabels": {"team": "web"},
            }
        }
    )

    # WHEN bound
    documents = bind_pack(PACK, config).objects

    # THEN the pack makes the namespace and the Gateway terminates TLS with the Secret, for that host,
    # the cluster variable left for Flux to substitute
    assert documents[3:] == [
        GATEWAY_CLASS,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ingress"}},
        _gateway(
            [
                {
                    "name": "https",
                    "protocol": "HTTPS",
                    "port": 443,
                    "hostname": "*.${cluster_name}.example.com",
                    "tls": {"mode": "Terminate", "certificateRefs": [{"kind": "Secret", "name": "public-tls"}]},
                    "allowedRoutes": {"namespaces": {"from": "Selector", "selector": {"matchLabels": {"team": "web"}}}},
                }
            ],
            name="public",
            namespace="ingress",
        ),
    ]


def test_both_listeners_open_to_all_namespaces() -> None:
    # GIVEN HTTP and HTTPS listeners without a hostname, open to every namespace WHEN bound
    config = EnvoyGatewayConfig.model_validate(
        {"gateway": {"https": {"certificateSecret": "shared-tls"}, "allowedRoutes": "All"}}
    )
    gateway = bind_pack(PACK, config).objects[4]

    # THEN both listeners take routes from All namespaces
    assert gateway["spec"]["listeners"] == [
        {"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "All"}}},
        {
            "name": "https",
            "protocol": "HTTPS",
            "port": 443,
            "tls": {"mode": "Terminate", "certificateRefs": [{"kind": "Secret", "name": "shared-tls"}]},
            "allowedRoutes": {"namespaces": {"from": "All"}},
        },
    ]


def test_gateway_off_keeps_the_class() -> None:
    # GIVEN the shared Gateway switched off and another class name WHEN bound
    config = EnvoyGatewayConfig.model_validate({"gatewayClass": "eg", "gateway": {"enabled": False}})

    # THEN only the GatewayClass follows the release
    assert bind_pack(PACK, config).objects[3:] == [{**GATEWAY_CLASS, "metadata": {"name": "eg"}}]


def test_version_and_values_are_merged_last() -> None:
    # GIVEN another chart version and values for the controller deployment
    config = EnvoyGatewayConfig.model_validate(
        {"version": "v1.6.3", "values": {"deployment": {"replicas": 2}, "podDisruptionBudget": {"minAvailable": 1}}}
    )

    # WHEN bound THEN the OCI tag follows the version and the release carries the values
    documents = bind_pack(PACK, config).objects
    assert documents[1:3] == [
        _chart("v1.6.3"),
        _release({"deployment": {"replicas": 2}, "podDisruptionBudget": {"minAvailable": 1}}),
    ]


def test_health_check_is_the_helm_release() -> None:
    # GIVEN the default config WHEN bound THEN the pack is gated on its HelmRelease, with no CEL checks
    ctx = bind_pack(PACK, EnvoyGatewayConfig())
    assert ctx.health_checks == [
        NamespacedObjectKindReference(
            api_version="helm.toolkit.fluxcd.io/v2", kind="HelmRelease", name="envoy-gateway", namespace="flux-system"
        )
    ]
    assert ctx.health_check_exprs == []


def test_split_applies_the_gateway_objects_after_the_controllers() -> None:
    # GIVEN the pack as synth splits it, with an NLB and a Gateway in its own namespace
    config = EnvoyGatewayConfig.model_validate({"nlb": "internet-facing", "gateway": {"namespace": "ingress"}})

    # WHEN both halves are bound
    kinds = []
    for half in split_pack(PACK):
        ctx = bind_pack(half, config)
        kinds.append((half.name, half.layer, [d["kind"] for d in ctx.objects]))

    # THEN the namespaces go with the controllers, the Gateway API and Envoy Gateway objects with the configs
    assert kinds == [
        ("envoy-gateway", "controllers", ["Namespace", "OCIRepository", "HelmRelease", "Namespace"]),
        ("envoy-gateway-configs", "configs", ["EnvoyProxy", "GatewayClass", "Gateway"]),
    ]
