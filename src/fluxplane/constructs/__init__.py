"""Typed constructs: one Kubernetes, Flux or kustomize kind per module.

Constructs never read files. Their props are frozen pydantic models validated in the constructor;
a wrong field or type raises ConstructError naming the construct path.
"""

from fluxplane.constructs.base import Construct, Node, Resource, Root, TypedResource, node_of, resources_below
from fluxplane.constructs.config_map import ConfigMap, ConfigMapProps
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
from fluxplane.constructs.helm_release import HelmRelease, HelmReleaseProps
from fluxplane.constructs.helm_repository import HelmRepository, HelmRepositoryProps
from fluxplane.constructs.kustomization import Kustomization, KustomizationProps, PostBuild
from fluxplane.constructs.kustomize import KustomizationFile, KustomizeConfig, KustomizeConfigProps
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.namespace import Namespace, NamespaceProps
from fluxplane.constructs.oci_repository import OCIRepository, OCIRepositoryProps, OCIRepositoryRef
from fluxplane.constructs.props import (
    CrossNamespaceSourceReference,
    CustomHealthCheck,
    DependsOn,
    KubeConfigReference,
    NamespacedObjectKindReference,
    Patch,
    PatchSelector,
    SubstituteReference,
)
from fluxplane.constructs.rbac import (
    ClusterRole,
    ClusterRoleBinding,
    PolicyRule,
    Role,
    RoleBinding,
    RoleRef,
    Subject,
)
from fluxplane.constructs.service_account import ServiceAccount, ServiceAccountProps

__all__ = [
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "ConfigMapProps",
    "Construct",
    "CrossNamespaceSourceReference",
    "CustomHealthCheck",
    "DependsOn",
    "GitRepository",
    "GitRepositoryProps",
    "GitRepositoryRef",
    "HelmRelease",
    "HelmReleaseProps",
    "HelmRepository",
    "HelmRepositoryProps",
    "KubeConfigReference",
    "Kustomization",
    "KustomizationFile",
    "KustomizationProps",
    "KustomizeConfig",
    "KustomizeConfigProps",
    "Manifest",
    "Namespace",
    "NamespaceProps",
    "NamespacedObjectKindReference",
    "Node",
    "OCIRepository",
    "OCIRepositoryProps",
    "OCIRepositoryRef",
    "Patch",
    "PatchSelector",
    "PolicyRule",
    "PostBuild",
    "Resource",
    "Role",
    "RoleBinding",
    "RoleRef",
    "Root",
    "ServiceAccount",
    "ServiceAccountProps",
    "Subject",
    "SubstituteReference",
    "TypedResource",
    "composite_health",
    "condition_false",
    "condition_true",
    "conditions_health",
    "definition_health",
    "node_of",
    "package_health",
    "ready_health",
    "resources_below",
]
