"""app-compositions: the API apps ask AWS through, on the hub: XRDs and Compositions of the app kinds.

The platform vends four namespaced composite kinds (fluxplane.constructs.app_resources). Their
Compositions (function-patch-and-transform) compose:

- ``AppIdentity``: an IAM role whose trust policy lets EKS Pod Identity assume it only for one
  service account of one namespace of one cluster (the session tags Pod Identity sets), and the
  ``PodIdentityAssociation`` that binds that account to the role;
- ``AppTable``, ``AppQueue``, ``AppBucket``: the resource, and an inline ``RolePolicy`` on the app's
  role (selected by label in the same namespace) granting the app's actions on that resource's
  ARN only;
- ``AppDatabase``: an RDS instance in the cluster's VPC, and its credentials in the app's namespace on
  the cluster (fluxplane.packs.app_database).

Synth writes one AppIdentity per app and cluster, and one resource composite per table, queue,
bucket and database of the app (fluxplane.charts.cloud), in the workload cluster's hub namespace.

A workload cluster that makes its apps' resources itself (``appResources: spoke``) runs this pack in
``mode: spoke``: the resource kinds only, for its tenants' namespaces, composed without IAM (its
Crossplane's roles may touch nothing but the cluster's own resources), and an admission policy that
keeps each tenant to its own app's names. The hub still makes those apps' identities, with the
composition ``appidentity-spoke``: the role may use the resources named ``<cluster>-<app>-...``. Their
databases stay with the hub in either mode: they live in the cluster's VPC, which the hub's EKSCluster owns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from fluxplane.config.hub import ACCOUNT_LABEL
from fluxplane.config.models import HUB_PROVIDER_CONFIG
from fluxplane.constructs import app_resources as xr
from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.admission_policy import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
from fluxplane.constructs.composite_resource_definition import CompositeResourceDefinition
from fluxplane.constructs.composition import Composition
from fluxplane.constructs.health import definition_health
from fluxplane.constructs.patch_and_transform import PATCH_SETS, PROVIDER_CONFIG_FIELD
from fluxplane.constructs.props import TENANT_LABEL
from fluxplane.packs import app_database
from fluxplane.packs.api import APP_RESOURCES, Pack, PackConfig, PackContext

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
#: The field of each requestable kind that holds its AWS name, which starts with ``<cluster>-<app>-``.
PHYSICAL_NAME = {"AppTable": "tableName", "AppQueue": "queueName", "AppBucket": "bucketName"}


def composition_name(kind: str) -> str:
    return kind.lower()


def composition_props(kind: str, *, spoke: bool = False) -> dict[str, Any]:
    resources = SPOKE_COMPOSED[kind] if spoke else COMPOSED[kind]
    return _composition(composition_name(kind), kind, resources())


def spoke_identity_props() -> dict[str, Any]:
    """The hub's composition of the identity of an app whose cluster makes its resources."""
    return _composition(SPOKE_IDENTITY, "AppIdentity", _spoke_identity())


def _composition(name: str, kind: str, resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": name,
        "compositeTypeRef": {"apiVersion": f"{xr.GROUP}/{xr.VERSION}", "kind": kind},
        "mode": "Pipeline",
        "pipeline": [
            {
                "step": "compose",
                "functionRef": {"name": pt.PATCH_AND_TRANSFORM},
                "input": {
                    "apiVersion": "pt.fn.crossplane.io/v1beta1",
                    "kind": "Resources",
                    "patchSets": PATCH_SETS,
                    "resources": resources,
                },
            },
            {"step": "detect-readiness", "functionRef": {"name": pt.AUTO_READY}},
        ],
    }


# -- the XRDs ---------------------------------------------------------------------------------------


_COMMON = {
    "region": pt.string_property("AWS region.", pattern=xr.REGION),
    PROVIDER_CONFIG_FIELD: pt.provider_config_property(),
    "tags": {"type": "object", "additionalProperties": {"type": "string"}},
}
_APP = {"app": pt.string_property("The app whose role gets access: its AppIdentity in this namespace.")}

