"""The changes that would replace, reinstall or delete live infrastructure, known once for the replacement guard
(fluxplane.synth.guard) and for diff's risk report: the table of immutable fields by kind, what deleting a
composite deletes in AWS, a HelmRelease's release target, the Kubernetes version steps EKS refuses, and the changes
of who owns a workload cluster's AWS resources (an existing cluster's, imported or managed).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from fluxplane.config.awsdata import upgrade_refusal
from fluxplane.config.hub import APPLIED_BY
from fluxplane.packs.eks_composed import CREATED, MANAGED, OBSERVED, management_of

FieldPath = tuple[str, ...]

#: The annotation Crossplane keeps a managed resource's cloud name in.
EXTERNAL_NAME: FieldPath = ("metadata", "annotations", "crossplane.io/external-name")
PROVIDER_CONFIG_REF: FieldPath = ("spec", "providerConfigRef", "name")
PROVIDER_CONFIG_NAME: FieldPath = ("spec", "providerConfigName")
#: What an absent field means, for the fields whose absence is a value: the provider config ``default`` (the hub's
#: account), so that naming another account on an existing cluster is a change.
ABSENT: dict[FieldPath, str] = {PROVIDER_CONFIG_REF: "default", PROVIDER_CONFIG_NAME: "default"}

IMMUTABLE: dict[tuple[str, str], tuple[FieldPath, ...]] = {
    # Kubernetes: the API server refuses these updates, so Flux's apply fails until the object is recreated.
    ("apps", "Deployment"): (("spec", "selector"),),
    ("apps", "ReplicaSet"): (("spec", "selector"),),
    ("apps", "DaemonSet"): (("spec", "selector"),),
    ("apps", "StatefulSet"): (
        ("spec", "selector"),
        ("spec", "serviceName"),
        ("spec", "volumeClaimTemplates"),
        ("spec", "podManagementPolicy"),
    ),
    ("batch", "Job"): (("spec", "selector"), ("spec", "template"), ("spec", "completionMode")),
    ("", "Service"): (("spec", "clusterIP"), ("spec", "clusterIPs")),
    ("", "PersistentVolumeClaim"): (
        ("spec", "storageClassName"),
        ("spec", "accessModes"),
        ("spec", "volumeName"),
        ("spec", "selector"),
    ),
    ("storage.k8s.io", "StorageClass"): (
        ("provisioner",),
        ("parameters",),
        ("reclaimPolicy",),
        ("volumeBindingMode",),
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): (("roleRef",),),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (("roleRef",),),
    # Crossplane: x-kubernetes-validations "self == oldSelf" in the upstream CRDs.
    ("apiextensions.crossplane.io", "CompositeResourceDefinition"): (
        ("spec", "group"),
        ("spec", "names"),
        ("spec", "scope"),
        ("spec", "claimNames"),
        ("spec", "enforcedCompositionRef"),
    ),
    ("apiextensions.crossplane.io", "Composition"): (("spec", "compositeTypeRef"),),
    # Karpenter: nodeClassRef's group and kind are immutable (CEL rules in karpenter.sh_nodepools).
    ("karpenter.sh", "NodePool"): (
        ("spec", "template", "spec", "nodeClassRef", "group"),
        ("spec", "template", "spec", "nodeClassRef", "kind"),
    ),
    # Upbound AWS managed resources. Their CRDs carry no immutability rules; these are the fields AWS
    # cannot update in place (Terraform's ForceNew): a change replaces the resource or fails.
    # The provider config names the AWS account: another one makes the resource anew there.
    ("*.aws.upbound.io", "*"): (("spec", "forProvider", "region"), EXTERNAL_NAME, PROVIDER_CONFIG_REF),
    ("*.aws.m.upbound.io", "*"): (("spec", "forProvider", "region"), EXTERNAL_NAME, PROVIDER_CONFIG_REF),
    ("ec2.aws*", "VPC"): (("spec", "forProvider", "cidrBlock"),),
    ("ec2.aws*", "Subnet"): (
        ("spec", "forProvider", "cidrBlock"),
        ("spec", "forProvider", "availabilityZone"),
        ("spec", "forProvider", "vpcId"),
    ),
    ("eks.aws*", "Cluster"): (("spec", "forProvider", "roleArn"),),
    ("eks.aws*", "NodeGroup"): (
        ("spec", "forProvider", "clusterName"),
        ("spec", "forProvider", "subnetIds"),
        ("spec", "forProvider", "instanceTypes"),
        ("spec", "forProvider", "capacityType"),
        ("spec", "forProvider", "diskSize"),
        ("spec", "forProvider", "amiType"),
        ("spec", "forProvider", "nodeRoleArn"),
    ),
    ("dynamodb.aws*", "Table"): (("spec", "forProvider", "hashKey"), ("spec", "forProvider", "rangeKey")),
    ("sqs.aws*", "Queue"): (("spec", "forProvider", "fifoQueue"),),
    ("rds.aws*", "Instance"): (
        ("spec", "forProvider", "engine"),
        ("spec", "forProvider", "dbName"),
        ("spec", "forProvider", "username"),
        ("spec", "forProvider", "storageEncrypted"),
    ),
    # fluxplane's composites: these fields feed the managed resources' immutable fields above.
    ("platform.fluxplane.io", "EKSCluster"): (
        ("spec", "region"),
        PROVIDER_CONFIG_NAME,
        ("spec", "network", "vpcCidr"),
        ("spec", "network", "zones"),
    ),
    ("platform.fluxplane.io", "AppTable"): (
        ("spec", "region"),
        PROVIDER_CONFIG_NAME,
        ("spec", "tableName"),
        ("spec", "hashKey"),
        ("spec", "rangeKey"),
    ),
    ("platform.fluxplane.io", "AppQueue"): (
        ("spec", "region"),
        PROVIDER_CONFIG_NAME,
        ("spec", "queueName"),
        ("spec", "fifo"),
    ),
    ("platform.fluxplane.io", "AppBucket"): (("spec", "region"), PROVIDER_CONFIG_NAME, ("spec", "bucketName")),
    ("platform.fluxplane.io", "AppDatabase"): (
        ("spec", "region"),
        PROVIDER_CONFIG_NAME,
        ("spec", "identifier"),
        ("spec", "clusterName"),
        ("spec", "engine"),
        ("spec", "databaseName"),
        ("spec", "username"),
    ),
    ("platform.fluxplane.io", "AppIdentity"): (("spec", "region"), PROVIDER_CONFIG_NAME, ("spec", "clusterName")),
    ("platform.fluxplane.io", "AddonIdentity"): (("spec", "region"), PROVIDER_CONFIG_NAME, ("spec", "clusterName")),
}
"""Fields the API server, a CRD's validation or the cloud API treat as immutable, by (API group, kind).

