"""crossplane-providers: the AWS provider family, the composition functions, and their identity.

provider-kubernetes (optional, on by default) manages objects inside workload clusters through the
kubeconfig Secrets the EKS composition writes; it needs no AWS identity.

Each AWS provider runs with its own DeploymentRuntimeConfig, which fixes its service account name
(``provider-aws-<service>`` in crossplane-system) so an IAM role can trust exactly those accounts:
through IRSA (the role ARN annotation) or EKS Pod Identity (an association per account, made with
the management cluster). No static credentials anywhere.

The providers' IAM role itself, its trust and its policy, is made once outside the fleet, with the hub:
``fluxplane aws-setup`` writes it (fluxplane.synth.aws_setup) from :func:`service_accounts` and :func:`policy`.

On a workload cluster that makes its apps' resources itself (``appResources: spoke``), ``hubRoles`` has
the hub make each provider's role, as it does an add-on's (an AddonIdentity through EKS Pod Identity),
allowed only the resources named after the cluster (``<cluster>-...``) in its region: a cluster's
Crossplane can never touch another cluster's tables, queues or buckets, nor IAM.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator

from fluxplane.constructs.activation_policy import (
    ACTIVATION,
    ManagedResourceActivationPolicy,
    ManagedResourceActivationPolicyProps,
)
from fluxplane.constructs.crossplane_package import Function, PackageProps, Provider, RuntimeConfigReference
from fluxplane.constructs.deployment_runtime_config import (
    DeploymentRuntimeConfig,
    DeploymentRuntimeConfigProps,
    ObjectMetaTemplate,
    ServiceAccountTemplate,
)
from fluxplane.constructs.health import package_health
from fluxplane.packs import versions
from fluxplane.packs.api import AWS_PROVIDERS, Pack, PackConfig, PackContext
from fluxplane.packs.crossplane import NAMESPACE as CROSSPLANE_NAMESPACE
from fluxplane.packs.managed_resources import KUBERNETES_ACTIVATIONS, aws_activations
from fluxplane.packs.policies import load_policy

ROLE_ARN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$"
#: The providers that may run with ``hubRoles``; what each may do is its policy
#: (this pack's <service>.json): everything on the cluster's own resources,
#: named ``<cluster>-...`` (``${cluster_name}`` and ``${cluster_region}`` are the cluster's), and the
#: account-wide reads it starts with.
SCOPED_SERVICES = ("dynamodb", "s3", "sqs")
#: IAM's prefix for the actions of a provider family member, where it is not the member's name.
IAM_PREFIXES = {
    "appautoscaling": "application-autoscaling",
    "cloudwatchevents": "events",
    "cloudwatchlogs": "logs",
    "cognitoidentity": "cognito-identity",
    "cognitoidp": "cognito-idp",
    "ecrpublic": "ecr-public",
    "efs": "elasticfilesystem",
    "elasticsearch": "es",
    "elb": "elasticloadbalancing",
    "elbv2": "elasticloadbalancing",
    "emr": "elasticmapreduce",
    "networkfirewall": "network-firewall",
    "opensearch": "es",
    "s3control": "s3",
    "sfn": "states",
}
FUNCTIONS = (
    ("function-patch-and-transform", versions.FUNCTION_PATCH_AND_TRANSFORM),
    ("function-auto-ready", versions.FUNCTION_AUTO_READY),
)


class CrossplaneProvidersConfig(PackConfig):
    identity: Literal["irsa", "pod-identity"] = Field(
        "irsa", description="How provider pods get AWS credentials: IRSA or EKS Pod Identity."
    )
    role_arn: Annotated[str, StringConstraints(pattern=ROLE_ARN)] | None = Field(
        None,
        alias="roleArn",
        description="IAM role the AWS providers assume (required with irsa); trust "
        "system:serviceaccount:crossplane-system:provider-aws-*.",
    )
    services: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+$")]] = Field(
        ["ec2", "eks", "iam"], min_length=1, description="AWS provider family members to install."
    )
    version: str = Field(versions.PROVIDER_AWS, description="provider-upjet-aws family version.")
    kubernetes: bool = Field(
        True,
        description="Install provider-kubernetes, which reaches each workload cluster through its kubeconfig Secret.",
    )
    hub_roles: bool = Field(
        False,
        alias="hubRoles",
        description="With identity pod-identity on a workload cluster: the hub makes each provider's IAM role, "
        "allowed only the cluster's own resources (named `<cluster>-...`, in its region); services "
        f"{', '.join(sorted(SCOPED_SERVICES))}. Set by `appResources: spoke`.",
    )
    activate: list[Annotated[str, StringConstraints(pattern=ACTIVATION)]] = Field(
        default_factory=list,
        description="More managed resources to activate, for compositions of your own: MRD names "
        "(`<plural>.<group>`, e.g. instances.rds.aws.m.upbound.io) or a wildcard prefix (`*.rds.aws.m.upbound.io`).",
    )

    @model_validator(mode="after")
    def _role_for_irsa(self) -> CrossplaneProvidersConfig:
        if self.identity == "irsa" and self.role_arn is None:
            raise ValueError("roleArn is required when identity is 'irsa'")
        if len(set(self.services)) != len(self.services):
            raise ValueError("services must not repeat")
        if self.hub_roles:
            if self.identity != "pod-identity":
                raise ValueError(
                    "hubRoles needs identity 'pod-identity': the hub binds the roles through EKS Pod Identity"
                )
            unscoped = sorted(set(self.services) - set(SCOPED_SERVICES))
            if unscoped:
                raise ValueError(
                    f"with hubRoles, services may be {', '.join(sorted(SCOPED_SERVICES))}: the hub has no role limited "
                    f"to the cluster's own resources for {', '.join(unscoped)}"
                )
        return self


def service_accounts(config: CrossplaneProvidersConfig) -> list[str]:
    """The AWS providers' service accounts in crossplane-system, which their runtime configs fix: the family's,
    then one per service. These, and no other, are what the providers' IAM role trusts."""
    return ["provider-family-aws", *(f"provider-aws-{service}" for service in sorted(config.services))]


