"""crossplane-provider-configs: the ClusterProviderConfigs the AWS managed resources use.

``default`` authenticates as the providers' own identity, in the hub's account. Each account of the
definition (``accounts`` in base.yaml) gets one of its name that then assumes the account's role (its
``roleName``, with its ``externalId``): the clusters that name the account are built through it.

A separate pack (and so a separate Flux Kustomization) from crossplane-providers: its kind is
defined by a CRD the providers install, and a CRD and its custom resources never share a build.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fluxplane.config.awsdata import partition
from fluxplane.config.models import HUB_PROVIDER_CONFIG
from fluxplane.constructs.aws_provider_config import (
    AssumeRole,
    AwsClusterProviderConfig,
    AwsClusterProviderConfigProps,
    AwsCredentials,
)
from fluxplane.packs.api import Pack, PackConfig, PackContext

#: The ClusterProviderConfig every composed AWS resource names unless its cluster names an account.
AWS_PROVIDER_CONFIG = HUB_PROVIDER_CONFIG


class CrossplaneProviderConfigsConfig(PackConfig):
    identity: Literal["irsa", "pod-identity"] = Field("irsa", description="Must match crossplane-providers' identity.")
    accounts: bool = Field(
        True,
        description="Also a provider config per account of the definition (`accounts` in base.yaml), for the hub; "
        "a workload cluster making its own apps' resources uses its own account's, `default`.",
    )


def bind(ctx: PackContext, config: CrossplaneProviderConfigsConfig) -> None:
    credentials = AwsCredentials(source="IRSA" if config.identity == "irsa" else "PodIdentity")
    AwsClusterProviderConfig(
        ctx.scope, "aws", AwsClusterProviderConfigProps(name=AWS_PROVIDER_CONFIG, credentials=credentials)
    )
    if ctx.fleet is None or not config.accounts:
        return
    arn = partition(ctx.fleet.management.region)
    for name, account in sorted(ctx.fleet.accounts.items()):
        role = AssumeRole(
            role_arn=f"arn:{arn}:iam::{account.id}:role/{account.role_name}", external_id=account.external_id
        )
        AwsClusterProviderConfig(
            ctx.scope,
            f"account-{name}",
            AwsClusterProviderConfigProps(name=name, credentials=credentials, assume_role_chain=(role,)),
        )


PACK = Pack(
    name="crossplane-provider-configs",
    version="1.0.0",
    description="AWS ClusterProviderConfig 'default' using the providers' pod identity, and one per account",
    config=CrossplaneProviderConfigsConfig,
    layer="configs",
    bind=bind,
    requires=("crossplane-providers",),
    # A ClusterProviderConfig: cluster-scoped.
    namespaces=(),
    runs_on="any",
)
