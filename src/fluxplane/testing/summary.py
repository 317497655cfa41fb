"""What each cluster of a synthesized tree runs, in the words of a review: the snapshot a fleet repository keeps.

dist/ itself is committed and held to the definition by the stale check, so a snapshot of it would only repeat
it. This is what a reviewer reads a change for, per cluster, from fluxplane.core.tree's walk (the one graph,
validate and diff read a tree with):

* ``versions``: every object that pins a version of something the cluster runs: a HelmRelease's chart and
  version (through its ``chartRef`` too), a Flux source's URL and ref, a Crossplane package; a HelmRelease that
  installs on another cluster (``kubeConfig``) is listed on both, with ``(from <cluster>)`` on the one it
  installs on;
* ``kustomizations``: every Flux Kustomization that applies something on the cluster, with its ``path`` and
  ``dependsOn`` and the objects it applies, by kind, namespace and name (``(from <cluster>)`` after one that
  works from another cluster; ``(bootstrap)`` for what only Flux's bootstrap applies).

Objects are named ``Kind namespace/name`` (``Kind name`` when cluster-scoped), with ``.group`` after the kind
where two groups have an object of that kind, namespace and name on the cluster. Everything is sorted, so the
snapshot changes only when what the cluster runs does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fluxplane.core.tree import FleetWalk, LazyDocuments, Placed
from fluxplane.core.tree.objects import FLUX_HELM, FLUX_SOURCE, spec_of

#: What Flux's bootstrap applies: the cluster's entry folder, where no Kustomization of the tree does.
BOOTSTRAP = "(bootstrap)"
#: Crossplane's package kinds, whose ``spec.package`` names the image and version.
CROSSPLANE_PACKAGES = "pkg.crossplane.io"
#: The fields of a Flux source's ``spec.ref`` that pin what it fetches, in the order Flux prefers them.
REFS = ("digest", "commit", "name", "semver", "tag", "branch")


def summarize(files: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """Per cluster of the tree ``files`` ({path under dist/: text}), its versions and its Kustomizations."""
    tree = FleetWalk(LazyDocuments({}, files), substitute=True)
    walk = tree.walk()
    clusters = sorted(tree.clusters)
    versions: dict[str, dict[str, str]] = {cluster: {} for cluster in clusters}
    kustomizations: dict[str, dict[str, dict[str, Any]]] = {cluster: {} for cluster in clusters}
    for cluster in clusters:
        names = _names(walk.on(cluster))
        kustomized = {
            application.folder
            for application in walk.applications
            if application.cluster == cluster and application.applier is not None
        }
        for application in walk.applications:
            if application.cluster != cluster or (application.applier is None and application.folder in kustomized):
                continue
            applier = application.applier
            if applier is None:
                label, entry = BOOTSTRAP, {"path": application.folder}
            else:
                label = _kustomization(applier, cluster)
                entry = _kustomization_entry(applier)
            found = kustomizations[cluster].setdefault(label, {**entry, "applies": []})
            found["applies"] = sorted({*found["applies"], *(names[placed.key] for placed in application.objects)})
        for placed in walk.on(cluster):
            version = _version(placed, walk)
            if version is None:
                continue
            versions[cluster][names[placed.key]] = version
            target = walk.target(placed)
            if target != cluster and target in versions:
                versions[target][f"{names[placed.key]} (from {cluster})"] = version
    return {
        cluster: {
            "versions": dict(sorted(versions[cluster].items())),
            "kustomizations": dict(sorted(kustomizations[cluster].items())),
        }
        for cluster in clusters
    }


def _names(objects: Iterable[Placed]) -> dict[Any, str]:
    """The name of each object's key on one cluster: ``Kind namespace/name``, ``Kind.group ...`` where two groups
    share the rest."""
    keys = {placed.key for placed in objects}
    shared: dict[tuple[str, str, str], int] = {}
    for key in keys:
        shared[(key.kind, key.namespace, key.name)] = shared.get((key.kind, key.namespace, key.name), 0) + 1
    names = {}
    for key in keys:
        kind = f"{key.kind}.{key.group or 'core'}" if shared[(key.kind, key.namespace, key.name)] > 1 else key.kind
        names[key] = f"{kind} {key.namespace}/{key.name}" if key.namespace else f"{kind} {key.name}"
    return names


def _kustomization(applier: Placed, cluster: str) -> str:
    """A Kustomization's label on ``cluster``: ``namespace/name``, and the cluster it works from when another."""
    own = f"{applier.namespace}/{applier.key.name}"
    return own if applier.cluster == cluster else f"{own} (from {applier.cluster})"


def _kustomization_entry(applier: Placed) -> dict[str, Any]:
    spec = spec_of(applier.doc)
    entry: dict[str, Any] = {"path": spec.get("path", "")}
    depends = [
        f"{ref['namespace']}/{ref.get('name')}" if ref.get("namespace") else str(ref.get("name"))
        for ref in spec.get("dependsOn") or []
        if isinstance(ref, dict)
    ]
    if depends:
        entry["dependsOn"] = sorted(depends)
    return entry


def _version(placed: Placed, walk: Any) -> str | None:
    """What ``placed`` pins, when it pins a version of something the cluster runs."""
    doc, key = placed.doc, placed.key
    spec = spec_of(doc)
    if key.group == FLUX_HELM and key.kind == "HelmRelease":
        chart = spec.get("chart")
        template = chart.get("spec") if isinstance(chart, dict) else None
        if isinstance(template, dict):
            return f"{template.get('chart')} {template.get('version') or '(latest)'}"
        ref = spec.get("chartRef")
        if isinstance(ref, dict):
            namespace = str(ref.get("namespace") or placed.namespace)
            source = walk.source(placed.cluster, str(ref.get("kind")), namespace, str(ref.get("name")))
            pinned = _version(source, walk) if source is not None else None
            return pinned or f"{ref.get('kind')} {namespace}/{ref.get('name')}"
        return None
    if key.group == FLUX_SOURCE and key.kind in ("GitRepository", "OCIRepository"):
        ref = spec.get("ref")
        pins = [f"{field} {ref[field]}" for field in REFS if isinstance(ref, dict) and ref.get(field)]
        return " ".join([str(spec.get("url")), *pins[:1]])
    if key.group == CROSSPLANE_PACKAGES and isinstance(spec.get("package"), str):
        return str(spec["package"])
    return None