SPECS: dict[str, tuple[dict[str, Any], list[str], dict[str, Any]]] = {
    "AppIdentity": (
        {
            "clusterName": pt.string_property("EKS cluster the app runs on."),
            "serviceAccountNamespace": pt.string_property("Namespace of the app's service account on that cluster."),
            "serviceAccount": pt.string_property("The app's service account."),
        },
        ["region", "clusterName", "serviceAccountNamespace", "serviceAccount"],
        {"roleArn": {"type": "string"}},
    ),
    "AddonIdentity": (
        {
            "clusterName": pt.string_property("EKS cluster the add-on runs on."),
            "serviceAccountNamespace": pt.string_property("Namespace of the add-on's service account on that cluster."),
            "serviceAccount": pt.string_property("The add-on's service account."),
            "managedPolicyArns": {
                "type": "array",
                "description": "AWS managed policies attached to the role.",
                "items": pt.string_property("An AWS managed policy ARN.", pattern=xr.MANAGED_POLICY),
            },
            "inlinePolicies": {
                "type": "array",
                "description": "Inline policies of the role.",
                "items": {
                    "type": "object",
                    "required": ["name", "policy"],
                    "properties": {
                        "name": pt.string_property("Policy name."),
                        "policy": pt.string_property("Policy document (JSON)."),
                    },
                },
            },
        },
        ["region", "clusterName", "serviceAccountNamespace", "serviceAccount"],
        {"roleArn": {"type": "string"}},
    ),
    "AppTable": (
        {
            **_APP,
            "tableName": pt.string_property("DynamoDB table name.", pattern=r"^[A-Za-z0-9_.-]{3,255}$"),
            "hashKey": pt.string_property("Partition key attribute."),
            "rangeKey": pt.string_property("Sort key attribute."),
            "attributes": {
                "type": "array",
                "minItems": 1,
                "maxItems": 2,
                "items": {
                    "type": "object",
                    "required": ["name", "type"],
                    "properties": {"name": {"type": "string"}, "type": {"type": "string", "enum": ["S", "N", "B"]}},
                },
            },
        },
        ["region", "app", "tableName", "hashKey", "attributes"],
        {"arn": {"type": "string"}},
    ),
    "AppQueue": (
        {
            **_APP,
            "queueName": pt.string_property("SQS queue name (with .fifo for a FIFO queue).", maxLength=80),
            "fifo": {"type": "boolean", "default": False},
            "visibilityTimeoutSeconds": {"type": "integer", "minimum": 0, "maximum": 43200, "default": 30},
            "messageRetentionSeconds": {"type": "integer", "minimum": 60, "maximum": 1209600, "default": 345600},
        },
        ["region", "app", "queueName"],
        {"arn": {"type": "string"}, "url": {"type": "string"}},
    ),
    "AppBucket": (
        {
            **_APP,
            "bucketName": pt.string_property(
                "S3 bucket name, unique in all of AWS.", pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"
            ),
            "versioning": pt.string_property("Keep object versions.", enum=["Enabled", "Disabled"], default="Disabled"),
        },
        ["region", "app", "bucketName"],
        {"arn": {"type": "string"}},
    ),
    app_database.KIND: app_database.SPEC,
}


def xrd_props(kind: str) -> dict[str, Any]:
    properties, required, status = SPECS[kind]
    plural = xr.KINDS[kind]
    schema = {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "spec": {"type": "object", "required": required, "properties": {**properties, **_COMMON}},
            "status": {"type": "object", "properties": status},
        },
    }
    return {
        "name": f"{plural}.{xr.GROUP}",
        "group": xr.GROUP,
        "names": {"kind": kind, "plural": plural, "categories": ["crossplane", "composite", "app"]},
        "scope": "Namespaced",
        "defaultCompositionRef": {"name": composition_name(kind)},
        "versions": [
            {"name": xr.VERSION, "served": True, "referenceable": True, "schema": {"openAPIV3Schema": schema}}
        ],
    }


