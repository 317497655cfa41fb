"""external-dns: Route 53 records for the cluster's Ingresses, Services and Gateway API routes.

ExternalDNS publishes the hostnames it finds on the sources it watches into the Route 53 hosted
zones of ``domainFilters``, and marks every record it writes with a TXT record naming its owner:
by default the cluster, so that the clusters of a fleet can share a zone and each one changes only
its own records. It calls Route 53 as the IAM role EKS Pod Identity gives its service account, with
the policy of ExternalDNS's AWS tutorial (narrowed to ``zoneIdFilters`` when given). The Pod Identity
Agent sets no AWS region; the pod gets the cluster's, as the tutorial's ``AWS_DEFAULT_REGION``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, field_validator

from fluxplane.config.problems import show
from fluxplane.core.layout import CLUSTER_VARIABLE
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
    load_policy,
)

#: Where the chart runs, and the fixed name of its service account: the Pod Identity association
#: binds the IAM role to exactly this pair.
NAMESPACE = "external-dns"
SERVICE_ACCOUNT = "external-dns"

_VARIABLE = CLUSTER_VARIABLE
#: A DNS label of lower-case letters, digits and inner hyphens, any part of which may be a cluster variable.
_LABEL = rf"(?:[a-z0-9]|{_VARIABLE})(?:[-a-z0-9]|{_VARIABLE})*(?<!-)"
DOMAIN_NAME = rf"{_LABEL}(?:\.{_LABEL})*"
OWNER_ID = rf"(?:[A-Za-z0-9._-]|{_VARIABLE})+"

Source = Literal[
    "service",
    "ingress",
    "gateway-httproute",
    "gateway-grpcroute",
    "gateway-tlsroute",
    "gateway-tcproute",
    "gateway-udproute",
]

DEFAULT_SOURCES: tuple[Source, ...] = ("service", "ingress")


def _domain_name(value: str) -> str:
    if not re.fullmatch(DOMAIN_NAME, value) or len(value) > 253:
        raise ValueError(
            "expected a DNS name such as example.com or ${cluster_name}.example.com (lower-case letters, digits, "
            f"inner '-', dot-separated, at most 253 characters), got {show(value)}"
        )
    return value


def _hosted_zone_id(value: str) -> str:
    if not re.fullmatch(r"[A-Z0-9]{1,32}", value):
        raise ValueError(
            "expected a Route 53 hosted zone ID such as Z0123456789ABCDEFGHIJ (upper-case letters and digits, "
            f"without /hostedzone/), got {show(value)}"
        )
    return value


def _owner_id(value: str) -> str:
    if not re.fullmatch(OWNER_ID, value) or len(value) > 128:
        raise ValueError(
            "expected an owner ID of at most 128 letters, digits, '.', '_', '-' and cluster variables such as "
            f"${{cluster_name}}, got {show(value)}"
        )
    return value


DomainName = Annotated[str, AfterValidator(_domain_name)]
HostedZoneId = Annotated[str, AfterValidator(_hosted_zone_id)]
OwnerId = Annotated[str, AfterValidator(_owner_id)]


def _unique(values: list[str]) -> list[str]:
    repeated = sorted({str(value) for value in values if values.count(value) > 1})
    if repeated:
        raise ValueError(f"must not repeat entries, got {', '.join(map(show, repeated))} more than once")
    return values


class ExternalDnsConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    domain_filters: Annotated[list[DomainName], Field(min_length=1), AfterValidator(_unique), SUBSTITUTED] = Field(
        alias="domainFilters",
        description="DNS names whose Route 53 zones ExternalDNS may write (at least one): it publishes hostnames "
        "under these only. Cluster variables work, e.g. ${cluster_name}.example.com.",
        examples=[["example.com"]],
    )
    policy: Literal["sync", "upsert-only"] = Field(
        "upsert-only",
        description="upsert-only: create and update records, never delete; sync: also delete the records this "
        "cluster owns when their source goes away.",
    )
    txt_owner_id: Annotated[OwnerId, SUBSTITUTED] = Field(
        "${cluster_name}",
        alias="txtOwnerId",
        description="Owner written into the TXT record beside each record; only records with this owner are "
        "changed. Unique per cluster when clusters share a zone; cluster variables such as ${cluster_name} work.",
    )
    sources: Annotated[list[Source], Field(min_length=1), AfterValidator(_unique)] = Field(
        default_factory=lambda: list(DEFAULT_SOURCES),
        description="Kinds whose hostnames are published: service, ingress, gateway-httproute, gateway-grpcroute, "
        "gateway-tlsroute, gateway-tcproute, gateway-udproute (the gateway-* need the Gateway API CRDs).",
    )
    zone_type: Literal["public", "private"] | None = Field(
        "public",
        alias="zoneType",
        description="Write to public or to private (VPC) hosted zones only; null for both.",
    )
    zone_id_filters: Annotated[list[HostedZoneId], AfterValidator(_unique)] = Field(
        default_factory=list,
        alias="zoneIdFilters",
        description="Route 53 hosted zone IDs to limit ExternalDNS and its IAM role to; empty: every zone "
        "matching domainFilters.",
    )
    version: str = Field(versions.EXTERNAL_DNS.version, description="Chart version.")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")

    @field_validator("values")
    @classmethod
    def _keep_service_account(cls, values: dict[str, Any]) -> dict[str, Any]:
        return keep_service_account(values, NAMESPACE, SERVICE_ACCOUNT)


def route53_policy(zone_ids: list[str]) -> dict[str, Any]:
    """The IAM policy of ExternalDNS's AWS tutorial (this pack's route53.json), its
    record changes, the first statement, limited to ``zone_ids`` when given."""
    policy = load_policy("route53", __name__)
    if zone_ids:
        policy["Statement"][0]["Resource"] = [f"arn:aws:route53:::hostedzone/{zone}" for zone in zone_ids]
    return policy


def chart_values(config: ExternalDnsConfig) -> dict[str, Any]:
    """The chart's values for ``config``, before the user's ``values``."""
    values: dict[str, Any] = {
        "provider": {"name": "aws"},
        "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
        "env": [{"name": "AWS_DEFAULT_REGION", "value": "${cluster_region}"}],
        "sources": list(config.sources),
        "domainFilters": list(config.domain_filters),
        "policy": config.policy,
        "registry": "txt",
        "txtOwnerId": config.txt_owner_id,
    }
    extra_args = [f"--aws-zone-type={config.zone_type}"] if config.zone_type else []
    extra_args += [f"--zone-id-filter={zone}" for zone in config.zone_id_filters]
    if extra_args:
        values["extraArgs"] = extra_args
    return values


def bind(ctx: PackContext, config: ExternalDnsConfig) -> None:
    Namespace(ctx.scope, "namespace", NamespaceProps(name=NAMESPACE))
    release = chart_release(
        ctx.scope,
        name="external-dns",
        chart=versions.EXTERNAL_DNS,
        version=config.version,
        target_namespace=NAMESPACE,
        identity=config,
    )
    release.add_values(chart_values(config))
    release.add_values(config.values)
    ctx.add_pod_identity(
        "route53",
        namespace=NAMESPACE,
        service_account=SERVICE_ACCOUNT,
        policy=route53_policy(config.zone_id_filters),
    )
    ctx.add_health_check(release)


PACK = Pack(
    name="external-dns",
    version="1.0.0",
    description="ExternalDNS publishing the cluster's Ingress, Service and Gateway hostnames to Route 53",
    config=ExternalDnsConfig,
    layer="controllers",
    bind=bind,
    namespaces=(NAMESPACE,),
    # the chart's crds/: DNSEndpoint
    crds=("externaldns.k8s.io",),
)
