"""The admission policy on apps' own requests (fluxplane.packs.app_compositions.admission), decided by the
project's CEL engine."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.kinds import PLURALS, REQUESTABLE
from fluxplane.kinds.app import GROUP
from fluxplane.packs.app_compositions.admission import FLUX_OWNER, PHYSICAL_NAME, policy_props
from fluxplane.validate.admission import AdmissionRequest, decide


def admitted(
    operation: str,
    username: str,
    obj: dict[str, Any] | None,
    old: dict[str, Any] | None = None,
    namespace_labels: dict[str, str] | None = None,
) -> bool | None:
    """True or False as the policy decides; None when the policy does not apply to the request."""
    kind = (obj or old or {})["kind"]
    request = AdmissionRequest(operation, GROUP, PLURALS[kind], username, obj, old, namespace_labels=namespace_labels)
    decision = decide(policy_props().dump(), request)
    return decision.allowed if decision.applies else None


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


def test_the_policy_covers_the_requestable_kinds_on_every_write() -> None:
    (rule,) = policy_props().dump()["matchConstraints"]["resourceRules"]
    assert rule["resources"] == ["apptables", "appqueues", "appbuckets"]
    assert rule["operations"] == ["CREATE", "UPDATE", "DELETE"]


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


def resource(kind: str, app: str, name: str, applied_by: str | None = None) -> dict[str, Any]:
    """An app composite of ``kind`` in the hub namespace prod-1; ``applied_by``: the Kustomization that applied it."""
    labels = {FLUX_OWNER[0]: applied_by, FLUX_OWNER[1]: "prod-1"} if applied_by else {}
    metadata = {"name": name, "namespace": "prod-1", "labels": labels}
    return {"kind": kind, "metadata": metadata, "spec": {"app": app, PHYSICAL_NAME[kind]: f"prod-1-{name}"}}


@pytest.mark.parametrize("kind", sorted(REQUESTABLE))
def test_an_app_may_not_delete_another_apps_resource(kind: str) -> None:
    billing = resource(kind, "billing", "billing-orders", applied_by="billing-cloud")
    assert admitted("DELETE", "system:serviceaccount:prod-1:notifications-cloud", None, billing) is False
    assert admitted("DELETE", "system:serviceaccount:prod-1:billing-cloud", None, billing) is True


@pytest.mark.parametrize("kind", sorted(REQUESTABLE))
@pytest.mark.parametrize("operation", ["UPDATE", "DELETE"])
def test_an_app_may_not_change_or_delete_what_the_platform_declared_for_it(kind: str, operation: str) -> None:
    # declared in the definition, applied by the cluster's own chain on the hub
    declared = resource(kind, "billing", "billing-table-orders", applied_by="app-resources")
    new = declared if operation == "UPDATE" else None
    assert admitted(operation, "system:serviceaccount:prod-1:billing-cloud", new, declared) is False
    unlabelled = resource(kind, "billing", "billing-orders")
    new = unlabelled if operation == "UPDATE" else None
    assert admitted(operation, "system:serviceaccount:prod-1:billing-cloud", new, unlabelled) is False


@pytest.mark.parametrize("kind", sorted(REQUESTABLE))
def test_an_app_may_not_take_another_apps_resource_by_changing_its_owner(kind: str) -> None:
    billing = resource(kind, "billing", "billing-orders", applied_by="billing-cloud")
    taken = {**billing, "spec": {**billing["spec"], "app": "notifications"}}
    assert admitted("UPDATE", "system:serviceaccount:prod-1:notifications-cloud", taken, billing) is False