Group and kind may be glob patterns. Sources: Kubernetes API validation (workload selectors, Service
cluster IPs, PVC specs, StorageClass parameters, binding roleRefs); the CEL ``self == oldSelf`` rules
of the upstream Crossplane and Karpenter CRDs; for the Upbound AWS managed resources, whose
CRDs declare none, the fields AWS cannot change in place (region, external name,
VPC and subnet CIDR blocks, a subnet's availability zone, a node group's subnets and instance types);
and fluxplane's own composites, whose fields become those managed-resource fields.
"""

#: API groups whose objects stand for cloud resources: an immutable change replaces the resource.
CLOUD_GROUPS = ("platform.fluxplane.io", "*.aws.upbound.io", "*.aws.m.upbound.io")
#: What deleting an object of these kinds deletes in AWS (fluxplane's composites that hold a cluster or data).
DELETES = {
    ("platform.fluxplane.io", "EKSCluster"): "the EKS cluster, its node groups and its VPC",
    ("platform.fluxplane.io", "AppTable"): "the DynamoDB table and its data",
    ("platform.fluxplane.io", "AppQueue"): "the SQS queue and its messages",
    ("platform.fluxplane.io", "AppBucket"): "the S3 bucket and its objects",
    (
        "platform.fluxplane.io",
        "AppDatabase",
    ): "the RDS database, once its deletionProtection is off (RDS keeps a final snapshot)",
}

#: A HelmRelease: a change of its release target reinstalls the release (release_target).
HELM_RELEASE = ("helm.toolkit.fluxcd.io", "HelmRelease")
#: A workload cluster: EKS moves its Kubernetes version one minor version up at a time and never down.
EKS_CLUSTER = ("platform.fluxplane.io", "EKSCluster")
#: The HelmRelease of a workload cluster's chain that installs its Flux (fluxplane.charts.spokes): removing it, while
#: the cluster stays, uninstalls Flux there, its CRDs and with them every Flux object on the cluster.
SPOKE_FLUX = "flux"

#: The changes of who owns an EKSCluster's AWS resources that need the user's word, by (old, new) management
#: (fluxplane.packs.eks_composed.management_of; None: the composite is new): the flag that allows one, and what it
#: does. Stopping the management of imported resources (managed to observed) writes nothing, and needs none.
MANAGEMENT_CHANGES: dict[tuple[str | None, str], tuple[str, str]] = {
    (None, MANAGED): (
        "manage",
        "its imported VPC, subnets, EKS cluster and node groups are managed in full from the start: Crossplane keeps "
        "their Kubernetes version and node group sizes to the definition, and deletes them with the cluster",
    ),
    (OBSERVED, MANAGED): (
        "manage",
        "Crossplane starts to manage its imported VPC, subnets, EKS cluster and node groups: it keeps their "
        "Kubernetes version and node group sizes to the definition, and deletes them with the cluster",
    ),
    (OBSERVED, CREATED): (
        "manage",
        "its Composition changes from one that imports the cluster to one that makes it: Crossplane takes over the "
        "EKS cluster and makes a network and roles for it anew",
    ),
    (MANAGED, CREATED): (
        "replace",
        "its Composition changes from one that imports the cluster to one that makes it: Crossplane makes a network "
        "and roles for it anew, and the imported ones are left unmanaged",
    ),
    (CREATED, OBSERVED): (
        "replace",
        "its Composition changes from one that made the cluster to one that imports it: Crossplane deletes what the "
        "new one does not compose (gateways, route tables, IAM roles, ...)",
    ),
    (CREATED, MANAGED): (
        "replace",
        "its Composition changes from one that made the cluster to one that imports it: Crossplane deletes what the "
        "new one does not compose (gateways, route tables, IAM roles, ...)",
    ),
}

Key = tuple[str, str, str, str]
"""An object's identity: (API group, kind, namespace, name)."""


