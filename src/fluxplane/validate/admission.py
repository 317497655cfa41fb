"""ValidatingAdmissionPolicy, decided offline: what the API server does with one request under one policy.

The policies fluxplane writes (the app kinds' request and tenant policies, the pod security ones) are its
promises about who may change what; this module runs them on the project's CEL engine
(fluxplane.validate.celengine) the way the API server does, so tests can hold a promise for every kind and
every verb rather than for the cases someone thought of:

- ``matchConstraints``: the request's operation, group and resource against each ``resourceRules`` entry
  (``excludeResourceRules`` too), and the namespace's labels against ``namespaceSelector``;
- ``matchConditions``: all true, or the policy does not apply; an error fails the request under
  ``failurePolicy: Fail`` and admits it under ``Ignore``;
- ``variables``, in order, each able to read the ones before it (an error surfaces where one is read);
- ``validations``: the first that is not true denies the request with its ``messageExpression``, its
  ``message`` or the expression, as the API server words it.

A verb reaches admission as an operation (VERB_OPERATIONS): ``patch`` is an UPDATE, and ``deletecollection``
is one DELETE per object it removes, so a rule on DELETE holds for both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fluxplane.validate.celengine import ADMISSION, compile_expression

#: The RBAC verbs that reach admission, and the operation each arrives as (reads never do).
VERB_OPERATIONS = {
    "create": "CREATE",
    "update": "UPDATE",
    "patch": "UPDATE",
    "delete": "DELETE",
    "deletecollection": "DELETE",
}


@dataclass(frozen=True)
class AdmissionRequest:
    """One request as admission sees it: who asks, what for, and the object before and after."""

    operation: str
    """``CREATE``, ``UPDATE``, ``DELETE`` or ``CONNECT``."""
    group: str
    """API group of the resource (``""`` for the core group)."""
    resource: str
    """The resource, by plural name (``apptables``)."""
    username: str
    """``request.userInfo.username``: a service account is ``system:serviceaccount:<namespace>:<name>``."""
    object: Mapping[str, Any] | None = None
    """The object as it will be (none on DELETE)."""
    old_object: Mapping[str, Any] | None = None
    """The object as it is (none on CREATE)."""
    namespace_labels: Mapping[str, str] | None = None
    """Labels of the object's namespace; None when the namespace has none."""
    groups: tuple[str, ...] = ()
    """``request.userInfo.groups``."""

    @property
    def namespace(self) -> str:
        metadata = (self.object or self.old_object or {}).get("metadata") or {}
        return str(metadata.get("namespace", ""))

    def activation(self) -> dict[str, Any]:
        """The CEL variables of the request, as the API server binds them."""
        namespace: dict[str, Any] = {"name": self.namespace}
        if self.namespace_labels is not None:
            namespace["labels"] = dict(self.namespace_labels)
        return {
            "request": {
                "operation": self.operation,
                "resource": {"group": self.group, "resource": self.resource},
                "namespace": self.namespace,
                "userInfo": {"username": self.username, "groups": list(self.groups)},
            },
            "object": self.object,
            "oldObject": self.old_object,
            "namespaceObject": {"metadata": namespace},
            "params": None,
        }


@dataclass(frozen=True)
class Decision:
    """What a policy did with a request."""

    applies: bool
    """Whether the policy matched the request at all (constraints and conditions)."""
    allowed: bool
    """Whether the request passes: always True when the policy does not apply."""
    message: str = ""
    """Why it was denied."""


def decide(policy: Mapping[str, Any], request: AdmissionRequest) -> Decision:
    """What the API server does with ``request`` under ``policy`` (the policy's ``spec``, camelCase), bound with
    ``validationActions: [Deny]``."""
    if not _matches(policy.get("matchConstraints") or {}, request):
        return Decision(applies=False, allowed=True)
    fail = policy.get("failurePolicy", "Fail") == "Fail"
    data = request.activation()
    for condition in policy.get("matchConditions") or []:
        _, value, error = _run(condition["expression"], data)
        if error:
            return Decision(True, not fail, f"matchCondition {condition['name']!r}: {error}")
        if value is not True:
            return Decision(applies=False, allowed=True)
    variables: dict[str, Any] = {}
    data["variables"] = variables
    for variable in policy.get("variables") or []:
        ok, value, _ = _run(variable["expression"], data)
        if ok:
            variables[variable["name"]] = value
    for validation in policy.get("validations") or []:
        _, value, error = _run(validation["expression"], data)
        if error:
            if fail:
                return Decision(True, False, f"expression {validation['expression']!r} failed: {error}")
            continue
        if value is not True:
            return Decision(True, False, _message(validation, data))
    return Decision(applies=True, allowed=True)


def _run(expression: str, data: Mapping[str, Any]) -> tuple[bool, Any, str]:
    compiled = compile_expression(expression, ADMISSION)
    if compiled.program is None:
        return False, None, f"does not compile: {compiled.error}"
    outcome = compiled.program.run(data, plain=True)
    return not outcome.error, outcome.value, outcome.error


def _message(validation: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    if "messageExpression" in validation:
        ok, value, _ = _run(validation["messageExpression"], data)
        if ok and isinstance(value, str) and value:
            return value
    return str(validation.get("message") or f"failed expression: {validation['expression']}")


def _matches(constraints: Mapping[str, Any], request: AdmissionRequest) -> bool:
    if not any(_rule_matches(rule, request) for rule in constraints.get("resourceRules") or []):
        return False
    if any(_rule_matches(rule, request) for rule in constraints.get("excludeResourceRules") or []):
        return False
    selector = constraints.get("namespaceSelector")
    return selector is None or not request.namespace or _selects(selector, request.namespace_labels or {})


def _rule_matches(rule: Mapping[str, Any], request: AdmissionRequest) -> bool:
    return (
        _among(request.operation, rule.get("operations"))
        and _among(request.group, rule.get("apiGroups"))
        and _among(request.resource, rule.get("resources"))
    )


def _among(value: str, allowed: Sequence[str] | None) -> bool:
    choices = allowed or ()
    return "*" in choices or value in choices


def _selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A label selector (``matchLabels``, ``matchExpressions``) on ``labels``."""
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        present = key in labels
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator == "In" and (not present or labels[key] not in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
    return True
