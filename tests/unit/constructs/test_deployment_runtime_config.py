"""DeploymentRuntimeConfig: the service account template providers run with."""

from __future__ import annotations

from fluxplane.constructs import Manifest, Root
from fluxplane.constructs.deployment_runtime_config import DeploymentRuntimeConfig


def test_service_account_name_and_irsa_annotation() -> None:
    config = DeploymentRuntimeConfig(
        Manifest(Root(), "m", path="x.yaml"),
        "rc",
        {
            "name": "provider-aws-eks",
            "serviceAccountTemplate": {
                "metadata": {
                    "name": "provider-aws-eks",
                    "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/x"},
                }
            },
        },
    )
    assert config.to_dict() == {
        "apiVersion": "pkg.crossplane.io/v1beta1",
        "kind": "DeploymentRuntimeConfig",
        "metadata": {"name": "provider-aws-eks"},
        "spec": {
            "serviceAccountTemplate": {
                "metadata": {
                    "name": "provider-aws-eks",
                    "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/x"},
                }
            }
        },
    }
