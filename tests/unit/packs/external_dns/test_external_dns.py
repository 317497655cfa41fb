"""Tests for fluxplane.packs.external_dns: its config model, its documents, its Pod Identity and its health gate."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.constructs import NamespacedObjectKindReference
from fluxplane.packs import versions
from fluxplane.packs.api import PodIdentity
from fluxplane.packs.external_dns import PACK, ExternalDnsConfig
from fluxplane.testing import BoundPack, bind_pack

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "external-dns"}}
REPOSITORY = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "HelmRepository",
    "metadata": {"name": "external-dns", "namespace": "flux-system"},
    "spec": {"interval": "1h", "url": "https://kubernetes-sigs.github.io/external-dns/"},
}
MINIMAL = {"domainFilters": ["example.com"]}
DEFAULT_VALUES: dict[str, Any] = {
    "provider": {"name": "aws"},
    "serviceAccount": {"create": True, "name": "external-dns"},
    "env": [{"name": "AWS_DEFAULT_REGION", "value": "${cluster_region}"}],
    "sources": ["service", "ingress"],
    "domainFilters": ["example.com"],
    "policy": "upsert-only",
    "registry": "txt",
    "txtOwnerId": "${cluster_name}",
    "extraArgs": ["--aws-zone-type=public"],
}
LIST_ANYWHERE = {
    "Effect": "Allow",
    "Action": ["route53:ListHostedZones", "route53:ListResourceRecordSets", "route53:ListTagsForResource"],
    "Resource": ["*"],
}


def _release(values: dict[str, Any], version: str = "1.21.1") -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "external-dns", "namespace": "flux-system"},
        "spec": {
            "interval": "30m",
            "chart": {
                "spec": {
                    "chart": "external-dns",
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": "external-dns"},
                }
            },
            "releaseName": "external-dns",
            "targetNamespace": "external-dns",
            "serviceAccountName": "helm-controller",
            "postRenderStrategy": "nohooks",
            "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
            "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}},
            "driftDetection": {"mode": "enabled"},
            "values": values,
        },
    }


def _policy(*zones: str) -> dict[str, Any]:
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": ["route53:ChangeResourceRecordSets"], "Resource": list(zones)},
            LIST_ANYWHERE,
        ],
    }


def _config(**section: Any) -> ExternalDnsConfig:
    return ExternalDnsConfig.model_validate({**MINIMAL, **section})


def _values(ctx: BoundPack) -> dict[str, Any]:
    return ctx.objects[-1]["spec"]["values"]  # type: ignore[no-any-return]


def test_config_defaults() -> None:
    # GIVEN only the required domain filter WHEN the config is made
    # THEN Services and Ingresses are published into public zones, never deleting, owned by the cluster
    assert _config() == ExternalDnsConfig.model_validate(
        {
            "enabled": True,
            "domainFilters": ["example.com"],
            "policy": "upsert-only",
            "txtOwnerId": "${cluster_name}",
            "sources": ["service", "ingress"],
            "zoneType": "public",
            "zoneIdFilters": [],
            "version": versions.EXTERNAL_DNS.version,
            "values": {},
        }
    )
    assert versions.EXTERNAL_DNS == ("https://kubernetes-sigs.github.io/external-dns/", "external-dns", "1.21.1")


@pytest.mark.parametrize(
    ("section", "loc", "message"),
    [
        ({"domainFilters": None}, ("domainFilters",), "valid list"),
        ({"domainFilters": []}, ("domainFilters",), "at least 1 item"),
        ({"domainFilters": ["Example.com"]}, ("domainFilters", 0), 'expected a DNS name .*got "Example.com"'),
        ({"domainFilters": ["-a.example.com"]}, ("domainFilters", 0), 'got "-a.example.com"'),
        ({"domainFilters": ["a-.example.com"]}, ("domainFilters", 0), 'got "a-.example.com"'),
        ({"domainFilters": ["example..com"]}, ("domainFilters", 0), 'got "example..com"'),
        ({"domainFilters": ["*.example.com"]}, ("domainFilters", 0), r'got "\*.example.com"'),
        ({"domainFilters": ["${cluster}.example.com"]}, ("domainFilters", 0), r'got "\$\{cluster\}.example.com"'),
        ({"domainFilters": ["a." * 126 + "com"]}, ("domainFilters", 0), "at most 253 characters"),
        (
            {"domainFilters": ["example.com", "example.org", "example.com"]},
            ("domainFilters",),
            'must not repeat entries, got "example.com" more than once',
        ),
        ({"policy": "create-only"}, ("policy",), "'sync' or 'upsert-only'"),
        ({"sources": ["node"]}, ("sources", 0), "'service', 'ingress', 'gateway-httproute'"),
        ({"sources": []}, ("sources",), "at least 1 item"),
        ({"sources": ["ingress", "ingress"]}, ("sources",), 'got "ingress" more than once'),
        ({"zoneType": "both"}, ("zoneType",), "'public' or 'private'"),
        ({"zoneIdFilters": ["/hostedzone/Z1"]}, ("zoneIdFilters", 0), 'without /hostedzone/\\), got "/hostedzone/Z1"'),
        ({"zoneIdFilters": ["z123"]}, ("zoneIdFilters", 0), "expected a Route 53 hosted zone ID"),
        ({"zoneIdFilters": ["Z1", "Z1"]}, ("zoneIdFilters",), 'got "Z1" more than once'),
        ({"txtOwnerId": "my cluster"}, ("txtOwnerId",), 'expected an owner ID .*got "my cluster"'),
        ({"txtOwnerId": ""}, ("txtOwnerId",), 'got ""'),
        ({"txtOwnerId": "o" * 129}, ("txtOwnerId",), "at most 128"),
        (
            {"values": {"serviceAccount": {"name": "other"}}},
            ("values",),
            "must not set serviceAccount.create or .name: the Pod Identity role is bound to service account "
            "external-dns/external-dns",
        ),
        ({"values": {"serviceAccount": {"create": False}}}, ("values",), "must not set"),
    ],
)
def test_config_refuses_bad_values(section: dict[str, Any], loc: tuple[str | int, ...], message: str) -> None:
    # GIVEN one bad field WHEN validated THEN that field alone is refused, saying what was expected
    with pytest.raises(ValidationError) as exc:
        _config(**section)
    errors = exc.value.errors()
    assert [e["loc"] for e in errors] == [loc]
    assert re.search(message, errors[0]["msg"]), errors[0]["msg"]


def test_config_requires_a_domain_filter() -> None:
    # GIVEN no section at all WHEN validated THEN domainFilters is required: without it the cluster would
    # publish any hostname its tenants write into any zone its role can list
    with pytest.raises(ValidationError) as exc:
        ExternalDnsConfig.model_validate({})
    assert [(e["loc"], e["type"]) for e in exc.value.errors()] == [(("domainFilters",), "missing")]


@pytest.mark.parametrize(
    "section",
    [
        {"domainFilters": ["${cluster_name}.${environment}.example.com", "apps-${cluster_region}.example.org"]},
        {"domainFilters": ["internal"]},
        {"policy": "sync"},
        {"txtOwnerId": "fleet.${environment}_${cluster_name}-1"},
        {"sources": ["gateway-httproute", "gateway-grpcroute", "service"]},
        {"zoneType": None},
        {"zoneType": "private"},
        {"zoneIdFilters": ["Z0123456789ABCDEFGHIJ", "Z2"]},
        {"values": {"serviceAccount": {"annotations": {"team": "platform"}}}},
    ],
)
def test_config_accepts_good_values(section: dict[str, Any]) -> None:
    # GIVEN values in the documented forms WHEN validated THEN they are kept as given
    dumped = _config(**section).model_dump(by_alias=True)
    assert {key: dumped[key] for key in section} == section


def test_documented_example_is_valid() -> None:
    # GIVEN the example `fluxplane packs show` prints for the required field WHEN validated THEN it is accepted
    example = ExternalDnsConfig.model_fields["domain_filters"].examples
    assert example is not None
    assert _config(domainFilters=example[0]).domain_filters == ["example.com"]


def test_default_documents() -> None:
    # GIVEN only a domain filter WHEN bound
    ctx = bind_pack(PACK, _config())

    # THEN the namespace, the chart's repository and an AWS release owned by the cluster are produced
    assert ctx.objects == [NAMESPACE, REPOSITORY, _release(DEFAULT_VALUES)]


def test_typed_settings_reach_the_chart() -> None:
    # GIVEN full sync of HTTPRoutes and Services under two domains, owned per environment, in private zones
    config = _config(
        domainFilters=["${cluster_name}.example.com", "example.org"],
        policy="sync",
        txtOwnerId="${environment}-${cluster_name}",
        sources=["gateway-httproute", "service"],
        zoneType="private",
    )

    # WHEN bound
    ctx = bind_pack(PACK, config)

    # THEN each lands in its chart value or flag
    assert _values(ctx) == {
        **DEFAULT_VALUES,
        "sources": ["gateway-httproute", "service"],
        "domainFilters": ["${cluster_name}.example.com", "example.org"],
        "policy": "sync",
        "txtOwnerId": "${environment}-${cluster_name}",
        "extraArgs": ["--aws-zone-type=private"],
    }


def test_no_zone_filter_passes_no_extra_flags() -> None:
    # GIVEN public and private zones alike (zoneType: null) and no zone IDs WHEN bound
    ctx = bind_pack(PACK, _config(zoneType=None))

    # THEN ExternalDNS gets no extra flags at all
    assert _values(ctx) == {key: value for key, value in DEFAULT_VALUES.items() if key != "extraArgs"}


def test_zone_ids_narrow_the_flags_and_the_role() -> None:
    # GIVEN two hosted zone IDs WHEN bound
    ctx = bind_pack(PACK, _config(zoneIdFilters=["Z0123456789ABCDEFGHIJ", "Z2"]))

    # THEN ExternalDNS is limited to them and its role may change records there only
    assert _values(ctx)["extraArgs"] == [
        "--aws-zone-type=public",
        "--zone-id-filter=Z0123456789ABCDEFGHIJ",
        "--zone-id-filter=Z2",
    ]
    assert ctx.pod_identities[0].policy == _policy(
        "arn:aws:route53:::hostedzone/Z0123456789ABCDEFGHIJ", "arn:aws:route53:::hostedzone/Z2"
    )


def test_custom_version_pins_the_chart() -> None:
    # GIVEN another chart version WHEN bound THEN the release asks for that version
    ctx = bind_pack(PACK, _config(version="1.21.1"))
    assert ctx.objects[-1] == _release(DEFAULT_VALUES, version="1.21.1")


def test_values_are_merged_last() -> None:
    # GIVEN values that set the interval, replace the sources and annotate the service account
    ctx = bind_pack(
        PACK,
        _config(
            values={
                "interval": "5m",
                "sources": ["crd"],
                "serviceAccount": {"annotations": {"team": "platform"}},
            }
        ),
    )

    # THEN the user's values win: mappings merge key by key, lists are replaced
    assert _values(ctx) == {
        **DEFAULT_VALUES,
        "interval": "5m",
        "sources": ["crd"],
        "serviceAccount": {"create": True, "name": "external-dns", "annotations": {"team": "platform"}},
    }


def test_pod_identity_is_the_chart_service_account_with_the_tutorial_policy() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, _config())

    # THEN one role is declared for the chart's service account: record changes in any hosted zone, listing anywhere
    assert ctx.pod_identities == [
        PodIdentity(
            name="route53",
            namespace="external-dns",
            service_account="external-dns",
            managed_policies=(),
            policy=_policy("arn:aws:route53:::hostedzone/*"),
        )
    ]
    release = ctx.objects[-1]
    identity = ctx.pod_identities[0]
    assert identity.namespace == release["spec"]["targetNamespace"]
    assert identity.service_account == release["spec"]["values"]["serviceAccount"]["name"]
    assert release["spec"]["values"]["serviceAccount"]["create"] is True
    # Pod Identity needs no IRSA annotation on the service account.
    assert "annotations" not in release["spec"]["values"]["serviceAccount"]


def test_region_and_provider_are_set_for_route53() -> None:
    # GIVEN the default config WHEN bound
    values = _values(bind_pack(PACK, _config()))

    # THEN the AWS provider runs with the cluster's region (the Pod Identity Agent sets none)
    assert values["provider"] == {"name": "aws"}
    assert {"name": "AWS_DEFAULT_REGION", "value": "${cluster_region}"} in values["env"]


def test_health_check_is_the_helm_release() -> None:
    # GIVEN the default config WHEN bound THEN the pack is gated on its HelmRelease, with no CEL checks
    ctx = bind_pack(PACK, _config())
    assert ctx.health_checks == [
        NamespacedObjectKindReference(
            api_version="helm.toolkit.fluxcd.io/v2",
            kind="HelmRelease",
            name="external-dns",
            namespace="flux-system",
        )
    ]
    assert ctx.health_check_exprs == []
