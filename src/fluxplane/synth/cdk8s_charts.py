"""Run the project's own cdk8s charts (``charts/<module>.py``) for the clusters that name them.

Each cluster with ``cdk8sCharts`` gets one ``cdk8s.App``; each chart it names is a ``cdk8s.Chart`` of that
app with the chart's name as its id (so generated object names are the same on every cluster), passed to
the module's ``chart(scope, cluster)`` with a :class:`ClusterInfo`. The chart's objects cross from cdk8s
once (``to_json()``) and become one file of the cluster's plain manifests in the chart's layer
(``clusters/<cluster>/manifests/<layer>/charts/<name>.yaml``), checked like them: every object named, no
plain Secret and no value in clear (a Secret in a List, a SealedSecret's template data), nothing given twice in
the layer.

A chart module is the project's code and runs as cdk8s runs an app; whatever ends it, at import or while it
builds for a cluster, is reported as bad input (the module's file and line, the cluster), not as fluxplane's
failure: an exception, and also ``sys.exit()`` with any code, a ``raise KeyboardInterrupt`` of its own and any
other BaseException, none of which may end the command as if it had finished or been stopped. Only a SIGINT
or SIGTERM that really arrives while a chart runs stops the command as it does anywhere else. The charts run
again on every synth: their output, not their source, is what the synth cache compares.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

from fluxplane.config.cdk8s_charts import CDK8S_CHARTS_DIR
from fluxplane.config.manifests import MANIFEST_LAYERS, ManifestFile, object_problems
from fluxplane.config.models import Fleet, WorkloadCluster
from fluxplane.config.problems import show
from fluxplane.errors import ConfigError
from fluxplane.system.node import require_node

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
    # The chart modules import cdk8s, which starts Node.js: NodeError, naming the one chosen and what to do, when it
    # does not start (a command checked it already, and warned of an old one; the library's callers did not)
    require_node()
    problems: list[str] = []
    loaded: dict[str, _Chart] = {}
    with _project_modules(root), _SignalWatch() as signals:
        for name in used:
            chart = _load(charts[name], name, display(charts[name]), problems, signals)
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
                made = _run(loaded[name], cdk8s.Chart(app, name), info, problems, signals)
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


def _load(path: Path, name: str, source: str, problems: list[str], signals: _SignalWatch) -> _Chart | None:
    try:
        module: ModuleType = importlib.import_module(f"{CDK8S_CHARTS_DIR}.{path.stem}")
        build = getattr(module, "chart", None)
        layer = getattr(module, "LAYER", _DEFAULT_LAYER)
    except BaseException as exc:  # the project's code: whatever ends it is its own, reported as such
        if signals.arrived is not None:
            raise  # a signal: the command stops, as it does wherever the signal finds it
        problems.append(f"{source}: importing it failed: {_failure(exc, path)}")
        return None
    if not callable(build):
        problems.append(f"{source}: chart: required, a function chart(scope, cluster) that adds the chart's constructs")
        return None
    if not isinstance(layer, str) or layer not in MANIFEST_LAYERS:
        problems.append(f"{source}: LAYER: expected one of {', '.join(MANIFEST_LAYERS)}, got {show(layer)}")
        return None
    return _Chart(name, path, source, layer, build)


def _run(
    chart: _Chart, scope: Any, info: ClusterInfo, problems: list[str], signals: _SignalWatch
) -> ManifestFile | None:
    where = f"{chart.source}: for cluster {info.name!r}"
    try:
        chart.build(scope, info)
        documents = scope.to_json()
    except BaseException as exc:  # the project's code: whatever ends it is its own, reported as such
        if signals.arrived is not None:
            raise  # a signal: the command stops, as it does wherever the signal finds it
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
    try:
        detail = str(exc).strip()
    except Exception:  # an exception class of the chart's own whose text fails: its name says enough
        detail = ""
    text = f"{type(exc).__name__}: {detail.splitlines()[0] if detail else ''}".rstrip(": ")
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        return f"line {exc.lineno}: SyntaxError: {exc.msg}"
    mine = path.resolve()
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if Path(frame.filename).resolve() == mine]
    return f"line {frames[-1].lineno}: {text}" if frames else text


class _SignalWatch:
    """Whether SIGINT or SIGTERM arrived while the charts ran, so that what a signal raised in a chart is
    told apart from what the chart raised itself (a ``raise KeyboardInterrupt`` of its own is the chart's error).

    In the main thread, each of the two signals whose handler is Python code (the CLI's, which raises
    KeyboardInterrupt or its Terminated; Python's own for SIGINT, in a program that uses fluxplane as a
    library) is first noted here, then handled by that same handler. A handler the command replaces on its
    way (the CLI ignores both signals once one arrived) is left as it is at the end. In another thread no
    signal is raised, so nothing a chart raises there is one.
    """

    HANDLED = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.arrived: int | None = None
        self._previous: dict[int, Callable[[int, FrameType | None], Any]] = {}

    def __enter__(self) -> _SignalWatch:
        if threading.current_thread() is threading.main_thread():
            for signum in self.HANDLED:
                handler = signal.getsignal(signum)
                if callable(handler):
                    self._previous[signum] = handler
                    signal.signal(signum, self._note)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self._previous.items():
            if signal.getsignal(signum) == self._note:
                signal.signal(signum, handler)

    def _note(self, signum: int, frame: FrameType | None) -> None:
        if self.arrived is None:
            self.arrived = signum
        self._previous[signum](signum, frame)
