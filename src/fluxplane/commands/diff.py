"""``fluxplane diff``: what a change to the definition does to each cluster, as text or Markdown."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fluxplane.commands import Subcommands, prepare_node
from fluxplane.system.progress import Progress

NAMES: tuple[str, ...] = ("diff",)
LOCKS_PROJECT = False


def register(commands: Subcommands) -> None:
    """Add ``diff`` and its options to the CLI."""
    diff = commands.add_parser(
        "diff",
        help="what a change does to dist/: objects added, changed and removed per cluster, risky changes flagged",
        description="Compare the dist/ committed at a base Git ref (or its definition, synthesized in a temporary "
        "worktree) with what synth would write now, and report the difference per repository, cluster and object. "
        "Only what the change reaches is built and walked; nothing is written.",
    )
    diff.add_argument("--base", default="HEAD", metavar="REF", help="Git ref to compare with (default: HEAD)")
    diff.add_argument(
        "--format", choices=("text", "markdown"), default="text", help="text, or Markdown for a pull-request comment"
    )


def stopped(args: argparse.Namespace) -> str | None:
    return "nothing written"


def run(args: argparse.Namespace) -> int:
    """Print the report of the working tree's definition against ``--base``'s."""
    # Imported when the command runs, not when the CLI parses: diff synthesizes
    # and is heavy, and `import fluxplane.cli` stays quick for the other commands and --help.
    from fluxplane.review import diff, plan
    from fluxplane.review.diff.report import COMMENT_LIMIT, markdown, text
    from fluxplane.review.plan.report import markdown as plan_markdown

    root: Path = args.root
    base = diff.resolve(root, args.base)
    prepare_node(root)
    report = diff.run(root, base, Progress("diff"))
    if args.format != "markdown":
        sys.stdout.write(text(report))
        return 0
    # The comment ends with the plan of the same change (fluxplane plan's section), within GitHub's limit.
    section = plan_markdown(plan.from_diff(report), limit=COMMENT_LIMIT // 4, heading="###")
    sys.stdout.write(markdown(report, limit=COMMENT_LIMIT - len(section) - 1) + "\n" + section)
    return 0
