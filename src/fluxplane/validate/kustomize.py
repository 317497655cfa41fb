"""Every kustomization builds: ``kubectl kustomize`` on each folder holding a kustomization.yaml.

Flux runs the same build (kustomize as a library) before it applies a folder; a folder that does not
build stops its whole Kustomization. The builds run in parallel on a thread pool, since each is a
separate process (fluxplane.core.processes: a signal ends them at once); a failure is a finding on that
folder's kustomization.yaml.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from fluxplane.core.processes import Processes
from fluxplane.validate.findings import Finding
from fluxplane.validate.tree import ValidateError


def find_kubectl() -> str:
    """The kubectl on PATH; refuse with the way out when there is none."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise ValidateError(
            "kubectl not found on PATH: install it, or pass --no-kustomize to skip the kustomize builds"
        )
    return kubectl


#: Newer kubectl logs the failure through klog: ``E1123 10:50:52.039405 9804 run.go:72] "command failed"
#: err="..."``; the time and process id would make findings differ from run to run.
_KLOG = re.compile(r'^[EWIF]\d{4} [\d:.]+\s+\d+ \S+\] "command failed" err=(".*")$')


def _message(line: str) -> str:
    match = _KLOG.match(line)
    if match is None:
        return line
    try:
        return str(json.loads(match.group(1)))
    except ValueError:
        return line


def build_error(processes: Processes, kubectl: str, folder: Path, root: Path | None = None) -> str | None:
    """None when ``kubectl kustomize folder`` succeeds, else its error on one line, paths relative to ``root``."""
    result = processes.run([kubectl, "kustomize", str(folder)])
    if result.returncode == 0:
        return None
    lines = [_message(line.strip()) for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith("error: ")] or lines
    text = " ".join(" ".join(errors).split()) or f"exit status {result.returncode}"
    if root is not None:
        text = text.replace(f"{root.resolve()}/", "").replace(f"{root}/", "")
    return text.removeprefix("Error: ").removeprefix("error: ")


def check_builds(
    root: Path,
    folders: list[str],
    kubectl: str,
    advance: Callable[[], None] = lambda: None,
) -> list[Finding]:
    """Build every folder (relative to ``root``); one finding per folder that fails."""
    processes = Processes(workers=min(16, (os.cpu_count() or 2) * 2))

    def build(folder: str) -> Finding | None:
        error = build_error(processes, kubectl, root / folder, root)
        advance()
        if error is None:
            return None
        file = "kustomization.yaml" if folder == "." else f"{folder}/kustomization.yaml"
        name = root.name if folder == "." else folder.rsplit("/", 1)[-1]
        return Finding(file, 1, "Kustomization", name, "(root)", f"kubectl kustomize failed: {error}")

    return [finding for finding in processes.map(build, folders) if finding is not None]
