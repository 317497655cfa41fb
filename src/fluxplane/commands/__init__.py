"""The CLI's commands, one module each: ``register`` adds its parser, ``run`` does it with typed library calls.

A command module parses nothing itself and decides nothing the library can: it turns the parsed arguments
into a library call and the result into lines. fluxplane.cli builds its parser from the modules, and reads
from each what the process around a command needs to know: whether it runs under the project lock, and
what is true of what it writes when a signal stops it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Protocol, TypeAlias

import fluxplane
from fluxplane.system.node import require_node, start_runtime

#: What ``register`` adds its subcommands to (``ArgumentParser.add_subparsers``'s result).
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class Command(Protocol):
    """What fluxplane.cli needs of a command module."""

    #: The subcommands ``register`` adds: the values ``args.command`` takes for this module.
    NAMES: tuple[str, ...]
    #: Whether ``run`` holds the project lock (fluxplane.system.lock): the commands that write the project.
    LOCKS_PROJECT: bool

    def register(self, commands: Subcommands) -> None:
        """Add the module's subcommands, with their options and help, to the CLI's parser."""

    def run(self, args: argparse.Namespace) -> int:
        """Run the parsed command; its exit code. FluxplaneError for bad input."""

    def stopped(self, args: argparse.Namespace) -> str | None:
        """What is true of what the command writes once a signal stopped it (None: nothing to say)."""


def warn(line: str | None) -> None:
    """Print a library's warning line, when there is one, on standard error."""
    if line:
        print(line, file=sys.stderr)


def prepare_node(root: Path, *, start: bool = False) -> None:
    """Before a command loads the project under ``root``: when the project has cdk8s charts of its own (``charts/``,
    the only part of synth that runs on the JavaScript runtime), check the Node.js that runs them (a warning line
    for one past its end of life, NodeError for none) and, with ``start``, start the runtime in the background
    while the definition loads. Without them nothing is checked or started: fluxplane's own tree is plain Python.
    """
    # Imported here: fluxplane.config loads the definition's models, and `import fluxplane.cli` stays quick
    from fluxplane.config.cdk8s_charts import has_cdk8s_charts

    if not has_cdk8s_charts(root):
        return
    warn(require_node())
    if start:
        start_runtime()


def installed_version() -> str:
    """The installed distribution's version (``0+unknown`` when the package runs from a source tree alone)."""
    return str(fluxplane.__version__)
