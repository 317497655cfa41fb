"""``fluxplane reference``: the fleet definition's reference, in Markdown, from its models."""

from __future__ import annotations

import argparse

from fluxplane.commands import Subcommands

NAMES: tuple[str, ...] = ("reference",)
LOCKS_PROJECT = False


def register(commands: Subcommands) -> None:
    """Add ``reference`` to the CLI."""
    commands.add_parser("reference", help="print the fleet definition reference (Markdown)")


def stopped(args: argparse.Namespace) -> str | None:
    return "nothing written"


def run(args: argparse.Namespace) -> int:
    """Print the reference."""
    # Imported when the command runs, not when the CLI parses: the reference is drawn from the definition's models,
    # and `import fluxplane.cli` stays quick for the other commands and --help.
    from fluxplane.config.reference import markdown

    print(markdown(), end="")
    return 0
