"""Which Node.js runs cdk8s's JavaScript side.

The jsii runtime starts ``$JSII_NODE`` (default: ``node`` on PATH) the first time cdk8s is imported.
The project pins Node 22 in package.json (``make`` installs it into node_modules); use that one
when it is there and nobody chose otherwise, so ``fluxplane synth``, ``cdk8s synth`` and a script
that builds a FleetApp all run on the same, supported Node.
"""

from __future__ import annotations

import os
from pathlib import Path


def use_project_node(root: Path | None = None) -> None:
    """Point JSII_NODE at ``<root>/node_modules/.bin/node`` (root: the working directory) if present."""
    node = (root or Path.cwd()) / "node_modules" / ".bin" / "node"
    if "JSII_NODE" not in os.environ and node.exists():
        os.environ["JSII_NODE"] = str(node.resolve())
