"""Everything a pack author imports, from one module: ``from fluxplane.sdk import Pack, PackConfig, ...``.

A pack (see fluxplane.packs.api) is a config model, a ``bind`` that adds constructs, and a declaration.
What those need lives in several of fluxplane's layers: the pack API, the Helm release helpers and the
IAM policy loader in fluxplane.packs; the constructs, their health checks and the patch-and-transform
builders in fluxplane.constructs; the DNS label type in fluxplane.config. This module gathers the part of
them that is meant for packs, so that a pack in a distribution of its own depends on one stable import
and not on where fluxplane keeps each piece; the built-in packs import it too, which keeps it complete.
A pack is tested with ``fluxplane.testing``'s ``bind_pack`` and ``check_pack``.

It sits in the packs layer, beside fluxplane.packs (the import contract in pyproject.toml): it exports
the packs' own API, and the built-in packs may import it.
"""

from __future__ import annotations

from fluxplane.config.models import DnsLabel
from fluxplane.constructs import patch_and_transform
from fluxplane.constructs.base import Resource
from fluxplane.constructs.composite_resource_definition import (
    CompositeResourceDefinition,
    CompositeResourceDefinitionProps,
)
from fluxplane.constructs.composition import Composition, CompositionProps
from fluxplane.constructs.config_map import ConfigMap, ConfigMapProps
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
from fluxplane.constructs.helm_repository import Chart, HelmRepository, HelmRepositoryProps
from fluxplane.constructs.kustomization import escaped
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.namespace import Namespace, NamespaceProps
from fluxplane.constructs.oci_repository import OCIRepository, OCIRepositoryProps
from fluxplane.constructs.props import CustomHealthCheck, NamespacedObjectKindReference
from fluxplane.constructs.raw import RawObject
from fluxplane.constructs.rbac import ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject
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
    "Chart",
    "ClusterRole",
    "ClusterRoleBinding",
    "CompositeResourceDefinition",
    "CompositeResourceDefinitionProps",
    "Composition",
    "CompositionProps",
    "ConfigMap",
    "ConfigMapProps",
    "CustomHealthCheck",
    "DnsLabel",
    "HelmRelease",
    "HelmReleaseProps",
    "HelmRepository",
    "HelmRepositoryProps",
    "Layer",
    "Manifest",
    "Namespace",
    "NamespaceProps",
    "NamespacedObjectKindReference",
    "OCIRepository",
    "OCIRepositoryProps",
    "Pack",
    "PackConfig",
    "PackContext",
    "PackError",
    "PodIdentity",
    "PolicyRule",
    "RawObject",
    "ReleaseConfig",
    "ReleaseSettings",
    "Resource",
    "Role",
    "RoleBinding",
    "RoleRef",
    "RunsOn",
    "ServiceAccount",
    "ServiceAccountProps",
    "Subject",
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
