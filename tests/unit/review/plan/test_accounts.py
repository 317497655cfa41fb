"""Tests for fluxplane.review.plan.accounts: the AWS account of a resource, from its provider config on its cluster."""

from __future__ import annotations

from typing import Any

from fluxplane.review.plan.accounts import Accounts, account_of_arn
from fluxplane.validate.tree import Document

HUB_ROLE = "arn:aws:iam::111122223333:role/providers"


def config(name: str, file: str = "platform/infrastructure/configs/p/base/p.yaml", **spec: Any) -> Document:
    body = {"apiVersion": "aws.m.upbound.io/v1beta1", "kind": "ClusterProviderConfig", "metadata": {"name": name}}
    return Document(file, 1, {**body, "spec": spec})


def accounts() -> Accounts:
    configs = [
        config("default", credentials={"source": "IRSA"}),
        config("production", assumeRoleChain=[{"roleARN": "arn:aws:iam::444455556666:role/fluxplane-crossplane"}]),
        # a cluster that makes its own resources works in its own account
        config(
            "default", "platform/clusters/spoke/overlays/p/kustomization.yaml", credentials={"source": "PodIdentity"}
        ),
    ]
    return Accounts(configs, [HUB_ROLE], {"spoke": "production", "lost": "missing"}, "hub")


def test_a_role_chain_names_the_account_of_its_last_role() -> None:
    assert accounts().account("hub", "production") == "444455556666"
    assert account_of_arn("arn:aws:iam::444455556666:role/x") == "444455556666"
    assert account_of_arn("not an arn") is None


def test_a_config_without_a_chain_works_in_the_account_of_its_cluster() -> None:
    # THEN the hub's is its providers' role's, a workload cluster's the one its EKSCluster is made in on the hub
    assert accounts().account("hub", "default") == "111122223333"
    assert accounts().account("spoke", "default") == "444455556666"


def test_what_the_tree_does_not_say_names_the_config() -> None:
    assert accounts().account("hub", "nowhere") == "provider config nowhere"
    assert accounts().account("lost", "default") == "provider config default"
    assert Accounts([config("default")], [], {}, "hub").account("hub", "default") == "provider config default"
