"""The app kinds (fluxplane.kinds.app): their XRDs, and what each one's Composition composes, rendered for the
example's composites."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from fluxplane.kinds import APP_KINDS
from fluxplane.kinds.app import APP_ROLE_LABEL
from fluxplane.kinds.app_queue import ACTIONS as QUEUE_ACTIONS
from fluxplane.kinds.app_table import ACTIONS as TABLE_ACTIONS
from tests.conftest import ROOT
from tests.support.compositions import CLOUD, render

TENANTS = ROOT / "dist" / "workloads" / "clusters"


def composites() -> list[dict[str, Any]]:
    return [
        doc
        for path in sorted(CLOUD.rglob("*.yaml"))
        if path.name != "kustomization.yaml"
        for doc in yaml.safe_load_all(path.read_text())
    ]


def rendered(composite: dict[str, Any], **status: str) -> dict[str, dict[str, Any]]:
    return render({**composite, "status": status}, APP_KINDS[composite["kind"]].composition_props().dump())


def statement(policy: str) -> dict[str, Any]:
    (only,) = json.loads(policy)["Statement"]
    return dict(only)


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
    props = APP_KINDS[kind].composition_props().dump()
    resources = props["pipeline"][0]["input"]["resources"]
    assert {resource["base"]["kind"] for resource in resources} == composed
    assert props["compositeTypeRef"] == {"apiVersion": "platform.fluxplane.io/v1alpha1", "kind": kind}
    assert APP_KINDS[kind].xrd_props().dump()["defaultCompositionRef"] == {"name": props["name"]}


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
        assert role["metadata"]["labels"][APP_ROLE_LABEL] == app


@pytest.mark.parametrize(
    ("kind", "arn", "resources", "actions"),
    [
        (
            "AppTable",
            "arn:aws:dynamodb:us-west-2:1:table/t",
            ["arn:aws:dynamodb:us-west-2:1:table/t", "arn:aws:dynamodb:us-west-2:1:table/t/index/*"],
            TABLE_ACTIONS,
        ),
        ("AppQueue", "arn:aws:sqs:us-west-2:1:q", ["arn:aws:sqs:us-west-2:1:q"], QUEUE_ACTIONS),
    ],
)
def test_resource_policies_grant_the_apps_role_access_to_that_resource_only(
    kind: str, arn: str, resources: list[str], actions: tuple[str, ...]
) -> None:
    (composite, *_) = [doc for doc in composites() if doc["kind"] == kind]
    access = rendered(composite, arn=arn)["access"]["spec"]["forProvider"]
    assert access["roleSelector"] == {"matchLabels": {APP_ROLE_LABEL: composite["spec"]["app"]}}
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


def test_an_addon_role_carries_the_packs_policies_and_the_same_trust() -> None:
    resources = APP_KINDS["AddonIdentity"].composition_props().dump()["pipeline"][0]["input"]["resources"]
    role = next(resource for resource in resources if resource["base"]["kind"] == "Role")
    patched = {patch.get("toFieldPath"): patch.get("fromFieldPath") for patch in role["patches"]}
    assert patched["spec.forProvider.managedPolicyArns"] == "spec.managedPolicyArns"
    assert patched["spec.forProvider.inlinePolicy"] == "spec.inlinePolicies"
    app_role = APP_KINDS["AppIdentity"].composition_props().dump()["pipeline"][0]["input"]["resources"][0]
    trust = [patch for patch in role["patches"] if patch.get("toFieldPath") == "spec.forProvider.assumeRolePolicy"]
    assert trust == [p for p in app_role["patches"] if p.get("toFieldPath") == "spec.forProvider.assumeRolePolicy"]
    association = next(resource for resource in resources if resource["base"]["kind"] == "PodIdentityAssociation")
    assert association["base"]["spec"]["forProvider"]["roleArnSelector"]["matchLabels"] == {
        "platform.fluxplane.io/role": "addon"
    }
    assert role["base"]["metadata"]["labels"] == {"platform.fluxplane.io/role": "addon"}


def test_xrd_schemas_require_what_the_compositions_need() -> None:
    for kind in APP_KINDS:
        spec = APP_KINDS[kind].xrd_props().dump()["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        assert "region" in spec["required"]
        assert set(spec["required"]) <= set(spec["properties"])


def test_a_kinds_xrd_is_namespaced_and_defaults_to_its_composition() -> None:
    # GIVEN the queue kind WHEN its XRD is made
    props = APP_KINDS["AppQueue"].xrd_props().dump()
    (version,) = props.pop("versions")

    # THEN it is named by its plural, namespaced, listed among the apps' kinds and composed by default by its own
    assert props == {
        "name": "appqueues.platform.fluxplane.io",
        "group": "platform.fluxplane.io",
        "names": {"kind": "AppQueue", "plural": "appqueues", "categories": ["crossplane", "composite", "app"]},
        "scope": "Namespaced",
        "defaultCompositionRef": {"name": "appqueue"},
    }
    # AND its one version serves the kind's fields, the shared ones after them, and what status reports
    assert (version["name"], version["served"], version["referenceable"]) == ("v1alpha1", True, True)
    schema = version["schema"]["openAPIV3Schema"]
    assert schema["required"] == ["spec"]
    spec = schema["properties"]["spec"]
    assert spec["required"] == ["region", "app", "queueName"]
    assert list(spec["properties"]) == [
        "app",
        "queueName",
        "fifo",
        "visibilityTimeoutSeconds",
        "messageRetentionSeconds",
        "region",
        "providerConfigName",
        "tags",
    ]
    assert schema["properties"]["status"] == {
        "type": "object",
        "properties": {"arn": {"type": "string"}, "url": {"type": "string"}},
    }


def test_every_kind_takes_a_region_an_account_and_tags_alike() -> None:
    # GIVEN every kind's XRD WHEN the shared fields are read THEN each kind has the same three
    shared = ("region", "providerConfigName", "tags")
    specs = [
        declared.xrd_props().dump()["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        for declared in APP_KINDS.values()
    ]
    first = {field: specs[0]["properties"][field] for field in shared}
    assert first["region"]["pattern"] == "^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$"
    assert first["providerConfigName"]["default"] == "default"
    for spec in specs:
        assert {field: spec["properties"][field] for field in shared} == first
