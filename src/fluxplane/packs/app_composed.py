"""What each app kind's Composition composes, on the hub and on a workload cluster that makes its apps' resources.

Patch-and-transform templates (fluxplane.packs.app_compositions binds them):

- ``AppIdentity``: an IAM role whose trust policy lets EKS Pod Identity assume it only for one
  service account of one namespace of one cluster (the session tags Pod Identity sets), and the
  ``PodIdentityAssociation`` that binds that account to the role; ``AddonIdentity`` the same, with
  the add-on's policies on the role;
- ``AppTable``, ``AppQueue``, ``AppBucket``: the resource, and an inline ``RolePolicy`` on the app's
  role (selected by label in the same namespace) granting the app's actions on that resource's
  ARN only;
- ``AppDatabase``: fluxplane.packs.app_database's.

On a workload cluster (``mode: spoke``) the resource kinds come without the policy on the app's role: its
Crossplane may not touch IAM, and the hub grants the role the app's resources by name (SPOKE_IDENTITY).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fluxplane.constructs import app_resources as xr
from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.composition import CompositionProps, PipelineStep, TypeReference
from fluxplane.constructs.patch_and_transform import PATCH_SETS
from fluxplane.constructs.props import LocalObjectReference
from fluxplane.packs import app_database

#: Label of an app's IAM role, whose value is the app's name: how resource policies find the role.
APP_ROLE_LABEL = f"{pt.LABEL}/app-role"
#: The AWS provider family members the app kinds compose with.
SERVICES = {
    "AppIdentity": ("iam", "eks"),
    "AppTable": ("dynamodb", "iam"),
    "AppQueue": ("sqs", "iam"),
    "AppBucket": ("s3", "iam"),
    app_database.KIND: app_database.SERVICES,
    "AddonIdentity": ("iam", "eks"),
}

TABLE_ACTIONS = (
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:DescribeTable",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:UpdateItem",
)
QUEUE_ACTIONS = (
    "sqs:ChangeMessageVisibility",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
    "sqs:GetQueueUrl",
    "sqs:ReceiveMessage",
    "sqs:SendMessage",
)
BUCKET_ACTIONS = ("s3:GetBucketLocation", "s3:ListBucket")
OBJECT_ACTIONS = ("s3:DeleteObject", "s3:GetObject", "s3:PutObject")


def _policy(*statements: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
    """An IAM policy document (a P&T format string: each ``%s`` is the resource's ARN)."""
    document = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": list(actions), "Resource": list(resources)}
            for actions, resources in statements
        ],
    }
    return json.dumps(document, indent=2) + "\n"


def trust_policy() -> str:
    """The app role's trust policy: Pod Identity, for one cluster, namespace and service account."""
    document = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Condition": {
                    "StringEquals": {
                        "aws:RequestTag/eks-cluster-name": "%s",
                        "aws:RequestTag/kubernetes-namespace": "%s",
                        "aws:RequestTag/kubernetes-service-account": "%s",
                    }
                },
            }
        ],
    }
    return json.dumps(document, indent=2) + "\n"


def _access(actions_fmt: str, arn_uses: int) -> dict[str, Any]:
    """The inline policy on the app's role that grants access to the composed resource's ARN."""
    return pt.resource(
        "access",
        pt.managed("iam", "RolePolicy", {"roleSelector": {"matchLabels": {APP_ROLE_LABEL: "app"}}}),
        [
            pt.patch("spec.app", f"spec.forProvider.roleSelector.matchLabels[{APP_ROLE_LABEL}]", required=True),
            pt.combine(("status.arn",) * arn_uses, actions_fmt, "spec.forProvider.policy"),
        ],
    )


def _external_name(source: str) -> dict[str, Any]:
    return pt.patch(source, "metadata.annotations[crossplane.io/external-name]", required=True)


def _identity(role: str = "app") -> list[dict[str, Any]]:
    """The role Pod Identity lets one service account assume, and the association; an add-on's carries policies."""
    policies = (
        [
            pt.patch("spec.managedPolicyArns", "spec.forProvider.managedPolicyArns"),
            pt.patch("spec.inlinePolicies", "spec.forProvider.inlinePolicy"),
        ]
        if role == "addon"
        else [pt.patch("metadata.name", f"metadata.labels[{APP_ROLE_LABEL}]")]
    )
    return [
        pt.resource(
            "role",
            pt.managed("iam", "Role", {}, labels={"role": role}),
            [
                *policies,
                pt.combine(
                    ("spec.clusterName", "spec.serviceAccountNamespace", "spec.serviceAccount"),
                    trust_policy(),
                    "spec.forProvider.assumeRolePolicy",
                ),
                pt.use("tags"),
                pt.status("status.atProvider.arn", "status.roleArn"),
            ],
        ),
        pt.resource(
            "pod-identity-association",
            pt.managed("eks", "PodIdentityAssociation", {"roleArnSelector": pt.selector(role=role)}),
            [
                pt.use("region"),
                pt.patch("spec.clusterName", "spec.forProvider.clusterName", required=True),
                pt.patch("spec.serviceAccountNamespace", "spec.forProvider.namespace", required=True),
                pt.patch("spec.serviceAccount", "spec.forProvider.serviceAccount", required=True),
                pt.use("tags"),
            ],
        ),
    ]


def _addon_identity() -> list[dict[str, Any]]:
    return _identity("addon")


