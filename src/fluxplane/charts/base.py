"""FleetChart: a cdk8s Chart that owns a group of dist/ files.

The chart is a real cdk8s Chart (a jsii object, one per cluster or catalogue entry); fluxplane's
constructs hang below it in the Python tree (see fluxplane.constructs.base) and never cross the jsii
bridge. Anything built with cdk8s itself under the chart (ApiObject, cdk8s-plus) is synthesized by
cdk8s in one call per chart and written to :attr:`FleetChart.custom_path`.
"""

from __future__ import annotations

import posixpath
from typing import Any

import cdk8s

from fluxplane.constructs.base import Node, node_of
from fluxplane.constructs.kustomize import KustomizationFile, KustomizeConfigProps
from fluxplane.constructs.manifest import Manifest
from fluxplane.core.layout import RepositoryLayout


class FleetChart(cdk8s.Chart):
    """A group of files in one repository folder of dist/.

    ``directory`` is the folder (relative to dist/<repository>/) the chart's kustomize entry point
    lives in; a chart lists its files in creation order, which is the order they are written in.
    """

    def __init__(self, scope: Any, construct_id: str, *, layout: RepositoryLayout, directory: str) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        self.layout = layout
        self.directory = directory
        self._files: list[Manifest] = []
        # The fluxplane node mirrors the jsii one without asking the bridge for it.
        app_path = node_of(scope).path
        self._fluxplane_node = Node(
            self, None, construct_id, f"{app_path}/{construct_id}" if app_path else construct_id
        )

    @property
    def files(self) -> tuple[Manifest, ...]:
        return tuple(self._files)

    @property
    def custom_path(self) -> str:
        """Where cdk8s-synthesized children of this chart are written."""
        return posixpath.join(self.directory, "custom.yaml")

    def add_manifest(self, construct_id: str, path: str, scope: Any = None) -> Manifest:
        """A new output file at ``path`` (relative to dist/<repository>/)."""
        manifest = Manifest(scope if scope is not None else self, construct_id, path=path)
        self._files.append(manifest)
        return manifest

    def add_kustomization_file(
        self, construct_id: str, directory: str, props: KustomizeConfigProps | None = None, scope: Any = None
    ) -> KustomizationFile:
        """A new ``kustomization.yaml`` in ``directory``."""
        file = KustomizationFile(scope if scope is not None else self, construct_id, directory=directory, props=props)
        self._files.append(file)
        return file
