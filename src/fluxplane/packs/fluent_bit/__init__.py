"""fluent-bit: container logs to Amazon CloudWatch Logs, from a Fluent Bit DaemonSet.

Fluent Bit tails every container log on every node, adds the pod's Kubernetes metadata and ships
the records with the core ``cloudwatch_logs`` output to one log group per cluster, one log stream
per container (``<namespace>.<pod>.<container>``). It signs as the IAM role EKS Pod Identity gives
its service account (Fluent Bit reads Pod Identity credentials since 3.2.10 and 4.0), allowed to
write to that log group only.

The chart is Fluent Bit's own (fluent/helm-charts), which follows upstream releases within days;
AWS's aws-for-fluent-bit adds Go output plugins this pack does not use, and its eks-charts chart
lags its image. The pipeline is written in the classic format the chart's ``config`` values take.
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
)

#: Where the chart runs, and the fixed name of its service account: the Pod Identity association
#: binds the IAM role to exactly this pair.
NAMESPACE = "logging"
SERVICE_ACCOUNT = "fluent-bit"

#: The retention periods CloudWatch Logs accepts (PutRetentionPolicy), in days.
RetentionDays = Literal[
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653
]

#: A log group name (letters, digits, '_', '-', '/', '.') that may use the cluster variables.
LOG_GROUP_NAME = rf"(?:[-A-Za-z0-9_/.]|{CLUSTER_VARIABLE})+"


def _log_group_name(value: str) -> str:
    if not re.fullmatch(LOG_GROUP_NAME, value) or len(value) > 512:
        raise ValueError(
            "expected a CloudWatch log group name of at most 512 characters: letters, digits, '_', '-', '/', '.' "
            f"and the cluster variables (${{cluster_name}}, ${{cluster_region}}, ...), got {show(value)}"
        )
    return value


LogGroupName = Annotated[str, AfterValidator(_log_group_name)]

INPUTS = """\
[INPUT]
    Name tail
    Path /var/log/containers/*.log
    multiline.parser docker, cri
    Tag kube.*
    DB /var/log/flb_kube.db
    Mem_Buf_Limit 5MB
    Skip_Long_Lines On
"""

FILTERS = """\
[FILTER]
    Name kubernetes
    Match kube.*
    Merge_Log On
    Keep_Log Off
    K8S-Logging.Parser On
    K8S-Logging.Exclude On
"""

#: Record accessor of the stream name; bare ``$`` is left alone by Flux's substitution of ``${...}``.
LOG_STREAM_TEMPLATE = "$kubernetes['namespace_name'].$kubernetes['pod_name'].$kubernetes['container_name']"


class FluentBitConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    log_group_name: Annotated[LogGroupName, SUBSTITUTED] = Field(
        "/aws/eks/${cluster_name}/containers",
        alias="logGroupName",
        description="CloudWatch log group of the cluster's container logs; ${cluster_name} and the other "
        "cluster variables are substituted.",
    )
    auto_create_group: bool = Field(
        True, alias="autoCreateGroup", description="Create the log group if it does not exist (else it must)."
    )
    retention_days: RetentionDays | None = Field(
        30,
        alias="retentionDays",
        description="Days CloudWatch keeps the events of a log group Fluent Bit creates (null: forever).",
    )
    version: str = Field(versions.FLUENT_BIT.version, description="fluent-bit chart version.")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")

    @field_validator("values")
    @classmethod
    def _keep_service_account(cls, values: dict[str, Any]) -> dict[str, Any]:
        return keep_service_account(values, NAMESPACE, SERVICE_ACCOUNT)


def outputs(config: FluentBitConfig) -> str:
    """The ``[OUTPUT]`` section: every ``kube.*`` record to the cluster's log group, in the cluster's region."""
    settings = [
        ("Name", "cloudwatch_logs"),
        ("Match", "kube.*"),
        ("region", "${cluster_region}"),
        ("log_group_name", config.log_group_name),
        ("log_stream_prefix", "from-fluent-bit-"),
        ("log_stream_template", LOG_STREAM_TEMPLATE),
        ("auto_create_group", "On" if config.auto_create_group else "Off"),
    ]
    if config.auto_create_group and config.retention_days is not None:
        settings.append(("log_retention_days", str(config.retention_days)))
    return "[OUTPUT]\n" + "".join(f"    {key} {value}\n" for key, value in settings)


def policy(config: FluentBitConfig) -> dict[str, Any]:
    """The inline policy of Fluent Bit's role: write to the log group (and its streams), nothing else."""
    actions = ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]
    if config.auto_create_group:
        actions.append("logs:CreateLogGroup")
        if config.retention_days is not None:
            actions.append("logs:PutRetentionPolicy")
    group = f"arn:aws:logs:${{cluster_region}}:*:log-group:{config.log_group_name}"
    return {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": sorted(actions), "Resource": [group, f"{group}:*"]}],
    }


def bind(ctx: PackContext, config: FluentBitConfig) -> None:
    Namespace(ctx.scope, "namespace", NamespaceProps(name=NAMESPACE))
    release = chart_release(
        ctx.scope,
        name="fluent-bit",
        chart=versions.FLUENT_BIT,
        version=config.version,
        target_namespace=NAMESPACE,
        identity=config,
    )
    release.add_values(
        {
            "kind": "DaemonSet",
            "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
            # Logs come from every node, tainted or not.
            "tolerations": [{"operator": "Exists"}],
            "config": {"inputs": INPUTS, "filters": FILTERS, "outputs": outputs(config)},
        }
    )
    release.add_values(config.values)
    ctx.add_pod_identity("logs", namespace=NAMESPACE, service_account=SERVICE_ACCOUNT, policy=policy(config))
    ctx.add_health_check(release)


PACK = Pack(
    name="fluent-bit",
    version="1.0.0",
    description="Fluent Bit DaemonSet shipping container logs to Amazon CloudWatch Logs",
    config=FluentBitConfig,
    layer="controllers",
    bind=bind,
    namespaces=(NAMESPACE,),
)