#: The policy that keeps an app's own requests to itself.
POLICY = "fluxplane-app-requests"


def policy_props() -> dict[str, Any]:
    """An app's request account may only make and change resources of its own app.

    The account ``<app>-cloud`` of a cluster's hub namespace applies what the app's repository asks
    for; RBAC lets it manage the requestable kinds in that namespace, and this policy narrows it to
    objects whose ``spec.app`` is the app, named ``<app>-...``, and never another app's object, made in
    the cluster's own AWS account (the hub namespace's ACCOUNT_LABEL, else the hub's).
    """
    account = (
        f"'system:serviceaccount:' + object.metadata.namespace + ':' + object.spec.app + '{xr.REQUEST_ACCOUNT_SUFFIX}'"
    )
    return {
        "name": POLICY,
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {
                    "apiGroups": [xr.GROUP],
                    "apiVersions": ["*"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": list(xr.REQUESTABLE.values()),
                }
            ]
        },
        "matchConditions": [
            {
                "name": "app-request-account",
                "expression": "request.userInfo.username.startsWith('system:serviceaccount:') && "
                f"request.userInfo.username.endsWith('{xr.REQUEST_ACCOUNT_SUFFIX}')",
            }
        ],
        "validations": [
            {
                "expression": f"request.userInfo.username == {account}",
                "messageExpression": "request.userInfo.username + ' may only request resources of its own app'",
                "reason": "Forbidden",
            },
            _NAMED_AFTER_APP,
            {
                "expression": "request.operation != 'UPDATE' || oldObject.spec.app == object.spec.app",
                "message": "spec.app of an existing resource does not change",
                "reason": "Forbidden",
            },
            # The hub namespace is the cluster's name (fluxplane.config.hub.cluster_namespace).
            _physical_name("object.metadata.namespace + '-'"),
            {
                "expression": f"(has(object.spec.{PROVIDER_CONFIG_FIELD}) ? object.spec.{PROVIDER_CONFIG_FIELD} : "
                f"'{HUB_PROVIDER_CONFIG}') == (has(namespaceObject.metadata.labels) && '{ACCOUNT_LABEL}' in "
                f"namespaceObject.metadata.labels ? namespaceObject.metadata.labels['{ACCOUNT_LABEL}'] : "
                f"'{HUB_PROVIDER_CONFIG}')",
                "message": f"spec.{PROVIDER_CONFIG_FIELD} is the account of the cluster the app runs on",
                "reason": "Forbidden",
            },
        ],
    }


#: A requested resource's name starts with its app's.
_NAMED_AFTER_APP = {
    "expression": "object.metadata.name.startsWith(object.spec.app + '-')",
    "messageExpression": "'resources of app ' + object.spec.app + ' are named ' + object.spec.app + '-...'",
    "reason": "Invalid",
}


def _physical_name(cluster: str) -> dict[str, Any]:
    """The AWS name of a requested resource starts with ``<cluster>-<app>-`` (``cluster``: a CEL string), so no
    request can name (and so adopt) a resource of another app or cluster, and an app's role reaches its own only."""
    *others, (_, last) = PHYSICAL_NAME.items()
    choice = "".join(f"object.kind == '{kind}' ? object.spec.{field} : " for kind, field in others)
    choice += f"object.spec.{last}"
    prefix = f"{cluster} + object.spec.app + '-'"
    return {
        "expression": f"({choice}).startsWith({prefix})",
        "messageExpression": f"'the AWS name of a resource of app ' + object.spec.app + ' starts with ' + {prefix}",
        "reason": "Invalid",
    }


#: The policy that keeps a workload cluster's tenants to their own app's resources (mode spoke).
TENANT_POLICY = "fluxplane-tenant-app-resources"


