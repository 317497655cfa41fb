"""Render a finished FleetApp to file contents, keyed by their path in dist/.

fluxplane's own objects are dumped with libyaml straight from Python dicts; cdk8s constructs a
user added under a cluster chart are synthesized by cdk8s in one call per chart (``to_json``).
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from fluxplane.charts.cluster import ClusterChart
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.render import dump_documents
from fluxplane.errors import TreeError
from fluxplane.synth.checks import check_cluster, check_files, check_flux_paths

if TYPE_CHECKING:
    from fluxplane.synth.app import FleetApp


def render_app(app: FleetApp) -> dict[str, str]:
    """Finish, check and render ``app``; returns {path under dist/: file text}, sorted by path."""
    from fluxplane.synth.app import jsii_children_by_chart

    app.finish()
    charts: list[Any] = [*app.clusters.values(), *app.catalogue.values()]
    files: list[tuple[Any, Manifest]] = [(chart, manifest) for chart in charts for manifest in chart.files]
    problems = check_files(files)
    for chart in app.clusters.values():
        problems.extend(check_cluster(chart))
    directories = {
        posixpath.join(chart.layout.key, manifest.directory)
        for chart, manifest in files
        if posixpath.basename(manifest.path) == "kustomization.yaml"
    }
    problems.extend(check_flux_paths(list(app.clusters.values()), directories))
    if problems:
        raise TreeError(problems)

    out: dict[str, str] = {}
    for chart, manifest in files:
        out[posixpath.join(chart.layout.key, manifest.path)] = dump_documents(manifest.documents())
    for chart in jsii_children_by_chart(app):
        if isinstance(chart, ClusterChart):
            out[posixpath.join(chart.layout.key, chart.custom_path)] = dump_documents(chart.to_json())
    return dict(sorted(out.items()))
