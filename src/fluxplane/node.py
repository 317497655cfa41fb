"""Which Node.js runs cdk8s's JavaScript side.

The jsii runtime starts ``$JSII_NODE`` (default: ``node`` on PATH) the first time cdk8s is imported.
The project pins Node 22 in package.json (``make`` installs it into node_modules); use that one
when it is there and nobody chose otherwise, so ``fluxplane synth``, ``cdk8s synth`` and a script
that builds a FleetApp all run on the same, supported Node.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from pathlib import Path


def use_project_node(root: Path | None = None) -> None:
    """Point JSII_NODE at ``<root>/node_modules/.bin/node`` (root: the working directory) if present."""
    node = (root or Path.cwd()) / "node_modules" / ".bin" / "node"
    if "JSII_NODE" not in os.environ and node.exists():
        os.environ["JSII_NODE"] = str(node.resolve())


def start_runtime() -> None:
    """Start importing cdk8s (which starts its Node process and loads its JavaScript) in the background.

    For commands that read the definition first: the JavaScript side starts while Python loads,
    instead of after. The import that needs cdk8s waits for this one, or, should it fail, imports it
    again and reports the error itself. Only once a Node is chosen (JSII_NODE, see use_project_node):
    starting one that jsii warns about before the definition is known to be valid would print its
    warning ahead of the definition's errors.
    """
    if "cdk8s" in sys.modules or "JSII_NODE" not in os.environ:
        return
    threading.Thread(target=_import_cdk8s, name="fluxplane-cdk8s-import").start()


def _import_cdk8s() -> None:
    with contextlib.suppress(Exception):
        importlib.import_module("cdk8s")
