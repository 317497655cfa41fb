"""What each Flux Kustomization of a cluster waits for (``dependsOn``): what its folder needs, not a whole layer.

fluxplane renders every object a cluster's Kustomizations apply, so it knows the kinds each folder applies.
A pack's Kustomization waits for

* the packs it requires (``<pack>-configs``: its own pack, fluxplane.packs.api.split_pack);
* the Kustomizations that install the CRDs of the kinds it applies: the packs that declare the kinds' API
  groups (Pack.crds, Pack.crd_groups), and the folders that apply the kinds' CustomResourceDefinition or
  Crossplane CompositeResourceDefinition;
* every Kustomization of the layers below, as all did before, when it applies a kind that neither Kubernetes
  nor Flux serves and no Kustomization of the cluster is known to install: a pack that does not declare its
  CRDs may install it.

So a failing add-on holds up only what requires it or applies its kinds: not the hub's chain that builds the
workload clusters, nor a cluster's node pools. Two kinds of folder also wait for the layer below as a whole
(the nearest layer below that the cluster has): the apps layer's, because workloads rely on the node pools,
admission policies, gateways and issuers of the configs layer without naming them; and plain manifests and
the project's cdk8s charts (``manifests-<layer>``), whose layer is how their author says what they come after.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from fluxplane.core.layout import LAYERS
from fluxplane.core.tree.objects import FLUX_HELM, FLUX_KUSTOMIZE, FLUX_SOURCE, group_of
from fluxplane.packs.api import Pack, covers

#: The API groups every cluster serves before its Kustomizations run: Kubernetes' own (the core group is
#: ""), and those of the Flux controllers that apply them.
BUILT_IN_GROUPS = frozenset(
    {
        "",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "apps",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
        FLUX_SOURCE,
        FLUX_KUSTOMIZE,
        FLUX_HELM,
        "notification.toolkit.fluxcd.io",
    }
)
#: The kinds whose objects define other kinds: (group, kind) of the definition.
DEFINITIONS = frozenset(
    {
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiextensions.crossplane.io", "CompositeResourceDefinition"),
    }
)

GroupKind = tuple[str, str]


def applied_kinds(documents: Iterable[Mapping[str, Any]]) -> set[GroupKind]:
    """(API group, kind) of every object in ``documents``."""
    return {(group_of(doc.get("apiVersion")), str(doc.get("kind") or "")) for doc in documents}


def defined_kinds(documents: Iterable[Mapping[str, Any]]) -> set[GroupKind]:
    """(API group, kind) of the kinds the CRDs and Crossplane XRDs in ``documents`` define."""
    found: set[GroupKind] = set()
    for doc in documents:
        if (group_of(doc.get("apiVersion")), doc.get("kind")) in DEFINITIONS:
            spec = doc.get("spec") or {}
            found.add((str(spec.get("group") or ""), str((spec.get("names") or {}).get("kind") or "")))
    return found


@dataclass(frozen=True)
class Folder:
    """One Flux Kustomization of a cluster, as its order sees it: what it applies, requires and installs."""

    name: str
    #: One of fluxplane.core.layout.LAYERS.
    layer: str
    documents: Sequence[Mapping[str, Any]]
    requires: tuple[str, ...] = ()
    #: The API groups (``*.`` patterns too) of the CRDs it installs, besides those its documents define.
    crds: tuple[str, ...] = ()
    #: Waits for the layer below as a whole, whatever it applies (plain manifests, the project's cdk8s charts).
    whole_layer: bool = False

    @classmethod
    def of_pack(cls, pack: Pack, documents: Sequence[Mapping[str, Any]]) -> Folder:
        """The Kustomization of ``pack`` (or of a part of one, split_pack) that applies ``documents``."""
        return cls(pack.name, pack.layer, documents, pack.requires, pack.installed_groups)

    # A catalogue folder is applied by many clusters: what its documents apply and define is read once.
    @cached_property
    def applied(self) -> set[GroupKind]:
        """applied_kinds of the documents."""
        return applied_kinds(self.documents)

    @cached_property
    def defined(self) -> set[GroupKind]:
        """defined_kinds of the documents."""
        return defined_kinds(self.documents)


def layer_below(folders: Sequence[Folder], layer: str) -> list[str]:
    """The Kustomizations of the nearest layer below ``layer`` that the cluster has, in order."""
    for lower in reversed(LAYERS[: LAYERS.index(layer)]):
        found = [folder.name for folder in folders if folder.layer == lower]
        if found:
            return found
    return []


def dependencies(folders: Sequence[Folder]) -> dict[str, list[str]]:
    """What each of a cluster's Kustomizations (``folders``, in the cluster's order) waits for, by name: what it
    requires first, then the others in the cluster's order."""
    defined = {folder.name: folder.defined for folder in folders}
    rank = {folder.name: index for index, folder in enumerate(folders)}
    found: dict[str, list[str]] = {}
    for folder in folders:
        waits: dict[str, None] = dict.fromkeys(folder.requires)
        unknown = False
        for group, kind in sorted(folder.applied):
            if group in BUILT_IN_GROUPS:
                continue
            installers = [
                other.name
                for other in folders
                if other is not folder
                and ((group, kind) in defined[other.name] or any(covers(pattern, group) for pattern in other.crds))
            ]
            waits.update(dict.fromkeys(installers))
            unknown = unknown or not installers
        lower = LAYERS[: LAYERS.index(folder.layer)]
        if unknown:
            waits.update(dict.fromkeys(other.name for other in folders if other.layer in lower))
        if folder.whole_layer or folder.layer == "apps":
            waits.update(dict.fromkeys(layer_below(folders, folder.layer)))
        rest = sorted((name for name in waits if name not in folder.requires), key=lambda name: rank[name])
        found[folder.name] = [*folder.requires, *rest]
    return found
