"""envoy-gateway: Envoy Gateway, the Gateway API implementation, with a GatewayClass and a shared Gateway.

The chart is an OCI artifact, so the release reads it through an OCIRepository (as podinfo does). Its
``crds/`` folder carries the Gateway API CRDs and Envoy Gateway's own, which helm-controller installs
and upgrades (the fleet's releases use ``crds: CreateReplace``); the GatewayClass, the Gateway and the
EnvoyProxy are therefore applied in ``envoy-gateway-configs``, once the release is Ready.

Routes attach to the shared Gateway from the fleet's tenant namespaces by default (those carrying
``fluxplane.io/tenant``), so an app team publishes an HTTPRoute without touching the Gateway. With
``nlb`` set, an EnvoyProxy on the GatewayClass hands every Gateway's Service to the AWS Load Balancer
Controller, which makes it a Network Load Balancer with IP targets.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from fluxplane.config.hub import platform_namespace, platform_namespaces_text
from fluxplane.config.models import Model
from fluxplane.config.problems import show
from fluxplane.constructs.props import TENANT_LABEL
from fluxplane.core.layout import CLUSTER_VARIABLE
from fluxplane.packs import versions
from fluxplane.sdk import (
    SUBSTITUTED,
    DnsLabel,
    Namespace,
    NamespaceProps,
    Pack,
    PackContext,
    RawObject,
    ReleaseConfig,
    oci_chart_release,
)

NAMESPACE = "envoy-gateway-system"
#: The controller name Envoy Gateway's chart configures (config.envoyGateway.gateway.controllerName).
CONTROLLER_NAME = "gateway.envoyproxy.io/gatewayclass-controller"
GATEWAY_API = "gateway.networking.k8s.io/v1"
ENVOY_GATEWAY_API = "gateway.envoyproxy.io/v1alpha1"
#: A listener hostname (Gateway API), optionally a wildcard, whose labels may hold cluster variables.
_HOST_LABEL = rf"(?:[a-z0-9-]|{CLUSTER_VARIABLE})+"
HOSTNAME = rf"(\*\.)?{_HOST_LABEL}(\.{_HOST_LABEL})*"
LABEL_KEY = (
    r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
)
LABEL_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"


def _hostname(value: str) -> str:
    if not re.fullmatch(HOSTNAME, value) or len(value) > 253:
        raise ValueError(
            "expected a host name such as app.example.com or *.example.com (lower-case, may use "
            f"${{cluster_name}}, ${{cluster_region}}, ${{environment}}), got {show(value)}"
        )
    return value


def _labels(labels: dict[str, str]) -> dict[str, str]:
    if not labels:
        raise ValueError("expected at least one label (leave routeNamespaceLabels unset to select tenant namespaces)")
    for key, value in labels.items():
        if not re.fullmatch(LABEL_KEY, key) or len(key.rpartition("/")[2]) > 63:
            raise ValueError(f"expected label keys such as team or example.com/team, got {show(key)}")
        if not re.fullmatch(LABEL_VALUE, value) or len(value) > 63:
            raise ValueError(
                f"expected label values of at most 63 letters, digits, '-', '_' and '.', got {show(value)}"
            )
    return labels


class HttpsListener(Model):
    """The Gateway's HTTPS listener (port 443), terminating TLS."""

    certificate_secret: DnsLabel = Field(
        alias="certificateSecret",
        description="kubernetes.io/tls Secret in the Gateway's namespace (e.g. from a cert-manager Certificate).",
    )
    hostname: Annotated[Annotated[str, AfterValidator(_hostname)] | None, SUBSTITUTED] = Field(
        None, description="Host (or *.wildcard) the listener serves; cluster variables such as ${cluster_name} work."
    )


class SharedGateway(Model):
    """The Gateway every app's routes attach to."""

    enabled: bool = Field(True, description="Set to false to install Envoy Gateway and the GatewayClass only.")
    name: DnsLabel = Field("shared", description="Gateway name, for the parentRefs of routes.")
    namespace: DnsLabel = Field(NAMESPACE, description="Gateway namespace (made if it is not Envoy Gateway's).")
    http: bool = Field(True, description="An HTTP listener on port 80.")
    https: HttpsListener | None = Field(None, description="An HTTPS listener on port 443.")
    allowed_routes: Literal["All", "Same", "Selector"] = Field(
        "Selector",
        alias="allowedRoutes",
        description="Namespaces whose routes may attach: All, Same (the Gateway's) or Selector.",
    )
    route_namespace_labels: Annotated[dict[str, str], AfterValidator(_labels)] | None = Field(
        None,
        alias="routeNamespaceLabels",
        description=f"With Selector: labels the namespaces must have. Unset: every tenant namespace ({TENANT_LABEL}).",
    )

    @field_validator("namespace")
    @classmethod
    def _own_namespace(cls, namespace: str) -> str:
        # the pack makes the namespace, so owns it and prunes it when switched off: never one the platform runs in
        if platform_namespace(namespace):
            raise ValueError(
                f"the pack makes the Gateway's namespace, so it cannot be {namespace!r}, a platform namespace "
                f"({platform_namespaces_text()})"
            )
        return namespace

    @model_validator(mode="after")
    def _listeners_and_selector(self) -> SharedGateway:
        if not self.http and self.https is None:
            raise ValueError("the Gateway needs a listener: set http to true or configure https")
        if self.route_namespace_labels is not None and self.allowed_routes != "Selector":
            raise ValueError(
                f"routeNamespaceLabels applies to allowedRoutes 'Selector' only, got {self.allowed_routes!r}"
            )
        return self


class EnvoyGatewayConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    gateway_class: DnsLabel = Field(
        "envoy-gateway", alias="gatewayClass", description="GatewayClass name, for the gatewayClassName of Gateways."
    )
    gateway: SharedGateway = Field(default_factory=SharedGateway, description="The shared Gateway.")
    nlb: Literal["internet-facing", "internal"] | None = Field(
        None,
        description="Make Gateways' Services NLBs of this scheme (needs the AWS Load Balancer Controller); "
        "unset: the cluster's default LoadBalancer handling.",
    )
    version: str = Field(versions.ENVOY_GATEWAY.version, description="Chart version (OCI tag).")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")


def envoy_proxy(name: str, scheme: str) -> dict[str, Any]:
    """An EnvoyProxy whose Service the AWS Load Balancer Controller reconciles as an NLB with IP targets.

    ``aws-load-balancer-type: external`` takes the Service from the in-tree controller; the scheme is
    explicit because the controller makes internal NLBs by default.
    """
    annotations = {
        "service.beta.kubernetes.io/aws-load-balancer-type": "external",
        "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": scheme,
    }
    return {
        "apiVersion": ENVOY_GATEWAY_API,
        "kind": "EnvoyProxy",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"provider": {"type": "Kubernetes", "kubernetes": {"envoyService": {"annotations": annotations}}}},
    }


def gateway_class(name: str, proxy: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"controllerName": CONTROLLER_NAME}
    if proxy is not None:
        spec["parametersRef"] = {
            "group": ENVOY_GATEWAY_API.split("/")[0],
            "kind": "EnvoyProxy",
            "name": proxy,
            "namespace": NAMESPACE,
        }
    return {"apiVersion": GATEWAY_API, "kind": "GatewayClass", "metadata": {"name": name}, "spec": spec}


def _allowed_routes(gateway: SharedGateway) -> dict[str, Any]:
    namespaces: dict[str, Any] = {"from": gateway.allowed_routes}
    if gateway.allowed_routes == "Selector":
        if gateway.route_namespace_labels is None:
            namespaces["selector"] = {"matchExpressions": [{"key": TENANT_LABEL, "operator": "Exists"}]}
        else:
            namespaces["selector"] = {"matchLabels": dict(gateway.route_namespace_labels)}
    return {"namespaces": namespaces}


def shared_gateway(class_name: str, gateway: SharedGateway) -> dict[str, Any]:
    allowed = _allowed_routes(gateway)
    listeners: list[dict[str, Any]] = []
    if gateway.http:
        listeners.append({"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": allowed})
    if gateway.https is not None:
        https: dict[str, Any] = {"name": "https", "protocol": "HTTPS", "port": 443}
        if gateway.https.hostname is not None:
            https["hostname"] = gateway.https.hostname
        https["tls"] = {
            "mode": "Terminate",
            "certificateRefs": [{"kind": "Secret", "name": gateway.https.certificate_secret}],
        }
        https["allowedRoutes"] = allowed
        listeners.append(https)
    return {
        "apiVersion": GATEWAY_API,
        "kind": "Gateway",
        "metadata": {"name": gateway.name, "namespace": gateway.namespace},
        "spec": {"gatewayClassName": class_name, "listeners": listeners},
    }


def bind(ctx: PackContext, config: EnvoyGatewayConfig) -> None:
    chart = versions.ENVOY_GATEWAY
    Namespace(ctx.scope, "namespace", NamespaceProps(name=NAMESPACE))
    release = oci_chart_release(
        ctx.scope,
        name="envoy-gateway",
        url=chart.url,
        version=config.version,
        target_namespace=NAMESPACE,
        identity=config,
    )
    release.add_values(config.values)
    ctx.add_health_check(release)

    proxy = None
    if config.nlb is not None:
        proxy = RawObject(ctx.scope, "envoy-proxy", envoy_proxy(config.gateway_class, config.nlb)).name
    RawObject(ctx.scope, "gateway-class", gateway_class(config.gateway_class, proxy))
    gateway = config.gateway
    if gateway.enabled:
        if gateway.namespace != NAMESPACE:
            Namespace(ctx.scope, "gateway-namespace", NamespaceProps(name=gateway.namespace))
        RawObject(ctx.scope, "gateway", shared_gateway(config.gateway_class, gateway))


PACK = Pack(
    name="envoy-gateway",
    version="1.0.0",
    description="Envoy Gateway (Gateway API) with a GatewayClass and a shared Gateway",
    config=EnvoyGatewayConfig,
    layer="controllers",
    bind=bind,
    crd_groups=("gateway.networking.k8s.io", "gateway.envoyproxy.io"),
    # the chart's crds subchart: the Gateway API, experimental channel (XListenerSet, ...), and Envoy Gateway's own
    crds=("gateway.networking.k8s.io", "gateway.networking.x-k8s.io", "gateway.envoyproxy.io"),
    namespaces=(NAMESPACE,),
)
