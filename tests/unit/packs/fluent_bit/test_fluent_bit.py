"""Tests for fluxplane.packs.fluent_bit: its config model, its documents, its Pod Identity and its health gate."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.constructs import NamespacedObjectKindReference
from fluxplane.packs import versions
from fluxplane.packs.api import PodIdentity
from fluxplane.packs.fluent_bit import PACK, FluentBitConfig
from fluxplane.testing import BoundPack, bind_pack

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "logging"}}
REPOSITORY = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "HelmRepository",
    "metadata": {"name": "fluent-bit", "namespace": "flux-system"},
    "spec": {"interval": "1h", "url": "https://fluent.github.io/helm-charts"},
}
INPUTS = (
    "[INPUT]\n"
    "    Name tail\n"
    "    Path /var/log/containers/*.log\n"
    "    multiline.parser docker, cri\n"
    "    Tag kube.*\n"
    "    DB /var/log/flb_kube.db\n"
    "    Mem_Buf_Limit 5MB\n"
    "    Skip_Long_Lines On\n"
)
FILTERS = (
    "[FILTER]\n"
    "    Name kubernetes\n"
    "    Match kube.*\n"
    "    Merge_Log On\n"
    "    Keep_Log Off\n"
    "    K8S-Logging.Parser On\n"
    "    K8S-Logging.Exclude On\n"
)


def _outputs(group: str = "/aws/eks/${cluster_name}/containers", tail: str = "") -> str:
    return (
        "[OUTPUT]\n"
        "    Name cloudwatch_logs\n"
        "    Match kube.*\n"
        "    region ${cluster_region}\n"
        f"    log_group_name {group}\n"
        "    log_stream_prefix from-fluent-bit-\n"
        "    log_stream_template $kubernetes['namespace_name'].$kubernetes['pod_name'].$kubernetes['container_name']\n"
        f"{tail}"
    )


DEFAULT_OUTPUTS = _outputs(tail="    auto_create_group On\n    log_retention_days 30\n")


def _values(outputs: str = DEFAULT_OUTPUTS) -> dict[str, Any]:
    return {
        "kind": "DaemonSet",
        "serviceAccount": {"create": True, "name": "fluent-bit"},
        "tolerations": [{"operator": "Exists"}],
        "config": {"inputs": INPUTS, "filters": FILTERS, "outputs": outputs},
    }


def _release(values: dict[str, Any], version: str = versions.FLUENT_BIT.version) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "fluent-bit", "namespace": "flux-system"},
        "spec": {
            "interval": "30m",
            "chart": {
                "spec": {
                    "chart": "fluent-bit",
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": "fluent-bit"},
                }
            },
            "releaseName": "fluent-bit",
            "targetNamespace": "logging",
            "serviceAccountName": "helm-controller",
            "postRenderStrategy": "nohooks",
            "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
            "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}},
            "driftDetection": {"mode": "enabled"},
            "values": values,
        },
    }


def _policy(actions: list[str], group: str = "/aws/eks/${cluster_name}/containers") -> dict[str, Any]:
    arn = f"arn:aws:logs:${{cluster_region}}:*:log-group:{group}"
    return {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": actions, "Resource": [arn, f"{arn}:*"]}],
    }


ALL_ACTIONS = [
    "logs:CreateLogGroup",
    "logs:CreateLogStream",
    "logs:DescribeLogStreams",
    "logs:PutLogEvents",
    "logs:PutRetentionPolicy",
]


def _outputs_of(ctx: BoundPack) -> str:
    return ctx.objects[-1]["spec"]["values"]["config"]["outputs"]  # type: ignore[no-any-return]


def test_config_defaults() -> None:
    # GIVEN no values WHEN the config is made THEN one log group per cluster, created with 30 days of retention
    assert PACK.config() == FluentBitConfig(
        enabled=True,
        logGroupName="/aws/eks/${cluster_name}/containers",
        autoCreateGroup=True,
        retentionDays=30,
        version=versions.FLUENT_BIT.version,
        values={},
    )
    assert versions.FLUENT_BIT[:2] == ("https://fluent.github.io/helm-charts", "fluent-bit")


@pytest.mark.parametrize(
    ("section", "loc", "message"),
    [
        ({"logGroupName": "/aws/eks/$HOST/containers"}, "logGroupName", r'got "/aws/eks/\$HOST/containers"'),
        ({"logGroupName": "/aws/eks/${cluster}/x"}, "logGroupName", "expected a CloudWatch log group name"),
        ({"logGroupName": "/aws/eks/my logs"}, "logGroupName", "letters, digits, '_', '-', '/', '.'"),
        ({"logGroupName": ""}, "logGroupName", 'got ""'),
        ({"logGroupName": "a" * 513}, "logGroupName", "at most 512 characters"),
        ({"retentionDays": 2}, "retentionDays", "Input should be 1, 3, 5, 7, 14, 30, 60, 90"),
        ({"retentionDays": 0}, "retentionDays", "3288 or 3653"),
        ({"autoCreateGroup": "maybe"}, "autoCreateGroup", "valid boolean"),
        (
            {"values": {"serviceAccount": {"name": "other"}}},
            "values",
            "must not set serviceAccount.create or .name: the Pod Identity role is bound to service account "
            "logging/fluent-bit",
        ),
        ({"values": {"serviceAccount": {"create": False}}}, "values", "must not set"),
    ],
)
def test_config_refuses_bad_values(section: dict[str, Any], loc: str, message: str) -> None:
    # GIVEN one bad field WHEN validated THEN that field alone is refused, saying what was expected
    with pytest.raises(ValidationError) as exc:
        FluentBitConfig.model_validate(section)
    errors = exc.value.errors()
    assert [e["loc"] for e in errors] == [(loc,)]
    assert re.search(message, errors[0]["msg"]), errors[0]["msg"]


@pytest.mark.parametrize(
    "section",
    [
        {"logGroupName": "/eks/${environment}/${cluster_region}/${cluster_name}.apps_v1-${kubernetes_version}"},
        {"retentionDays": 3653},
        {"retentionDays": None},
        {"values": {"serviceAccount": {"annotations": {"team": "platform"}}}},
    ],
)
def test_config_accepts_good_values(section: dict[str, Any]) -> None:
    # GIVEN values in the documented forms WHEN validated THEN they are kept as given
    dumped = FluentBitConfig.model_validate(section).model_dump(by_alias=True)
    assert {key: dumped[key] for key in section} == section


def test_default_documents() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, FluentBitConfig())

    # THEN the namespace, the chart's repository and a DaemonSet release shipping to CloudWatch Logs are produced
    assert ctx.objects == [NAMESPACE, REPOSITORY, _release(_values())]


def test_retention_can_be_left_to_cloudwatch() -> None:
    # GIVEN retentionDays: null WHEN bound
    ctx = bind_pack(PACK, FluentBitConfig.model_validate({"retentionDays": None}))

    # THEN the group is created without a retention policy, and the role may not set one
    assert _outputs_of(ctx) == _outputs(tail="    auto_create_group On\n")
    assert ctx.pod_identities[0].policy == _policy(
        ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]
    )


def test_existing_log_group_needs_no_create_rights() -> None:
    # GIVEN a log group made elsewhere (autoCreateGroup: false) WHEN bound
    ctx = bind_pack(PACK, FluentBitConfig.model_validate({"autoCreateGroup": False, "retentionDays": 90}))

    # THEN Fluent Bit neither creates it nor sets its retention, and its role can only write streams
    assert _outputs_of(ctx) == _outputs(tail="    auto_create_group Off\n")
    assert ctx.pod_identities[0].policy == _policy(
        ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]
    )


def test_log_group_name_reaches_output_and_policy() -> None:
    # GIVEN a log group per environment and cluster, kept a year
    config = FluentBitConfig.model_validate(
        {"logGroupName": "/fleet/${environment}/${cluster_name}", "retentionDays": 365}
    )

    # WHEN bound
    ctx = bind_pack(PACK, config)

    # THEN the output writes there and the role's resources are that group and its streams
    assert _outputs_of(ctx) == _outputs(
        "/fleet/${environment}/${cluster_name}", tail="    auto_create_group On\n    log_retention_days 365\n"
    )
    assert ctx.pod_identities[0].policy == _policy(ALL_ACTIONS, "/fleet/${environment}/${cluster_name}")


def test_custom_version_pins_the_chart() -> None:
    # GIVEN another chart version WHEN bound THEN the release asks for that version
    ctx = bind_pack(PACK, FluentBitConfig(version="0.57.9"))
    assert ctx.objects[-1] == _release(_values(), version="0.57.9")


def test_values_are_merged_last() -> None:
    # GIVEN values that add resources, replace the tolerations and extend the config with parsers
    config = FluentBitConfig.model_validate(
        {
            "values": {
                "resources": {"requests": {"cpu": "50m"}},
                "tolerations": [],
                "config": {"customParsers": "[PARSER]\n    Name x\n"},
            }
        }
    )

    # WHEN bound
    ctx = bind_pack(PACK, config)

    # THEN mappings merge key by key and lists are replaced
    values = ctx.objects[-1]["spec"]["values"]
    assert values == {
        **_values(),
        "resources": {"requests": {"cpu": "50m"}},
        "tolerations": [],
        "config": {
            "inputs": INPUTS,
            "filters": FILTERS,
            "outputs": DEFAULT_OUTPUTS,
            "customParsers": "[PARSER]\n    Name x\n",
        },
    }


def test_pod_identity_is_the_fluent_bit_service_account() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, FluentBitConfig())

    # THEN one role with an inline policy on the cluster's log group is declared, for the chart's service account
    assert ctx.pod_identities == [
        PodIdentity(
            name="logs",
            namespace="logging",
            service_account="fluent-bit",
            managed_policies=(),
            policy=_policy(ALL_ACTIONS),
        )
    ]
    release = ctx.objects[-1]
    identity = ctx.pod_identities[0]
    assert identity.namespace == release["spec"]["targetNamespace"]
    assert identity.service_account == release["spec"]["values"]["serviceAccount"]["name"]
    assert release["spec"]["values"]["serviceAccount"]["create"] is True
    assert "annotations" not in release["spec"]["values"]["serviceAccount"]


def test_policy_and_output_name_the_same_region_and_group() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, FluentBitConfig())
    outputs = dict(line.split(maxsplit=1) for line in _outputs_of(ctx).splitlines()[1:])

    # THEN the policy's log group ARN is built from the output's region and log group name
    group_arn = f"arn:aws:logs:{outputs['region']}:*:log-group:{outputs['log_group_name']}"
    assert ctx.pod_identities[0].policy is not None
    assert ctx.pod_identities[0].policy["Statement"][0]["Resource"] == [group_arn, f"{group_arn}:*"]


def test_health_check_is_the_helm_release() -> None:
    # GIVEN the default config WHEN bound THEN the pack is gated on its HelmRelease, with no CEL checks
    ctx = bind_pack(PACK, FluentBitConfig())
    assert ctx.health_checks == [
        NamespacedObjectKindReference(
            api_version="helm.toolkit.fluxcd.io/v2",
            kind="HelmRelease",
            name="fluent-bit",
            namespace="flux-system",
        )
    ]
    assert ctx.health_check_exprs == []
