"""``kustomization.yaml``: the kustomize configuration of a directory (not Flux's Kustomization).

Every directory Flux or ``kubectl kustomize`` reads gets one, listing its resources explicitly, so a
new file never joins a build by accident.
"""

from __future__ import annotations

import posixpath
from typing import Any

from fluxplane.constructs.base import Resource, node_of, validate_props
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.props import Patch, Props


class KustomizeConfigProps(Props):
    """Props of a directory's ``kustomization.yaml``."""

    resources: tuple[str, ...] = ()
    """Files and directories, relative to this one, that the build includes; ``add_resource()`` lists more. Default:
    none."""
    components: tuple[str, ...] = ()
    """Paths of kustomize Components, relative to this directory, the build includes. Default: none."""
    namespace: str | None = None
    """Namespace set on every namespaced object of the build. Default: not set (objects keep theirs)."""
    patches: tuple[Patch, ...] = ()
    """Patches applied to the resources; ``add_patch()`` adds more. Default: none."""


class KustomizeConfig(Resource):
    """The single document of a ``kustomization.yaml`` (``kustomize.config.k8s.io/v1beta1``)."""

    api_version = "kustomize.config.k8s.io/v1beta1"
    kind = "Kustomization"
    namespaced = False

    def __init__(self, scope: Any, construct_id: str, props: KustomizeConfigProps) -> None:
        validated = validate_props(f"{node_of(scope).path}/{construct_id}", KustomizeConfigProps, props)
        super().__init__(scope, construct_id, name="kustomization", namespace=None)
        self.props = validated
        self._resources: list[str] = list(self.props.resources)
        self._patches: list[Patch] = list(self.props.patches)

    def add_resource(self, path: str) -> str:
        """List ``path`` (relative to this directory) as a resource; returns it."""
        self._resources.append(path)
        return path

    def add_patch(self, patch: Patch) -> Patch:
        self._patches.append(patch)
        return patch

    @property
    def resources(self) -> tuple[str, ...]:
        return tuple(self._resources)

    @property
    def patches(self) -> tuple[Patch, ...]:
        return tuple(self._patches)

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"apiVersion": self.api_version, "kind": self.kind}
        if self.props.namespace:
            doc["namespace"] = self.props.namespace
        doc["resources"] = list(self._resources)
        if self.props.components:
            doc["components"] = list(self.props.components)
        if self._patches:
            doc["patches"] = [patch.dump() for patch in self._patches]
        return doc


class KustomizationFile(Manifest):
    """A directory's ``kustomization.yaml``; ``config`` is its document."""

    def __init__(
        self,
        scope: Any,
        construct_id: str,
        *,
        directory: str,
        props: KustomizeConfigProps | None = None,
    ) -> None:
        super().__init__(scope, construct_id, path=posixpath.join(directory, "kustomization.yaml"))
        if props is None:
            props = KustomizeConfigProps()
        self.config = KustomizeConfig(self, "config", props)
