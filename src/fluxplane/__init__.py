"""fluxplane: typed fleet definitions and cdk8s constructs for Flux and Crossplane fleets on EKS."""

from fluxplane.errors import ConfigError, ConstructError, FluxplaneError, OutputError, PackError, TreeError
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import check, load_plan, render_plan, synthesize

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
