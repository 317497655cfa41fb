"""A synthesized tree as Flux reads it: which objects land on which cluster, and what applied each.

graph, validate and diff all ask this one question of a tree, with one set of rules:

* fluxplane.core.tree.objects: documents by path under dist/, object keys (group, kind, namespace, name);
* fluxplane.core.tree.kustomize: a folder read the way kustomize builds it (and Flux, for a folder without a
  kustomization file), in memory or with ``kubectl kustomize``;
* fluxplane.core.tree.flux: a Kustomization's source stands for a repository, its path resolves against where
  that repository's content lies in the tree, its postBuild variables;
* fluxplane.core.tree.walk: the walk from each cluster's entry folder, kubeConfig to the cluster it reaches,
  what writes each object on its cluster, and the problems found on the way, as data.

This is a small core layer: it reads documents and knows dist/'s layout (fluxplane.core.layout), and
nothing above it (graph, validate, diff, synth).
"""

from fluxplane.core.tree.flux import DistRepository, Location, repositories_of, substitute, substitute_text
from fluxplane.core.tree.kustomize import Build, BuildError, Folders, KubectlBuilder, KubectlFolders
from fluxplane.core.tree.objects import Document, Documents, Item, Key, LazyDocuments, group_of, key_of
from fluxplane.core.tree.walk import (
    Application,
    Contested,
    FleetWalk,
    MissingPath,
    MissingSource,
    Placed,
    Problem,
    Walk,
    elect,
)

__all__ = [
    "Application",
    "Build",
    "BuildError",
    "Contested",
    "DistRepository",
    "Document",
    "Documents",
    "FleetWalk",
    "Folders",
    "Item",
    "Key",
    "KubectlBuilder",
    "KubectlFolders",
    "LazyDocuments",
    "Location",
    "MissingPath",
    "MissingSource",
    "Placed",
    "Problem",
    "Walk",
    "elect",
    "group_of",
    "key_of",
    "repositories_of",
    "substitute",
    "substitute_text",
]
