"""Where each document of the tree ends up at run time, and what exists in each cluster: the objects
placed there and what they produce (the Secrets of SealedSecrets and ExternalSecrets, what Compositions
compose for an XR). The rules of :mod:`fluxplane.validate.references` read it; its docstring says how
objects reach a cluster and which outputs count.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from fluxplane.core.tree import DistRepository, FleetWalk, MissingSource, Placed
from fluxplane.validate.findings import Finding
from fluxplane.validate.tree import DistTree, Document

FLUX_SOURCE = "source.toolkit.fluxcd.io"
#: An object's identity, as fluxplane.core.tree.objects.Key holds it (group, kind, namespace or "", name), made a
#: plain tuple here: the references check makes one per object of every cluster, and a tuple is made in a fifth
#: of the time. The two compare and hash alike.
Key = tuple[str, str, str, str]

#: (cluster, namespace, "ConfigMap" or "Secret", name) -> the keys it defines; None when they cannot be known.
SourceKeys = dict[tuple[str, str, str, str], set[str] | None]


def group_of(body: dict[str, Any]) -> str:
    api = body.get("apiVersion")
    return api.rsplit("/", 1)[0] if isinstance(api, str) and "/" in api else ""


def field_at(body: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(body, dict):
            return None
        body = body.get(part)
    return body


@dataclass(frozen=True)
class PlacedDocument:
    """A document in a cluster, with the namespace it ends up in."""

    cluster: str
    document: Document
    namespace: str

    @property
    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = self.document.body
        return body

    @property
    def key(self) -> Key:
        return (group_of(self.body), self.document.kind, self.namespace, self.document.name)


@dataclass
class RuntimeApplication:
    """What one Flux Kustomization (or a cluster's bootstrap, when ``kustomization`` is None) applies on
    ``cluster`` (another than the Kustomization's own when it has a ``kubeConfig``), from ``folder``."""

    cluster: str
    folder: str
    kustomization: PlacedDocument | None
    objects: list[PlacedDocument] = field(default_factory=list)
    #: kustomization.yaml documents read on the way (their patches carry ${VAR} too).
    build_files: list[Document] = field(default_factory=list)


class RuntimeFleet:
    """Where every document of the tree ends up (fluxplane.core.tree's walk), and what exists in each cluster.

    With ``clusters``, only those are walked, and of what ``kubeConfig`` Kustomizations apply elsewhere only
    what lands on ``targets``: what exists on each of them is as in the whole walk when every cluster applying
    to one of them is walked (fluxplane.validate.cache). ``repositories`` are where the walk resolves paths (read
    from the tree when None). ``checked`` are the clusters whose objects will be checked (all when None): what
    placed objects produce at run time is worked out only there. ``follow`` is the walk's
    (fluxplane.core.tree.FleetWalk): asked of each Kustomization and the folder it applies whether the walk goes
    there."""

    def __init__(
        self,
        tree: DistTree,
        clusters: Sequence[str] | None = None,
        repositories: Iterable[DistRepository] | None = None,
        targets: Collection[str] | None = None,
        checked: Collection[str] | None = None,
        follow: Callable[[Placed, str], bool] | None = None,
    ) -> None:
        self.tree = tree
        self._documents = {(document.file, document.index): document for document in tree.documents}
        self.walker = FleetWalk(tree.by_file(), repositories, follow=follow)
        walk = self.walker.walk(clusters, targets=targets)
        self.walk = walk
        self.source_keys: SourceKeys | None = None
        self.clusters = sorted(walk.fleet.clusters)
        self.applications: list[RuntimeApplication] = []
        self.placed: dict[tuple[str, str, int, str], PlacedDocument] = {}
        self.exists: dict[str, set[Key]] = {cluster: set() for cluster in self.clusters}
        for application in walk.applications:
            applier = None if application.applier is None else self._placed(application.applier)
            placed = [self._placed(each) for each in application.objects]
            configs = application.build.configs if application.build is not None else ()
            build_files = [self._documents[(item.path or "", item.position)] for item in configs]
            self.applications.append(
                RuntimeApplication(application.cluster, application.folder, applier, placed, build_files)
            )
            for each in placed:
                self.placed.setdefault((each.cluster, each.document.file, each.document.index, each.namespace), each)
                self.exists.setdefault(each.cluster, set()).add(each.key)
        self._produce(checked)
        #: Every source placed in a cluster, by (cluster, group, kind, namespace, name): the first placed, the
        #: cluster's own before what a Kustomization of it applies again.
        self.sources: dict[tuple[str, str, str, str, str], PlacedDocument] = {}
        for each in self.placed.values():
            if each.key[0] == FLUX_SOURCE:
                self.sources.setdefault((each.cluster, *each.key), each)
        #: What the walk could not follow, with the cluster each problem is on.
        self.problems: list[tuple[str, Finding]] = []
        for problem in walk.problems:
            where = self._placed(problem.placed)
            if isinstance(problem, MissingSource) and self.has(
                where.cluster, (FLUX_SOURCE, problem.kind, problem.namespace, problem.name)
            ):
                continue
            self.problems.append((where.cluster, where.document.finding(problem.field, problem.message)))

    def _placed(self, placed: Placed) -> PlacedDocument:
        return PlacedDocument(
            placed.cluster, self._documents[(placed.item.path or "", placed.item.position)], placed.namespace
        )

    # -- what placed objects produce at run time --------------------------------------------------
    def _produce(self, clusters: Collection[str] | None) -> None:
        compositions = [
            d
            for d in self.tree.documents
            if isinstance(d.body, dict)
            and d.kind == "Composition"
            and group_of(d.body) == "apiextensions.crossplane.io"
        ]
        for placed in list(self.placed.values()):
            body, cluster, namespace = placed.body, placed.cluster, placed.namespace
            if clusters is not None and cluster not in clusters:
                continue
            produced: list[tuple[str, str, Any]] = []
            if placed.document.kind == "SealedSecret" and group_of(body) == "bitnami.com":
                produced.append(
                    ("", "Secret", field_at(body, "spec", "template", "metadata", "name") or placed.document.name)
                )
            if placed.document.kind == "ExternalSecret" and group_of(body) == "external-secrets.io":
                produced.append(("", "Secret", field_at(body, "spec", "target", "name") or placed.document.name))
            for composition in compositions:
                produced.extend(_composed(composition.body, body))
            for group, kind, name in produced:
                if isinstance(name, str) and name:
                    self.exists[cluster].add((group, kind, namespace, name))

    def has(self, cluster: str, key: Key) -> bool:
        return key in self.exists.get(cluster, set())


def _field(body: Any, path: Any) -> Any:
    if not isinstance(path, str):
        return None
    return field_at(body, *path.split("."))


def _patched_name(patches: Any, xr: dict[str, Any], target: str) -> Any:
    for patch in patches or []:
        if (
            isinstance(patch, dict)
            and patch.get("type", "FromCompositeFieldPath") == "FromCompositeFieldPath"
            and patch.get("toFieldPath") == target
            and not patch.get("transforms")
        ):
            return _field(xr, patch.get("fromFieldPath"))
    return None


def _composed(composition: dict[str, Any], xr: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(group, kind, name) of what ``composition`` writes for ``xr``, when it composes that XR's type."""
    reference = field_at(composition, "spec", "compositeTypeRef") or {}
    if reference.get("apiVersion") != xr.get("apiVersion") or reference.get("kind") != xr.get("kind"):
        return
    chosen = field_at(xr, "spec", "crossplane", "compositionRef", "name")
    if chosen and chosen != field_at(composition, "metadata", "name"):
        return
    for step in field_at(composition, "spec", "pipeline") or []:
        data = field_at(step, "input")
        if not isinstance(data, dict):
            continue
        connection = data.get("writeConnectionSecretToRef")
        if isinstance(connection, dict):
            yield "", "Secret", connection.get("name") or _patched_name(connection.get("patches"), xr, "name")
        for resource in data.get("resources") or []:
            base = field_at(resource, "base")
            if not isinstance(base, dict) or not isinstance(base.get("kind"), str):
                continue
            name = field_at(base, "metadata", "name") or _patched_name(resource.get("patches"), xr, "metadata.name")
            yield group_of(base), base["kind"], name
