"""The crossplane-providers hub pack (fluxplane.packs.crossplane_providers): the AWS providers, their runtime
configs and identity, and what they activate."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.packs import crossplane_providers, versions
from tests.support.hub import bind

ROLE = "arn:aws:iam::111122223333:role/fleet-crossplane-providers"


def test_providers_get_one_runtime_config_each_with_the_irsa_role() -> None:
    documents, context = bind(crossplane_providers.PACK, values={"roleArn": ROLE})
    providers = [d for d in documents if d["kind"] == "Provider" and d["metadata"]["name"] != "provider-kubernetes"]
    runtimes = {d["metadata"]["name"]: d for d in documents if d["kind"] == "DeploymentRuntimeConfig"}
    assert [p["metadata"]["name"] for p in providers] == [
        "provider-family-aws",
        "provider-aws-ec2",
        "provider-aws-eks",
        "provider-aws-iam",
    ]
    for provider in providers:
        name = provider["metadata"]["name"]
        assert provider["spec"]["package"] == f"xpkg.crossplane.io/crossplane-contrib/{name}:{versions.PROVIDER_AWS}"
        assert provider["spec"]["runtimeConfigRef"]["name"] == name
        assert runtimes[name]["spec"]["serviceAccountTemplate"]["metadata"] == {
            "name": name,
            "annotations": {"eks.amazonaws.com/role-arn": ROLE},
        }
    functions = [d["metadata"]["name"] for d in documents if d["kind"] == "Function"]
    assert functions == ["function-patch-and-transform", "function-auto-ready"]
    # THEN every provider and function is health-checked, judged by Installed and Healthy
    assert sorted((c.kind, c.name) for c in context.health_checks) == sorted(
        [("Provider", p["metadata"]["name"]) for p in providers]
        + [("Provider", "provider-kubernetes")]
        + [("Function", f) for f in functions]
    )
    for expr in context.health_check_exprs:
        assert "c.type == 'Installed' && c.status == 'True'" in expr.current
        assert "c.type == 'Healthy' && c.status == 'True'" in expr.current
        assert ".all(" not in expr.current


def test_pod_identity_needs_no_role_annotation() -> None:
    documents, _ = bind(crossplane_providers.PACK, values={"identity": "pod-identity", "services": ["eks"]})
    runtime = next(d for d in documents if d["metadata"]["name"] == "provider-aws-eks" and d["kind"] != "Provider")
    assert runtime["spec"]["serviceAccountTemplate"]["metadata"] == {"name": "provider-aws-eks"}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({}, "roleArn is required when identity is 'irsa'"),
        ({"roleArn": "arn:aws:iam::1:role/x"}, "String should match pattern"),
        ({"roleArn": ROLE, "services": ["ec2", "ec2"]}, "services must not repeat"),
        ({"roleArn": ROLE, "services": []}, "at least 1 item"),
        ({"roleArn": ROLE, "activate": ["rds instances"]}, "String should match pattern"),
    ],
)
def test_provider_values_are_checked(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        crossplane_providers.PACK.config.model_validate(values)


def test_the_activation_policy_names_what_the_installed_providers_compose_and_what_the_definition_adds() -> None:
    documents, _ = bind(
        crossplane_providers.PACK,
        values={"roleArn": ROLE, "services": ["iam", "sqs"], "activate": ["*.rds.aws.m.upbound.io"]},
    )
    (policy,) = [d for d in documents if d["kind"] == "ManagedResourceActivationPolicy"]
    assert policy == {
        "apiVersion": "apiextensions.crossplane.io/v1alpha1",
        "kind": "ManagedResourceActivationPolicy",
        "metadata": {"name": "fluxplane"},
        "spec": {
            "activate": [
                "roles.iam.aws.m.upbound.io",
                "rolepolicies.iam.aws.m.upbound.io",
                "rolepolicyattachments.iam.aws.m.upbound.io",
                "openidconnectproviders.iam.aws.m.upbound.io",
                "queues.sqs.aws.m.upbound.io",
                "queuepolicies.sqs.aws.m.upbound.io",
                "*.kubernetes.m.crossplane.io",
                "*.kubernetes.crossplane.io",
                "*.rds.aws.m.upbound.io",
            ]
        },
    }
    documents, _ = bind(crossplane_providers.PACK, values={"roleArn": ROLE, "services": ["iam"], "kubernetes": False})
    (policy,) = [d for d in documents if d["kind"] == "ManagedResourceActivationPolicy"]
    assert not any("kubernetes" in name for name in policy["spec"]["activate"])
