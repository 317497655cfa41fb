"""``fluxplane versions``: which version of every pack runs on which cluster, and what blocks each upgrade."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from fluxplane.commands import Subcommands, prepare_node

NAMES: tuple[str, ...] = ("versions",)
LOCKS_PROJECT = False


def register(commands: Subcommands) -> None:
    """Add ``versions`` and its options to the CLI."""
    versions = commands.add_parser(
        "versions",
        help="which version of every pack runs on which cluster, and what blocks each cluster's next upgrade",
        description="Per cluster: its Kubernetes version and EKS support, its packs' versions, the API versions its "
        "objects use, and whether it can move to the next Kubernetes minor version (and what blocks it).",
    )
    versions.add_argument(
        "--format", choices=("text", "markdown"), default="text", help="text, or Markdown for a pull request or wiki"
    )


def stopped(args: argparse.Namespace) -> str | None:
    return "nothing written"


def run(args: argparse.Namespace) -> int:
    """Print the report for the definition under ``--root``, with EKS support as of today."""
    # Imported when the command runs, not when the CLI parses: it synthesizes
    # and is heavy, and `import fluxplane.cli` stays quick for the other commands and --help.
    from fluxplane.review import versions

    prepare_node(args.root)
    clusters = versions.project_versions(args.root, datetime.now(UTC).date())
    sys.stdout.write(versions.markdown(clusters) if args.format == "markdown" else versions.text(clusters))
    return 0
