"""app-compositions: the API apps ask AWS through, on the hub: XRDs and Compositions of the app kinds.

The platform vends namespaced composite kinds, each declared in fluxplane.kinds (fluxplane.kinds.app_table, ...):
the identities of apps and add-ons (EKS Pod Identity), and the tables, queues, buckets and databases apps request.
This pack binds their XRDs and their Compositions (fluxplane.kinds.app makes both from each kind's declaration)
and the admission policies that keep apps' requests to their own app (fluxplane.packs.app_compositions.admission,
a module of this pack's own).

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

from typing import Literal

from pydantic import Field

from fluxplane.constructs.admission_policy import (
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicyBindingProps,
)
from fluxplane.constructs.composite_resource_definition import CompositeResourceDefinition
from fluxplane.constructs.composition import Composition
from fluxplane.constructs.health import definition_health
from fluxplane.kinds import APP_KINDS, REQUESTABLE
from fluxplane.kinds.app import composition_name
from fluxplane.kinds.app_identity import SPOKE_IDENTITY, spoke_identity_props
from fluxplane.packs.api import APP_RESOURCES, Pack, PackConfig, PackContext
from fluxplane.packs.app_compositions.admission import POLICY, TENANT_POLICY, policy_props, tenant_policy_props


class AppCompositionsConfig(PackConfig):
    mode: Literal["hub", "spoke"] = Field(
        "hub",
        description="`hub`: every app kind, for the workload clusters' hub namespaces. `spoke`: on a workload cluster "
        "that makes its apps' resources itself, the table, queue and bucket kinds for its tenants, composed without "
        "IAM (the hub makes the apps' roles). Set by `appResources: spoke`.",
    )


def bind(ctx: PackContext, config: AppCompositionsConfig) -> None:
    spoke = config.mode == "spoke"
    for kind in REQUESTABLE if spoke else APP_KINDS:
        declared = APP_KINDS[kind]
        definition = CompositeResourceDefinition(ctx.scope, f"xrd-{kind.lower()}", declared.xrd_props())
        ctx.add_health_check(definition)
        Composition(ctx.scope, composition_name(kind), declared.composition_props(spoke=spoke))
    if spoke:
        ValidatingAdmissionPolicy(ctx.scope, "tenant-policy", tenant_policy_props())
        ValidatingAdmissionPolicyBinding(
            ctx.scope,
            "tenant-policy-binding",
            ValidatingAdmissionPolicyBindingProps(name=TENANT_POLICY, policy_name=TENANT_POLICY),
        )
    else:
        Composition(ctx.scope, SPOKE_IDENTITY, spoke_identity_props())
        ValidatingAdmissionPolicy(ctx.scope, "requests-policy", policy_props())
        ValidatingAdmissionPolicyBinding(
            ctx.scope, "requests-policy-binding", ValidatingAdmissionPolicyBindingProps(name=POLICY, policy_name=POLICY)
        )
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
