"""The walk: which objects land on which cluster, and which Flux Kustomization applied each.

One module because the walk is one algorithm: ``FleetWalk`` drives it and ``Walk`` holds the state each step reads
back (what is placed where, the sources seen so far, the clusters a kubeConfig reaches), while what it reads
(kustomize builds, Flux paths, object keys) already lives in the modules beside it.

**Entry folders.** Every folder ``platform/clusters/<cluster>/`` is a cluster's entry folder: Flux's
bootstrap applies it. What a folder applies is what kustomize builds from it (fluxplane.core.tree.kustomize).

**Kustomizations.** Every Flux Kustomization among the objects placed on a cluster applies the folder its
``spec.path`` resolves to (fluxplane.core.tree.flux) on the same cluster, with ``spec.targetNamespace`` moving
what it applies into that namespace; cluster-scoped kinds have none. Its source must be an object on its
own cluster; a Kustomization whose source shows up later in the walk waits for it.

**kubeConfig.** A Kustomization (or HelmRelease) with ``spec.kubeConfig`` works on another cluster. Which
one is read from the tree: the cluster whose entry folder some Kustomization of the same namespace applies
through the same kubeConfig (the hub's ``flux-sync`` that hands a spoke its bootstrap, say); else the
cluster its namespace names (the hub keeps one namespace per workload cluster); else a cluster outside the
tree, called ``remote <namespace>/<secret>``. A cluster's own walk (``FleetWalk.local``) lists those objects
without following them; the whole walk (``FleetWalk.walk``) applies their folders on the cluster they reach,
once the clusters' own walks are done.

**Problems** are returned as data, each on the Kustomization and field they concern: a ``spec.path`` into
a repository fluxplane writes that names no folder of the tree (``MissingPath``), and a ``sourceRef`` that
names no source on the Kustomization's cluster (``MissingSource``).

**Writers.** What writes an object on a cluster is the Kustomization that applies it there, or the cluster's entry
point (what Flux's bootstrap applies, and the cluster's own Kustomization of its entry folder keeps applying). An
object two writers apply (``Walk.contested``) is taken by each from the other at every reconciliation, and pruned by
the one that stops applying it while the other still needs it. A Kustomization that applies the very document
another writer applies, and does not prune it, hands it over (the hub giving a workload cluster its bootstrap): it
is no second writer.

**Where repositories live.** A walk resolves paths against the repositories it is given (synth and diff
know them from the definition). Without them it reads them from the tree: Flux's bootstrap Kustomization
(``flux-system`` in namespace ``flux-system``) of each entry folder says where ``platform/`` lies in its
repository (its path names the entry folder), and another Kustomization of an entry folder whose path ends
in ``clusters/<cluster>`` says where the other folder holding ``clusters/<cluster>`` (``workloads/``) lies;
when clusters disagree, most of them win.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from fluxplane.config.hub import FLUX_NAMESPACE
from fluxplane.core.layout import PLATFORM, cluster_dir
from fluxplane.core.tree.flux import (
    DistRepository,
    Location,
    access,
    kube_config_name,
    locate,
    normal,
    origin,
    substitute,
    values_of,
)
from fluxplane.core.tree.kustomize import Build, Folders
from fluxplane.core.tree.objects import (
    CLUSTER_SCOPED,
    FLUX_KUSTOMIZE,
    FLUX_SOURCE,
    Document,
    Documents,
    Item,
    Key,
    group_of,
    is_flux_kustomization,
    metadata_of,
    spec_of,
)

#: The Flux source kinds a sourceRef may name.
SOURCE_KINDS = frozenset(
    {"GitRepository", "OCIRepository", "Bucket", "HelmRepository", "HelmChart", "ExternalArtifact"}
)
#: Where the entry folders are: platform/clusters/<cluster>.
CLUSTERS = posixpath.join(PLATFORM, "clusters")


class Placed:
    """An object on a cluster: the item kustomize built, the namespace it lands in, and the application (the
    Kustomization and folder) that put it there."""

    __slots__ = ("_key", "application", "cluster", "item", "namespace")

    def __init__(self, cluster: str, item: Item, namespace: str, application: Application) -> None:
        self.cluster = cluster
        self.item = item
        self.namespace = namespace
        self.application = application
        self._key: Key | None = None

    @property
    def doc(self) -> Document:
        return self.item.doc

    @property
    def key(self) -> Key:
        if self._key is None:
            metadata = metadata_of(self.item.doc)
            self._key = Key(
                group_of(self.item.doc.get("apiVersion")),
                str(self.item.doc.get("kind") or ""),
                self.namespace,
                str(metadata.get("name") or ""),
            )
        return self._key

    @property
    def applier(self) -> Placed | None:
        return self.application.applier

    def __repr__(self) -> str:
        return f"Placed({self.cluster!r}, {self.key!r}, {self.item.path!r}:{self.item.position})"


@dataclass(eq=False)
class Application:
    """What one Flux Kustomization (``applier``) applies on ``cluster``: the objects kustomize builds from
    ``folder``. ``applier`` is None for a cluster's entry folder, which Flux's bootstrap applies."""

    cluster: str
    folder: str
    applier: Placed | None
    objects: list[Placed] = field(default_factory=list)
    build: Build | None = None

    @property
    def repository(self) -> str:
        """The dist/ folder the objects come from (``platform``, ``workloads``)."""
        return self.folder.split("/", 1)[0]


@dataclass(frozen=True, eq=False)
class MissingPath:
    """A Kustomization's ``spec.path`` into a repository fluxplane writes names no folder of the tree."""

    placed: Placed
    path: str
    location: Location

    field = "spec.path"

    @property
    def message(self) -> str:
        if self.location.folder is not None:
            return f"folder {self.path!r} does not exist in the tree"
        written = self.location.written
        where = ", ".join(repository.flux_path(repository.key) for repository in written)
        return (
            f"folder {self.path!r} does not exist in the tree: it lies outside what fluxplane writes in "
            f"repository {written[0].url!r} ({where})"
        )


