"""The changes that would replace, reinstall or delete live infrastructure, known once for the replacement guard
(fluxplane.synth.guard) and for diff's risk report: the table of immutable fields by kind (the cloud kinds' from
fluxplane.kinds), what deleting a composite deletes in AWS, a HelmRelease's release target, the Kubernetes
version steps EKS refuses, the changes of who owns a workload cluster's AWS resources (an existing cluster's,
imported or managed), and the modes a change switches on or off in place (an EKS cluster's Auto Mode).
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from fluxplane.config.awsdata import upgrade_refusal
from fluxplane.config.hub import APPLIED_BY
from fluxplane.core.tree.objects import Key, key_of
from fluxplane.kinds import (
    ANY_MANAGED,
    COMPOSITE_GROUP,
    EXTERNAL_NAME,
    KINDS,
    MANAGED_GROUPS,
    PROVIDER_CONFIG_NAME,
    PROVIDER_CONFIG_REF,
    FieldPath,
    Switch,
    eks_cluster,
    switches,
)
from fluxplane.kinds.eks_composed import CREATED, MANAGED, OBSERVED, management_of

__all__ = [
    "ABSENT",
    "CLOUD_GROUPS",
    "DELETES",
    "EKS_CLUSTER",
    "EXTERNAL_NAME",
    "HELM_RELEASE",
    "IMMUTABLE",
    "MANAGEMENT_CHANGES",
    "PROVIDER_CONFIG_NAME",
    "PROVIDER_CONFIG_REF",
    "SPOKE_FLUX",
    "FieldPath",
    "allowed",
    "applier",
    "chart_name",
    "deletes",
    "document_key",
    "field",
    "immutable_change",
    "immutable_fields",
    "label",
    "left_on",
    "management",
    "management_change",
    "reinstall",
    "release_target",
    "release_text",
    "switched",
    "version_step",
]

#: What an absent field means, for the fields whose absence is a value: the provider config ``default`` (the hub's
#: account), so that naming another account on an existing cluster is a change.
ABSENT: dict[FieldPath, str] = {PROVIDER_CONFIG_REF: "default", PROVIDER_CONFIG_NAME: "default"}

_KUBERNETES: dict[tuple[str, str], tuple[FieldPath, ...]] = {
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
}
"""Fields the API server or a CRD's validation treat as immutable, by (API group, kind): Kubernetes API
validation (workload selectors, Service cluster IPs, PVC specs, StorageClass parameters, binding roleRefs) and
the CEL ``self == oldSelf`` rules of the upstream Crossplane and Karpenter CRDs."""

IMMUTABLE: dict[tuple[str, str], tuple[FieldPath, ...]] = {
    **_KUBERNETES,
    # AWS managed resources, whose CRDs declare no immutability rules: the fields AWS cannot change in place.
    **{(group, "*"): ANY_MANAGED for group in MANAGED_GROUPS},
    **{(entry.group, entry.kind): entry.replaces for entry in KINDS if entry.replaces},
}
"""Fields whose change the API server refuses or that replace the cloud resource, by (API group, kind); group
and kind may be glob patterns. The cloud kinds' fields are fluxplane.kinds'."""

#: API groups whose objects stand for cloud resources: an immutable change replaces the resource.
CLOUD_GROUPS = (COMPOSITE_GROUP, *MANAGED_GROUPS)
#: What deleting an object of these kinds deletes in AWS (fluxplane's composites that hold a cluster or data).
DELETES = {(entry.group, entry.kind): entry.deletes for entry in KINDS if entry.group == COMPOSITE_GROUP and entry.data}

#: A HelmRelease: a change of its release target reinstalls the release (release_target).
HELM_RELEASE = ("helm.toolkit.fluxcd.io", "HelmRelease")
#: A workload cluster: EKS moves its Kubernetes version one minor version up at a time and never down.
EKS_CLUSTER = (eks_cluster.GROUP, eks_cluster.KIND)
#: The HelmRelease of a workload cluster's chain that installs its Flux (fluxplane.charts.spokes): removing it, while
#: the cluster stays, uninstalls Flux there, its CRDs and with them every Flux object on the cluster.
SPOKE_FLUX = "flux"

#: The changes of who owns an EKSCluster's AWS resources that need the user's word, by (old, new) management
#: (fluxplane.kinds.eks_composed.management_of; None: the composite is new): the flag that allows one, and what it
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


def document_key(document: Mapping[str, Any]) -> Key | None:
    """The key of a document that has an apiVersion, a kind and metadata (fluxplane.core.tree.objects.key_of); None
    for one that has not, which no rule here can judge."""
    api, kind, metadata = document.get("apiVersion"), document.get("kind"), document.get("metadata")
    if not isinstance(api, str) or not isinstance(kind, str) or not isinstance(metadata, Mapping):
        return None
    return key_of(document)


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


#: The longest Helm release name; helm-controller shortens a longer name it makes (release_target).
RELEASE_NAME_LENGTH = 53


def release_target(document: Mapping[str, Any]) -> tuple[str, str, str]:
    """A HelmRelease's release as helm-controller names it: (storage namespace, release namespace, release name).

    A change of any of them uninstalls the release before the new one is installed (helm-controller's
    ``ReleaseTargetChanged``); unset fields take their defaults: the HelmRelease's namespace, and
    ``[targetNamespace-]name``, which helm-controller shortens when it is longer than Helm allows (its
    ``release.ShortenName``: the first 40 characters, ``-`` and 12 hex digits of the whole name's SHA-256). So
    naming the release, or its namespaces, as they already are changes nothing.
    """
    namespace = str(field(document, ("metadata", "namespace")) or "")
    target = field(document, ("spec", "targetNamespace"))
    name = str(
        field(document, ("spec", "releaseName"))
        or (f"{target}-{field(document, ('metadata', 'name'))}" if target else field(document, ("metadata", "name")))
    )
    if len(name) > RELEASE_NAME_LENGTH:
        digest = hashlib.sha256(name.encode()).hexdigest()[:12]
        name = f"{name[: RELEASE_NAME_LENGTH - len(digest) - 1]}-{digest}"
    return str(field(document, ("spec", "storageNamespace")) or namespace), str(target or namespace), name


def release_text(target: tuple[str, str, str]) -> str:
    """A release as ``helm ls -A`` finds it: its name, its namespace, and where Helm stores its records when that is
    another namespace."""
    storage, namespace, name = target
    return f"{name} in {namespace}" + (f" (stored in {storage})" if storage != namespace else "")


def chart_name(document: Mapping[str, Any]) -> str | None:
    """The name of the chart a HelmRelease installs, where the HelmRelease alone tells it: a chart of a
    HelmRepository (``spec.chart.spec.chart``, the chart's name in the repository's index or OCI path). None for a
    chart of a GitRepository or a Bucket (a path: the name is in the chart's Chart.yaml) or a ``chartRef``."""
    if field(document, ("spec", "chart", "spec", "sourceRef", "kind")) != "HelmRepository":
        return None
    name = field(document, ("spec", "chart", "spec", "chart"))
    return name if isinstance(name, str) and name else None


def reinstall(before: Mapping[str, Any], after: Mapping[str, Any]) -> str | None:
    """Why helm-controller uninstalls the release of HelmRelease ``before`` and installs ``after`` anew, rather than
    upgrading it: its release target changes (release_target), or the name of the chart it installs (chart_name;
    helm-controller's ``ReleaseTargetChanged`` compares the chart's name too). None when it upgrades in place."""
    old, new = release_target(before), release_target(after)
    if old != new:
        return f"the release moves from {release_text(old)} to {release_text(new)}"
    old_chart, new_chart = chart_name(before), chart_name(after)
    if old_chart is not None and new_chart is not None and old_chart != new_chart:
        return f"the chart of release {release_text(new)} changes from {old_chart} to {new_chart}"
    return None


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


def switched(
    group: str, kind: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
) -> list[tuple[Switch, bool]]:
    """The switches (fluxplane.kinds.Switch) of an object of ``group`` and ``kind`` that ``before`` to ``after``
    turns, each with its new state (True: on). Without the field, ``before`` has the mode off; ``after`` without it
    turns nothing (left_on)."""
    found = []
    for switch in switches(group, kind):
        new = field(after, switch.path)
        if new is not None and (field(before, switch.path) is True) != (new is True):
            found.append((switch, new is True))
    return found


def left_on(group: str, kind: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[Switch]:
    """The switches on in ``before`` whose field ``after`` drops: nothing then turns the mode off, and it stays on in
    the cloud while the rest of ``after`` reads as if it were off."""
    return [
        switch
        for switch in switches(group, kind)
        if field(before, switch.path) is True and field(after, switch.path) is None
    ]
