"""What each cluster receives from a synthesized dist/ tree, as Flux applies it.

This is fluxplane.core.tree's walk (the one graph and validate use: from every cluster's entry folder, through
each Flux Kustomization's ``spec.path`` and ``kubeConfig``), with two choices of its own: folders are built
with ``kubectl kustomize`` (fluxplane.core.tree.kustomize's kubectl backend), so an object is what kustomize
makes of it, patches applied; and each Kustomization's ``postBuild`` variables are substituted. It
collects, per cluster, the objects that land there and the dist/ repository folder each came from, the
files any build read, and notes on what could not be followed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxplane.core.layout import PLATFORM, RepositoryLayout, workloads_layout
from fluxplane.core.tree import (
    DistRepository,
    FleetWalk,
    KubectlBuilder,
    KubectlFolders,
    MissingPath,
    Placed,
    repositories_of,
)
from fluxplane.core.tree.objects import Document, Key

#: Builds folders with kubectl, once per distinct set of inputs, for every tree compared.
Builder = KubectlBuilder

__all__ = [
    "Builder",
    "DistSnapshot",
    "Document",
    "Received",
    "RepositoryObject",
    "receive",
    "received",
    "repositories_of_plan",
]


@dataclass(frozen=True)
class DistSnapshot:
    """One synthesized dist/ ({path: text}) with the repositories its Flux objects point into."""

    label: str
    files: Mapping[str, str]
    repositories: tuple[DistRepository, ...] = ()
    #: Clusters on a Kubernetes version past or near the end of EKS standard support (awsdata.support_warnings).
    support: tuple[str, ...] = ()
    #: The management cluster, when the tree was synthesized from its definition (plan's accounts read it).
    hub: str | None = None


def repositories_of_plan(plan: Any) -> tuple[DistRepository, ...]:
    """The dist/ repositories of a fleet plan, from its ``repositories`` section."""
    repos = plan.fleet.repositories
    return repositories_of([RepositoryLayout(PLATFORM, repos.platform), workloads_layout(repos)])


@dataclass(frozen=True)
class RepositoryObject:
    """An object on a cluster, with the dist/ repository folder it was built from."""

    repository: str
    doc: Document


@dataclass
class Received:
    """Everything a tree sends: objects per cluster, the files any build read, and what could not be followed."""

    clusters: dict[str, dict[Key, RepositoryObject]] = field(default_factory=dict)
    read: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def received(
    tree: DistSnapshot,
    folders: KubectlFolders,
    *,
    repositories: Iterable[DistRepository] | None = None,
    clusters: Sequence[str] | None = None,
    follow: Callable[[Placed, str], bool] | None = None,
) -> Received:
    """What the clusters of ``tree`` (``clusters``, all when None) receive, its folders read by ``folders``;
    ``repositories`` (default: the tree's, or those the tree's own Flux objects name when it knows none, as a
    committed dist/) and ``follow`` are the walk's (fluxplane.core.tree.FleetWalk)."""
    if repositories is None:
        repositories = tree.repositories or None
    fleet = FleetWalk(folders, repositories, substitute=True, follow=follow)
    walk = fleet.walk(clusters)
    received = Received()
    for application in walk.applications:
        received.read |= folders.inputs(application.folder)
        objects = received.clusters.setdefault(application.cluster, {})
        for placed in application.objects:
            objects[placed.key] = RepositoryObject(application.repository, placed.item.doc)
    for problem in walk.problems:
        placed = problem.placed
        where = f"{tree.label}: {placed.cluster}: Kustomization {placed.namespace}/{placed.key.name}"
        if isinstance(problem, MissingPath):
            received.notes.append(f"{where}: spec.path {problem.path!r} is not in dist/")
        else:
            received.notes.append(f"{where}: {problem.field}: {problem.message}")
    return received


def receive(trees: Iterable[DistSnapshot], workdir: Path, builder: KubectlBuilder | None = None) -> list[Received]:
    """What every cluster receives from each tree; ``workdir`` holds the trees written out."""
    chosen = builder or KubectlBuilder()
    return [
        received(tree, KubectlFolders(tree.files, workdir / f"tree-{index}", chosen, tree.label))
        for index, tree in enumerate(trees)
    ]
