"""RBAC (``rbac.authorization.k8s.io/v1``): Role, ClusterRole, RoleBinding, ClusterRoleBinding.

The four kinds share their rule and subject types, so they share a module.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Label, Name, Props


class PolicyRule(Props):
    api_groups: tuple[str, ...] | None = None
    resources: tuple[str, ...] | None = None
    resource_names: tuple[str, ...] | None = None
    non_resource_urls: tuple[str, ...] | None = Field(None, alias="nonResourceURLs")
    verbs: tuple[str, ...]

    @model_validator(mode="after")
    def _has_target(self) -> PolicyRule:
        if not self.verbs:
            raise ValueError("verbs must not be empty")
        if not self.resources and not self.non_resource_urls:
            raise ValueError("set resources (with apiGroups) or nonResourceURLs")
        return self


class Subject(Props):
    kind: Literal["ServiceAccount", "User", "Group"]
    name: str
    namespace: Label | None = None
    api_group: str | None = None

    @model_validator(mode="after")
    def _namespace_for_service_account(self) -> Subject:
        if self.kind == "ServiceAccount" and not self.namespace:
            raise ValueError("a ServiceAccount subject needs a namespace")
        return self


class RoleRef(Props):
    api_group: Literal["rbac.authorization.k8s.io"] = "rbac.authorization.k8s.io"
    kind: Literal["Role", "ClusterRole"]
    name: Name


class RoleProps(Props):
    name: Name
    namespace: Label
    labels: dict[str, str] | None = None
    rules: tuple[PolicyRule, ...]


class ClusterRoleProps(Props):
    name: Name
    labels: dict[str, str] | None = None
    rules: tuple[PolicyRule, ...]


class RoleBindingProps(Props):
    name: Name
    namespace: Label
    labels: dict[str, str] | None = None
    role_ref: RoleRef
    subjects: tuple[Subject, ...]


class ClusterRoleBindingProps(Props):
    name: Name
    labels: dict[str, str] | None = None
    role_ref: RoleRef
    subjects: tuple[Subject, ...]

    @model_validator(mode="after")
    def _cluster_role(self) -> ClusterRoleBindingProps:
        if self.role_ref.kind != "ClusterRole":
            raise ValueError("a ClusterRoleBinding can only refer to a ClusterRole")
        return self


class _Rules:
    """Roles write ``rules`` at the top level, not under ``spec``."""

    def spec_dict(self) -> None:
        return None

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = super().to_dict()  # type: ignore[misc]
        props: RoleProps | ClusterRoleProps = getattr(self, "props")  # noqa: B009
        doc["rules"] = [rule.dump() for rule in props.rules]
        return doc


class _Binding:
    """Bindings write ``roleRef`` and ``subjects`` at the top level, not under ``spec``."""

    def spec_dict(self) -> None:
        return None

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = super().to_dict()  # type: ignore[misc]
        props: RoleBindingProps | ClusterRoleBindingProps = getattr(self, "props")  # noqa: B009
        doc["roleRef"] = props.role_ref.dump()
        doc["subjects"] = [subject.dump() for subject in props.subjects]
        return doc


class Role(_Rules, TypedResource[RoleProps]):
    api_version = "rbac.authorization.k8s.io/v1"
    kind = "Role"
    props_class = RoleProps


class ClusterRole(_Rules, TypedResource[ClusterRoleProps]):
    api_version = "rbac.authorization.k8s.io/v1"
    kind = "ClusterRole"
    namespaced = False
    props_class = ClusterRoleProps


class RoleBinding(_Binding, TypedResource[RoleBindingProps]):
    api_version = "rbac.authorization.k8s.io/v1"
    kind = "RoleBinding"
    props_class = RoleBindingProps


class ClusterRoleBinding(_Binding, TypedResource[ClusterRoleBindingProps]):
    api_version = "rbac.authorization.k8s.io/v1"
    kind = "ClusterRoleBinding"
    namespaced = False
    props_class = ClusterRoleBindingProps
