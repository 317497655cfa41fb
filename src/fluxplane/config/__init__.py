"""The fleet definition: typed models and the loader for ``environments/``.

This layer never imports cdk8s, so a definition is validated in milliseconds, before the
JavaScript runtime starts.
"""

from fluxplane.config.loader import LoadedFleet, load_fleet
from fluxplane.config.merge import Origins, deep_merge, format_loc
from fluxplane.config.models import (
    Environment,
    Fleet,
    FluxSettings,
    ManagementCluster,
    NodeGroup,
    Repositories,
    Repository,
    WorkloadCluster,
)

__all__ = [
    "Environment",
    "Fleet",
    "FluxSettings",
    "LoadedFleet",
    "ManagementCluster",
    "NodeGroup",
    "Origins",
    "Repositories",
    "Repository",
    "WorkloadCluster",
    "deep_merge",
    "format_loc",
    "load_fleet",
]
