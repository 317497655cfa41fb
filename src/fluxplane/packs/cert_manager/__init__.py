"""cert-manager: certificates for the cluster's workloads, and a Let's Encrypt ClusterIssuer to ask for them.

The chart installs its own CRDs (``crds.enabled``), so the ClusterIssuer is a ``cert-manager.io`` object
that synth applies in ``cert-manager-configs``, once the release is Ready.

The issuer solves ACME challenges through Route 53 (dns01) by default: it needs no ingress, works for
wildcard names and is what an EKS fleet has. cert-manager then calls Route 53 as its controller's
service account, with the IAM role the hub makes per cluster (EKS Pod Identity); a ClusterIssuer
without credentials uses those "ambient" credentials, which cert-manager allows for ClusterIssuers by
default. The Pod Identity Agent sets no AWS region, so the solver names the cluster's.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, model_validator

from fluxplane.config.models import Model
from fluxplane.config.problems import show
from fluxplane.packs import versions
from fluxplane.sdk import (
    DnsLabel,
    Namespace,
    NamespaceProps,
    Pack,
    PackContext,
    RawObject,
    ReleaseConfig,
    chart_release,
    load_policy,
)

NAMESPACE = "cert-manager"
#: The controller's service account: the chart's default name for release "cert-manager", set
#: explicitly because the hub's IAM role trusts exactly this account.
SERVICE_ACCOUNT = "cert-manager"
SERVERS = {
    "production": "https://acme-v02.api.letsencrypt.org/directory",
    "staging": "https://acme-staging-v02.api.letsencrypt.org/directory",
}


def _email(value: str) -> str:
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}", value):
        raise ValueError(f"expected an e-mail address such as ops@example.com, got {show(value)}")
    return value


def _hosted_zone_id(value: str) -> str:
    if not re.fullmatch(r"[A-Z0-9]{1,32}", value):
        raise ValueError(
            f"expected a Route 53 hosted zone ID such as Z0123456789ABCDEFGHIJ (upper-case letters and digits, "
            f"without /hostedzone/), got {show(value)}"
        )
    return value


Email = Annotated[str, AfterValidator(_email)]
HostedZoneId = Annotated[str, AfterValidator(_hosted_zone_id)]


class LetsEncryptIssuer(Model):
    """The ClusterIssuer for Let's Encrypt (ACME)."""

    enabled: bool = Field(True, description="Set to false to install cert-manager without the ClusterIssuer.")
    name: DnsLabel = Field(
        "letsencrypt", description="ClusterIssuer name, for the cert-manager.io/cluster-issuer annotation."
    )
    server: Literal["production", "staging"] = Field(
        "production", description="Let's Encrypt endpoint; staging has higher rate limits and untrusted certificates."
    )
    email: Email | None = Field(
        None, description="Contact address of the ACME account (optional: Let's Encrypt sends no expiry mail)."
    )
    solver: Literal["dns01", "http01"] = Field(
        "dns01", description="dns01: TXT records in Route 53; http01: an Ingress of ingressClassName per challenge."
    )
    hosted_zone_id: HostedZoneId | None = Field(
        None,
        alias="hostedZoneID",
        description="dns01: the Route 53 hosted zone to use; limits the IAM role to that zone. Unset: found by name.",
    )
    ingress_class_name: DnsLabel | None = Field(
        None, alias="ingressClassName", description="http01 (required there): IngressClass of the challenge Ingresses."
    )

    @model_validator(mode="after")
    def _solver_fields(self) -> LetsEncryptIssuer:
        if self.solver == "http01" and self.ingress_class_name is None:
            raise ValueError("ingressClassName is required when solver is 'http01'")
        if self.solver == "http01" and self.hosted_zone_id is not None:
            raise ValueError("hostedZoneID applies to solver 'dns01' only, got solver 'http01'")
        if self.solver == "dns01" and self.ingress_class_name is not None:
            raise ValueError("ingressClassName applies to solver 'http01' only, got solver 'dns01'")
        return self


class CertManagerConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    issuer: LetsEncryptIssuer = Field(default_factory=LetsEncryptIssuer, description="The Let's Encrypt ClusterIssuer.")
    version: str = Field(versions.CERT_MANAGER.version, description="Chart version.")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")


def route53_policy(hosted_zone_id: str | None) -> dict[str, Any]:
    """cert-manager's Route 53 policy (its Route53 docs): TXT records only, in one zone when it is known.

    Without a hosted zone ID cert-manager looks the zone up by name, which needs ListHostedZonesByName.

    The template (this pack's route53.json) is the policy for any zone; a known
    zone narrows the record changes to it and drops the lookup, its last statement.
    """
    policy = load_policy("route53", __name__)
    if hosted_zone_id is not None:
        change, records, _lookup = policy["Statement"]
        policy["Statement"] = [change, {**records, "Resource": f"arn:aws:route53:::hostedzone/{hosted_zone_id}"}]
    return policy


def _solver(issuer: LetsEncryptIssuer) -> dict[str, Any]:
    if issuer.solver == "http01":
        return {"http01": {"ingress": {"ingressClassName": issuer.ingress_class_name}}}
    route53: dict[str, Any] = {"region": "${cluster_region}"}
    if issuer.hosted_zone_id is not None:
        route53["hostedZoneID"] = issuer.hosted_zone_id
    return {"dns01": {"route53": route53}}


def cluster_issuer(issuer: LetsEncryptIssuer) -> dict[str, Any]:
    """The ClusterIssuer document; the ACME account key lives in the cert-manager namespace."""
    acme: dict[str, Any] = {"server": SERVERS[issuer.server]}
    if issuer.email is not None:
        acme["email"] = issuer.email
    acme["privateKeySecretRef"] = {"name": f"{issuer.name}-account-key"}
    acme["solvers"] = [_solver(issuer)]
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "ClusterIssuer",
        "metadata": {"name": issuer.name},
        "spec": {"acme": acme},
    }


def bind(ctx: PackContext, config: CertManagerConfig) -> None:
    Namespace(ctx.scope, "namespace", NamespaceProps(name=NAMESPACE))
    release = chart_release(
        ctx.scope,
        name="cert-manager",
        chart=versions.CERT_MANAGER,
        version=config.version,
        target_namespace=NAMESPACE,
        identity=config,
    )
    # keep: deleting the release must not delete the CRDs, and with them every Certificate in the cluster.
    release.add_values({"crds": {"enabled": True, "keep": True}})
    issuer = config.issuer
    if issuer.enabled:
        if issuer.solver == "dns01":
            release.add_values({"serviceAccount": {"name": SERVICE_ACCOUNT}})
            ctx.add_pod_identity(
                "route53",
                namespace=NAMESPACE,
                service_account=SERVICE_ACCOUNT,
                policy=route53_policy(issuer.hosted_zone_id),
            )
        RawObject(ctx.scope, "cluster-issuer", cluster_issuer(issuer))
    release.add_values(config.values)
    ctx.add_health_check(release)


PACK = Pack(
    name="cert-manager",
    version="1.0.0",
    description="cert-manager (X.509 certificates) with a Let's Encrypt ClusterIssuer",
    config=CertManagerConfig,
    layer="controllers",
    bind=bind,
    crd_groups=("cert-manager.io",),
    # the chart's CRDs (crds.enabled): Certificate, Issuer, ClusterIssuer, CertificateRequest; Order, Challenge
    crds=("cert-manager.io", "acme.cert-manager.io"),
    namespaces=(NAMESPACE,),
)
