"""fluxplane: typed fleet definitions and cdk8s constructs for Flux and Crossplane fleets on EKS."""

from fluxplane.errors import ConfigError, ConstructError, FluxplaneError, OutputError, PackError, TreeError
from fluxplane.node import use_project_node
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import check, load_plan, render_plan, synthesize

# None of the above imports cdk8s. Before anything does, pick the project's pinned Node for its
# JavaScript side (node_modules/.bin/node, when present).
use_project_node()

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "ConstructError",
    "FluxplaneError",
    "OutputError",
    "Pack",
    "PackConfig",
    "PackContext",
    "PackError",
    "PackRegistry",
    "TreeError",
    "__version__",
    "check",
    "load_plan",
    "render_plan",
    "synthesize",
]
