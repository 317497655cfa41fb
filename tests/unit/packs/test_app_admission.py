"""The admission policy on apps' own requests (fluxplane.packs.app_admission), evaluated with a CEL interpreter."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.packs.app_admission import policy_props


def admitted(
    operation: str,
    username: str,
    obj: dict[str, Any],
    old: dict[str, Any] | None = None,
    namespace_labels: dict[str, str] | None = None,
) -> bool | None:
    """True or False as the policy decides; None when the policy does not apply to the request."""
    import celpy

    policy = policy_props()
    env = celpy.Environment()
    namespace: dict[str, Any] = {"name": obj["metadata"]["namespace"]}
    if namespace_labels is not None:
        namespace["labels"] = namespace_labels
    activation = {
        "request": celpy.json_to_cel({"operation": operation, "userInfo": {"username": username}}),
        "object": celpy.json_to_cel(obj),
        "oldObject": celpy.json_to_cel(old) if old is not None else celpy.json_to_cel(None),
        "namespaceObject": celpy.json_to_cel({"metadata": namespace}),
    }
    for condition in policy["matchConditions"]:
        if not env.program(env.compile(condition["expression"])).evaluate(activation):
            return None
    return all(
        bool(env.program(env.compile(rule["expression"])).evaluate(activation)) for rule in policy["validations"]
    )


def table(name: str, app: str, account: str | None = None, table_name: str | None = None) -> dict[str, Any]:
    spec = {"app": app, "tableName": table_name or f"prod-1-{name}"}
    if account is not None:
        spec["providerConfigName"] = account
    return {"kind": "AppTable", "metadata": {"name": name, "namespace": "prod-1"}, "spec": spec}


def test_an_app_may_request_its_own_resources() -> None:
    assert admitted("CREATE", "system:serviceaccount:prod-1:shop-cloud", table("shop-audit", "shop")) is True


@pytest.mark.parametrize(
    ("username", "obj", "old"),
    [
        # for another app
        ("system:serviceaccount:prod-1:shop-cloud", table("cart-audit", "cart"), None),
        # from another cluster's namespace
        ("system:serviceaccount:prod-2:shop-cloud", table("shop-audit", "shop"), None),
        # under a name that is not the app's
        ("system:serviceaccount:prod-1:shop-cloud", table("audit", "shop"), None),
        # adopting a resource of another app, or of another cluster, by its AWS name
        ("system:serviceaccount:prod-1:shop-cloud", table("shop-audit", "shop", table_name="prod-1-cart-audit"), None),
        ("system:serviceaccount:prod-1:shop-cloud", table("shop-audit", "shop", table_name="prod-2-shop-audit"), None),
        # taking over another app's resource whose name happens to start alike
        (
            "system:serviceaccount:prod-1:shop-cloud",
            table("shop-cart-audit", "shop"),
            table("shop-cart-audit", "shop-cart"),
        ),
    ],
)
def test_an_app_may_not_request_or_take_what_is_not_its_own(
    username: str, obj: dict[str, Any], old: dict[str, Any] | None
) -> None:
    operation = "UPDATE" if old is not None else "CREATE"
    assert admitted(operation, username, obj, old) is False


def test_the_platform_is_not_held_by_the_policy() -> None:
    username = "system:serviceaccount:flux-system:kustomize-controller"
    assert admitted("CREATE", username, table("anything", "shop")) is None


def test_the_policy_covers_the_requestable_kinds_on_create_and_update() -> None:
    (rule,) = policy_props()["matchConstraints"]["resourceRules"]
    assert rule["resources"] == ["apptables", "appqueues", "appbuckets"]
    assert rule["operations"] == ["CREATE", "UPDATE"]


@pytest.mark.parametrize(
    ("account", "labels", "allowed"),
    [
        # the hub's own account, named or left to the XRD's default, in a cluster of the hub's account
        ("default", {"fluxplane.io/cluster": "prod-1"}, True),
        (None, None, True),
        # the cluster's account
        ("production", {"fluxplane.io/account": "production"}, True),
        # another account than the cluster's, or an account from a cluster of the hub's
        ("default", {"fluxplane.io/account": "production"}, False),
        ("staging", {"fluxplane.io/account": "production"}, False),
        ("production", {"fluxplane.io/cluster": "prod-1"}, False),
    ],
)
def test_an_app_requests_resources_in_its_clusters_account_only(
    account: str | None, labels: dict[str, str] | None, allowed: bool
) -> None:
    request = table("shop-audit", "shop", account)
    assert admitted("CREATE", "system:serviceaccount:prod-1:shop-cloud", request, namespace_labels=labels) is allowed
