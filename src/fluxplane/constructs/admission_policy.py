"""ValidatingAdmissionPolicy and its binding (``admissionregistration.k8s.io/v1``): CEL rules the API enforces."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Name, Props


class NamedExpression(Props):
    """A ``matchConditions`` entry: a named CEL condition a request must meet to be validated."""

    name: str = Field(pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$", max_length=63)
    """Identifier of the condition, used for strategic merging and in logs."""
    expression: str = Field(min_length=1)
    """CEL expression over the request; it must be true for the policy to validate the request."""


class Variable(Props):
    """A ``variables`` entry: a named CEL expression the policy's other expressions read as ``variables.<name>``."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=63)
    """Name of the variable, a CEL identifier."""
    expression: str = Field(min_length=1)
    """CEL expression that gives its value; it can read ``object``, ``oldObject``, ``request`` and the variables
    before it."""


class Validation(Props):
    """A ``validations`` entry: a CEL rule every matched request must satisfy."""

    expression: str = Field(min_length=1)
    """CEL expression that must be true for the request to pass; it can read ``object``, ``oldObject``, ``request``
    and more."""
    message: str | None = None
    """Message returned when the rule fails. Default: not set (a message that quotes the failed expression)."""
    message_expression: str | None = None
    """CEL expression that builds the failure message; it wins over ``message``. Default: not set (``message`` is
    used)."""
    reason: Literal["Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge"] | None = None
    """Machine-readable reason, and its HTTP status code, returned when this is the first rule to fail. Default: not
    set (``Invalid``)."""


class ResourceRule(Props):
    """A ``resourceRules`` entry: operations on resources that a policy matches."""

    api_groups: tuple[str, ...]
    """API groups of the resources (``""`` is the core group, ``*`` every group)."""
    api_versions: tuple[str, ...]
    """API versions of the resources (``*`` every version)."""
    operations: tuple[Literal["CREATE", "UPDATE", "DELETE", "CONNECT", "*"], ...]
    """Operations matched: ``CREATE``, ``UPDATE``, ``DELETE``, ``CONNECT``, or ``*`` for all."""
    resources: tuple[str, ...]
    """Resources matched, by plural name (``*`` every resource, ``pods/status`` a subresource)."""


class MatchResources(Props):
    """A policy's ``matchConstraints``: the requests it applies to."""

    namespace_selector: dict[str, Any] | None = None
    """A label selector (``matchLabels``, ``matchExpressions``) the namespace of a namespaced object must match.
    Default: not set (every namespace)."""
    resource_rules: tuple[ResourceRule, ...] = Field(min_length=1)
    """Operations on resources the policy applies to; a request must match one of them."""


class ValidatingAdmissionPolicyProps(Props):
    """Props of a ValidatingAdmissionPolicy: which requests it checks and the CEL rules they must pass."""

    name: Name
    """``metadata.name`` of the policy (cluster-scoped); bindings name it in ``policyName``."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    failure_policy: Literal["Fail", "Ignore"] = "Fail"
    """What happens to a request when a rule cannot be evaluated (an error, a misconfiguration): ``Fail`` rejects it,
    ``Ignore`` admits it. Default: ``"Fail"``."""
    match_constraints: MatchResources
    """The requests the policy applies to; a binding can only narrow them."""
    match_conditions: tuple[NamedExpression, ...] | None = None
    """CEL conditions a matched request must also meet to be validated, all of them. Default: not set (every matched
    request is validated)."""
    variables: tuple[Variable, ...] | None = None
    """Named expressions the rules and their messages read as ``variables.<name>``, each able to read the ones
    before it. Default: none."""
    validations: tuple[Validation, ...] = Field(min_length=1)
    """The CEL rules a request must pass; what a failure does is the binding's ``validationActions``."""


class ValidatingAdmissionPolicy(TypedResource[ValidatingAdmissionPolicyProps]):
    api_version = "admissionregistration.k8s.io/v1"
    kind = "ValidatingAdmissionPolicy"
    namespaced = False
    props_class = ValidatingAdmissionPolicyProps


class ValidatingAdmissionPolicyBindingProps(Props):
    """Props of a ValidatingAdmissionPolicyBinding: puts a policy into effect and says how."""

    name: Name
    """``metadata.name`` of the binding (cluster-scoped)."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    policy_name: Name
    """Name of the ValidatingAdmissionPolicy the binding puts into effect."""
    validation_actions: tuple[Literal["Deny", "Warn", "Audit"], ...] = ("Deny",)
    """What a failed validation does: ``Deny`` rejects the request, ``Warn`` returns a warning to the client,
    ``Audit`` records it in the audit log. Default: ``("Deny",)``."""


class ValidatingAdmissionPolicyBinding(TypedResource[ValidatingAdmissionPolicyBindingProps]):
    api_version = "admissionregistration.k8s.io/v1"
    kind = "ValidatingAdmissionPolicyBinding"
    namespaced = False
    props_class = ValidatingAdmissionPolicyBindingProps
