"""aws-ebs-csi-driver: EBS volumes for PersistentVolumeClaims, with a default gp3 StorageClass.

The driver's controller creates, attaches and resizes volumes as the IAM role EKS Pod Identity gives
its service account, with the AWS managed AmazonEBSCSIDriverPolicy; its node DaemonSet needs no AWS
access. Both run in ``kube-system``, where the EKS add-on of the same driver runs. The controller is
told its region instead of asking instance metadata, which nodes may not let pods reach.

EKS clusters made at Kubernetes 1.30 or later have no default StorageClass (their ``gp2`` class uses
the in-tree provisioner and is not the default), so the pack adds one: gp3, encrypted, bound when
the first pod is scheduled so the volume is made in that pod's zone. The StorageClass is a manifest
of its own rather than a chart value, so it reads in dist/ like any other object. Its parameters are
immutable: changing ``encrypted`` on a cluster that has the class needs the class deleted first.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from fluxplane.config.models import Model
from fluxplane.packs import versions
from fluxplane.sdk import DnsLabel, Pack, PackContext, RawObject, ReleaseConfig, chart_release, keep_service_account

#: Where the driver runs, and the fixed name of its controller's service account: the Pod Identity
#: association binds the IAM role to exactly this pair.
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "ebs-csi-controller-sa"
POLICY = "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
PROVISIONER = "ebs.csi.aws.com"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
#: StorageClasses EKS makes itself, with another provisioner: the pack must not take them over.
EKS_STORAGE_CLASSES = frozenset({"gp2"})


class StorageClassConfig(Model):
    """The gp3 StorageClass the pack adds."""

    enabled: bool = Field(True, description="Set to false to install the driver without a StorageClass.")
    name: DnsLabel = Field("gp3", description="StorageClass name, for the storageClassName of claims.")
    default: bool = Field(
        True, description="Make it the cluster's default class, for claims that name no storageClassName."
    )
    encrypted: bool = Field(True, description="Encrypt volumes (with the account's default EBS KMS key).")
    reclaim_policy: Literal["Delete", "Retain"] = Field(
        "Delete",
        alias="reclaimPolicy",
        description="What happens to a volume when its claim is deleted: Delete it, or Retain it.",
    )
    volume_binding_mode: Literal["WaitForFirstConsumer", "Immediate"] = Field(
        "WaitForFirstConsumer",
        alias="volumeBindingMode",
        description="Make a volume when the first pod using it is scheduled (in that pod's zone), or at once.",
    )
    allow_volume_expansion: bool = Field(
        True, alias="allowVolumeExpansion", description="Let claims grow their volumes by raising their request."
    )

    @field_validator("name")
    @classmethod
    def _not_eks_own(cls, name: str) -> str:
        if name in EKS_STORAGE_CLASSES:
            raise ValueError(f"{name!r} is the StorageClass EKS makes (in-tree provisioner); choose another name")
        return name


class AwsEbsCsiDriverConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    storage_class: StorageClassConfig = Field(
        default_factory=StorageClassConfig, alias="storageClass", description="The gp3 StorageClass."
    )
    version: str = Field(versions.AWS_EBS_CSI_DRIVER.version, description="Chart version.")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")

    @field_validator("values")
    @classmethod
    def _keep_service_account(cls, values: dict[str, Any]) -> dict[str, Any]:
        return keep_service_account(values, NAMESPACE, SERVICE_ACCOUNT, under="controller")


def storage_class(config: StorageClassConfig) -> dict[str, Any]:
    """The StorageClass: gp3 volumes from the EBS CSI driver."""
    metadata: dict[str, Any] = {"name": config.name}
    if config.default:
        metadata["annotations"] = {DEFAULT_CLASS_ANNOTATION: "true"}
    parameters = {"type": "gp3"}
    if config.encrypted:
        parameters["encrypted"] = "true"
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": metadata,
        "provisioner": PROVISIONER,
        "parameters": parameters,
        "reclaimPolicy": config.reclaim_policy,
        "volumeBindingMode": config.volume_binding_mode,
        "allowVolumeExpansion": config.allow_volume_expansion,
    }


def bind(ctx: PackContext, config: AwsEbsCsiDriverConfig) -> None:
    release = chart_release(
        ctx.scope,
        name="aws-ebs-csi-driver",
        chart=versions.AWS_EBS_CSI_DRIVER,
        version=config.version,
        target_namespace=NAMESPACE,
        identity=config,
    )
    release.add_values(
        {
            "controller": {
                "region": "${cluster_region}",
                # Volumes carry kubernetes.io/cluster/<cluster>: owned, so each is traceable to its cluster.
                "k8sTagClusterId": "${cluster_name}",
                "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
            }
        }
    )
    release.add_values(config.values)
    ctx.add_pod_identity("controller", namespace=NAMESPACE, service_account=SERVICE_ACCOUNT, managed_policies=(POLICY,))
    ctx.add_health_check(release)
    if config.storage_class.enabled:
        RawObject(ctx.scope, "storage-class", storage_class(config.storage_class))


PACK = Pack(
    name="aws-ebs-csi-driver",
    version="1.0.0",
    description="Amazon EBS CSI driver, with a default encrypted gp3 StorageClass",
    config=AwsEbsCsiDriverConfig,
    layer="controllers",
    bind=bind,
    replaced_by_auto_mode="block storage (EBS volumes for PersistentVolumeClaims)",
    namespaces=(NAMESPACE,),
)
