"""Where things go in dist/ and what Flux calls those places.

dist/<repository>/ is the content of one Git repository of the fleet. Flux paths are relative to the
root of that Git repository, where the folder lives at ``repository.path`` (default
``dist/<repository>``: the fleet repository itself holds dist/).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

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


def cluster_vars_file(cluster: str) -> str:
    """The file of ``cluster``'s variables, relative to the platform repository's folder."""
    return f"{cluster_dir(cluster)}/{CLUSTER_VARS_FILE}"


def catalogue_dir(layer: str, pack: str) -> str:
    return f"{LAYER_DIRS[layer]}/{pack}"


def relative(from_dir: str, to_dir: str) -> str:
    """``to_dir`` as seen from ``from_dir`` (both relative to the same repository folder)."""
    return posixpath.relpath(to_dir, from_dir)
