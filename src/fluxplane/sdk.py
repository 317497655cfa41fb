"""Everything a pack author imports, from one module: ``from fluxplane.sdk import Pack, PackConfig, ...``.

A pack (see fluxplane.packs.api) is a config model, a ``bind`` that adds constructs, and a declaration.
What those need lives in several of fluxplane's layers: the pack API, the Helm release helpers and the
IAM policy loader in fluxplane.packs; the constructs, their health checks and the patch-and-transform
builders in fluxplane.constructs; the DNS label type in fluxplane.config. This module gathers the part of
them that is meant for packs, so that a pack in a distribution of its own depends on one stable import
and not on where fluxplane keeps each piece; the built-in packs import it too, which keeps it complete.
A pack is tested with ``fluxplane.testing``'s ``bind_pack`` and ``check_pack``.

Every construct of fluxplane.constructs is here with its props model and the models its fields take, so a
pack builds any of them typed (``Kustomization(scope, id, KustomizationProps(depends_on=(DependsOn(...),)))``),
except the tree's bases and the directories' ``kustomization.yaml`` files, which synth writes itself.
fluxplane's own kinds (fluxplane.kinds) are not: synth makes them from the definition and from what a pack
declares (``PodIdentity``). tests/unit/test_sdk.py holds both.

It sits in the packs layer, beside fluxplane.packs (the import contract in pyproject.toml): it exports
the packs' own API, and the built-in packs may import it.
"""

from __future__ import annotations

from fluxplane.config.models import DnsLabel
from fluxplane.constructs import patch_and_transform
from fluxplane.constructs.activation_policy import ManagedResourceActivationPolicy, ManagedResourceActivationPolicyProps
from fluxplane.constructs.admission_policy import (
    MatchResources,
    NamedExpression,
    ResourceRule,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicyBindingProps,
    ValidatingAdmissionPolicyProps,
    Validation,
    Variable,
)
from fluxplane.constructs.aws_provider_config import (
    AssumeRole,
    AwsClusterProviderConfig,
    AwsClusterProviderConfigProps,
    AwsCredentials,
)
from fluxplane.constructs.base import Resource
from fluxplane.constructs.composite_resource_definition import (
    CompositeResourceDefinition,
    CompositeResourceDefinitionProps,
    CompositeResourceDefinitionVersion,
    CompositeResourceNames,
    CompositeResourceValidation,
    CompositionReference,
    PrinterColumn,
)
from fluxplane.constructs.composition import Composition, CompositionProps, PipelineStep, TypeReference
from fluxplane.constructs.config_map import ConfigMap, ConfigMapProps
from fluxplane.constructs.crossplane_package import Function, PackageProps, Provider, RuntimeConfigReference
from fluxplane.constructs.deployment_runtime_config import (
    DeploymentRuntimeConfig,
    DeploymentRuntimeConfigProps,
    ObjectMetaTemplate,
    ServiceAccountTemplate,
)
from fluxplane.constructs.external_secrets import (
    AwsAuth,
    AwsProvider,
    ClusterSecretStore,
    ClusterSecretStoreProps,
    ExternalSecret,
    ExternalSecretData,
    ExternalSecretProps,
    JwtAuth,
    RemoteRef,
    SecretStoreProvider,
    SecretStoreRef,
    ServiceAccountSelector,
    StoreCondition,
    Target,
    TargetTemplate,
    TemplateMetadata,
)
from fluxplane.constructs.git_repository import GitRepository, GitRepositoryProps, GitRepositoryRef
from fluxplane.constructs.health import (
    composite_health,
    condition_false,
    condition_true,
    conditions_health,
    definition_health,
    package_health,
    ready_health,
)
from fluxplane.constructs.helm_release import (
    ChartReference,
    DriftDetection,
    DriftIgnoreRule,
    HelmChartSourceReference,
    HelmChartTemplate,
    HelmChartTemplateSpec,
    HelmRelease,
    HelmReleaseProps,
    Install,
    Remediation,
    Strategy,
    Test,
    TestFilter,
    Upgrade,
    UpgradeRemediation,
    ValuesReference,
)
from fluxplane.constructs.helm_repository import Chart, HelmRepository, HelmRepositoryProps
from fluxplane.constructs.kubernetes_provider_config import (
    KubernetesProviderConfig,
    KubernetesProviderConfigProps,
    ProviderCredentials,
    SecretKeySelector,
)
from fluxplane.constructs.kustomization import Kustomization, KustomizationProps, PostBuild, escaped
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.namespace import Namespace, NamespaceProps
from fluxplane.constructs.oci_repository import LayerSelector, OCIRepository, OCIRepositoryProps, OCIRepositoryRef
from fluxplane.constructs.props import (
    CrossNamespaceSourceReference,
    CustomHealthCheck,
    DependsOn,
    KubeConfigReference,
    LocalObjectReference,
    NamespacedObjectKindReference,
    Patch,
    PatchSelector,
    SecretKeyReference,
    SubstituteReference,
)
from fluxplane.constructs.raw import RawObject
from fluxplane.constructs.rbac import (
    ClusterRole,
    ClusterRoleBinding,
    ClusterRoleBindingProps,
    ClusterRoleProps,
    PolicyRule,
    Role,
    RoleBinding,
    RoleBindingProps,
    RoleProps,
    RoleRef,
    Subject,
)
from fluxplane.constructs.service_account import ServiceAccount, ServiceAccountProps
from fluxplane.errors import PackError
from fluxplane.packs.api import (
    APP_RESOURCES,
    AWS_PROVIDERS,
    FLUXPLANE_NETWORK,
    PROVIDES,
    SUBSTITUTED,
    Layer,
    Pack,
    PackConfig,
    PackContext,
    PodIdentity,
    RunsOn,
)
from fluxplane.packs.helm import ReleaseConfig, ReleaseSettings, chart_release, keep_service_account, oci_chart_release
from fluxplane.packs.policies import load_policy

