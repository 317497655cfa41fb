"""Tests for fluxplane.packs.aws_ebs_csi_driver: its config, its documents, its Pod Identity and its StorageClass."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from fluxplane.constructs import NamespacedObjectKindReference
from fluxplane.packs import versions
from fluxplane.packs.api import PodIdentity
from fluxplane.packs.aws_ebs_csi_driver import PACK, AwsEbsCsiDriverConfig, StorageClassConfig
from fluxplane.testing import bind_pack
from tests.conftest import VALIDATE_MANIFESTS

REPOSITORY: dict[str, Any] = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "HelmRepository",
    "metadata": {"name": "aws-ebs-csi-driver", "namespace": "flux-system"},
    "spec": {"interval": "1h", "url": "https://kubernetes-sigs.github.io/aws-ebs-csi-driver"},
}
VALUES: dict[str, Any] = {
    "controller": {
        "region": "${cluster_region}",
        "k8sTagClusterId": "${cluster_name}",
        "serviceAccount": {"create": True, "name": "ebs-csi-controller-sa"},
    }
}
STORAGE_CLASS: dict[str, Any] = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "gp3", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
    "provisioner": "ebs.csi.aws.com",
    "parameters": {"type": "gp3", "encrypted": "true"},
    "reclaimPolicy": "Delete",
    "volumeBindingMode": "WaitForFirstConsumer",
    "allowVolumeExpansion": True,
}
POLICY = "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"


def _release(values: dict[str, Any] = VALUES, version: str = versions.AWS_EBS_CSI_DRIVER.version) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "aws-ebs-csi-driver", "namespace": "flux-system"},
        "spec": {
            "interval": "30m",
            "chart": {
                "spec": {
                    "chart": "aws-ebs-csi-driver",
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": "aws-ebs-csi-driver"},
                }
            },
            "releaseName": "aws-ebs-csi-driver",
            "targetNamespace": "kube-system",
            "serviceAccountName": "helm-controller",
            "postRenderStrategy": "nohooks",
            "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
            "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}},
            "driftDetection": {"mode": "enabled"},
            "values": values,
        },
    }


def _config(storage_class: dict[str, Any]) -> AwsEbsCsiDriverConfig:
    return AwsEbsCsiDriverConfig.model_validate({"storageClass": storage_class})


# -- declaration and config ----------------------------------------------------------------------------


def test_config_defaults() -> None:
    # GIVEN no values WHEN the config is made THEN an encrypted, expandable default gp3 class named "gp3",
    # deleted with its claims and bound when a pod needs it, and the pinned chart
    assert PACK.config() == AwsEbsCsiDriverConfig.model_validate(
        {
            "enabled": True,
            "storageClass": {
                "enabled": True,
                "name": "gp3",
                "default": True,
                "encrypted": True,
                "reclaimPolicy": "Delete",
                "volumeBindingMode": "WaitForFirstConsumer",
                "allowVolumeExpansion": True,
            },
            "version": versions.AWS_EBS_CSI_DRIVER.version,
            "values": {},
        }
    )


def test_every_config_field_is_described() -> None:
    # GIVEN the config models WHEN their fields are listed (fluxplane packs show prints them) THEN each says what it is
    for model in (AwsEbsCsiDriverConfig, StorageClassConfig):
        assert [name for name, field in model.model_fields.items() if not field.description] == [], model


@pytest.mark.parametrize(
    ("data", "loc", "message"),
    [
        ({"storageClass": {"name": "gp2"}}, ("storageClass", "name"), "'gp2' is the StorageClass EKS makes"),
        ({"storageClass": {"name": "GP3"}}, ("storageClass", "name"), "should match pattern"),
        ({"storageClass": {"reclaimPolicy": "Recycle"}}, ("storageClass", "reclaimPolicy"), "'Delete' or 'Retain'"),
        (
            {"storageClass": {"volumeBindingMode": "Later"}},
            ("storageClass", "volumeBindingMode"),
            "'WaitForFirstConsumer' or 'Immediate'",
        ),
        ({"storageClass": {"type": "io2"}}, ("storageClass", "type"), "Extra inputs are not permitted"),
        (
            {"values": {"controller": {"serviceAccount": {"name": "x"}}}},
            ("values",),
            "bound to service account kube-system/ebs-csi-controller-sa",
        ),
        ({"storage_class": {}}, ("storage_class",), "Extra inputs are not permitted"),
    ],
)
def test_config_refuses_bad_values(data: dict[str, Any], loc: tuple[Any, ...], message: str) -> None:
    # GIVEN a value out of range, misspelt or unknown WHEN validated THEN it is refused at its field, saying why
    with pytest.raises(ValidationError) as exc:
        AwsEbsCsiDriverConfig.model_validate(data)
    (error,) = exc.value.errors()
    assert error["loc"] == loc
    assert re.search(message, error["msg"]), error["msg"]


def test_values_may_configure_the_service_account_otherwise() -> None:
    # GIVEN values that annotate the controller's service account and configure the node's WHEN validated
    # THEN they are accepted: only the controller account's name and creation are the pack's
    config = AwsEbsCsiDriverConfig.model_validate(
        {"values": {"controller": {"serviceAccount": {"annotations": {"a": "b"}}}, "node": {"serviceAccount": {}}}}
    )
    assert config.values["controller"] == {"serviceAccount": {"annotations": {"a": "b"}}}


# -- documents ---------------------------------------------------------------------------------------------


def test_default_documents() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, AwsEbsCsiDriverConfig())

    # THEN the chart's repository, its release into kube-system for the cluster's region, and the gp3 class
    assert ctx.objects == [REPOSITORY, _release(), STORAGE_CLASS]


@pytest.mark.parametrize(
    ("storage_class", "changes"),
    [
        ({"default": False}, {"metadata": {"name": "gp3"}}),
        ({"encrypted": False}, {"parameters": {"type": "gp3"}}),
        ({"reclaimPolicy": "Retain"}, {"reclaimPolicy": "Retain"}),
        ({"volumeBindingMode": "Immediate"}, {"volumeBindingMode": "Immediate"}),
        ({"allowVolumeExpansion": False}, {"allowVolumeExpansion": False}),
        (
            {"name": "ebs-gp3"},
            {"metadata": {"name": "ebs-gp3", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}},
        ),
    ],
)
def test_storage_class_follows_its_config(storage_class: dict[str, Any], changes: dict[str, Any]) -> None:
    # GIVEN one StorageClass setting changed WHEN bound THEN the class differs from the default in that only
    documents = bind_pack(PACK, _config(storage_class)).objects
    assert documents[-1] == {**STORAGE_CLASS, **changes}


def test_a_disabled_storage_class_is_not_made() -> None:
    # GIVEN storageClass.enabled: false WHEN bound THEN the driver comes without a class
    assert bind_pack(PACK, _config({"enabled": False})).objects == [REPOSITORY, _release()]


def test_custom_version_pins_the_chart() -> None:
    # GIVEN another chart version WHEN bound THEN the release asks for that version
    documents = bind_pack(PACK, AwsEbsCsiDriverConfig(version="2.62.0")).objects
    assert documents[1] == _release(version="2.62.0")


def test_values_are_merged_last() -> None:
    # GIVEN values that tag volumes, annotate the service account and override the region
    config = AwsEbsCsiDriverConfig.model_validate(
        {
            "values": {
                "controller": {
                    "region": "eu-west-1",
                    "extraVolumeTags": {"team": "data"},
                    "serviceAccount": {"annotations": {"owner": "platform"}},
                }
            }
        }
    )

    # WHEN bound THEN the user's values win, mappings merged key by key
    assert bind_pack(PACK, config).objects[1] == _release(
        {
            "controller": {
                "region": "eu-west-1",
                "k8sTagClusterId": "${cluster_name}",
                "serviceAccount": {
                    "create": True,
                    "name": "ebs-csi-controller-sa",
                    "annotations": {"owner": "platform"},
                },
                "extraVolumeTags": {"team": "data"},
            }
        }
    )


def test_health_check_is_the_helm_release() -> None:
    # GIVEN the default config WHEN bound THEN the pack is gated on its HelmRelease, with no CEL checks
    ctx = bind_pack(PACK, AwsEbsCsiDriverConfig())
    assert ctx.health_checks == [
        NamespacedObjectKindReference(
            api_version="helm.toolkit.fluxcd.io/v2",
            kind="HelmRelease",
            name="aws-ebs-csi-driver",
            namespace="flux-system",
        )
    ]
    assert ctx.health_check_exprs == []


# -- Pod Identity ---------------------------------------------------------------------------------------------


def test_pod_identity_is_the_controllers_service_account() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, AwsEbsCsiDriverConfig())
    release = ctx.objects[1]["spec"]

    # THEN one role, for the controller's service account the chart makes, in the namespace it is released to
    (identity,) = ctx.pod_identities
    assert (identity.namespace, identity.service_account) == (
        release["targetNamespace"],
        release["values"]["controller"]["serviceAccount"]["name"],
    )
    assert release["values"]["controller"]["serviceAccount"]["create"] is True
    # AND it has AWS's managed policy for the driver, and no inline policy
    assert identity == PodIdentity("controller", "kube-system", "ebs-csi-controller-sa", (POLICY,), None)


# -- validation ------------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(not VALIDATE_MANIFESTS.exists(), reason=f"{VALIDATE_MANIFESTS} is missing")
def test_storage_classes_are_valid_kubernetes_objects(tmp_path: Path) -> None:
    # GIVEN the StorageClass of the default config and of every changed setting, on a cluster
    pytest.importorskip("kubernetes_validate", reason="core kinds are validated with kubernetes-validate")
    configs: list[dict[str, Any]] = [
        {},
        {"default": False, "encrypted": False},
        {"reclaimPolicy": "Retain", "volumeBindingMode": "Immediate", "allowVolumeExpansion": False},
    ]
    documents = [bind_pack(PACK, _config(data)).objects[-1] for data in configs]
    (tmp_path / "storage-classes.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))

    # WHEN validated against Kubernetes 1.33's schemas THEN every one is a complete, valid object
    result = subprocess.run(
        [sys.executable, str(VALIDATE_MANIFESTS), "--kube-version", "1.33", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 documents, 3 valid, 0 invalid, 0 skipped" in result.stdout, result.stdout