@dataclass(frozen=True, eq=False)
class MissingSource:
    """A Kustomization's ``sourceRef`` names no source on its cluster."""

    placed: Placed
    kind: str
    namespace: str
    name: str

    field = "spec.sourceRef.name"

    @property
    def message(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where!r} not found in cluster {self.placed.cluster!r}"


Problem = MissingPath | MissingSource


@dataclass(frozen=True, eq=False)
class Contested:
    """An object two writers apply on one cluster (``Walk.contested``): ``placed`` as the first one applies it,
    ``other`` as the other one does."""

    placed: Placed
    other: Placed

    @property
    def cluster(self) -> str:
        return self.placed.cluster

    @property
    def key(self) -> Key:
        return self.placed.key


#: A writer of objects on a cluster: a Kustomization (its cluster and key), or None for the cluster's entry point.
Writer = tuple[str, Key] | None


class Walk:
    """What a walk found: the applications in the order it made them, the objects on each cluster, the folder
    each Kustomization applies, and the problems."""

    def __init__(self, fleet: FleetWalk) -> None:
        self.fleet = fleet
        self.applications: list[Application] = []
        self.problems: list[Problem] = []
        self.placed: dict[str, list[Placed]] = {}
        #: The folder of dist/ each Kustomization placed applies (those whose path resolves there).
        self.folders: dict[Placed, str] = {}
        self._sources: dict[str, dict[tuple[str, str, str], Placed]] = {}
        self._variables: dict[str, dict[tuple[str, str, str], Placed]] = {}
        self._remote: dict[str, list[Placed]] = {}
        self._reach: dict[str, dict[str, str]] = {}
        self._access: dict[Placed, str | None] = {}

    def on(self, cluster: str) -> list[Placed]:
        """Every object placed on ``cluster``, in walk order (an object applied twice is listed twice)."""
        return self.placed.get(cluster, [])

    def objects(self, cluster: str) -> dict[Key, Placed]:
        """The objects on ``cluster`` by key; the first placement of a key wins."""
        found: dict[Key, Placed] = {}
        for placed in self.on(cluster):
            found.setdefault(placed.key, placed)
        return found

    def writer(self, placed: Placed) -> Placed | None:
        """The Kustomization that writes ``placed`` on its cluster; None for the cluster's entry point, which Flux's
        bootstrap applies and the cluster's own Kustomization of its entry folder keeps applying: one writer."""
        application = placed.application
        applier = application.applier
        if applier is None or (
            applier.cluster == application.cluster and application.folder == self.fleet.entry(application.cluster)
        ):
            return None
        return applier

    def contested(self, cluster: str) -> list[Contested]:
        """The objects two writers apply on ``cluster`` (module docstring), in walk order: one for each object and
        writer after the first. The same object given twice to one writer is kustomize's to refuse, not listed."""
        first: dict[Key, tuple[Writer, Placed]] = {}
        listed: set[tuple[Key, Writer]] = set()
        found: list[Contested] = []
        for placed in self.on(cluster):
            applier = self.writer(placed)
            writer: Writer = None if applier is None else (applier.cluster, applier.key)
            key = placed.key
            known = first.setdefault(key, (writer, placed))
            if known[0] == writer or (key, writer) in listed:
                continue
            listed.add((key, writer))
            other = known[1]
            if placed.doc == other.doc and not (_prunes(applier) and _prunes(self.writer(other))):
                continue
            found.append(Contested(other, placed))
        return found

    def source(self, cluster: str, kind: str, namespace: str, name: str) -> Placed | None:
        return self._sources.get(cluster, {}).get((kind, namespace, name))

    def access(self, placed: Placed) -> str | None:
        """The remote cluster access of a Flux object placed on a cluster (``flux.access``); None for one that works
        on its own cluster."""
        if placed in self._access:
            return self._access[placed]
        found = access(placed.item.doc, placed.namespace) if _remote(placed.item.doc) else None
        self._access[placed] = found
        return found

    def reach(self, cluster: str) -> dict[str, str]:
        """Per remote access (``flux.access``) used on ``cluster``: the cluster whose entry folder a Kustomization
        applies through it."""
        found = self._reach.get(cluster)
        if found is None:
            found = {}
            for placed in self._remote.get(cluster, []):
                folder = self.folders.get(placed)
                if folder is None or not folder.startswith(CLUSTERS + "/"):
                    continue
                reached = folder[len(CLUSTERS) + 1 :].split("/", 1)[0]
                remote = self.access(placed)
                if remote is not None and self.fleet.is_cluster(reached):
                    found.setdefault(remote, reached)
            self._reach[cluster] = found
        return found

    def target(self, placed: Placed) -> str:
        """The cluster a Flux object works on: its own, or the one its ``kubeConfig`` reaches (module docstring)."""
        remote = self.access(placed)
        if remote is None:
            return placed.cluster
        reached = self.reach(placed.cluster).get(remote)
        if reached is not None:
            return reached
        if self.fleet.is_cluster(placed.namespace):
            return placed.namespace
        return f"remote {placed.namespace}/{kube_config_name(placed.doc)}"

    def _remote_object(self, placed: Placed, folder: str) -> None:
        self._remote.setdefault(placed.cluster, []).append(placed)
        self._reach.pop(placed.cluster, None)
        self.folders[placed] = folder


