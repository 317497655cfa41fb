"""crossplane-provider-configs: the ClusterProviderConfig the AWS managed resources use.

A separate pack (and so a separate Flux Kustomization) from crossplane-providers: its kind is
defined by a CRD the providers install, and a CRD and its custom resources never share a build.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fluxplane.constructs.aws_provider_config import AwsClusterProviderConfig
from fluxplane.packs.api import Pack, PackConfig, PackContext

#: The ClusterProviderConfig every composed AWS resource names.
AWS_PROVIDER_CONFIG = "default"


class CrossplaneProviderConfigsConfig(PackConfig):
    identity: Literal["irsa", "pod-identity"] = Field("irsa", description="Must match crossplane-providers' identity.")


def bind(ctx: PackContext, config: CrossplaneProviderConfigsConfig) -> None:
    source = "IRSA" if config.identity == "irsa" else "PodIdentity"
    AwsClusterProviderConfig(ctx.scope, "aws", {"name": AWS_PROVIDER_CONFIG, "credentials": {"source": source}})


PACK = Pack(
    name="crossplane-provider-configs",
    version="1.0.0",
    description="AWS ClusterProviderConfig 'default' using the providers' pod identity",
    config=CrossplaneProviderConfigsConfig,
    layer="configs",
    bind=bind,
    requires=("crossplane-providers",),
    # A ClusterProviderConfig: cluster-scoped.
    namespaces=(),
    runs_on="management",
)
