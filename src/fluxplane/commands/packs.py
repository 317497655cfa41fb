"""``fluxplane packs list|show NAME``: the packs (add-ons) the project can enable."""

from __future__ import annotations

import argparse

from fluxplane.commands import Subcommands

NAMES: tuple[str, ...] = ("packs",)
LOCKS_PROJECT = False


def register(commands: Subcommands) -> None:
    """Add ``packs`` and its subcommands to the CLI."""
    packs = commands.add_parser("packs", help="the installed packs (add-ons): list them, or show one")
    pack_commands = packs.add_subparsers(dest="packs_command", required=True, metavar="SUBCOMMAND")
    pack_commands.add_parser("list", help="name, version, layer, requires and description of every pack")
    show = pack_commands.add_parser("show", help="a pack's config keys, what it emits and an example")
    show.add_argument("name", metavar="NAME", help="the pack")


def stopped(args: argparse.Namespace) -> str | None:
    return "nothing written"


def run(args: argparse.Namespace) -> int:
    """Print the list, or one pack's description, from the project's registry (built-in and its chart packs)."""
    # Imported when the command runs, not when the CLI parses: synth and the packs' descriptions are heavy, and
    # `import fluxplane.cli` stays quick for the other commands and --help.
    from fluxplane.packs.describe import list_packs, show_pack
    from fluxplane.synth import project_registry

    registry = project_registry(args.root)
    if args.packs_command == "list":
        print(list_packs(registry), end="")
    else:
        print(show_pack(registry.get(args.name)), end="")
    return 0