def immutable_fields(group: str, kind: str) -> list[FieldPath]:
    """The immutable fields of objects of ``group`` and ``kind`` (the table's patterns matched)."""
    return [
        path
        for (group_pattern, kind_pattern), paths in IMMUTABLE.items()
        if fnmatch.fnmatchcase(group, group_pattern) and fnmatch.fnmatchcase(kind, kind_pattern)
        for path in paths
    ]


def field(document: Mapping[str, Any] | None, path: FieldPath) -> Any:
    """The value at ``path`` of ``document``, None when any part is missing."""
    node: Any = document
    for part in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def applier(document: Mapping[str, Any]) -> str | None:
    """The Kustomization (``namespace/name``) the document says applies it."""
    value = field(document, ("metadata", "annotations", APPLIED_BY))
    return value if isinstance(value, str) else None


def key_of(document: Mapping[str, Any]) -> Key | None:
    api, kind = document.get("apiVersion"), document.get("kind")
    metadata = document.get("metadata")
    if not isinstance(api, str) or not isinstance(kind, str) or not isinstance(metadata, Mapping):
        return None
    group = api.rsplit("/", 1)[0] if "/" in api else ""
    return (group, kind, str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))


def label(key: Key) -> str:
    """``Kind/namespace/name``, or ``Kind/name`` for a cluster-scoped object: what the patterns match."""
    _, kind, namespace, name = key
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def allowed(key: Key, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(label(key), pattern) for pattern in patterns)


