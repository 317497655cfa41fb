"""Where things go in dist/ and what Flux calls those places.

dist/<repository>/ is the content of one Git repository of the fleet. Flux paths are relative to the
root of that Git repository, where the folder lives at ``repository.path`` (default
``dist/<repository>``: the fleet repository itself holds dist/).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from fluxplane.config.manifests import MANIFEST_LAYERS, PLAIN_MANIFESTS
from fluxplane.config.models import Repositories, Repository

#: The dist/ folder of the platform repository.
PLATFORM = "platform"
#: The dist/ folder of the workloads repository (apps onboarded as tenants).
WORKLOADS = "workloads"
#: Layers of add-ons, in apply order, and the dist/ folder each one lives in.
LAYERS = ("controllers", "configs", "apps")
LAYER_DIRS = {
    "controllers": "infrastructure/controllers",
    "configs": "infrastructure/configs",
    "apps": "apps",
}

#: The Flux objects of a cluster's flux-system that are fluxplane's own, not a pack's (a pack's Kustomization,
#: HelmRelease and chart source take the pack's name): the GitRepository and Kustomization every cluster syncs
#: its entry point with (``flux bootstrap``'s names), the GitRepository of the workloads repository, the
#: Kustomizations of a cluster's tenants and of its apps' resources, the hub's Kustomizations of its own add-on
#: roles and of the workload clusters' chains.
SYNC_SOURCE = "flux-system"
WORKLOADS_SOURCE = "workloads"
TENANTS = "tenants"
APP_RESOURCES = "app-resources"
ADDON_IDENTITIES = "addon-identities"
SPOKE_BOOTSTRAP = "spoke-bootstrap"
#: The Kustomization and folder (``clusters/<cluster>/auto-mode/``) of what an EKS Auto Mode cluster applies itself:
#: its NodeClasses, NodePools, StorageClass and IngressClass.
AUTO_MODE = "auto-mode"


def plain_manifests(layer: str) -> str:
    """The Kustomization that applies a cluster's plain manifests of ``layer`` (environments/manifests/)."""
    return f"{PLAIN_MANIFESTS}-{layer}"


#: Those names and the Kustomizations of a cluster's plain manifests, each with what it names: every name
#: fluxplane gives a Flux object in flux-system but the packs' and the Flux sources the hub's bootstrap chain
#: names after its charts (fluxplane.packs.versions.BOOTSTRAP). A pack of one of these names would make an
#: object of the same name, and the two Kustomizations that apply them would prune each other's.
OWN_FLUX_OBJECTS: dict[str, str] = {
    SYNC_SOURCE: "the GitRepository and Kustomization every cluster syncs its entry point with",
    WORKLOADS_SOURCE: "the GitRepository of the workloads repository",
    TENANTS: "the Kustomization of a cluster's tenants",
    APP_RESOURCES: "the Kustomization of a cluster's apps' resources",
    ADDON_IDENTITIES: "the hub's Kustomization of its add-ons' IAM roles",
    SPOKE_BOOTSTRAP: "the hub's Kustomization of the workload clusters' chains",
    AUTO_MODE: "the Kustomization of an EKS Auto Mode cluster's node pools, StorageClass and IngressClass",
    **{
        plain_manifests(layer): f"the Kustomization of a cluster's plain manifests of layer {layer}"
        for layer in MANIFEST_LAYERS
    },
}


@dataclass(frozen=True)
class RepositoryLayout:
    """Paths of one repository: its dist/ folder and the prefix Flux sees."""

    key: str
    repository: Repository

    @property
    def prefix(self) -> str:
        return self.repository.path if self.repository.path is not None else f"dist/{self.key}"

    def flux_path(self, directory: str) -> str:
        """The Flux ``spec.path`` of ``directory`` (relative to dist/<key>/)."""
        joined = posixpath.normpath(posixpath.join(self.prefix, directory))
        return "./" if joined == "." else f"./{joined}"


def workloads_layout(repositories: Repositories) -> RepositoryLayout:
    """The workloads repository; without one of its own, a folder beside dist/platform in the platform's."""
    if repositories.workloads is not None:
        return RepositoryLayout(WORKLOADS, repositories.workloads)
    platform = RepositoryLayout(PLATFORM, repositories.platform)
    path = posixpath.join(posixpath.dirname(platform.prefix), WORKLOADS)
    return RepositoryLayout(WORKLOADS, repositories.platform.model_copy(update={"path": path}))


def cluster_dir(cluster: str) -> str:
    return f"clusters/{cluster}"


#: The file of a cluster's entry point that holds its variables (its ``cluster-vars`` ConfigMap).
CLUSTER_VARS_FILE = "cluster-vars.yaml"
#: The ConfigMap of a cluster's variables, in flux-system, which every Kustomization of the cluster substitutes
#: (``postBuild.substituteFrom``).
CLUSTER_VARS = "cluster-vars"
#: The cluster variables, ``${cluster_name}`` and the others, that a pack's values and the definition may use.
CLUSTER_VARIABLE_NAMES = ("cluster_name", "cluster_region", "environment", "kubernetes_version")
#: A reference to one of them, as a regular expression.
CLUSTER_VARIABLE = r"\$\{(?:" + "|".join(CLUSTER_VARIABLE_NAMES) + r")\}"


def cluster_variables(cluster: str, region: str, environment: str, kubernetes_version: str) -> dict[str, str]:
    """The values of a cluster's variables (CLUSTER_VARIABLE_NAMES), as its ``cluster-vars`` ConfigMap holds them."""
    return dict(zip(CLUSTER_VARIABLE_NAMES, (cluster, region, environment, kubernetes_version), strict=True))


def cluster_vars_file(cluster: str) -> str:
    """The file of ``cluster``'s variables, relative to the platform repository's folder."""
    return f"{cluster_dir(cluster)}/{CLUSTER_VARS_FILE}"


def catalogue_dir(layer: str, pack: str) -> str:
    return f"{LAYER_DIRS[layer]}/{pack}"


def relative(from_dir: str, to_dir: str) -> str:
    """``to_dir`` as seen from ``from_dir`` (both relative to the same repository folder)."""
    return posixpath.relpath(to_dir, from_dir)


#: The folder of a cluster's entry point that holds its overlays of the catalogue, one folder per pack.
CLUSTER_OVERLAYS = "overlays"


def cluster_overlay_dir(cluster: str, pack: str) -> str:
    """The folder of ``cluster``'s overlay of ``pack``'s catalogue folder, relative to the platform repository's."""
    return f"{cluster_dir(cluster)}/{CLUSTER_OVERLAYS}/{pack}"


def is_cluster_overlay(folder: str) -> bool:
    """Whether ``folder`` of dist/ is (or lies in) a cluster's overlay of a catalogue folder."""
    return cluster_of(f"{folder}/kustomization.yaml") is not None and f"/{CLUSTER_OVERLAYS}/" in f"/{folder}/"


def cluster_of(file: str) -> str | None:
    """The cluster a file of dist/ is for when its path says so (``.../clusters/<cluster>/...``: the cluster's
    entry point, its overlays, its tenants); None for what the hub applies or what clusters share (the catalogue)."""
    parts = file.split("/")
    for index, part in enumerate(parts[:-2]):
        if part == "clusters":
            return parts[index + 1]
    return None
