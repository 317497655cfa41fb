"""Plain manifests of the definition, for one environment or one cluster.

``environments/manifests/<environment>/<layer>/*.yaml`` reach every workload cluster of the environment,
``environments/manifests/<environment>/<cluster>/<layer>/*.yaml`` that cluster alone; ``<layer>`` is
``controllers``, ``configs`` or ``apps``, the layer of each cluster's order the objects are applied in
(after the layer below it is ready, before the layer above it starts). What Flux cannot apply is refused
here, with the file and document: a document that is not an object (apiVersion, kind, metadata.name), a
plain Secret (seal it: ``fluxplane seal``), values in clear anywhere else (a Secret among a List's items, a
SealedSecret's stringData: the plaintext guard, fluxplane.config.secrets), a name repeated in one cluster's layer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fluxplane.config.problems import show
from fluxplane.config.secrets import check_plaintext
from fluxplane.config.yamlfile import read_yaml_documents
from fluxplane.errors import ConfigError

#: Where the definition's plain manifests live, relative to the project.
MANIFESTS_DIR = "environments/manifests"
#: The layers of a cluster's order, as folders (the layers of fluxplane.core.layout).
MANIFEST_LAYERS = ("controllers", "configs", "apps")
#: A cluster's plain manifests are applied by the Flux Kustomizations ``manifests-<layer>``; no pack may take
#: one of these names.
PLAIN_MANIFESTS = "manifests"
#: A Kubernetes object name (a DNS-1123 subdomain).
_NAME = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"


@dataclass(frozen=True)
class ManifestFile:
    """One file of plain manifests: its layer, whether it is the environment's or the cluster's, its name,
    where it comes from (as messages show it) and its objects."""

    layer: str
    scope: str
    name: str
    source: str
    documents: tuple[dict[str, Any], ...]


def object_problems(document: Any, where: str) -> list[str]:
    """Why Flux could not apply ``document`` as one of a cluster's plain manifests (none: an empty list)."""
    if not isinstance(document, dict):
        return [f"{where}: expected a Kubernetes object (a mapping), got {type(document).__name__}"]
    problems = []
    for key in ("apiVersion", "kind"):
        if not isinstance(document.get(key), str) or not document[key]:
            problems.append(f"{where}: {key}: required, a string")
    metadata = document.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not isinstance(name, str) or len(name) > 253 or re.fullmatch(_NAME, name) is None:
        problems.append(f"{where}: metadata.name: expected a Kubernetes name (a DNS-1123 subdomain), got {show(name)}")
    if document.get("kind") == "Secret" and document.get("apiVersion") == "v1":
        problems.append(
            f"{where}: a plain Secret would put its values in Git: seal it with `fluxplane seal` "
            "(environments/secrets/) instead"
        )
    else:
        problems.extend(check_plaintext(document, where))
    return problems


def _read_folder(
    folder: Path, layer: str, scope: str, display: Callable[[Path], str]
) -> tuple[list[ManifestFile], list[str]]:
    found: list[ManifestFile] = []
    problems: list[str] = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        shown = display(path)
        if path.is_symlink() or path.is_dir() or path.suffix != ".yaml":
            problems.append(f"{shown}: not a manifest file; a layer's folder holds <name>.yaml files")
            continue
        try:
            documents = read_yaml_documents(path, shown)
        except ConfigError as exc:
            problems.extend(exc.problems)
            continue
        objects = []
        for index, document in enumerate(documents, start=1):
            if document is None:
                continue
            found_problems = object_problems(document, f"{shown}:{index}")
            problems.extend(found_problems)
            if not found_problems:
                objects.append(document)
        found.append(ManifestFile(layer, scope, path.name, shown, tuple(objects)))
    return found, problems


def read_manifests(
    root: Path, environments: Mapping[str, list[str]], display: Callable[[Path], str]
) -> dict[str, list[ManifestFile]]:
    """Per workload cluster, the manifest files it gets (its environment's, then its own), by layer order.

    ``environments`` maps each environment to its workload clusters. ConfigError lists every problem.
    """
    base = root / MANIFESTS_DIR
    if base.is_symlink():
        raise ConfigError(f"{display(base)}: a symbolic link; the definition's folders are its own")
    if not base.is_dir():
        return {}
    problems: list[str] = []
    per_cluster: dict[str, list[ManifestFile]] = {}
    for environment_dir in sorted(base.iterdir()):
        if environment_dir.name.startswith("."):
            continue
        shown = display(environment_dir)
        environment = environment_dir.name
        if environment_dir.is_symlink() or not environment_dir.is_dir() or environment not in environments:
            known = ", ".join(sorted(environments)) or "none"
            problems.append(f"{shown}: not an environment's folder (environments: {known})")
            continue
        clusters = environments[environment]
        shared: list[ManifestFile] = []
        own: dict[str, list[ManifestFile]] = {}
        for entry in sorted(environment_dir.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_symlink() or not entry.is_dir():
                problems.append(
                    f"{display(entry)}: expected a layer's folder ({', '.join(MANIFEST_LAYERS)}) or a cluster's"
                )
            elif entry.name in MANIFEST_LAYERS:
                files, found = _read_folder(entry, entry.name, "environment", display)
                shared.extend(files)
                problems.extend(found)
            elif entry.name in clusters:
                for layer_dir in sorted(entry.iterdir()):
                    if layer_dir.name.startswith("."):
                        continue
                    if layer_dir.is_symlink() or not layer_dir.is_dir() or layer_dir.name not in MANIFEST_LAYERS:
                        problems.append(
                            f"{display(layer_dir)}: expected a layer's folder ({', '.join(MANIFEST_LAYERS)})"
                        )
                        continue
                    files, found = _read_folder(layer_dir, layer_dir.name, "cluster", display)
                    own.setdefault(entry.name, []).extend(files)
                    problems.extend(found)
            else:
                problems.append(
                    f"{display(entry)}: neither a layer ({', '.join(MANIFEST_LAYERS)}) nor a cluster of environment "
                    f"{environment!r} (clusters: {', '.join(clusters) or 'none'})"
                )
        for cluster in clusters:
            files = sorted([*shared, *own.get(cluster, [])], key=lambda item: MANIFEST_LAYERS.index(item.layer))
            if files:
                per_cluster[cluster] = files
                problems.extend(repeated_objects(cluster, files))
    if problems:
        raise ConfigError(problems)
    return per_cluster


def repeated_objects(cluster: str, files: list[ManifestFile]) -> list[str]:
    """An object given twice for one cluster's layer (kustomize refuses the build)."""
    seen: dict[tuple[str, str, str, str, str], str] = {}
    problems = []
    for item in files:
        for document in item.documents:
            metadata = document["metadata"]
            key = (
                item.layer,
                document["apiVersion"].split("/")[0],
                document["kind"],
                str(metadata.get("namespace") or ""),
                metadata["name"],
            )
            if key in seen:
                problems.append(
                    f"{item.source}: {document['kind']} {metadata['name']!r} is also in {seen[key]}, "
                    f"for cluster {cluster!r}'s {item.layer}"
                )
            else:
                seen[key] = item.source
    return problems