#: Who applied a folder: the Kustomization's cluster and file and position (its key when a tool built it).
Identity = tuple[str, str | None, int, Key | None]
#: One folder applied on one cluster by one Kustomization (None: the cluster's bootstrap).
Visit = tuple[str, str, Identity | None]


class _Substituted:
    """The key under which a build keeps its items substituted, by set of variables (``Build.derived``)."""


_Variables = tuple[frozenset[tuple[str, str]], bool]

#: How many sets of variables a build keeps its substituted items for: a walk of a whole fleet applies a shared
#: folder with each cluster's variables, and keeping them all would hold every cluster's copy as long as the build.
_SUBSTITUTED_KEPT = 16


@dataclass(frozen=True)
class _Landing:
    """Where the objects of a build land: each one's namespace, and which of them are Flux Kustomizations,
    Flux sources and (when variables are substituted) ConfigMaps and Secrets, with their (kind, namespace, name)."""

    namespaces: tuple[str, ...]
    kustomizations: tuple[int, ...]
    sources: tuple[tuple[int, tuple[str, str, str]], ...]
    variables: tuple[tuple[int, tuple[str, str, str]], ...]

    @classmethod
    def of(cls, items: Sequence[Item], target_namespace: str | None, variables: bool) -> _Landing:
        namespaces: list[str] = []
        kustomizations: list[int] = []
        sources: list[tuple[int, tuple[str, str, str]]] = []
        found: list[tuple[int, tuple[str, str, str]]] = []
        for index, item in enumerate(items):
            doc = item.doc
            kind = doc.get("kind")
            if not isinstance(kind, str):
                kind = ""
            metadata = doc.get("metadata")
            if not isinstance(metadata, dict):
                metadata = {}
            if kind in CLUSTER_SCOPED:
                namespace = ""
            elif target_namespace is not None:
                namespace = target_namespace
            elif item.namespace:
                namespace = item.namespace
            else:
                own = metadata.get("namespace")
                namespace = own if isinstance(own, str) else ""
            namespaces.append(namespace)
            if kind == "Kustomization":
                if group_of(doc.get("apiVersion")) == FLUX_KUSTOMIZE:
                    kustomizations.append(index)
            elif kind in SOURCE_KINDS:
                if group_of(doc.get("apiVersion")) == FLUX_SOURCE:
                    sources.append((index, (kind, namespace, str(metadata.get("name") or ""))))
            elif variables and kind in ("ConfigMap", "Secret") and doc.get("apiVersion") == "v1":
                found.append((index, (kind, namespace, str(metadata.get("name") or ""))))
        return cls(tuple(namespaces), tuple(kustomizations), tuple(sources), tuple(found))


