"""Run the project's own cdk8s charts (``charts/<module>.py``) for the clusters that name them.

Each cluster with ``cdk8sCharts`` gets one ``cdk8s.App``; each chart it names is a ``cdk8s.Chart`` of that
app with the chart's name as its id (so generated object names are the same on every cluster), passed to
the module's ``chart(scope, cluster)`` with a :class:`ClusterInfo`. The chart's objects cross from cdk8s
once (``to_json()``) and become one file of the cluster's plain manifests in the chart's layer
(``clusters/<cluster>/manifests/<layer>/charts/<name>.yaml``), checked like them: every object named, no
plain Secret and no value in clear (a Secret in a List, a SealedSecret's template data), nothing given twice in
the layer.

A chart module is the project's code and runs as cdk8s runs an app; what it raises is reported as bad input
(the module's file and line, the cluster), not as fluxplane's failure. The charts run again on every synth:
their output, not their source, is what the synth cache compares.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from fluxplane.config.cdk8s_charts import CDK8S_CHARTS_DIR
from fluxplane.config.manifests import MANIFEST_LAYERS, ManifestFile, object_problems
from fluxplane.config.models import Fleet, WorkloadCluster
from fluxplane.config.problems import show
from fluxplane.errors import ConfigError

#: The folder of dist/'s plain manifests of a layer that holds the charts' files.
CHART_FILES = "charts"
_DEFAULT_LAYER = "apps"


@dataclass(frozen=True)
class ClusterInfo:
    """The cluster a chart is synthesized for, as the definition has it."""

    #: The cluster's name (unique across the fleet).
    name: str
    #: The environment the cluster belongs to (its file's name).
    environment: str
    #: The AWS region the cluster runs in.
    region: str
    #: The cluster's Kubernetes minor version, e.g. ``"1.34"``.
    kubernetes_version: str
    #: The whole cluster entry after merging clusterDefaults (tags, node groups, network, ...).
    definition: WorkloadCluster


@dataclass(frozen=True)
class _Chart:
    name: str
    path: Path
    source: str
    layer: str
    build: Callable[[Any, ClusterInfo], object]


def cdk8s_chart_files(
    root: Path, fleet: Fleet, charts: Mapping[str, Path], display: Callable[[Path], str]
) -> dict[str, list[ManifestFile]]:
    """Per workload cluster naming charts in ``cdk8sCharts``, the files its charts make (in its order).

    ``charts`` is the project's charts by name (fluxplane.config.cdk8s_charts); the definition was checked
    to name only those. ConfigError lists every chart that cannot be loaded or fails, and every object
    Flux could not apply.
    """
    wanted = [(env.name, cluster) for env in fleet.environments for cluster in env.clusters if cluster.cdk8s_charts]
    if not wanted:
        return {}
    used = sorted({name for _, cluster in wanted for name in cluster.cdk8s_charts})
    problems: list[str] = []
    loaded: dict[str, _Chart] = {}
    with _project_modules(root):
        for name in used:
            chart = _load(charts[name], name, display(charts[name]), problems)
            if chart is not None:
                loaded[name] = chart
        if problems:
            raise ConfigError(problems)
        # Imported here: the JavaScript runtime starts only for a definition that uses cdk8s charts.
        import cdk8s

        files: dict[str, list[ManifestFile]] = {}
        for environment, cluster in wanted:
            info = ClusterInfo(cluster.name, environment, cluster.region, cluster.kubernetes_version, cluster)
            app = cdk8s.App()
            for name in cluster.cdk8s_charts:
                made = _run(loaded[name], cdk8s.Chart(app, name), info, problems)
                if made is not None:
                    files.setdefault(cluster.name, []).append(made)
    if problems:
        raise ConfigError(problems)
    return files


@contextlib.contextmanager
def _project_modules(root: Path) -> Iterator[None]:
    """Chart modules import as ``charts.<module>`` (so ``from charts._common import ...`` works), from this
    project only: any ``charts`` package imported before is set aside, and this project's is forgotten after."""
    saved = {name: module for name, module in sys.modules.items() if _ours(name)}
    for name in saved:
        del sys.modules[name]
    # A package of the charts folder alone: the project's root never joins sys.path, so a file there (a
    # yaml.py in a pull request) cannot stand in for a library the charts or fluxplane import.
    package = ModuleType(CDK8S_CHARTS_DIR)
    package.__path__ = [str(root / CDK8S_CHARTS_DIR)]
    sys.modules[CDK8S_CHARTS_DIR] = package
    try:
        yield
    finally:
        for name in [name for name in sys.modules if _ours(name)]:
            del sys.modules[name]
        sys.modules.update(saved)


def _ours(module: str) -> bool:
    return module == CDK8S_CHARTS_DIR or module.startswith(f"{CDK8S_CHARTS_DIR}.")


def _load(path: Path, name: str, source: str, problems: list[str]) -> _Chart | None:
    try:
        module: ModuleType = importlib.import_module(f"{CDK8S_CHARTS_DIR}.{path.stem}")
    except Exception as exc:  # the project's code: any failure is its own, reported as such
        problems.append(f"{source}: importing it failed: {_failure(exc, path)}")
        return None
    build = getattr(module, "chart", None)
    if not callable(build):
        problems.append(f"{source}: chart: required, a function chart(scope, cluster) that adds the chart's constructs")
        return None
    layer = getattr(module, "LAYER", _DEFAULT_LAYER)
    if layer not in MANIFEST_LAYERS:
        problems.append(f"{source}: LAYER: expected one of {', '.join(MANIFEST_LAYERS)}, got {show(layer)}")
        return None
    return _Chart(name, path, source, layer, build)


def _run(chart: _Chart, scope: Any, info: ClusterInfo, problems: list[str]) -> ManifestFile | None:
    where = f"{chart.source}: for cluster {info.name!r}"
    try:
        chart.build(scope, info)
        documents = scope.to_json()
    except Exception as exc:  # the project's code: any failure is its own, reported as such
        problems.append(f"{where}: {_failure(exc, chart.path)}")
        return None
    found = []
    for index, document in enumerate(documents, start=1):
        found.extend(object_problems(document, f"{where}: object {index}"))
    if found:
        problems.extend(found)
        return None
    return ManifestFile(chart.layer, CHART_FILES, f"{chart.name}.yaml", chart.source, tuple(documents))


def _failure(exc: BaseException, path: Path) -> str:
    """``exc`` in one line, at the last line of the chart's own code it passed through when there is one."""
    text = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}".rstrip(": ")
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        return f"line {exc.lineno}: SyntaxError: {exc.msg}"
    mine = path.resolve()
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if Path(frame.filename).resolve() == mine]
    return f"line {frames[-1].lineno}: {text}" if frames else text
