"""Tests for fluxplane.packs.cert_manager: its config model, its documents, its Pod Identity and its gates."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.constructs import NamespacedObjectKindReference
from fluxplane.packs import versions
from fluxplane.packs.api import PodIdentity, split_pack
from fluxplane.packs.cert_manager import PACK, CertManagerConfig, LetsEncryptIssuer
from fluxplane.testing import bind_pack

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cert-manager"}}
REPOSITORY = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "HelmRepository",
    "metadata": {"name": "cert-manager", "namespace": "flux-system"},
    "spec": {"interval": "1h", "url": "https://charts.jetstack.io"},
}
CRDS = {"crds": {"enabled": True, "keep": True}}
SERVICE_ACCOUNT = {"serviceAccount": {"name": "cert-manager"}}
PRODUCTION = "https://acme-v02.api.letsencrypt.org/directory"
STAGING = "https://acme-staging-v02.api.letsencrypt.org/directory"
TXT_ONLY = {"ForAllValues:StringEquals": {"route53:ChangeResourceRecordSetsRecordTypes": ["TXT"]}}


def _release(values: dict[str, Any], version: str = versions.CERT_MANAGER.version) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "cert-manager", "namespace": "flux-system"},
        "spec": {
            "interval": "30m",
            "chart": {
                "spec": {
                    "chart": "cert-manager",
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": "cert-manager"},
                }
            },
            "releaseName": "cert-manager",
            "targetNamespace": "cert-manager",
            "serviceAccountName": "helm-controller",
            "postRenderStrategy": "nohooks",
            "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
            "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}},
            "driftDetection": {"mode": "enabled"},
            "values": values,
        },
    }


def _issuer(solver: dict[str, Any], server: str = PRODUCTION, name: str = "letsencrypt", **acme: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "ClusterIssuer",
        "metadata": {"name": name},
        "spec": {
            "acme": {
                "server": server,
                **acme,
                "privateKeySecretRef": {"name": f"{name}-account-key"},
                "solvers": [solver],
            }
        },
    }


def _config(issuer: dict[str, Any] | None = None, **fields: Any) -> CertManagerConfig:
    return CertManagerConfig.model_validate({**({"issuer": issuer} if issuer is not None else {}), **fields})


def test_config_defaults() -> None:
    # GIVEN no values WHEN the config is made
    # THEN the pinned chart and a production Let's Encrypt issuer solving dns01 in a zone found by name
    assert PACK.config() == CertManagerConfig.model_validate(
        {
            "enabled": True,
            "issuer": {
                "enabled": True,
                "name": "letsencrypt",
                "server": "production",
                "email": None,
                "solver": "dns01",
                "hostedZoneID": None,
                "ingressClassName": None,
            },
            "version": versions.CERT_MANAGER.version,
            "values": {},
        }
    )


@pytest.mark.parametrize(
    ("issuer", "loc", "kind"),
    [
        ({"server": "prod"}, ("issuer", "server"), "literal_error"),
        ({"solver": "dns-01"}, ("issuer", "solver"), "literal_error"),
        ({"name": "LetsEncrypt"}, ("issuer", "name"), "string_pattern_mismatch"),
        ({"email": "ops"}, ("issuer", "email"), "value_error"),
        ({"hostedZoneID": "/hostedzone/Z123"}, ("issuer", "hostedZoneID"), "value_error"),
        ({"hostedZoneID": "z123"}, ("issuer", "hostedZoneID"), "value_error"),
        ({"ingressClassName": "Alb", "solver": "http01"}, ("issuer", "ingressClassName"), "string_pattern_mismatch"),
        ({"hostedZoneId": "Z123"}, ("issuer", "hostedZoneId"), "extra_forbidden"),
    ],
)
def test_config_refuses_bad_values(issuer: dict[str, Any], loc: tuple[str, ...], kind: str) -> None:
    # GIVEN one bad issuer value WHEN validated THEN exactly that field fails
    with pytest.raises(ValidationError) as exc:
        _config(issuer)
    assert [(e["loc"], e["type"]) for e in exc.value.errors()] == [(loc, kind)]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"email": "ops@"}, 'expected an e-mail address such as ops@example.com, got "ops@"'),
        ({"hostedZoneID": "z1"}, r'expected a Route 53 hosted zone ID such as .*, got "z1"'),
    ],
)
def test_config_messages_show_the_bad_value(value: dict[str, Any], message: str) -> None:
    # GIVEN a malformed address or zone ID WHEN validated THEN the message says what is expected and what was found
    with pytest.raises(ValidationError, match=message):
        LetsEncryptIssuer.model_validate(value)


@pytest.mark.parametrize(
    ("issuer", "message"),
    [
        ({"solver": "http01"}, "ingressClassName is required when solver is 'http01'"),
        (
            {"solver": "http01", "ingressClassName": "alb", "hostedZoneID": "Z123"},
            "hostedZoneID applies to solver 'dns01' only, got solver 'http01'",
        ),
        ({"ingressClassName": "alb"}, "ingressClassName applies to solver 'http01' only, got solver 'dns01'"),
    ],
)
def test_config_refuses_fields_of_the_other_solver(issuer: dict[str, Any], message: str) -> None:
    # GIVEN a solver without its field, or with the other solver's WHEN validated THEN the issuer is refused
    with pytest.raises(ValidationError, match=message) as exc:
        _config(issuer)
    assert [(e["loc"], e["type"]) for e in exc.value.errors()] == [(("issuer",), "value_error")]


def test_default_documents() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, CertManagerConfig())

    # THEN the namespace, the chart with its CRDs and a fixed service account, and a dns01 ClusterIssuer
    # that uses the cluster's region, substituted by Flux
    assert ctx.objects == [
        NAMESPACE,
        REPOSITORY,
        _release({**CRDS, **SERVICE_ACCOUNT}),
        _issuer({"dns01": {"route53": {"region": "${cluster_region}"}}}),
    ]


def test_dns01_declares_the_route53_pod_identity() -> None:
    # GIVEN the default (dns01) issuer WHEN bound
    ctx = bind_pack(PACK, CertManagerConfig())

    # THEN the controller's service account gets cert-manager's Route 53 policy: TXT records in any zone,
    # and the zone lookup by name
    assert ctx.pod_identities == [
        PodIdentity(
            name="route53",
            namespace="cert-manager",
            service_account="cert-manager",
            policy={
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Action": "route53:GetChange", "Resource": "arn:aws:route53:::change/*"},
                    {
                        "Effect": "Allow",
                        "Action": ["route53:ChangeResourceRecordSets", "route53:ListResourceRecordSets"],
                        "Resource": "arn:aws:route53:::hostedzone/*",
                        "Condition": TXT_ONLY,
                    },
                    {"Effect": "Allow", "Action": "route53:ListHostedZonesByName", "Resource": "*"},
                ],
            },
        )
    ]


def test_hosted_zone_id_scopes_the_solver_and_the_role() -> None:
    # GIVEN a hosted zone ID, an e-mail address and the staging server
    config = _config({"hostedZoneID": "Z0123456789ABC", "email": "ops@example.com", "server": "staging"})

    # WHEN bound
    ctx = bind_pack(PACK, config)

    # THEN the solver names the zone, the issuer registers the address with staging
    assert ctx.objects[3] == _issuer(
        {"dns01": {"route53": {"region": "${cluster_region}", "hostedZoneID": "Z0123456789ABC"}}},
        server=STAGING,
        email="ops@example.com",
    )
    # AND the role may change TXT records of that zone only, with no zone lookup
    [identity] = ctx.pod_identities
    assert identity.policy == {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "route53:GetChange", "Resource": "arn:aws:route53:::change/*"},
            {
                "Effect": "Allow",
                "Action": ["route53:ChangeResourceRecordSets", "route53:ListResourceRecordSets"],
                "Resource": "arn:aws:route53:::hostedzone/Z0123456789ABC",
                "Condition": TXT_ONLY,
            },
        ],
    }


def test_http01_uses_the_ingress_class_and_needs_no_aws_identity() -> None:
    # GIVEN an http01 issuer named letsencrypt-staging
    config = _config(
        {"solver": "http01", "ingressClassName": "nginx", "name": "letsencrypt-staging", "server": "staging"}
    )

    # WHEN bound
    ctx = bind_pack(PACK, config)

    # THEN the challenge Ingresses get the class, the chart keeps its default service account,
    # and no IAM role is asked for
    assert ctx.objects == [
        NAMESPACE,
        REPOSITORY,
        _release(CRDS),
        _issuer({"http01": {"ingress": {"ingressClassName": "nginx"}}}, server=STAGING, name="letsencrypt-staging"),
    ]
    assert ctx.pod_identities == []


def test_issuer_off_installs_cert_manager_only() -> None:
    # GIVEN the issuer switched off WHEN bound
    ctx = bind_pack(PACK, _config({"enabled": False}))

    # THEN there is no ClusterIssuer and no IAM role
    assert ctx.objects == [NAMESPACE, REPOSITORY, _release(CRDS)]
    assert ctx.pod_identities == []


def test_version_and_values_are_merged_last() -> None:
    # GIVEN another chart version and values that override crds.keep and add replicas
    config = _config(version="v1.19.4", values={"crds": {"keep": False}, "replicaCount": 2})

    # WHEN bound THEN the release asks for that version and the user's values win, key by key
    assert bind_pack(PACK, config).objects[2] == _release(
        {"crds": {"enabled": True, "keep": False}, **SERVICE_ACCOUNT, "replicaCount": 2}, version="v1.19.4"
    )


def test_health_check_is_the_helm_release() -> None:
    # GIVEN the default config WHEN bound THEN the pack is gated on its HelmRelease, with no CEL checks
    ctx = bind_pack(PACK, CertManagerConfig())
    assert ctx.health_checks == [
        NamespacedObjectKindReference(
            api_version="helm.toolkit.fluxcd.io/v2", kind="HelmRelease", name="cert-manager", namespace="flux-system"
        )
    ]
    assert ctx.health_check_exprs == []


def test_split_applies_the_issuer_after_the_controllers() -> None:
    # GIVEN the pack as synth splits it WHEN both halves are bound with the default config
    halves = []
    for half in split_pack(PACK):
        ctx = bind_pack(half, CertManagerConfig())
        halves.append((half.name, half.layer, [d["kind"] for d in ctx.objects], ctx.pod_identities))

    # THEN the controllers keep the release and the IAM role, cert-manager-configs the ClusterIssuer
    assert [(name, layer, kinds, len(identities)) for name, layer, kinds, identities in halves] == [
        ("cert-manager", "controllers", ["Namespace", "HelmRepository", "HelmRelease"], 1),
        ("cert-manager-configs", "configs", ["ClusterIssuer"], 0),
    ]
