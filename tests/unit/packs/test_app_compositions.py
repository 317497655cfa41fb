"""app-compositions: the app kinds' XRDs and Compositions, rendered for the example fleet's composites."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
import yaml

from fluxplane.constructs.app_resources import KINDS
from fluxplane.packs import app_compositions as pack
from fluxplane.testing import bind_pack
from tests.conftest import ROOT
from tests.unit.packs.test_eks import render

CLOUD = ROOT / "dist" / "platform" / "cloud"
TENANTS = ROOT / "dist" / "workloads" / "clusters"


def composites() -> list[dict[str, Any]]:
    return [
        doc
        for path in sorted(CLOUD.rglob("*.yaml"))
        if path.name != "kustomization.yaml"
        for doc in yaml.safe_load_all(path.read_text())
    ]


def rendered(composite: dict[str, Any], **status: str) -> dict[str, dict[str, Any]]:
    return render({**composite, "status": status}, pack.composition_props(composite["kind"]))


def statement(policy: str) -> dict[str, Any]:
    (only,) = json.loads(policy)["Statement"]
    return dict(only)


def test_bind_writes_an_xrd_and_a_composition_per_kind_gated_on_the_xrds() -> None:
    ctx = bind_pack(pack.PACK)
    kinds = Counter(doc["kind"] for doc in ctx.objects)
    assert kinds == {
        "CompositeResourceDefinition": 6,
        # one per kind, and the identity of apps whose clusters make their resources
        "Composition": 7,
        "ValidatingAdmissionPolicy": 1,
        "ValidatingAdmissionPolicyBinding": 1,
    }
    assert [check.name for check in ctx.health_checks] == [
        f"{plural}.platform.fluxplane.io" for plural in KINDS.values()
    ]
    (expr,) = ctx.health_check_exprs
    assert "Established" in expr.current and "Offered" not in expr.current
    assert expr.failed is not None and "Established" in expr.failed


@pytest.mark.parametrize(
    ("kind", "composed"),
    [
        ("AppIdentity", {"Role", "PodIdentityAssociation"}),
        ("AppTable", {"Table", "RolePolicy"}),
        ("AppQueue", {"Queue", "RolePolicy"}),
        ("AppBucket", {"Bucket", "BucketVersioning", "RolePolicy"}),
        ("AddonIdentity", {"Role", "PodIdentityAssociation"}),
        (
            "AppDatabase",
            {"SubnetGroup", "SecurityGroup", "SecurityGroupIngressRule", "Instance", "RolePolicy", "Role", "Object"},
        ),
    ],
)
def test_each_kind_composes_its_resource_and_nothing_else(kind: str, composed: set[str]) -> None:
    props = pack.composition_props(kind)
    resources = props["pipeline"][0]["input"]["resources"]
    assert {resource["base"]["kind"] for resource in resources} == composed
    assert props["compositeTypeRef"] == {"apiVersion": "platform.fluxplane.io/v1alpha1", "kind": kind}
    assert pack.xrd_props(kind)["defaultCompositionRef"] == {"name": props["name"]}


def test_the_trust_policy_names_exactly_the_apps_cluster_namespace_and_service_account() -> None:
    identities = [doc for doc in composites() if doc["kind"] == "AppIdentity"]
    assert identities
    for identity in identities:
        cluster, app = identity["spec"]["clusterName"], identity["metadata"]["name"]
        role = rendered(identity)["role"]
        trust = statement(role["spec"]["forProvider"]["assumeRolePolicy"])
        assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
        assert trust["Action"] == ["sts:AssumeRole", "sts:TagSession"]
        # The account the app's pods run as, in the app's namespace on that cluster: the tenant's account that
        # no RoleBinding names (Flux deploys as the other one, the deployer)
        tenant = list(yaml.safe_load_all((TENANTS / cluster / app / "tenant.yaml").read_text()))
        (namespace,) = [doc["metadata"]["name"] for doc in tenant if doc["kind"] == "Namespace"]
        bound = {subject["name"] for doc in tenant if doc["kind"] == "RoleBinding" for subject in doc["subjects"]}
        (runtime,) = [
            doc["metadata"]["name"]
            for doc in tenant
            if doc["kind"] == "ServiceAccount" and doc["metadata"]["name"] not in bound
        ]
        assert trust["Condition"] == {
            "StringEquals": {
                "aws:RequestTag/eks-cluster-name": cluster,
                "aws:RequestTag/kubernetes-namespace": namespace,
                "aws:RequestTag/kubernetes-service-account": runtime,
            }
        }
        # The association binds that same account to this role, on that cluster
        association = rendered(identity)["pod-identity-association"]["spec"]["forProvider"]
        assert (association["clusterName"], association["namespace"], association["serviceAccount"]) == (
            cluster,
            namespace,
            runtime,
        )
        assert association["roleArnSelector"] == {
            "matchControllerRef": True,
            "matchLabels": {"platform.fluxplane.io/role": "app"},
        }
        assert role["metadata"]["labels"][pack.APP_ROLE_LABEL] == app


@pytest.mark.parametrize(
    ("kind", "arn", "resources", "actions"),
    [
        (
            "AppTable",
            "arn:aws:dynamodb:us-west-2:1:table/t",
            ["arn:aws:dynamodb:us-west-2:1:table/t", "arn:aws:dynamodb:us-west-2:1:table/t/index/*"],
            pack.TABLE_ACTIONS,
        ),
        ("AppQueue", "arn:aws:sqs:us-west-2:1:q", ["arn:aws:sqs:us-west-2:1:q"], pack.QUEUE_ACTIONS),
    ],
)
def test_resource_policies_grant_the_apps_role_access_to_that_resource_only(
    kind: str, arn: str, resources: list[str], actions: tuple[str, ...]
) -> None:
    (composite, *_) = [doc for doc in composites() if doc["kind"] == kind]
    access = rendered(composite, arn=arn)["access"]["spec"]["forProvider"]
    assert access["roleSelector"] == {"matchLabels": {pack.APP_ROLE_LABEL: composite["spec"]["app"]}}
    grant = statement(access["policy"])
    assert grant == {"Effect": "Allow", "Action": list(actions), "Resource": resources}


def test_a_bucket_grants_the_bucket_and_its_objects_only() -> None:
    composite = {
        "apiVersion": "platform.fluxplane.io/v1alpha1",
        "kind": "AppBucket",
        "metadata": {"name": "shop-bucket-exports", "namespace": "prod-1"},
        "spec": {
            "app": "shop",
            "bucketName": "prod-1-shop-exports",
            "versioning": "Enabled",
            "region": "us-west-2",
            "tags": {},
        },
    }
    out = rendered(composite, arn="arn:aws:s3:::prod-1-shop-exports")
    assert out["bucket"]["metadata"]["annotations"] == {"crossplane.io/external-name": "prod-1-shop-exports"}
    assert out["versioning"]["spec"]["forProvider"]["versioningConfiguration"] == {"status": "Enabled"}
    statements = json.loads(out["access"]["spec"]["forProvider"]["policy"])["Statement"]
    assert [s["Resource"] for s in statements] == [
        ["arn:aws:s3:::prod-1-shop-exports"],
        ["arn:aws:s3:::prod-1-shop-exports/*"],
    ]


def test_a_table_is_named_by_the_composite_and_keyed_as_asked() -> None:
    (table, *_) = [doc for doc in composites() if doc["kind"] == "AppTable"]
    out = rendered(table, arn="arn:aws:dynamodb:us-west-2:1:table/t")["table"]
    assert out["metadata"]["annotations"] == {"crossplane.io/external-name": table["spec"]["tableName"]}
    provider = out["spec"]["forProvider"]
    assert provider["hashKey"] == table["spec"]["hashKey"]
    assert provider["attribute"] == table["spec"]["attributes"]
    assert provider["billingMode"] == "PAY_PER_REQUEST"


def test_every_example_composite_lives_in_its_clusters_hub_namespace() -> None:
    for path in sorted(CLOUD.rglob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        cluster = path.parent.name
        for doc in yaml.safe_load_all(path.read_text()):
            assert doc["metadata"]["namespace"] == cluster
            if doc["apiVersion"].startswith("platform.fluxplane.io/"):
                assert doc["metadata"]["labels"]["fluxplane.io/cluster"] == cluster


def test_an_addon_role_carries_the_packs_policies_and_the_same_trust() -> None:
    resources = pack.composition_props("AddonIdentity")["pipeline"][0]["input"]["resources"]
    role = next(resource for resource in resources if resource["base"]["kind"] == "Role")
    patched = {patch.get("toFieldPath"): patch.get("fromFieldPath") for patch in role["patches"]}
    assert patched["spec.forProvider.managedPolicyArns"] == "spec.managedPolicyArns"
    assert patched["spec.forProvider.inlinePolicy"] == "spec.inlinePolicies"
    app_role = pack.composition_props("AppIdentity")["pipeline"][0]["input"]["resources"][0]
    trust = [patch for patch in role["patches"] if patch.get("toFieldPath") == "spec.forProvider.assumeRolePolicy"]
    assert trust == [p for p in app_role["patches"] if p.get("toFieldPath") == "spec.forProvider.assumeRolePolicy"]
    association = next(resource for resource in resources if resource["base"]["kind"] == "PodIdentityAssociation")
    assert association["base"]["spec"]["forProvider"]["roleArnSelector"]["matchLabels"] == {
        "platform.fluxplane.io/role": "addon"
    }
    assert role["base"]["metadata"]["labels"] == {"platform.fluxplane.io/role": "addon"}


def test_xrd_schemas_require_what_the_compositions_need() -> None:
    for kind in KINDS:
        spec = pack.xrd_props(kind)["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        assert "region" in spec["required"]
        assert set(spec["required"]) <= set(spec["properties"])


# -- the admission policy on apps' own requests, evaluated with a CEL interpreter ----------------------


def admitted(
    operation: str,
    username: str,
    obj: dict[str, Any],
    old: dict[str, Any] | None = None,
    namespace_labels: dict[str, str] | None = None,
) -> bool | None:
    """True or False as the policy decides; None when the policy does not apply to the request."""
    import celpy

    policy = pack.policy_props()
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
    (rule,) = pack.policy_props()["matchConstraints"]["resourceRules"]
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
