"""What an EKS Auto Mode workload cluster applies itself: its NodeClasses and NodePools, a StorageClass and an
IngressClass of Auto Mode's.

The EKS composition switches Auto Mode on (fluxplane.kinds.eks_composed); the cluster's own Flux then applies, in its
Kustomization ``auto-mode`` (``clusters/<cluster>/auto-mode/``):

* the NodeClasses of the definition (``eks.amazonaws.com/v1``), each launching nodes as the node role the
  composition makes (``<cluster>-node``, which EKS admits with the built-in node pools), in the private subnets it
  tags ``karpenter.sh/discovery: <cluster>``, with the cluster security group EKS tags ``aws:eks:cluster-name``,
  the security group and subnets Karpenter's EC2NodeClass picks (fluxplane.packs.karpenter);
* the NodePools of the definition (``karpenter.sh/v1``), each naming its NodeClass by group ``eks.amazonaws.com``,
  with Auto Mode's well-known labels (``eks.amazonaws.com/instance-category``, ...) in its requirements;
* a default StorageClass ``gp3`` on Auto Mode's provisioner (``ebs.csi.eks.amazonaws.com``), encrypted and bound
  when the first pod is scheduled, as the aws-ebs-csi-driver pack's is: EKS makes none;
* an IngressClass ``alb`` served by Auto Mode's load balancing (controller ``eks.amazonaws.com/alb``): the name the
  aws-load-balancer-controller pack's IngressClass has, so an app's Ingress reads alike on either kind of cluster.
  Services of type LoadBalancer need nothing: Auto Mode serves them.

Every kind here is served by EKS once Auto Mode is on, so the Kustomization waits for nothing.
"""

from __future__ import annotations

from typing import Any

from fluxplane.config.models import AutoMode, AutoModeNodeClass, AutoModeNodePool, WorkloadCluster
from fluxplane.kinds.eks_composed import KARPENTER_DISCOVERY, NODE_ROLE_NAME
from fluxplane.packs.aws_ebs_csi_driver import DEFAULT_CLASS_ANNOTATION
from fluxplane.packs.karpenter import CLUSTER_SECURITY_GROUP_TAG, NODE_POOL_API

#: The API of Auto Mode's NodeClass.
EKS_API = "eks.amazonaws.com/v1"
EKS_GROUP = EKS_API.split("/")[0]
#: Auto Mode's block storage: the CSI driver EKS runs for it.
PROVISIONER = "ebs.csi.eks.amazonaws.com"
#: Auto Mode's load balancing: the IngressClass controller of its ALBs.
INGRESS_CONTROLLER = "eks.amazonaws.com/alb"
#: The names of the StorageClass and the IngressClass, the aws-ebs-csi-driver and aws-load-balancer-controller
#: packs' defaults.
STORAGE_CLASS = "gp3"
INGRESS_CLASS = "alb"


def node_class(cluster: str, spec: AutoModeNodeClass) -> dict[str, Any]:
    """A NodeClass of the definition: the cluster's node role, private subnets and security group, and its own
    settings."""
    body: dict[str, Any] = {
        "role": NODE_ROLE_NAME % cluster,
        "subnetSelectorTerms": [{"tags": {KARPENTER_DISCOVERY: cluster}}],
        "securityGroupSelectorTerms": [{"tags": {CLUSTER_SECURITY_GROUP_TAG: cluster}}],
    }
    if spec.ephemeral_storage is not None:
        body["ephemeralStorage"] = spec.ephemeral_storage.model_dump(by_alias=True, exclude_none=True)
    for key, value in (
        ("networkPolicy", spec.network_policy),
        ("networkPolicyEventLogs", spec.network_policy_event_logs),
        ("snatPolicy", spec.snat_policy),
    ):
        if value is not None:
            body[key] = value
    return {"apiVersion": EKS_API, "kind": "NodeClass", "metadata": {"name": spec.name}, "spec": body}


def _requirement(key: str, operator: str, values: list[str]) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": values}


def node_pool(spec: AutoModeNodePool) -> dict[str, Any]:
    """A NodePool of the definition, on Auto Mode's NodeClass kind and labels."""
    requirements = [
        _requirement("kubernetes.io/arch", "In", list(spec.architectures)),
        _requirement("karpenter.sh/capacity-type", "In", list(spec.capacity_types)),
        _requirement("eks.amazonaws.com/instance-category", "In", list(spec.instance_categories)),
    ]
    if spec.instance_families is not None:
        requirements.append(_requirement("eks.amazonaws.com/instance-family", "In", list(spec.instance_families)))
    template: dict[str, Any] = {}
    if spec.labels:
        template["metadata"] = {"labels": dict(spec.labels)}
    template["spec"] = {
        "nodeClassRef": {"group": EKS_GROUP, "kind": "NodeClass", "name": spec.node_class},
        "requirements": requirements,
        **({"taints": [taint.model_dump() for taint in spec.taints]} if spec.taints else {}),
        "expireAfter": spec.expire_after,
    }
    return {
        "apiVersion": NODE_POOL_API,
        "kind": "NodePool",
        "metadata": {"name": spec.name},
        "spec": {
            "template": template,
            "limits": {"cpu": spec.cpu_limit},
            "disruption": {
                "consolidationPolicy": spec.consolidation_policy,
                "consolidateAfter": spec.consolidate_after,
            },
        },
    }


def storage_class() -> dict[str, Any]:
    """The cluster's default StorageClass: encrypted gp3 volumes of Auto Mode's block storage."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": STORAGE_CLASS, "annotations": {DEFAULT_CLASS_ANNOTATION: "true"}},
        "provisioner": PROVISIONER,
        "parameters": {"type": "gp3", "encrypted": "true"},
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
    }


def ingress_class() -> dict[str, Any]:
    """The IngressClass of Auto Mode's ALBs. Without IngressClassParams, an Ingress's own ``alb.ingress.kubernetes.io``
    annotations say what its ALB is (internal unless its ``scheme`` says internet-facing), as with the controller's
    class."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": {"name": INGRESS_CLASS},
        "spec": {"controller": INGRESS_CONTROLLER},
    }


def cluster_files(cluster: WorkloadCluster) -> dict[str, list[dict[str, Any]]]:
    """What an Auto Mode cluster applies itself, by file name (module docstring); nothing for another cluster."""
    auto_mode: AutoMode | None = cluster.auto_mode
    if auto_mode is None or not cluster.auto:
        return {}
    files: dict[str, list[dict[str, Any]]] = {}
    if auto_mode.node_classes:
        files["node-classes.yaml"] = [node_class(cluster.name, spec) for spec in auto_mode.node_classes]
    if auto_mode.custom_node_pools:
        files["node-pools.yaml"] = [node_pool(spec) for spec in auto_mode.custom_node_pools]
    files["storage-class.yaml"] = [storage_class()]
    files["ingress-class.yaml"] = [ingress_class()]
    return files
