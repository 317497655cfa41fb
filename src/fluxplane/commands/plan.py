"""``fluxplane plan``: what a change does to the fleet's AWS resources, as text, Markdown or JSON, and a gate for CI."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fluxplane.commands import Subcommands, prepare_node
from fluxplane.system.progress import Progress

NAMES: tuple[str, ...] = ("plan",)
LOCKS_PROJECT = False
#: ``plan --fail-on``: the plan holds a change of a kind the option names (the plan is printed first).
EXIT_GATED = 3
#: What ``--fail-on`` accepts: an action, ``data`` (a data-bearing resource replaced or deleted) and ``destructive``
#: (anything replaced or deleted, destructive Kubernetes changes included); fluxplane.review.plan.model.Plan.gated
#: reads them.
GATES = ("create", "update", "replace", "delete", "manage", "data", "destructive")


def _gates(value: str) -> list[str]:
    chosen = [item.strip() for item in value.split(",") if item.strip()]
    unknown = [item for item in chosen if item not in GATES]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(GATES)}, got {value!r}")
    return chosen


def register(commands: Subcommands) -> None:
    """Add ``plan`` and its options to the CLI."""
    plan = commands.add_parser(
        "plan",
        help="what a change does to AWS: resources created, updated, replaced and deleted, per account, region "
        "and cluster",
        description="Compare the dist/ committed at a base Git ref (or its definition, synthesized) with what synth "
        "would write now, and list every AWS resource the change creates, updates in place, replaces or deletes, "
        "data-bearing ones first, and every destructive Kubernetes change. Offline; nothing is written. Exit "
        f"codes: 0 the plan was made; {EXIT_GATED} it holds a change --fail-on names; 2 bad input.",
    )
    plan.add_argument("--base", default="HEAD", metavar="REF", help="Git ref to compare with (default: HEAD)")
    plan.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="text, Markdown for a pull-request comment, or JSON for tools",
    )
    plan.add_argument(
        "--fail-on",
        type=_gates,
        default=[],
        metavar="KINDS",
        help=f"exit {EXIT_GATED} when the plan holds any of these (comma-separated): create, update, replace, "
        "delete, manage (an imported resource Crossplane starts to write), data (a data-bearing resource replaced or "
        "deleted), destructive (anything replaced or deleted, destructive Kubernetes changes included)",
    )


def stopped(args: argparse.Namespace) -> str | None:
    return "nothing written"


def run(args: argparse.Namespace) -> int:
    """Print the plan of the working tree's definition against ``--base``; EXIT_GATED when ``--fail-on`` says so."""
    # Imported when the command runs: plan synthesizes and is heavy.
    from fluxplane.review import plan
    from fluxplane.review.plan.report import markdown, text, to_json

    root: Path = args.root
    base = plan.resolve(root, args.base)
    prepare_node(root)
    result = plan.run(root, base, progress=Progress("plan"))
    formats = {"text": text, "markdown": markdown, "json": to_json}
    sys.stdout.write(formats[args.format](result))
    met = result.gated(args.fail_on)
    if met:
        print(f"plan holds what --fail-on names: {', '.join(met)}", file=sys.stderr)
        return EXIT_GATED
    return 0
