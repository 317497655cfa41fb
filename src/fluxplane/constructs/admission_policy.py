"""ValidatingAdmissionPolicy and its binding (``admissionregistration.k8s.io/v1``): CEL rules the API enforces."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Name, Props


class NamedExpression(Props):
    name: str = Field(pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$", max_length=63)
    expression: str = Field(min_length=1)


class Validation(Props):
    expression: str = Field(min_length=1)
    message: str | None = None
    message_expression: str | None = None
    reason: Literal["Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge"] | None = None


class ResourceRule(Props):
    api_groups: tuple[str, ...]
    api_versions: tuple[str, ...]
    operations: tuple[Literal["CREATE", "UPDATE", "DELETE", "CONNECT", "*"], ...]
    resources: tuple[str, ...]


class MatchResources(Props):
    resource_rules: tuple[ResourceRule, ...] = Field(min_length=1)


class ValidatingAdmissionPolicyProps(Props):
    name: Name
    labels: dict[str, str] | None = None
    failure_policy: Literal["Fail", "Ignore"] = "Fail"
    match_constraints: MatchResources
    match_conditions: tuple[NamedExpression, ...] | None = None
    validations: tuple[Validation, ...] = Field(min_length=1)


class ValidatingAdmissionPolicy(TypedResource[ValidatingAdmissionPolicyProps]):
    api_version = "admissionregistration.k8s.io/v1"
    kind = "ValidatingAdmissionPolicy"
    namespaced = False
    props_class = ValidatingAdmissionPolicyProps


class ValidatingAdmissionPolicyBindingProps(Props):
    name: Name
    labels: dict[str, str] | None = None
    policy_name: Name
    validation_actions: tuple[Literal["Deny", "Warn", "Audit"], ...] = ("Deny",)


class ValidatingAdmissionPolicyBinding(TypedResource[ValidatingAdmissionPolicyBindingProps]):
    api_version = "admissionregistration.k8s.io/v1"
    kind = "ValidatingAdmissionPolicyBinding"
    namespaced = False
    props_class = ValidatingAdmissionPolicyBindingProps