def tenant_policy_props() -> dict[str, Any]:
    """On a workload cluster that makes its apps' resources: in a tenant's namespace (TENANT_LABEL, the app's
    name), resources belong to that app, are named after it and the cluster, in the cluster's region and account.

    The tenant's Role grants the requestable kinds in its namespace only; this policy narrows each object to the
    namespace's app. ``${cluster_name}`` and ``${cluster_region}`` are the cluster's (Flux's substitution).
    """
    app = f"namespaceObject.metadata.labels['{TENANT_LABEL}']"
    return {
        "name": TENANT_POLICY,
        "failurePolicy": "Fail",
        "matchConstraints": {
            "namespaceSelector": {"matchExpressions": [{"key": TENANT_LABEL, "operator": "Exists"}]},
            "resourceRules": [
                {
                    "apiGroups": [xr.GROUP],
                    "apiVersions": ["*"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": list(xr.REQUESTABLE.values()),
                }
            ],
        },
        "validations": [
            {
                "expression": f"object.spec.app == {app}",
                "messageExpression": f"'resources in namespace ' + object.metadata.namespace + ' belong to app ' + "
                f"{app}",
                "reason": "Forbidden",
            },
            _NAMED_AFTER_APP,
            _physical_name("'${cluster_name}-'"),
            {
                "expression": "object.spec.region == '${cluster_region}'",
                "message": "spec.region is the cluster's region, ${cluster_region}",
                "reason": "Forbidden",
            },
            {
                "expression": f"!has(object.spec.{PROVIDER_CONFIG_FIELD}) || "
                f"object.spec.{PROVIDER_CONFIG_FIELD} == '{HUB_PROVIDER_CONFIG}'",
                "message": f"spec.{PROVIDER_CONFIG_FIELD} is '{HUB_PROVIDER_CONFIG}', the cluster's own account",
                "reason": "Forbidden",
            },
        ],
    }


class AppCompositionsConfig(PackConfig):
    mode: Literal["hub", "spoke"] = Field(
        "hub",
        description="`hub`: every app kind, for the workload clusters' hub namespaces. `spoke`: on a workload cluster "
        "that makes its apps' resources itself, the table, queue and bucket kinds for its tenants, composed without "
        "IAM (the hub makes the apps' roles). Set by `appResources: spoke`.",
    )


def bind(ctx: PackContext, config: AppCompositionsConfig) -> None:
    spoke = config.mode == "spoke"
    for kind in xr.REQUESTABLE if spoke else xr.KINDS:
        definition = CompositeResourceDefinition(ctx.scope, f"xrd-{kind.lower()}", xrd_props(kind))
        ctx.add_health_check(definition)
        Composition(ctx.scope, composition_name(kind), composition_props(kind, spoke=spoke))
    if spoke:
        ValidatingAdmissionPolicy(ctx.scope, "tenant-policy", tenant_policy_props())
        ValidatingAdmissionPolicyBinding(
            ctx.scope, "tenant-policy-binding", {"name": TENANT_POLICY, "policyName": TENANT_POLICY}
        )
    else:
        Composition(ctx.scope, SPOKE_IDENTITY, spoke_identity_props())
        ValidatingAdmissionPolicy(ctx.scope, "requests-policy", policy_props())
        ValidatingAdmissionPolicyBinding(ctx.scope, "requests-policy-binding", {"name": POLICY, "policyName": POLICY})
    ctx.add_health_check_expr(
        definition_health(CompositeResourceDefinition.api_version, CompositeResourceDefinition.kind)
    )


PACK = Pack(
    name="app-compositions",
    version="1.0.0",
    description="App and add-on identities (EKS Pod Identity), the DynamoDB, SQS and S3 resources apps may request, "
    "and their RDS databases",
    config=AppCompositionsConfig,
    layer="configs",
    bind=bind,
    requires=("crossplane-provider-configs",),
    provides=(APP_RESOURCES,),
    # Cluster-scoped kinds only; the composites live in the workload clusters' hub namespaces, or in the tenants'.
    namespaces=(),
)
