"""ManagedResourceActivationPolicy (apiextensions.crossplane.io/v1alpha1)."""

from __future__ import annotations

import re

import pytest

from fluxplane.constructs import Root
from fluxplane.constructs.activation_policy import ManagedResourceActivationPolicy
from fluxplane.errors import ConstructError


def test_a_policy_is_cluster_scoped_and_lists_what_it_activates() -> None:
    # GIVEN a policy naming one MRD and a wildcard prefix
    policy = ManagedResourceActivationPolicy(
        Root(),
        "policy",
        {"name": "fluxplane", "activate": ["roles.iam.aws.m.upbound.io", "*.kubernetes.crossplane.io"]},
    )

    # THEN it renders without a namespace, the names in the order given
    assert policy.to_dict() == {
        "apiVersion": "apiextensions.crossplane.io/v1alpha1",
        "kind": "ManagedResourceActivationPolicy",
        "metadata": {"name": "fluxplane"},
        "spec": {"activate": ["roles.iam.aws.m.upbound.io", "*.kubernetes.crossplane.io"]},
    }


@pytest.mark.parametrize(
    ("activate", "problem"),
    [
        ([], "activate: tuple should have at least 1 item after validation, not 0"),  # a policy that activates nothing
        (["roles"], "activate.0: string should match pattern"),  # no group
        (["Roles.iam.aws.m.upbound.io"], "activate.0: string should match pattern"),  # not a DNS name
        (["iam.*.upbound.io"], "activate.0: string should match pattern"),  # a wildcard that is not a prefix
    ],
)
def test_a_policy_refuses_what_names_no_managed_resource(activate: list[str], problem: str) -> None:
    expected = re.escape(f"root/policy: ManagedResourceActivationPolicyProps.{problem}")
    with pytest.raises(ConstructError, match=f"^{expected}"):
        ManagedResourceActivationPolicy(Root(), "policy", {"name": "fluxplane", "activate": activate})