def policy(config: CrossplaneProvidersConfig, assumed_roles: Sequence[str] = ()) -> dict[str, Any]:
    """The IAM policy of the providers' role, and of the role they assume in each other account: every action of
    each service the providers manage (what the compositions make, and what apps ask for, is named at run time),
    the Secrets Manager rights RDS keeps a database's password with, and ``assumed_roles``, the ARNs of the
    accounts' roles (the hub's role only)."""
    statements: list[dict[str, Any]] = [
        {
            "Sid": service.capitalize(),
            "Effect": "Allow",
            "Action": [f"{IAM_PREFIXES.get(service, service)}:*"],
            "Resource": ["*"],
        }
        for service in sorted(config.services)
    ]
    if "rds" in config.services:
        statements += load_policy("rds-password", __name__)["Statement"]
    if assumed_roles:
        statements.append(
            {
                "Sid": "AccountRoles",
                "Effect": "Allow",
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Resource": list(assumed_roles),
            }
        )
    return {"Version": "2012-10-17", "Statement": statements}


def bind(ctx: PackContext, config: CrossplaneProvidersConfig) -> None:
    registry = versions.CROSSPLANE_REGISTRY
    role_arn = config.role_arn if config.identity == "irsa" else None
    annotations = {"eks.amazonaws.com/role-arn": role_arn} if role_arn is not None else None
    for name in service_accounts(config):
        runtime = DeploymentRuntimeConfig(
            ctx.scope,
            f"{name}-runtime",
            DeploymentRuntimeConfigProps(
                name=name,
                service_account_template=ServiceAccountTemplate(
                    metadata=ObjectMetaTemplate(name=name, annotations=annotations)
                ),
            ),
        )
        provider = Provider(
            ctx.scope,
            name,
            PackageProps(
                name=name,
                package=f"{registry}/{name}:{config.version}",
                runtime_config_ref=RuntimeConfigReference(name=runtime.name),
            ),
        )
        ctx.add_health_check(provider)
        service = name.removeprefix("provider-aws-")
        if config.hub_roles and service in SCOPED_SERVICES:
            ctx.add_pod_identity(
                service,
                namespace=CROSSPLANE_NAMESPACE,
                service_account=name,
                policy=load_policy(service, __name__),
            )
    if config.kubernetes:
        name = "provider-kubernetes"
        runtime = DeploymentRuntimeConfig(
            ctx.scope,
            f"{name}-runtime",
            DeploymentRuntimeConfigProps(
                name=name, service_account_template=ServiceAccountTemplate(metadata=ObjectMetaTemplate(name=name))
            ),
        )
        ctx.add_health_check(
            Provider(
                ctx.scope,
                name,
                PackageProps(
                    name=name,
                    package=f"{registry}/{name}:{versions.PROVIDER_KUBERNETES}",
                    runtime_config_ref=RuntimeConfigReference(name=runtime.name),
                ),
            )
        )
    # Only what the compositions build (and what the definition adds) gets a CRD and a controller; with the
    # crossplane pack's defaultActivations off, the rest of the family stays inactive.
    activations = [*aws_activations(config.services), *(KUBERNETES_ACTIVATIONS if config.kubernetes else ())]
    ManagedResourceActivationPolicy(
        ctx.scope,
        "activations",
        ManagedResourceActivationPolicyProps(name="fluxplane", activate=(*activations, *config.activate)),
    )
    for name, version in FUNCTIONS:
        ctx.add_health_check(Function(ctx.scope, name, PackageProps(name=name, package=f"{registry}/{name}:{version}")))
    for kind in ("Provider", "Function"):
        ctx.add_health_check_expr(package_health("pkg.crossplane.io/v1", kind))


PACK = Pack(
    name="crossplane-providers",
    version="1.0.0",
    description="Crossplane AWS provider family (IRSA or Pod Identity) and composition functions",
    config=CrossplaneProvidersConfig,
    layer="configs",
    bind=bind,
    requires=("crossplane",),
    provides=(AWS_PROVIDERS,),
    # Crossplane runs the providers' and functions' pods, and their service accounts, in its own namespace.
    namespaces=(CROSSPLANE_NAMESPACE,),
    runs_on="any",
    # what the providers install: the family's provider configs and each member's managed resources, both
    # cluster-scoped and namespaced; provider-kubernetes' Object and provider configs
    crds=(
        "aws.upbound.io",
        "*.aws.upbound.io",
        "aws.m.upbound.io",
        "*.aws.m.upbound.io",
        "kubernetes.crossplane.io",
        "kubernetes.m.crossplane.io",
    ),
)
