"""AppIdentity and AddonIdentity: the IAM role of an app (or of an add-on's service account) on one workload
cluster, assumable through EKS Pod Identity by exactly one service account of one namespace of that cluster, and the
Pod Identity association that binds them.

An app's role gets its access from each resource composite of the app (a policy that finds the role by label); an
add-on's role carries the add-on's policies itself. An app whose cluster makes its resources (``appResources:
spoke``) gets its role from the hub's composition SPOKE_IDENTITY instead: the role may use the resources named
``<cluster>-<app>-...``, which that cluster's admission policy keeps to the app.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field

from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.composite_resource_definition import CompositionReference
from fluxplane.constructs.composition import CompositionProps
from fluxplane.constructs.props import Label, Props
from fluxplane.kinds import app_bucket, app_queue, app_table
from fluxplane.kinds.app import APP_ROLE_LABEL, GROUP, VERSION, AppKind, CompositeProps, Spec, composition, policy
from fluxplane.kinds.live import COMPOSITE_GROUP, PROVIDER_CONFIG_NAME, CloudKind, spec

#: The Composition of the AppIdentity of an app whose cluster makes its resources (``appResources: spoke``).
SPOKE_IDENTITY = "appidentity-spoke"
#: An AWS managed policy (the only ARNs an add-on's role may attach).
MANAGED_POLICY = r"^arn:aws[a-z-]*:iam::aws:policy/[A-Za-z0-9+=,.@_/-]+$"


class CompositeMachinery(Props):
    """``spec.crossplane`` of a Crossplane v2 composite: how Crossplane composes it."""

    composition_ref: CompositionReference | None = None
    """The Composition to use. Default: not set (the XRD's ``defaultCompositionRef``)."""


class AppIdentityProps(CompositeProps):
    """An app's IAM role, assumable through EKS Pod Identity by one service account of one cluster."""

    crossplane: CompositeMachinery | None = None
    """How Crossplane composes it: ``compositionRef`` SPOKE_IDENTITY for an app whose cluster makes its
    resources. Default: not set (the role gets access through each resource's composite)."""
    cluster_name: str = Field(min_length=1, max_length=100)
    """Name of the EKS cluster the app runs on."""
    service_account_namespace: Label
    """Namespace of the app's service account on that cluster."""
    service_account: Label
    """Name of the app's service account: the only one that may assume the role."""


class InlinePolicy(Props):
    """An inline IAM policy of an add-on's role."""

    name: str = Field(pattern=r"^[A-Za-z0-9+=,.@_-]{1,128}$")
    """Name of the policy within the role."""
    policy: str = Field(min_length=2, max_length=10240)
    """The policy document, JSON."""


class AddonIdentityProps(AppIdentityProps):
    """An add-on's role: AWS managed policies and inline policies, for one service account."""

    managed_policy_arns: tuple[Annotated[str, Field(pattern=MANAGED_POLICY)], ...] = ()
    """ARNs of AWS managed policies attached to the role. Default: none."""
    inline_policies: tuple[InlinePolicy, ...] = ()
    """Inline policies of the role. Default: none."""


class AppIdentity(TypedResource[AppIdentityProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppIdentity"
    props_class = AppIdentityProps


class AddonIdentity(TypedResource[AddonIdentityProps]):
    """The IAM role of one service account of an add-on (a pack) on one cluster, through EKS Pod Identity."""

    api_version = f"{GROUP}/{VERSION}"
    kind = "AddonIdentity"
    props_class = AddonIdentityProps


APP_SPEC: Spec = (
    {
        "clusterName": pt.string_property("EKS cluster the app runs on."),
        "serviceAccountNamespace": pt.string_property("Namespace of the app's service account on that cluster."),
        "serviceAccount": pt.string_property("The app's service account."),
    },
    ["region", "clusterName", "serviceAccountNamespace", "serviceAccount"],
    {"roleArn": {"type": "string"}},
)
ADDON_SPEC: Spec = (
    {
        "clusterName": pt.string_property("EKS cluster the add-on runs on."),
        "serviceAccountNamespace": pt.string_property("Namespace of the add-on's service account on that cluster."),
        "serviceAccount": pt.string_property("The add-on's service account."),
        "managedPolicyArns": {
            "type": "array",
            "description": "AWS managed policies attached to the role.",
            "items": pt.string_property("An AWS managed policy ARN.", pattern=MANAGED_POLICY),
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
)


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


def composed(role: str = "app") -> list[dict[str, Any]]:
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


#: Where an app's own resources are, by name: ``%s`` are the region, then the cluster and the app, in ARN order.
_OWN_RESOURCES = policy(
    (app_table.ACTIONS, ("arn:aws:dynamodb:%s:*:table/%s-%s-*",)),
    (app_queue.ACTIONS, ("arn:aws:sqs:%s:*:%s-%s-*",)),
    (app_bucket.BUCKET_ACTIONS, ("arn:aws:s3:::%s-%s-*",)),
    (app_bucket.OBJECT_ACTIONS, ("arn:aws:s3:::%s-%s-*/*",)),
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
    return [*composed(), grant]


def spoke_identity_props() -> CompositionProps:
    """The hub's composition of the identity of an app whose cluster makes its resources."""
    return composition(SPOKE_IDENTITY, "AppIdentity", _spoke_identity())


APP_KIND = AppKind(
    construct=AppIdentity,
    plural="appidentities",
    spec=APP_SPEC,
    services=("iam", "eks"),
    composed=composed,
    live=CloudKind(
        COMPOSITE_GROUP,
        "AppIdentity",
        "app identity",
        (*spec("region"), PROVIDER_CONFIG_NAME, *spec("clusterName")),
    ),
)
ADDON_KIND = AppKind(
    construct=AddonIdentity,
    plural="addonidentities",
    spec=ADDON_SPEC,
    services=("iam", "eks"),
    composed=lambda: composed("addon"),
    live=CloudKind(
        COMPOSITE_GROUP,
        "AddonIdentity",
        "add-on identity",
        (*spec("region"), PROVIDER_CONFIG_NAME, *spec("clusterName")),
    ),
)
