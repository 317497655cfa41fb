"""FleetApp: the construct tree of a fleet (fluxplane.synth.tree) as a cdk8s App, for use from Python.

Each of its charts is a cdk8s Chart too (fluxplane.charts.base), so constructs built with cdk8s itself (an
``ApiObject``, a cdk8s-plus ``Deployment``) go under a cluster chart, and cdk8s synthesizes them into the
cluster's ``custom.yaml``. ``fluxplane synth`` builds the same tree without cdk8s, and so without the JavaScript
runtime; this module imports cdk8s, which starts it.

``FleetApp.synth()`` finishes the tree, runs the whole-tree checks, renders, and writes dist/ through the one
pipeline's publishing steps (fluxplane.synth.publish), guarded as ``fluxplane synth`` writes it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cdk8s

from fluxplane.charts.addon_identities import AddonRole
from fluxplane.charts.base import FleetChart
from fluxplane.constructs.base import Node, node_of
from fluxplane.synth.collector import paused_gc
from fluxplane.synth.plan import FleetPlan
from fluxplane.synth.publish import Publisher
from fluxplane.synth.render import render_app
from fluxplane.synth.tree import FleetTree
from fluxplane.system.files import output_dir


class FleetApp(FleetTree, cdk8s.App):
    """The construct tree of a fleet as a cdk8s App: one ClusterChart per cluster, one CatalogueChart per add-on,
    each a cdk8s Chart (see FleetTree for ``reused``)."""

    def __init__(
        self,
        plan: FleetPlan,
        *,
        outdir: str | os.PathLike[str] | None = None,
        reused: Mapping[str, Sequence[AddonRole]] | None = None,
    ) -> None:
        # cdk8s's App writes relative to where it runs, the project's root
        cdk8s.App.__init__(self, outdir=str(output_dir(Path(), outdir)))
        FleetTree.__init__(self, plan, reused=reused)

    def _root_node(self) -> Node:
        return node_of(self)

    def cdk8s_children(self) -> dict[Any, list[Any]]:
        """The constructs built with cdk8s itself below each chart, found in one bridge call for the whole app.

        Constructs that are neither fluxplane charts nor below one are listed under the key None. A cluster chart
        with some gets a custom.yaml in its entry point (finish); render_app has cdk8s synthesize them.
        """
        found: dict[Any, list[Any]] = {}
        charts: dict[str, Any] = {}
        for construct in self.node.find_all():
            if construct is self:
                continue
            if isinstance(construct, FleetChart):
                charts[node_of(construct).path] = construct
                continue
            path = construct.node.path
            owner = charts.get(path.split("/", 1)[0])
            found.setdefault(owner, []).append(construct)
        return found

    def synth(self) -> None:
        """Render the fleet and write it into ``outdir`` atomically (cdk8s's App.synth contract), through the one
        pipeline's publishing steps (fluxplane.synth.publish): the files ``flux bootstrap`` keeps stay, a change
        that replaces, deletes or moves live infrastructure is refused, and the allocations are recorded, as
        ``fluxplane synth`` does. The project is the plan's (load_plan), else the folder the app runs in, as
        cdk8s's own."""
        publisher = Publisher(self.plan.root or Path(), Path(self.outdir))
        with paused_gc():
            files = render_app(self)
        publisher.write(publisher.complete(self.plan, files))
