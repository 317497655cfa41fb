"""Output files: a Manifest is a construct that owns one YAML file of dist/.

Charts create manifests; resources created below a manifest are written to its file, in creation
order. The path is relative to the repository folder of dist/ the chart writes into.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from fluxplane.constructs.base import Construct, Resource, node_of, resources_below
from fluxplane.errors import ConstructError

_PATH = re.compile(r"^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)*\.yaml$")


class Manifest(Construct):
    """A YAML file of Kubernetes documents, written at ``path``."""

    def __init__(self, scope: Any, construct_id: str, *, path: str) -> None:
        if not isinstance(path, str) or not _PATH.fullmatch(path) or posixpath.normpath(path) != path:
            raise ConstructError(
                f"{node_of(scope).path}/{construct_id}: output path {path!r} must be a relative, kebab-case .yaml path"
            )
        super().__init__(scope, construct_id)
        self.path = path

    @property
    def directory(self) -> str:
        return posixpath.dirname(self.path)

    def resources(self) -> list[Resource]:
        return list(resources_below(self))

    def documents(self) -> list[dict[str, Any]]:
        return [resource.to_dict() for resource in resources_below(self)]
