"""RBAC (``rbac.authorization.k8s.io/v1``): Role, ClusterRole, RoleBinding, ClusterRoleBinding.

The four kinds share their rule and subject types, so they share a module.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Label, Name, Props


class PolicyRule(Props):
    """A ``rules`` entry: verbs allowed on resources, or on non-resource URLs."""

    api_groups: tuple[str, ...] | None = None
    """API groups of the resources (``""`` is the core group, ``*`` every group). Default: not set."""
    resources: tuple[str, ...] | None = None
    """Resources the rule covers (``*`` every one, ``pods/log`` a subresource). Default: not set."""
    resource_names: tuple[str, ...] | None = None
    """Names of the objects the rule is limited to. Default: not set (every object)."""
    non_resource_urls: tuple[str, ...] | None = Field(None, alias="nonResourceURLs")
    """URL paths, such as ``/healthz``, the rule covers; only a ClusterRole's rules may have them. Default: not set."""
    verbs: tuple[str, ...]
    """Verbs allowed, such as ``get``, ``list``, ``watch`` and ``create``; ``*`` allows all."""

    @model_validator(mode="after")
    def _has_target(self) -> PolicyRule:
        if not self.verbs:
            raise ValueError("verbs must not be empty")
        if not self.resources and not self.non_resource_urls:
            raise ValueError("set resources (with apiGroups) or nonResourceURLs")
        return self


class Subject(Props):
    """A ``subjects`` entry: who a binding grants the role to."""

    kind: Literal["ServiceAccount", "User", "Group"]
    """Kind of subject: ``ServiceAccount``, ``User`` or ``Group``."""
    name: str
    """Name of the subject."""
    namespace: Label | None = None
    """Namespace of a ServiceAccount subject, which needs one. Default: not set."""
    api_group: str | None = None
    """API group of the subject's kind. Default: not set (``""`` for a ServiceAccount, ``rbac.authorization.k8s.io``
    for a User or Group)."""

    @model_validator(mode="after")
    def _namespace_for_service_account(self) -> Subject:
        if self.kind == "ServiceAccount" and not self.namespace:
            raise ValueError("a ServiceAccount subject needs a namespace")
        return self


class RoleRef(Props):
    """A binding's ``roleRef``: the Role or ClusterRole it grants."""

    api_group: Literal["rbac.authorization.k8s.io"] = "rbac.authorization.k8s.io"
    """API group of the role. Default: ``"rbac.authorization.k8s.io"``."""
    kind: Literal["Role", "ClusterRole"]
    """``Role`` (in the binding's namespace) or ``ClusterRole``."""
    name: Name
    """Name of the role."""


class RoleProps(Props):
    """Props of a Role: permissions within one namespace."""

    name: Name
    """``metadata.name`` of the Role."""
    namespace: Label
    """Namespace of the Role, the one its rules apply in."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    rules: tuple[PolicyRule, ...]
    """The permissions the Role holds."""


class ClusterRoleProps(Props):
    """Props of a ClusterRole: permissions across the cluster, or for RoleBindings to reuse."""

    name: Name
    """``metadata.name`` of the ClusterRole."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    rules: tuple[PolicyRule, ...]
    """The permissions the ClusterRole holds."""


class RoleBindingProps(Props):
    """Props of a RoleBinding: grants a Role or ClusterRole within one namespace."""

    name: Name
    """``metadata.name`` of the RoleBinding."""
    namespace: Label
    """Namespace of the RoleBinding, the one it grants permissions in."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    role_ref: RoleRef
    """The Role or ClusterRole granted; it cannot be changed once the binding exists."""
    subjects: tuple[Subject, ...]
    """Who is granted the role."""


class ClusterRoleBindingProps(Props):
    """Props of a ClusterRoleBinding: grants a ClusterRole across the cluster."""

    name: Name
    """``metadata.name`` of the ClusterRoleBinding."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    role_ref: RoleRef
    """The ClusterRole granted; it cannot be changed once the binding exists."""
    subjects: tuple[Subject, ...]
    """Who is granted the role."""

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
