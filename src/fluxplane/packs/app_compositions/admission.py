"""The admission policies that keep apps' requests to their own app.

On the hub, an app's request account applies what the app's repository asks for in its cluster's hub
namespace (POLICY); on a workload cluster that makes its apps' resources (``mode: spoke``), each tenant
applies its app's in its own namespace (TENANT_POLICY). Both hold a request to objects of its own app
(the hub's on every write, delete included, since an app's requests share their namespace with other apps'),
named after the app, with an AWS name that starts with ``<cluster>-<app>-`` (so no request can adopt
another app's or another cluster's AWS resource), in the cluster's own AWS account.
"""

from __future__ import annotations

from fluxplane.config.hub import ACCOUNT_LABEL
from fluxplane.config.models import HUB_PROVIDER_CONFIG
from fluxplane.constructs.admission_policy import (
    MatchResources,
    NamedExpression,
    ResourceRule,
    ValidatingAdmissionPolicyProps,
    Validation,
    Variable,
)
from fluxplane.constructs.patch_and_transform import PROVIDER_CONFIG_FIELD
from fluxplane.constructs.props import TENANT_LABEL
from fluxplane.kinds import APP_KINDS, REQUESTABLE
from fluxplane.kinds.app import GROUP, REQUEST_ACCOUNT_SUFFIX


def _spec_field(path: tuple[str, ...] | None) -> str:
    if path is None or len(path) != 2 or path[0] != "spec":
        raise ValueError(f"an app kind an app may request is named by a field of its spec, not {path!r}")
    return path[1]


#: The field of each requestable kind that holds its AWS name, which starts with ``<cluster>-<app>-``: the field
#: its declaration names it by (fluxplane.kinds.live.CloudKind.name, ``spec.<field>``).
PHYSICAL_NAME = {kind: _spec_field(APP_KINDS[kind].live.name) for kind in REQUESTABLE}

#: The policy that keeps an app's own requests to itself.
POLICY = "fluxplane-app-requests"
#: The labels kustomize-controller puts on every object a Kustomization applies: its name and namespace.
FLUX_OWNER = ("kustomize.toolkit.fluxcd.io/name", "kustomize.toolkit.fluxcd.io/namespace")


def policy_props() -> ValidatingAdmissionPolicyProps:
    """An app's request account may only make, change and delete resources of its own app.

    The account ``<app>-cloud`` of a cluster's hub namespace applies what the app's repository asks for; RBAC
    lets it manage the requestable kinds in that namespace, and this policy narrows it to objects whose
    ``spec.app`` is the app: on a delete, the object as it is (``oldObject``), so no app can delete another's
    table, queue or bucket and with it the AWS resource and its data. An object it changes or deletes must also
    be one its own Kustomization applied (Flux's FLUX_OWNER labels), never one the platform declared for the
    app. What it makes is named ``<app>-...``, with an AWS name ``<cluster>-<app>-...``, in the cluster's own AWS
    account (the hub namespace's ACCOUNT_LABEL, else the hub's).
    """
    name_label, namespace_label = FLUX_OWNER
    owner = "oldObject.metadata.labels"
    return ValidatingAdmissionPolicyProps(
        name=POLICY,
        failure_policy="Fail",
        match_constraints=MatchResources(
            resource_rules=(
                ResourceRule(
                    api_groups=(GROUP,),
                    api_versions=("*",),
                    operations=("CREATE", "UPDATE", "DELETE"),
                    resources=tuple(REQUESTABLE.values()),
                ),
            )
        ),
        match_conditions=(
            NamedExpression(
                name="app-request-account",
                expression="request.userInfo.username.startsWith('system:serviceaccount:') && "
                f"request.userInfo.username.endsWith('{REQUEST_ACCOUNT_SUFFIX}')",
            ),
        ),
        variables=(
            # What the request is about: the object as it will be, or on a delete as it is.
            Variable(name="subject", expression="request.operation == 'DELETE' ? oldObject : object"),
            Variable(name="account", expression=f"variables.subject.spec.app + '{REQUEST_ACCOUNT_SUFFIX}'"),
        ),
        validations=(
            Validation(
                expression="request.userInfo.username == 'system:serviceaccount:' + "
                "variables.subject.metadata.namespace + ':' + variables.account",
                message_expression="request.userInfo.username + ' may only request, change or delete resources "
                "of its own app, not of app ' + variables.subject.spec.app",
                reason="Forbidden",
            ),
            Validation(
                expression=f"request.operation == 'CREATE' || (has({owner}) && "
                f"'{name_label}' in {owner} && {owner}['{name_label}'] == variables.account && "
                f"'{namespace_label}' in {owner} && {owner}['{namespace_label}'] == oldObject.metadata.namespace)",
                message_expression="oldObject.metadata.name + ' was not applied by Kustomization ' + "
                "variables.account + ', which may change or delete only what it applied'",
                reason="Forbidden",
            ),
            _unless_deleted(_NAMED_AFTER_APP),
            Validation(
                expression="request.operation != 'UPDATE' || oldObject.spec.app == object.spec.app",
                message="spec.app of an existing resource does not change",
                reason="Forbidden",
            ),
            # The hub namespace is the cluster's name (fluxplane.config.hub.cluster_namespace).
            _unless_deleted(_physical_name("object.metadata.namespace + '-'")),
            _unless_deleted(
                Validation(
                    expression=f"(has(object.spec.{PROVIDER_CONFIG_FIELD}) ? object.spec.{PROVIDER_CONFIG_FIELD} "
                    f": '{HUB_PROVIDER_CONFIG}') == (has(namespaceObject.metadata.labels) && '{ACCOUNT_LABEL}' in "
                    f"namespaceObject.metadata.labels ? namespaceObject.metadata.labels['{ACCOUNT_LABEL}'] : "
                    f"'{HUB_PROVIDER_CONFIG}')",
                    message=f"spec.{PROVIDER_CONFIG_FIELD} is the account of the cluster the app runs on",
                    reason="Forbidden",
                )
            ),
        ),
    )


