"""A command module's arguments parsed through its own ``register``, as the CLI would parse them."""

from __future__ import annotations

import argparse
from pathlib import Path

from fluxplane.commands import Command


def parse(command: Command, *argv: str, root: Path = Path(".")) -> argparse.Namespace:
    """``argv`` parsed by a parser holding only ``command``'s subcommands, as the CLI's would with ``--root``."""
    parser = argparse.ArgumentParser(prog="fluxplane")
    parser.add_argument("--root", type=Path, default=root)
    command.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)