def immutable_change(before: Mapping[str, Any], after: Mapping[str, Any], path: FieldPath) -> tuple[Any, Any] | None:
    """The old and new value of the immutable field ``path`` when it changes; None when it keeps its value or had
    none (a field set for the first time replaces nothing, save those whose absence is a value, ABSENT)."""
    old, new = field(before, path), field(after, path)
    if path in ABSENT:
        old = ABSENT[path] if old is None else old
        new = ABSENT[path] if new is None else new
    if old is None or old == new:
        return None
    return old, new


def release_target(document: Mapping[str, Any]) -> tuple[str, str, str]:
    """A HelmRelease's release as helm-controller names it: (storage namespace, release namespace, release name).

    A change of any of them uninstalls the release before the new one is installed (helm-controller's
    ``ReleaseTargetChanged``); unset fields take their defaults: the HelmRelease's namespace, and
    ``[targetNamespace-]name``.
    """
    namespace = str(field(document, ("metadata", "namespace")) or "")
    target = field(document, ("spec", "targetNamespace"))
    name = field(document, ("spec", "releaseName")) or (
        f"{target}-{field(document, ('metadata', 'name'))}" if target else field(document, ("metadata", "name"))
    )
    return str(field(document, ("spec", "storageNamespace")) or namespace), str(target or namespace), str(name)


def management(document: Mapping[str, Any] | None) -> str | None:
    """Who owns the AWS resources of an EKSCluster ``document``, by its Composition (CREATED, OBSERVED or MANAGED);
    None for no document."""
    if document is None:
        return None
    name = field(document, ("spec", "crossplane", "compositionRef", "name"))
    return management_of(name if isinstance(name, str) else None)


def management_change(was: Mapping[str, Any] | None, now: Mapping[str, Any]) -> tuple[str, str] | None:
    """The flag and the effect of moving the EKSCluster ``was`` (None: a new one) to ``now``, when the move changes
    who owns its AWS resources in a way that needs the user's word (MANAGEMENT_CHANGES)."""
    old, new = management(was), management(now)
    if old == new or new is None:
        return None
    return MANAGEMENT_CHANGES.get((old, new))


def deletes(key: Key, document: Mapping[str, Any] | None) -> str | None:
    """What removing the object of ``key`` (``document`` in the old tree) deletes, or None: a composite's AWS resources
    (DELETES), except an observed cluster's, which Crossplane only reads; a workload cluster's Flux (SPOKE_FLUX)."""
    if key[:2] == EKS_CLUSTER and management(document) == OBSERVED:
        return None
    if key[:2] == HELM_RELEASE and key[3] == SPOKE_FLUX and field(document, ("spec", "kubeConfig")) is not None:
        return "helm-controller uninstalls Flux from the cluster, with its CRDs and every Flux object there"
    deleted = DELETES.get(key[:2])
    return None if deleted is None else f"Crossplane deletes {deleted} in AWS"


def version_step(old: Any, new: Any) -> str | None:
    """Why EKS refuses moving a cluster from Kubernetes ``old`` to ``new``, or None when it does not.

    The old tree is the truth here: the recorded versions in environments/allocations.yaml are only a file of the
    repository, and a version EKS refuses leaves the cluster where it is with its composite failing."""
    if not (isinstance(old, str) and isinstance(new, str)):
        return None
    try:
        how = upgrade_refusal(old, new)
    except (IndexError, ValueError):
        return None
    return None if how is None else f"spec.kubernetesVersion changes from {old} to {new}, which {how}"
