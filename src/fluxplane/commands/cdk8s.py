"""``fluxplane cdk8s ARGS``: cdk8s-cli, on the Node.js fluxplane installs.

``fluxplane cdk8s synth`` is ``cdk8s synth`` run in the project folder, whose ``cdk8s.yaml`` runs
``fluxplane synth --cdk8s``: the same dist/, with no Node.js or npm of the machine's (cdk8s-cli comes from the
npm registry once, then from npm's cache; see fluxplane.system.node.cdk8s_command). The exit code is cdk8s-cli's.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from fluxplane.commands import Subcommands
from fluxplane.errors import ConfigError
from fluxplane.system.node import CDK8S_CLI, cdk8s_command

NAMES: tuple[str, ...] = ("cdk8s",)
#: The app cdk8s-cli runs (``fluxplane synth --cdk8s``) takes the project lock itself.
LOCKS_PROJECT = False


def register(commands: Subcommands) -> None:
    """Add ``cdk8s`` to the CLI."""
    cdk8s = commands.add_parser(
        "cdk8s",
        help="run cdk8s-cli (cdk8s synth) in the project, on the Node.js fluxplane installs",
        description=f"Run cdk8s-cli {CDK8S_CLI} with ARGS in the project folder: `fluxplane cdk8s synth` writes "
        "dist/ through cdk8s.yaml, `fluxplane cdk8s synth --stdout` prints the manifests.",
    )
    cdk8s.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="cdk8s-cli's arguments (synth)")


def stopped(args: argparse.Namespace) -> str | None:
    return None  # the app cdk8s-cli runs says what it leaves, as fluxplane synth does


def run(args: argparse.Namespace) -> int:
    root: Path = args.root
    if not root.is_dir():
        what = "not a folder" if root.exists() else "no such project folder"
        raise ConfigError(f"{root}: {what}; --root names the project folder, the one holding cdk8s.yaml")
    command, env = cdk8s_command(args.args)
    return subprocess.run(command, cwd=root, env=env, check=False).returncode
