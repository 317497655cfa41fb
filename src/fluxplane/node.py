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
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from fluxplane.errors import FluxplaneError

#: The Node.js majors jsii (cdk8s's runtime) supports; it prints an 11-line banner on every start of an older one.
SUPPORTED_MAJORS = (22, 24)
_INSTALL = (
    "install Node.js 22 or 24 and put `node` on PATH, or set JSII_NODE to its path "
    "(in a fluxplane project, `make setup` installs Node 22 into node_modules/)"
)


class NodeError(FluxplaneError):
    """No Node.js to run cdk8s's JavaScript side."""


def use_project_node(root: Path | None = None) -> None:
    """Point JSII_NODE at ``<root>/node_modules/.bin/node`` (root: the working directory) if present."""
    node = (root or Path.cwd()) / "node_modules" / ".bin" / "node"
    if "JSII_NODE" not in os.environ and node.exists():
        os.environ["JSII_NODE"] = str(node.resolve())


def require_node(root: Path | None = None) -> str | None:
    """Choose the Node.js that runs cdk8s (see use_project_node) and make sure it starts, before cdk8s does.

    A NodeError when there is none. For a Node.js older than jsii supports, jsii's banner is silenced and
    one warning line is returned instead (None when the Node is supported, or is the project's pinned one).
    """
    use_project_node(root)
    chosen = os.environ.get("JSII_NODE")
    node = chosen or shutil.which("node")
    project = (root or Path.cwd()) / "node_modules" / ".bin" / "node"
    if chosen and project.exists() and Path(chosen) == project.resolve():
        return None
    if node is None:
        raise NodeError(f"Node.js not found: cdk8s runs its JavaScript on Node.js; {_INSTALL}")
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        source = f"JSII_NODE={node}" if chosen else node
        raise NodeError(f"Node.js {source} does not start ({exc.__class__.__name__}: {exc}); {_INSTALL}") from None
    found = re.match(r"v(\d+)\.", version.strip())
    if found is None or int(found.group(1)) >= SUPPORTED_MAJORS[0]:
        return None
    major = found.group(1)
    for warning in ("END_OF_LIFE", "DEPRECATED"):
        os.environ[f"JSII_SILENCE_WARNING_{warning}_NODE_VERSION"] = major
    return f"warning: Node.js {version.strip()} ({node}) is past its end of life for cdk8s's runtime (jsii); {_INSTALL}"


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