def _unless_deleted(validation: Validation) -> Validation:
    """``validation`` of the object a request makes or changes; a delete has none (``object`` is null)."""
    return validation.model_copy(update={"expression": f"request.operation == 'DELETE' || ({validation.expression})"})


#: A requested resource's name starts with its app's.
_NAMED_AFTER_APP = Validation(
    expression="object.metadata.name.startsWith(object.spec.app + '-')",
    message_expression="'resources of app ' + object.spec.app + ' are named ' + object.spec.app + '-...'",
    reason="Invalid",
)


def _physical_name(cluster: str) -> Validation:
    """The AWS name of a requested resource starts with ``<cluster>-<app>-`` (``cluster``: a CEL string), so no
    request can name (and so adopt) a resource of another app or cluster, and an app's role reaches its own only."""
    *others, (_, last) = PHYSICAL_NAME.items()
    choice = "".join(f"object.kind == '{kind}' ? object.spec.{field} : " for kind, field in others)
    choice += f"object.spec.{last}"
    prefix = f"{cluster} + object.spec.app + '-'"
    return Validation(
        expression=f"({choice}).startsWith({prefix})",
        message_expression=f"'the AWS name of a resource of app ' + object.spec.app + ' starts with ' + {prefix}",
        reason="Invalid",
    )


#: The policy that keeps a workload cluster's tenants to their own app's resources (mode spoke).
TENANT_POLICY = "fluxplane-tenant-app-resources"


def tenant_policy_props() -> ValidatingAdmissionPolicyProps:
    """On a workload cluster that makes its apps' resources: in a tenant's namespace (TENANT_LABEL, the app's
    name), resources belong to that app, are named after it and the cluster, in the cluster's region and account.

    The tenant's Role grants the requestable kinds in its namespace only; this policy narrows each object to the
    namespace's app. ``${cluster_name}`` and ``${cluster_region}`` are the cluster's (Flux's substitution).
    """
    app = f"namespaceObject.metadata.labels['{TENANT_LABEL}']"
    return ValidatingAdmissionPolicyProps(
        name=TENANT_POLICY,
        failure_policy="Fail",
        match_constraints=MatchResources(
            namespace_selector={"matchExpressions": [{"key": TENANT_LABEL, "operator": "Exists"}]},
            resource_rules=(
                ResourceRule(
                    api_groups=(GROUP,),
                    api_versions=("*",),
                    operations=("CREATE", "UPDATE"),
                    resources=tuple(REQUESTABLE.values()),
                ),
            ),
        ),
        validations=(
            Validation(
                expression=f"object.spec.app == {app}",
                message_expression=f"'resources in namespace ' + object.metadata.namespace + ' belong to app ' + {app}",
                reason="Forbidden",
            ),
            _NAMED_AFTER_APP,
            _physical_name("'${cluster_name}-'"),
            Validation(
                expression="object.spec.region == '${cluster_region}'",
                message="spec.region is the cluster's region, ${cluster_region}",
                reason="Forbidden",
            ),
            Validation(
                expression=f"!has(object.spec.{PROVIDER_CONFIG_FIELD}) || "
                f"object.spec.{PROVIDER_CONFIG_FIELD} == '{HUB_PROVIDER_CONFIG}'",
                message=f"spec.{PROVIDER_CONFIG_FIELD} is '{HUB_PROVIDER_CONFIG}', the cluster's own account",
                reason="Forbidden",
            ),
        ),
    )
