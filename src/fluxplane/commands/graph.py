"""``fluxplane graph --cluster NAME``: a cluster's Flux dependency graph, of the definition as synth would write it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fluxplane.commands import Subcommands, prepare_node
from fluxplane.system.progress import Progress

if TYPE_CHECKING:
    from fluxplane.synth.graph import Graph

NAMES: tuple[str, ...] = ("graph",)
LOCKS_PROJECT = False
#: The formats ``--format`` offers: Mermaid (default), Graphviz's dot, and dot's drawing as SVG.
FORMATS = ("mermaid", "dot", "svg")


def register(commands: Subcommands) -> None:
    """Add ``graph`` and its options to the CLI."""
    graph = commands.add_parser(
        "graph",
        help="a cluster's Flux dependency graph (Kustomizations and HelmReleases, health gates marked)",
    )
    graph.add_argument("--cluster", required=True, metavar="NAME", help="the cluster")
    graph.add_argument("--format", choices=FORMATS, default="mermaid", help="mermaid (default), dot, or svg")
    graph.add_argument(
        "--output", "-o", type=Path, default=None, metavar="FILE", help="write here instead of standard output"
    )


def stopped(args: argparse.Namespace) -> str | None:
    return "nothing written" if args.output is None else None


def run(args: argparse.Namespace) -> int:
    """``fluxplane graph --cluster NAME``: the graph of the definition as synth would write it."""
    # Imported when the command runs, not when the CLI parses: synth, the layout and the graph load the definition's
    # models, and `import fluxplane.cli` stays quick for the other commands and --help.
    from fluxplane import synth
    from fluxplane.core.layout import PLATFORM, RepositoryLayout, workloads_layout
    from fluxplane.core.tree import LazyDocuments, repositories_of
    from fluxplane.synth.graph import FluxTree, GraphError, dot, mermaid, svg

    root: Path = args.root
    progress = Progress("graph")
    pipeline = synth.Pipeline(root)
    # before the definition loads: its charts/ modules import cdk8s, which starts Node.js
    prepare_node(root)
    with progress.stage("load"):
        plan = pipeline.load()
    clusters = sorted(cluster.name for cluster in plan.clusters)
    if args.cluster not in clusters:
        raise GraphError(f"--cluster: unknown cluster {args.cluster!r} (clusters: {', '.join(clusters)})")
    with progress.stage("render") as stage:
        # with the files another tool owns in dist/ (flux bootstrap's sync objects), as Flux reads them
        files = pipeline.render(plan).files
        stage.note(f"{len(files)} files")
    repositories = plan.fleet.repositories
    platform = RepositoryLayout(PLATFORM, repositories.platform)
    tree = FluxTree(
        LazyDocuments({}, files),
        repositories=repositories_of([platform, workloads_layout(repositories)]),
        hub=plan.fleet.management.name,
    )
    graph = tree.graph(args.cluster)
    draw: Callable[[Graph], str] = {"mermaid": mermaid, "dot": dot, "svg": svg}[args.format or "mermaid"]
    text = draw(graph)
    output: Path | None = args.output
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        output.write_text(text)
    except OSError as exc:
        raise GraphError(f"{output}: cannot write the graph: {exc.strerror or exc}") from exc
    return 0
