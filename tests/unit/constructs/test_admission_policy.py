"""ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1)."""

from __future__ import annotations

import pytest

from fluxplane.constructs import Root
from fluxplane.constructs.admission_policy import (
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicyBindingProps,
    ValidatingAdmissionPolicyProps,
)
from fluxplane.errors import ConstructError

RULE = {"apiGroups": ["example.io"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["*"]}


def test_a_policy_fails_closed_and_renders_its_rules_in_upstream_s_names() -> None:
    # GIVEN a policy with a variable and one validation, and no failure policy
    policy = ValidatingAdmissionPolicy(
        Root(),
        "policy",
        ValidatingAdmissionPolicyProps.model_validate(
            {
                "name": "app-namespace",
                "matchConstraints": {"resourceRules": [RULE]},
                "variables": [{"name": "app", "expression": "namespaceObject.metadata.labels['app']"}],
                "validations": [{"expression": "variables.app == object.spec.app", "reason": "Forbidden"}],
            }
        ),
    )

    # THEN it is cluster-scoped, fails closed by default, and keeps the order of its rules
    assert policy.to_dict() == {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "app-namespace"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [RULE]},
            "variables": [{"name": "app", "expression": "namespaceObject.metadata.labels['app']"}],
            "validations": [{"expression": "variables.app == object.spec.app", "reason": "Forbidden"}],
        },
    }


def test_a_policy_without_a_validation_is_refused() -> None:
    props = {"name": "p", "matchConstraints": {"resourceRules": [RULE]}, "validations": []}
    with pytest.raises(ConstructError, match=r"^root/policy: ValidatingAdmissionPolicyProps\.validations: tuple"):
        ValidatingAdmissionPolicy(Root(), "policy", props)


def test_a_binding_denies_by_default() -> None:
    binding = ValidatingAdmissionPolicyBinding(
        Root(),
        "binding",
        ValidatingAdmissionPolicyBindingProps(name="app-namespace", policy_name="app-namespace"),
    )
    assert binding.to_dict() == {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "app-namespace"},
        "spec": {"policyName": "app-namespace", "validationActions": ["Deny"]},
    }