#: The composition of the identity of an app whose resources its cluster makes (``appResources: spoke``).
SPOKE_IDENTITY = xr.SPOKE_IDENTITY_COMPOSITION
#: Where an app's own resources are, by name: ``%s`` are the region, then the cluster and the app, in ARN order.
_OWN_RESOURCES = _policy(
    (TABLE_ACTIONS, ("arn:aws:dynamodb:%s:*:table/%s-%s-*",)),
    (QUEUE_ACTIONS, ("arn:aws:sqs:%s:*:%s-%s-*",)),
    (BUCKET_ACTIONS, ("arn:aws:s3:::%s-%s-*",)),
    (OBJECT_ACTIONS, ("arn:aws:s3:::%s-%s-*/*",)),
)


def _spoke_identity() -> list[dict[str, Any]]:
    """The app's role on a cluster whose Crossplane makes the app's resources: it may use the resources named
    ``<cluster>-<app>-...`` of the cluster's region, which the cluster's admission policy keeps to that app.

    The grant is a RolePolicy of its own, not the role's ``inlinePolicy``: a role that lists its inline policies
    owns all of them, and would remove those other composites put on it (an AppDatabase's access)."""
    own = ("spec.region", "spec.clusterName", "metadata.name")
    grant = pt.resource(
        "app-resources",
        pt.managed("iam", "RolePolicy", {"roleSelector": pt.selector(role="app")}),
        [pt.combine((*own, *own, *own[1:], *own[1:]), _OWN_RESOURCES, "spec.forProvider.policy")],
    )
    return [*_identity(), grant]


def _table(access: bool = True) -> list[dict[str, Any]]:
    return [
        pt.resource(
            "table",
            pt.managed(
                "dynamodb", "Table", {"billingMode": "PAY_PER_REQUEST", "pointInTimeRecovery": {"enabled": True}}
            ),
            [
                pt.use("region"),
                _external_name("spec.tableName"),
                pt.patch("spec.hashKey", "spec.forProvider.hashKey", required=True),
                pt.patch("spec.rangeKey", "spec.forProvider.rangeKey"),
                pt.patch("spec.attributes", "spec.forProvider.attribute", required=True),
                pt.use("tags"),
                pt.status("status.atProvider.arn", "status.arn"),
            ],
        ),
        *([_access(_policy((TABLE_ACTIONS, ("%s", "%s/index/*"))), 2)] if access else []),
    ]


def _queue(access: bool = True) -> list[dict[str, Any]]:
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
        *([_access(_policy((QUEUE_ACTIONS, ("%s",))), 1)] if access else []),
    ]


def _bucket(access: bool = True) -> list[dict[str, Any]]:
    return [
        pt.resource(
            "bucket",
            pt.managed("s3", "Bucket", {}),
            [
                pt.use("region"),
                _external_name("spec.bucketName"),
                pt.use("tags"),
                pt.status("status.atProvider.arn", "status.arn"),
            ],
        ),
        pt.resource(
            "versioning",
            pt.managed("s3", "BucketVersioning", {"bucketSelector": pt.selector(), "versioningConfiguration": {}}),
            [pt.use("region"), pt.patch("spec.versioning", "spec.forProvider.versioningConfiguration.status")],
        ),
        *([_access(_policy((BUCKET_ACTIONS, ("%s",)), (OBJECT_ACTIONS, ("%s/*",))), 2)] if access else []),
    ]


COMPOSED: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "AppIdentity": _identity,
    "AppTable": _table,
    "AppQueue": _queue,
    "AppBucket": _bucket,
    app_database.KIND: app_database.composed,
    "AddonIdentity": _addon_identity,
}
#: On a workload cluster (mode spoke): the resource kinds, without the access policy on the app's role (the hub
#: grants it by name, SPOKE_IDENTITY), since the cluster's Crossplane may not touch IAM.
SPOKE_COMPOSED: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "AppTable": lambda: _table(access=False),
    "AppQueue": lambda: _queue(access=False),
    "AppBucket": lambda: _bucket(access=False),
}


def composition_name(kind: str) -> str:
    return kind.lower()


def composition_props(kind: str, *, spoke: bool = False) -> CompositionProps:
    resources = SPOKE_COMPOSED[kind] if spoke else COMPOSED[kind]
    return _composition(composition_name(kind), kind, resources())


def spoke_identity_props() -> CompositionProps:
    """The hub's composition of the identity of an app whose cluster makes its resources."""
    return _composition(SPOKE_IDENTITY, "AppIdentity", _spoke_identity())


def _composition(name: str, kind: str, resources: list[dict[str, Any]]) -> CompositionProps:
    return CompositionProps(
        name=name,
        composite_type_ref=TypeReference(api_version=f"{xr.GROUP}/{xr.VERSION}", kind=kind),
        mode="Pipeline",
        pipeline=(
            PipelineStep(
                step="compose",
                function_ref=LocalObjectReference(name=pt.PATCH_AND_TRANSFORM),
                input={
                    "apiVersion": "pt.fn.crossplane.io/v1beta1",
                    "kind": "Resources",
                    "patchSets": PATCH_SETS,
                    "resources": resources,
                },
            ),
            PipelineStep(step="detect-readiness", function_ref=LocalObjectReference(name=pt.AUTO_READY)),
        ),
    )
