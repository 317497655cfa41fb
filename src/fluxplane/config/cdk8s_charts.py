"""The project's own cdk8s charts: ``charts/<module>.py``, each attached to clusters by name.

A chart module is plain cdk8s code: a function ``chart(scope, cluster)`` that adds constructs to ``scope``
(a ``cdk8s.Chart`` synth makes for each cluster that names it in ``cdk8sCharts``), optionally a ``LAYER``
(``controllers``, ``configs`` or ``apps``, the default) and a ``DESCRIPTION``. The chart's name is the
module's with ``_`` as ``-`` (``team_quotas.py`` is ``team-quotas``). Modules whose name starts with ``_``
are the charts' own helpers (``from charts._common import ...``), not charts.

This module only finds the charts (a listing, no import): the definition names them before any code runs.
Running them is synth's (fluxplane.synth.cdk8s_charts).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from fluxplane.config.problems import show

#: Where the project's cdk8s charts live, relative to the project.
CDK8S_CHARTS_DIR = "charts"
#: A chart module's name: a Python module name that, with ``_`` as ``-``, is a DNS-1123 label.
_MODULE = r"[a-z0-9]+(_[a-z0-9]+)*"


def has_cdk8s_charts(root: Path) -> bool:
    """Whether the project under ``root`` has a folder of cdk8s charts: the only part of synth that runs on the
    JavaScript runtime (fluxplane.synth.cdk8s_charts). Asked before the definition loads, which names the charts."""
    return (root / CDK8S_CHARTS_DIR).is_dir()


def chart_name(module: str) -> str:
    """The chart name of the module ``module`` (``team_quotas`` is ``team-quotas``)."""
    return module.replace("_", "-")


def find_cdk8s_charts(root: Path, display: Callable[[Path], str]) -> tuple[dict[str, Path], list[str]]:
    """The charts of ``<root>/charts/`` by name, and the problems found, each with its file.

    Refused: the folder or anything below it being a symbolic link, at any depth (helpers and their packages
    are imported too, and a package may read its other files: the project's files are its own), and a module
    name that gives no chart name.
    """
    folder = root / CDK8S_CHARTS_DIR
    if folder.is_symlink():
        return {}, [f"{display(folder)}: a symbolic link; the project's charts are its own files"]
    if not folder.is_dir():
        return {}, []
    found: dict[str, Path] = {}
    problems = _links(folder, display)
    for path in sorted(folder.iterdir()):
        if path.is_symlink():
            continue  # reported by _links
        if path.suffix != ".py" or path.name.startswith(("_", ".")):
            continue
        if not path.is_file():
            problems.append(f"{display(path)}: not a chart module; {CDK8S_CHARTS_DIR}/ holds <name>.py files")
            continue
        name = chart_name(path.stem)
        if re.fullmatch(_MODULE, path.stem) is None or len(name) > 63:
            problems.append(
                f"{display(path)}: chart module name {show(path.stem)} must be lower-case letters and digits in "
                "words joined by '_' (the chart's name, with '-' for '_', is a DNS-1123 label of at most 63 "
                "characters); rename the file, or start it with '_' for a helper module"
            )
            continue
        found[name] = path
    return found, problems


def _links(folder: Path, display: Callable[[Path], str]) -> list[str]:
    """A problem for each symbolic link below ``folder``, files and folders, hidden ones too (none is followed),
    and for each folder that cannot be read."""
    problems: list[str] = []

    def unreadable(error: OSError) -> None:
        problems.append(f"{display(Path(error.filename))}: cannot read: {error.strerror or error}")

    for parent, folders, files in os.walk(folder, onerror=unreadable):
        folders.sort()
        for name in sorted([*folders, *files]):
            path = Path(parent, name)
            if path.is_symlink():
                problems.append(f"{display(path)}: a symbolic link; {CDK8S_CHARTS_DIR}/ holds the project's own files")
    return problems