def _remote(doc: Document) -> bool:
    """Whether a Flux object works on another cluster (it has a ``spec.kubeConfig``)."""
    spec = doc.get("spec")
    return isinstance(spec, dict) and bool(spec.get("kubeConfig"))


def _prunes(writer: Placed | None) -> bool:
    """Whether a writer (``Walk.writer``) deletes what it stops applying: a Kustomization with ``spec.prune``, and
    the entry point (its Kustomization prunes, as ``flux bootstrap`` makes it)."""
    return writer is None or spec_of(writer.item.doc).get("prune") is True


def _identity(placed: Placed) -> Identity:
    item = placed.item
    return (placed.cluster, item.path, item.position, None if item.path is not None else placed.key)


@lru_cache(maxsize=4096)
def _entry(cluster: str) -> str:
    """The entry folder of ``cluster`` (``FleetWalk.entry``), asked for each object a walk places (its writer)."""
    return posixpath.join(PLATFORM, cluster_dir(cluster))


class FleetWalk:
    """A synthesized tree, read the way Flux reads it (module docstring).

    ``documents`` are the tree's documents by path (or a ``Folders`` reader over them, such as the kubectl
    backend); ``repositories`` are the repositories fluxplane writes, read from the tree when not given;
    ``substitute`` replaces each Kustomization's postBuild variables in what it applies; ``follow``, when given,
    is asked of each Kustomization and the folder it applies whether the walk goes there (a reader that needs
    part of a fleet leaves the rest unbuilt).
    """

    def __init__(
        self,
        documents: Documents | Folders,
        repositories: Iterable[DistRepository] | None = None,
        *,
        substitute: bool = False,
        follow: Callable[[Placed, str], bool] | None = None,
    ) -> None:
        self.folders = documents if isinstance(documents, Folders) else Folders(documents)
        self.follow = follow
        self._repositories = None if repositories is None else tuple(sorted(repositories))
        self._by_url: dict[str, tuple[DistRepository, ...]] | None = None
        self.substitute = substitute
        self._clusters: list[str] | None = None
        self._is_cluster: dict[str, bool] = {}
        self._located: dict[tuple[str, str | None, str], Location | None] = {}
        self._tops: set[str] | None = None

    # -- the tree ---------------------------------------------------------------------------------
    @property
    def clusters(self) -> list[str]:
        """The clusters: every folder below platform/clusters/ that holds something to apply."""
        if self._clusters is None:
            prefix = CLUSTERS + "/"
            self._clusters = [
                entry[len(prefix) :] for entry in self.folders.listing(CLUSTERS) if not self.folders.is_file(entry)
            ]
        return self._clusters

    def is_cluster(self, name: str) -> bool:
        known = self._is_cluster.get(name)
        if known is None:
            known = bool(name) and "/" not in name and self.folders.is_folder(self.entry(name))
            self._is_cluster[name] = known
        return known

    @staticmethod
    def entry(cluster: str) -> str:
        """The entry folder of ``cluster``."""
        return _entry(cluster)

    @property
    def repositories(self) -> tuple[DistRepository, ...]:
        if self._repositories is None:
            self._repositories = self.find_repositories()
        return self._repositories

    def locate(self, url: str, branch: str | None, path: str) -> Location | None:
        wanted = (url, branch, path)
        if wanted not in self._located:
            if self._by_url is None:
                by_url: dict[str, list[DistRepository]] = {}
                for repository in self.repositories:
                    by_url.setdefault(repository.url, []).append(repository)
                self._by_url = {url: tuple(found) for url, found in by_url.items()}
            self._located[wanted] = locate(self._by_url.get(url, ()), url, branch, path)
        return self._located[wanted]

    def forget(self, cluster: str) -> None:
        """Drop what was built from ``cluster``'s own folders, keeping the shared ones (a fleet's graphs are
        drawn one cluster at a time)."""
        keys = sorted({repository.key for repository in self.repositories} | {PLATFORM})
        self.folders.forget(posixpath.join(key, cluster_dir(cluster)) for key in keys)

    # -- walking ----------------------------------------------------------------------------------
    def local(self, cluster: str) -> Walk:
        """``cluster``'s own walk: from its entry folder, not following ``kubeConfig``."""
        return self._walk([cluster], remote=False)

    def walk(self, clusters: Sequence[str] | None = None, targets: Collection[str] | None = None) -> Walk:
        """Every cluster's walk, and what ``kubeConfig`` Kustomizations apply on the clusters they reach (only on
        ``targets`` when given: a reader that needs some clusters walks them and those applying to them, and
        leaves the rest of what those apply elsewhere unbuilt)."""
        return self._walk(self.clusters if clusters is None else clusters, remote=True, targets=targets)

    def applied(self, cluster: str) -> Iterator[tuple[Placed, Placed]]:
        """(Kustomization, object) for each object a Kustomization of ``cluster`` applies there."""
        for application in self.local(cluster).applications:
            if application.applier is not None and application.cluster == cluster:
                for placed in application.objects:
                    yield application.applier, placed

    def _walk(self, clusters: Sequence[str], remote: bool, targets: Collection[str] | None = None) -> Walk:
        walk = Walk(self)
        visited: set[Visit] = set()
        frontier = [Application(cluster, self.entry(cluster), None) for cluster in clusters]
        visited.update((application.cluster, application.folder, None) for application in frontier)
        waiting: list[Placed] = []
        reaching: list[Placed] = []
        # A Kustomization placed again (its folder applied twice) resolves as it did the first time.
        resolved: dict[tuple[Identity, str], str | None] = {}

        def follow(placed: Placed) -> Application | None:
            identity = _identity(placed)
            key = (identity, placed.namespace)
            if key in resolved:
                folder = resolved[key]
            else:
                folder = self._resolve(walk, placed, waiting)
                if not waiting or waiting[-1] is not placed:
                    resolved[key] = folder
            if folder is None or (self.follow is not None and not self.follow(placed, folder)):
                return None
            if _remote(placed.item.doc):
                walk._remote_object(placed, folder)
                reaching.append(placed)
                return None
            walk.folders[placed] = folder
            return self._visit(visited, placed.cluster, folder, placed, identity)

        while True:
            while frontier:
                self.folders.prefetch(application.folder for application in frontier)
                kustomizations = [placed for application in frontier for placed in self._apply(walk, application)]
                frontier = [found for placed in kustomizations if (found := follow(placed)) is not None]
            retry, waiting = waiting, []
            frontier = [found for placed in retry if (found := follow(placed)) is not None]
            if not frontier and remote and reaching:
                queued, reaching = reaching, []
                for placed in queued:
                    target = walk.target(placed)
                    if targets is not None and target not in targets:
                        continue
                    found = self._visit(visited, target, walk.folders[placed], placed, _identity(placed))
                    if found is not None:
                        frontier.append(found)
            if not frontier:
                break
        unresolved: dict[tuple[Identity, str], Placed] = {}
        for placed in waiting:
            unresolved.setdefault((_identity(placed), placed.namespace), placed)
        for placed in unresolved.values():
            ref = spec_of(placed.item.doc).get("sourceRef") or {}
            walk.problems.append(
                MissingSource(placed, str(ref.get("kind")), str(ref.get("namespace") or placed.namespace), ref["name"])
            )
        return walk

    @staticmethod
    def _visit(
        visited: set[Visit], cluster: str, folder: str, applier: Placed, identity: Identity
    ) -> Application | None:
        key = (cluster, folder, identity)
        if key in visited:
            return None
        visited.add(key)
        return Application(cluster, folder, applier)

    def _resolve(self, walk: Walk, placed: Placed, waiting: list[Placed]) -> str | None:
        """The folder a Kustomization applies; None when it is not followed (a problem is recorded, or it
        waits for its source)."""
        spec = spec_of(placed.item.doc)
        ref = spec.get("sourceRef")
        if not isinstance(ref, dict) or not isinstance(ref.get("name"), str) or not isinstance(ref.get("kind"), str):
            return None
        namespace = ref.get("namespace") or placed.namespace
        source = walk.source(placed.cluster, ref["kind"], str(namespace), ref["name"])
        if source is None:
            if ref["kind"] in SOURCE_KINDS:
                waiting.append(placed)
            return None
        found = origin(source.item.doc)
        path = spec.get("path")
        path = path if isinstance(path, str) and path else "."
        location = None if found is None else self.locate(found[0], found[1], path)
        if location is None:
            return None
        if location.folder is None or not self.folders.is_folder(location.folder):
            walk.problems.append(MissingPath(placed, path, location))
            return None
        return location.folder

    def _apply(self, walk: Walk, application: Application) -> list[Placed]:
        """Place what ``application`` applies on its cluster; returns the Flux Kustomizations among it."""
        build = self.folders.build(application.folder)
        application.build = build
        applier = application.applier
        items = build.items
        target_namespace = None
        if applier is not None:
            spec = spec_of(applier.item.doc)
            chosen = spec.get("targetNamespace")
            target_namespace = chosen if isinstance(chosen, str) and chosen else None
            if self.substitute and isinstance(spec.get("postBuild"), dict):
                items = self._substituted(walk, applier, spec["postBuild"], build)
        # Where the objects land is the same on every cluster that applies the folder as it is: worked out once.
        memo = (_Landing, self.substitute)
        landing = build.derived.get(memo) if items is build.items else None
        if landing is None:
            landing = _Landing.of(items, target_namespace, self.substitute)
            if items is build.items and target_namespace is None:
                build.derived[memo] = landing
        elif target_namespace is not None:
            landing = _Landing.of(items, target_namespace, self.substitute)
        cluster = application.cluster
        objects = [
            Placed(cluster, item, namespace, application)
            for item, namespace in zip(items, landing.namespaces, strict=True)
        ]
        sources = walk._sources.setdefault(cluster, {})
        for index, key in landing.sources:
            sources.setdefault(key, objects[index])
        if landing.variables:
            variables = walk._variables.setdefault(cluster, {})
            for index, key in landing.variables:
                variables[key] = objects[index]
        application.objects = objects
        walk.placed.setdefault(cluster, []).extend(objects)
        walk.applications.append(application)
        return [objects[index] for index in landing.kustomizations]

    @staticmethod
    def _substituted(walk: Walk, applier: Placed, post_build: dict[str, object], build: Build) -> tuple[Item, ...]:
        """``build``'s items with the applier's postBuild variables replaced; a variable whose source is not in the
        tree stays as written. Kept with the build for the same variables: a build two walks share (the guard's walks
        of the tree before and after a change) is substituted once."""
        values: dict[str, str] = {}
        complete = True
        known = walk._variables.get(applier.cluster, {})
        sources = post_build.get("substituteFrom")
        for ref in sources if isinstance(sources, list) else []:
            if not isinstance(ref, dict):
                continue
            found = known.get((str(ref.get("kind", "")), applier.namespace, str(ref.get("name", ""))))
            if found is None:
                complete = complete and bool(ref.get("optional"))
                continue
            values.update(values_of(found.item.doc))
        inline = post_build.get("substitute")
        values.update({str(key): str(value) for key, value in (inline if isinstance(inline, dict) else {}).items()})
        kept: dict[_Variables, tuple[Item, ...]] = build.derived.setdefault(_Substituted, {})
        memo = (frozenset(values.items()), complete)
        items = kept.get(memo)
        if items is None:
            items = tuple(item._replace(doc=substitute(item.doc, values, complete=complete)) for item in build.items)
            if len(kept) < _SUBSTITUTED_KEPT:
                kept[memo] = items
        return items

    # -- where repositories live ------------------------------------------------------------------
    def find_repositories(self, clusters: Iterable[str] | None = None) -> tuple[DistRepository, ...]:
        """The repositories fluxplane writes, read from the entry folders of ``clusters`` (all when None; module
        docstring)."""
        return elect(self.votes(cluster) for cluster in (self.clusters if clusters is None else clusters))

    def votes(self, cluster: str) -> tuple[DistRepository, ...]:
        """Where ``cluster``'s entry folder says the repositories lie: one vote for each it names (module
        docstring); :func:`elect` counts them."""
        if self._tops is None:
            self._tops = {entry for entry in self.folders.listing(".") if not self.folders.is_file(entry)}
        items = self.folders.build(self.entry(cluster)).items
        origins: dict[tuple[str, str, str], tuple[str, str | None]] = {}
        for item in items:
            found = origin(item.doc) if group_of(item.doc.get("apiVersion")) == FLUX_SOURCE else None
            if found is not None:
                metadata = metadata_of(item.doc)
                namespace = item.namespace or str(metadata.get("namespace") or "")
                origins[(str(item.doc.get("kind")), namespace, str(metadata.get("name") or ""))] = found
        tail = cluster_dir(cluster)
        platform: DistRepository | None = None
        others: list[tuple[str, str | None, str]] = []
        for item in items:
            if not is_flux_kustomization(item.doc):
                continue
            metadata = metadata_of(item.doc)
            namespace = item.namespace or str(metadata.get("namespace") or "")
            spec = spec_of(item.doc)
            ref = spec.get("sourceRef")
            path = spec.get("path")
            if not isinstance(ref, dict) or not isinstance(path, str):
                continue
            found = origins.get((str(ref.get("kind")), str(ref.get("namespace") or namespace), str(ref.get("name"))))
            wanted = normal(path)
            if found is None or not (wanted == tail or wanted.endswith("/" + tail)):
                continue
            prefix = wanted[: -len(tail)].rstrip("/") or "."
            if (namespace, metadata.get("name")) == (FLUX_NAMESPACE, FLUX_NAMESPACE):
                platform = DistRepository(PLATFORM, found[0], prefix, found[1])
            else:
                others.append((found[0], found[1], prefix))
        if platform is None:
            return ()
        votes = [platform]
        holders = [top for top in sorted(self._tops - {PLATFORM}) if self.folders.is_folder(posixpath.join(top, tail))]
        for url, branch, prefix in others:
            if len(holders) == 1 and (url, branch, prefix) != (platform.url, platform.branch, platform.prefix):
                votes.append(DistRepository(holders[0], url, prefix, branch))
        return tuple(votes)


def elect(votes: Iterable[Iterable[DistRepository]]) -> tuple[DistRepository, ...]:
    """For each repository folder, where most clusters' votes (``FleetWalk.votes``) say it lies; ties go to the first
    in order."""
    counted: dict[str, Counter[DistRepository]] = {}
    for each in votes:
        for repository in each:
            counted.setdefault(repository.key, Counter())[repository] += 1
    return tuple(
        sorted(min(counter, key=lambda repository: (-counter[repository], repository)) for counter in counted.values())
    )