__all__ = [
    "APP_RESOURCES",
    "AWS_PROVIDERS",
    "FLUXPLANE_NETWORK",
    "PROVIDES",
    "SUBSTITUTED",
    "AssumeRole",
    "AwsAuth",
    "AwsClusterProviderConfig",
    "AwsClusterProviderConfigProps",
    "AwsCredentials",
    "AwsProvider",
    "Chart",
    "ChartReference",
    "ClusterRole",
    "ClusterRoleBinding",
    "ClusterRoleBindingProps",
    "ClusterRoleProps",
    "ClusterSecretStore",
    "ClusterSecretStoreProps",
    "CompositeResourceDefinition",
    "CompositeResourceDefinitionProps",
    "CompositeResourceDefinitionVersion",
    "CompositeResourceNames",
    "CompositeResourceValidation",
    "Composition",
    "CompositionProps",
    "CompositionReference",
    "ConfigMap",
    "ConfigMapProps",
    "CrossNamespaceSourceReference",
    "CustomHealthCheck",
    "DependsOn",
    "DeploymentRuntimeConfig",
    "DeploymentRuntimeConfigProps",
    "DnsLabel",
    "DriftDetection",
    "DriftIgnoreRule",
    "ExternalSecret",
    "ExternalSecretData",
    "ExternalSecretProps",
    "Function",
    "GitRepository",
    "GitRepositoryProps",
    "GitRepositoryRef",
    "HelmChartSourceReference",
    "HelmChartTemplate",
    "HelmChartTemplateSpec",
    "HelmRelease",
    "HelmReleaseProps",
    "HelmRepository",
    "HelmRepositoryProps",
    "Install",
    "JwtAuth",
    "KubeConfigReference",
    "KubernetesProviderConfig",
    "KubernetesProviderConfigProps",
    "Kustomization",
    "KustomizationProps",
    "Layer",
    "LayerSelector",
    "LocalObjectReference",
    "ManagedResourceActivationPolicy",
    "ManagedResourceActivationPolicyProps",
    "Manifest",
    "MatchResources",
    "NamedExpression",
    "Namespace",
    "NamespaceProps",
    "NamespacedObjectKindReference",
    "OCIRepository",
    "OCIRepositoryProps",
    "OCIRepositoryRef",
    "ObjectMetaTemplate",
    "Pack",
    "PackConfig",
    "PackContext",
    "PackError",
    "PackageProps",
    "Patch",
    "PatchSelector",
    "PipelineStep",
    "PodIdentity",
    "PolicyRule",
    "PostBuild",
    "PrinterColumn",
    "Provider",
    "ProviderCredentials",
    "RawObject",
    "ReleaseConfig",
    "ReleaseSettings",
    "Remediation",
    "RemoteRef",
    "Resource",
    "ResourceRule",
    "Role",
    "RoleBinding",
    "RoleBindingProps",
    "RoleProps",
    "RoleRef",
    "RunsOn",
    "RuntimeConfigReference",
    "SecretKeyReference",
    "SecretKeySelector",
    "SecretStoreProvider",
    "SecretStoreRef",
    "ServiceAccount",
    "ServiceAccountProps",
    "ServiceAccountSelector",
    "ServiceAccountTemplate",
    "StoreCondition",
    "Strategy",
    "Subject",
    "SubstituteReference",
    "Target",
    "TargetTemplate",
    "TemplateMetadata",
    "Test",
    "TestFilter",
    "TypeReference",
    "Upgrade",
    "UpgradeRemediation",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingAdmissionPolicyBindingProps",
    "ValidatingAdmissionPolicyProps",
    "Validation",
    "ValuesReference",
    "Variable",
    "chart_release",
    "composite_health",
    "condition_false",
    "condition_true",
    "conditions_health",
    "definition_health",
    "escaped",
    "keep_service_account",
    "load_policy",
    "oci_chart_release",
    "package_health",
    "patch_and_transform",
    "ready_health",
]
