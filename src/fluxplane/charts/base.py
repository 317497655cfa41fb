"""FleetChart: the charts of a fleet, each owning a group of dist/ files.

fluxplane's constructs hang below a chart in the Python tree (see fluxplane.constructs.base) and never cross
the jsii bridge, so a chart is plain Python, and synth builds and renders a fleet without the JavaScript
runtime. Under a cdk8s construct, such as the library's :class:`~fluxplane.synth.app.FleetApp` (a cdk8s App),
each chart is also a real cdk8s Chart (:meth:`FleetChart.__new__` makes it one): anything built with cdk8s itself
under it (ApiObject, cdk8s-plus) is synthesized by cdk8s in one call per chart and written to
:attr:`FleetChart.custom_path`.
"""

from __future__ import annotations

import posixpath
import sys
from typing import Any

from fluxplane.constructs.base import Node, node_of
from fluxplane.constructs.kustomize import KustomizationFile, KustomizeConfigProps
from fluxplane.constructs.manifest import Manifest
from fluxplane.core.layout import RepositoryLayout


class FleetChart:
    """A group of files in one repository folder of dist/.

    ``directory`` is the folder (relative to dist/<repository>/) the chart's kustomize entry point
    lives in; a chart lists its files in creation order, which is the order they are written in.
    """

    def __new__(cls, scope: Any, *args: Any, **kwargs: Any) -> Any:
        # Under a construct of cdk8s's (FleetApp, a cdk8s App): ``cls`` and a cdk8s Chart at once. Under synth's
        # FleetTree, plain Python.
        return super().__new__(_cdk8s_kind(cls) if _in_cdk8s(scope) else cls)

    def __init__(self, scope: Any, construct_id: str, *, layout: RepositoryLayout, directory: str) -> None:
        self._join(scope, construct_id)
        self.layout = layout
        self.directory = directory
        self._files: list[Manifest] = []
        # The fluxplane node mirrors the jsii one, when there is one, without asking the bridge for it.
        app_path = node_of(scope).path
        self._fluxplane_node = Node(
            self, None, construct_id, f"{app_path}/{construct_id}" if app_path else construct_id
        )

    def _join(self, scope: Any, construct_id: str) -> None:
        """Join ``scope``'s cdk8s tree as a cdk8s Chart: nothing for a chart of plain Python (see _cdk8s_kind)."""

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


def _in_cdk8s(scope: Any) -> bool:
    """Whether ``scope`` is a construct of cdk8s's tree (a jsii object). Without the constructs library loaded,
    nothing is, and it is not imported to find out: importing it starts the JavaScript runtime."""
    library = sys.modules.get("constructs")
    return library is not None and isinstance(scope, library.Construct)


#: Each kind of chart as a cdk8s Chart too (_cdk8s_kind), made once.
_CDK8S_KINDS: dict[type[FleetChart], type[FleetChart]] = {}


def _cdk8s_kind(kind: type[FleetChart]) -> type[FleetChart]:
    """``kind`` as a cdk8s Chart too, for charts under a cdk8s App: the same class, with cdk8s.Chart after it."""
    import cdk8s

    if issubclass(kind, cdk8s.Chart):
        return kind
    made = _CDK8S_KINDS.get(kind)
    if made is not None:
        return made

    def join(self: FleetChart, scope: Any, construct_id: str) -> None:
        cdk8s.Chart.__init__(self, scope, construct_id, disable_resource_name_hashes=True)  # type: ignore[arg-type]

    namespace = {"__module__": kind.__module__, "__qualname__": kind.__qualname__, "_join": join}
    made = _CDK8S_KINDS[kind] = type(kind.__name__, (kind, cdk8s.Chart), namespace)
    return made
