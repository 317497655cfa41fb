"""ValidatingAdmissionPolicy decided offline (fluxplane.validate.admission), as the API server decides it."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.validate.admission import VERB_OPERATIONS, AdmissionRequest, decide


def policy(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}
            ]
        },
        "validations": [{"expression": "object.metadata.name.startsWith('web-')"}],
    }
    return {**base, **spec}


def request(name: str = "web-1", operation: str = "CREATE", **fields: Any) -> AdmissionRequest:
    obj = {"metadata": {"name": name, "namespace": "shop"}}
    old = obj if operation != "CREATE" else None
    new = obj if operation != "DELETE" else None
    values: dict[str, Any] = {"group": "apps", "resource": "deployments", "username": "alice", "object": new}
    return AdmissionRequest(operation=operation, old_object=old, **{**values, **fields})


def test_a_request_that_passes_every_validation_is_admitted() -> None:
    assert decide(policy(), request()).allowed is True


def test_the_first_failing_validation_denies_with_its_message() -> None:
    rules = [
        {"expression": "true"},
        {"expression": "object.metadata.name.startsWith('web-')", "messageExpression": "'bad ' + object.metadata.name"},
        {"expression": "false", "message": "never reached"},
    ]
    decision = decide(policy(validations=rules), request("db-1"))
    assert (decision.applies, decision.allowed, decision.message) == (True, False, "bad db-1")


def test_without_a_message_the_expression_is_quoted() -> None:
    assert decide(policy(), request("db-1")).message == "failed expression: object.metadata.name.startsWith('web-')"


@pytest.mark.parametrize(
    "fields",
    [{"operation": "UPDATE"}, {"group": "batch"}, {"resource": "statefulsets"}],
)
def test_a_request_outside_the_resource_rules_is_not_judged(fields: dict[str, Any]) -> None:
    decision = decide(policy(), request("db-1", **fields))
    assert (decision.applies, decision.allowed) == (False, True)


def test_excluded_resources_and_unselected_namespaces_are_not_judged() -> None:
    excluded = {**policy()["matchConstraints"], "excludeResourceRules": policy()["matchConstraints"]["resourceRules"]}
    assert decide(policy(matchConstraints=excluded), request("db-1")).applies is False
    selected = {
        **policy()["matchConstraints"],
        "namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "In", "values": ["web"]}]},
    }
    assert decide(policy(matchConstraints=selected), request("db-1", namespace_labels={"team": "db"})).applies is False
    assert decide(policy(matchConstraints=selected), request("db-1", namespace_labels={"team": "web"})).allowed is False


def test_a_false_match_condition_leaves_the_request_alone() -> None:
    conditions = [{"name": "only-bob", "expression": "request.userInfo.username == 'bob'"}]
    assert decide(policy(matchConditions=conditions), request("db-1")).applies is False


def test_variables_read_the_ones_before_them() -> None:
    variables = [
        {"name": "subject", "expression": "request.operation == 'DELETE' ? oldObject : object"},
        {"name": "prefix", "expression": "variables.subject.metadata.name.split('-')[0]"},
    ]
    rules = [{"expression": "variables.prefix == 'web'"}]
    spec = policy(variables=variables, validations=rules)
    spec["matchConstraints"]["resourceRules"][0]["operations"] = ["*"]
    assert decide(spec, request("web-1", "DELETE")).allowed is True
    assert decide(spec, request("db-1", "DELETE")).allowed is False


@pytest.mark.parametrize(("failure_policy", "allowed"), [("Fail", False), ("Ignore", True)])
def test_an_expression_that_errors_follows_the_failure_policy(failure_policy: str, allowed: bool) -> None:
    rules = [{"expression": "object.spec.replicas > 1"}]
    assert decide(policy(failurePolicy=failure_policy, validations=rules), request()).allowed is allowed


def test_a_delete_has_no_object_to_read() -> None:
    spec = policy()
    spec["matchConstraints"]["resourceRules"][0]["operations"] = ["DELETE"]
    assert decide(spec, request("web-1", "DELETE")).allowed is False


def test_every_write_verb_reaches_admission_and_reads_do_not() -> None:
    assert set(VERB_OPERATIONS.values()) == {"CREATE", "UPDATE", "DELETE"}
    assert not {"get", "list", "watch"} & set(VERB_OPERATIONS)
