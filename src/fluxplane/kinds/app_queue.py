"""AppQueue: an SQS queue for one app, and an inline policy on the app's role that grants access to it."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.base import TypedResource
from fluxplane.kinds.app import APP_FIELD, GROUP, VERSION, AppKind, AppResourceProps, Spec, access, policy
from fluxplane.kinds.live import COMPOSITE_GROUP, PROVIDER_CONFIG_NAME, CloudKind, spec

#: What the app's role may do with its queue.
ACTIONS = (
    "sqs:ChangeMessageVisibility",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
    "sqs:GetQueueUrl",
    "sqs:ReceiveMessage",
    "sqs:SendMessage",
)


class AppQueueProps(AppResourceProps):
    """An SQS queue, and an inline policy on the app's role that grants access to it."""

    queue_name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,75}(\.fifo)?$", max_length=80)
    """Name of the SQS queue; a FIFO queue's name ends in ``.fifo``."""
    fifo: bool = False
    """Whether the queue is a FIFO queue (ordered, exactly-once delivery). Default: ``False``."""
    visibility_timeout_seconds: int = Field(30, ge=0, le=43200)
    """Seconds a received message stays hidden from other consumers. Default: ``30``."""
    message_retention_seconds: int = Field(345600, ge=60, le=1209600)
    """Seconds SQS keeps a message that nobody deletes. Default: ``345600`` (4 days)."""


class AppQueue(TypedResource[AppQueueProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppQueue"
    props_class = AppQueueProps


SPEC: Spec = (
    {
        **APP_FIELD,
        "queueName": pt.string_property("SQS queue name (with .fifo for a FIFO queue).", maxLength=80),
        "fifo": {"type": "boolean", "default": False},
        "visibilityTimeoutSeconds": {"type": "integer", "minimum": 0, "maximum": 43200, "default": 30},
        "messageRetentionSeconds": {"type": "integer", "minimum": 60, "maximum": 1209600, "default": 345600},
    },
    ["region", "app", "queueName"],
    {"arn": {"type": "string"}, "url": {"type": "string"}},
)


def composed(access_policy: bool = True) -> list[dict[str, Any]]:
    """The queue, and (unless on a workload cluster, whose Crossplane may not touch IAM) the app role's access."""
    return [
        pt.resource(
            "queue",
            pt.managed("sqs", "Queue", {"sqsManagedSseEnabled": True}),
            [
                pt.use("region"),
                pt.patch("spec.queueName", "spec.forProvider.name", required=True),
                pt.patch("spec.fifo", "spec.forProvider.fifoQueue"),
                pt.patch("spec.visibilityTimeoutSeconds", "spec.forProvider.visibilityTimeoutSeconds"),
                pt.patch("spec.messageRetentionSeconds", "spec.forProvider.messageRetentionSeconds"),
                pt.use("tags"),
                pt.status("status.atProvider.arn", "status.arn"),
                pt.status("status.atProvider.url", "status.url"),
            ],
        ),
        *([access(policy((ACTIONS, ("%s",))), 1)] if access_policy else []),
    ]


APP_KIND = AppKind(
    construct=AppQueue,
    plural="appqueues",
    spec=SPEC,
    services=("sqs", "iam"),
    composed=composed,
    spoke_composed=lambda: composed(access_policy=False),
    live=CloudKind(
        COMPOSITE_GROUP,
        "AppQueue",
        "app queue",
        (*spec("region"), PROVIDER_CONFIG_NAME, *spec("queueName", "fifo")),
        deletes="the SQS queue and its messages",
        data=True,
        name=("spec", "queueName"),
    ),
)
