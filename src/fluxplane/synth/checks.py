"""Checks over the whole tree, run once before anything is written, all problems reported together.

They catch what Flux would only report at run time, on the cluster: a dependsOn or sourceRef that
names nothing, a dependency cycle (Flux would wait forever), a Flux path that is not in dist/, two
objects with one identity in one kustomize build, two files at one path, and plaintext in Git: a Secret
with values, or a SealedSecret carrying values in clear beside its ciphertext.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from typing import Any

from fluxplane.config.secrets import SECRET_KINDS, check_plaintext
from fluxplane.constructs.base import node_of, resources_below
from fluxplane.constructs.git_repository import GitRepository
from fluxplane.constructs.kustomization import Kustomization
from fluxplane.constructs.manifest import Manifest
from fluxplane.packs.registry import find_cycle


def flux_sources(chart: Any) -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of the Flux sources a chart defines."""
    return {
        ("GitRepository", resource.namespace or "", resource.name)
        for resource in resources_below(chart)
        if isinstance(resource, GitRepository)
    }


def _kustomizations(chart: Any) -> dict[tuple[str, str], Kustomization]:
    return {
        (resource.namespace or "", resource.name): resource
        for resource in resources_below(chart)
        if isinstance(resource, Kustomization)
    }


def check_cluster(
    chart: Any,
    *,
    cluster: str | None = None,
    sources: set[tuple[str, str, str]] | None = None,
    known: Any = None,
) -> list[str]:
    """References between the Flux objects of one cluster's chart (its entry point, the hub's spokes, tenants).

    ``sources`` are Flux sources defined elsewhere on the cluster, for charts that define none;
    ``known`` is the cluster's entry-point chart, whose Kustomizations a tenant may depend on.
    """
    problems: list[str] = []
    cluster = cluster or chart.cluster
    sources = set(sources or ()) | flux_sources(chart)
    own = _kustomizations(chart)
    kustomizations = {**(_kustomizations(known) if known is not None else {}), **own}
    graph: dict[str, tuple[str, ...]] = {}
    for (namespace, name), kustomization in own.items():
        edges = []
        for dependency in kustomization.dependencies:
            target = (dependency.namespace or namespace, dependency.name)
            if target not in kustomizations:
                known = ", ".join(sorted(n for _, n in kustomizations))
                problems.append(
                    f"{kustomization.node.path}: dependsOn {dependency.name!r} does not name a Kustomization "
                    f"on cluster {cluster!r} (known: {known})"
                )
            edges.append(f"{target[0]}/{target[1]}")
        graph[f"{namespace}/{name}"] = tuple(edges)
        ref = kustomization.props.source_ref
        if (ref.kind, ref.namespace or namespace, ref.name) not in sources:
            problems.append(
                f"{kustomization.node.path}: sourceRef {ref.kind}/{ref.name} is not defined on cluster {cluster!r}"
            )
    cycle = find_cycle(graph)
    if cycle:
        names = " -> ".join(item.split("/", 1)[1] for item in cycle)
        problems.append(f"{node_of(chart).path}: dependsOn cycle on cluster {cluster!r}: {names}")
    return problems


def check_files(files: list[tuple[Any, Manifest]]) -> list[str]:
    """No path written twice; no object identity twice in one file."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for chart, manifest in files:
        path = posixpath.join(chart.layout.key, manifest.path)
        if path in seen:
            problems.append(f"{manifest.node.path}: writes {path}, already written by {seen[path]}")
        seen[path] = manifest.node.path
        identities: dict[tuple[Any, ...], str] = {}
        for resource in manifest.resources():
            if resource.node.path in identities.values():
                continue
            if resource.ref in identities:
                problems.append(
                    f"{resource.node.path}: {resource.kind} {resource.name!r} is already defined in {path} "
                    f"by {identities[resource.ref]}"
                )
            identities[resource.ref] = resource.node.path
            if resource.kind in SECRET_KINDS or resource.kind.endswith("List"):
                problems.extend(check_plaintext(resource.to_dict(), resource.node.path, path))
    return problems


def check_flux_paths(charts: list[Any], directories: set[str], layouts: list[Any] | None = None) -> list[str]:
    """Every Flux Kustomization path is a dist/ folder with a kustomization.yaml.

    A path is looked up in the repository folder whose prefix it starts with: the chart's own, or
    one of ``layouts`` (an entry point applies the workloads repository's tenants, say).
    """
    problems: list[str] = []
    for chart in charts:
        candidates = [chart.layout, *(layouts or ())]
        by_path: defaultdict[str, list[Kustomization]] = defaultdict(list)
        for resource in resources_below(chart):
            if isinstance(resource, Kustomization):
                by_path[resource.props.path].append(resource)
        for path, users in sorted(by_path.items()):
            found = None
            for layout in candidates:
                base = layout.flux_path("").rstrip("/") + "/"
                relative = path[len(base) :].rstrip("/") if path.startswith(base) else None
                if relative:
                    found = posixpath.join(layout.key, relative)
                    break
            if found is None or found not in directories:
                problems.append(
                    f"{users[0].node.path}: spec.path {path!r} is not a folder of dist/ with a kustomization.yaml"
                )
    return problems
