"""The synth cache: each workload cluster's rendered files, reused while its inputs are unchanged.

Where: ``<root>/.fluxplane-cache/synth/``, beside environments/ and outside dist/, so that it goes
with the project folder it describes (two checkouts never share entries) and ``git clean -X`` or
``rm -rf .fluxplane-cache`` clears it. It is derived data: delete it at any time, and the next synth
renders everything again. Nothing in it is secret that dist/ does not already hold. Beside it,
``.fluxplane-cache/parsed/`` keeps the definition's files parsed (fluxplane.config.parsed), used where this cache is.

What is cached: per workload cluster, one file holding the texts of everything synth writes below
that cluster's folders (its entry point, its overlays, its README, its tenants, and the hub's folders
that serve it alone: its chain, its add-ons' roles, its apps' AWS resources) and the add-on IAM roles
its packs declared. The hub's own files, the add-on catalogue and everything else shared are rendered
on every run; ``rendered.dumps`` keeps the YAML texts their documents were dumped to, for one code key
(fluxplane.synth.render.Dumps), so that documents rendered again as they were are not dumped again.

Keys. An entry is used only when two keys match:

* the input key: a hash of the code (every fluxplane source file, each installed pack's name,
  version, config schema and module source, and the versions of Python, cdk8s, PyYAML and pydantic),
  the fleet's shared definition (everything but the workload clusters), the cluster's environment
  (without its clusters), the cluster itself, its planned pack configs, variables and sealed
  secrets, the apps placed on it, and the hub's sealed secrets in its hub namespace;
* the shared key: a hash of the shared output the cluster's files are drawn against, taken from
  this run's render: the catalogue folders its packs start from (the base and its environment's
  overlay) and the bootstrap steps every chain shares.

An entry is a head and a body (fluxplane.system.keys.Signer.write_headed). The head is marshalled: the keys, each
file's path and digest, and the roles; it is signed with an HMAC-SHA256, together with the body's size and SHA-256.
The body is the files' texts, marshalled. marshal's is the fastest form Python reads back, which matters for a
fleet of a thousand clusters whose entries a one-cluster synth reads every time; its format is Python's own, and
the code key holds Python's version. A synth reads each entry's head alone, and a cluster's texts only when one is
asked for (fluxplane.synth.writer.TreeFiles): the guard and the write compare the tree with dist/ by the digests,
which are those the write takes of each file (fluxplane.synth.writer.text_digest), and need the texts of the few
files that differ. An entry that does not parse, does not verify, or was written for another cluster is ignored
(the cluster is rendered), so a damaged cache costs time, never correctness; a body that no longer matches its
head when its texts are wanted (the entry changed while synth ran) is an error, and the entry is removed. Entries
are written atomically (a temporary file renamed into place).

Trust. The cache lies in the project folder, where a pull request can put files. The HMAC's key is
this user's, outside the project (``synth.key`` in ``$XDG_CACHE_HOME/fluxplane``, default
``~/.cache/fluxplane``, made on first use, mode 0600): an entry not written on this machine by this
user never verifies, so nothing brought into the project changes what synth writes. A cache folder
that is a symlink is neither read nor written, entries are opened without following symlinks (and
only a regular file is read: a FIFO would block), a temporary file is always made anew (never written
through a link left in its place), and pruning removes only entries and leftover temporary files.
Without a usable key there is no cache.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import importlib.metadata
import json
import marshal
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from fluxplane.config.hub import cluster_namespace
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth.plan import ClusterPlan, FleetPlan
from fluxplane.synth.writer import DeferredTexts, TreeFiles, text_digest
from fluxplane.system.keys import CACHE_DIR, Head, Signer, content_hash, user_key

if TYPE_CHECKING:
    from fluxplane.charts.addon_identities import AddonRole

#: Bumped when the entry format changes.
FORMAT = 7
#: An entry's file name is the cluster's name and this.
ENTRY_SUFFIX = ".entry"
#: The file of the texts of the documents dumped on every run (render.Dumps), beside the entries.
DUMPS = "rendered.dumps"
_LIBRARIES = ("cdk8s", "PyYAML", "pydantic", "constructs")


@dataclass(frozen=True)
class CachedCluster:
    """One workload cluster's rendered files ({path under dist/: text}) and its add-on roles.

    A loaded entry's files are TreeFiles, whose texts are read when one is first asked for, and whose digests
    (fluxplane.synth.writer.text_digest of each text) are the ones the entry recorded.
    """

    input_key: str
    shared_key: str
    files: Mapping[str, str]
    roles: tuple[AddonRole, ...]


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


#: fluxplane's own package folder: its modules and its package data (IAM policies, AWS facts).
_PACKAGE = Path(__file__).resolve().parents[1]


def _package_files(package: Path) -> list[str | bytes]:
    """Every file of ``package`` but compiled bytecode, as (relative path, content) pairs in path order:
    a policy or data file shapes the output as much as a module does.

    Listed as ``package.rglob("*")`` finds them (no folder symlink followed, a file symlink read through), in the
    order of their paths' segments, with one listing per folder and no path objects: hundreds of files are read on
    every synth."""
    base = os.fspath(package)
    found: list[tuple[str, ...]] = []
    for folder, folders, names in os.walk(base):
        folders[:] = [name for name in folders if name != "__pycache__"]
        segments = () if folder == base else tuple(os.path.relpath(folder, base).split(os.sep))
        found.extend(
            (*segments, name)
            for name in names
            if name != "__pycache__"
            and os.path.splitext(name)[1] != ".pyc"
            and os.path.isfile(os.path.join(folder, name))
        )
    parts: list[str | bytes] = []
    for segments in sorted(found):
        with open(os.path.join(base, *segments), "rb") as reader:
            parts.extend(("/".join(segments), reader.read()))
    return parts


def code_key(registry: PackRegistry) -> str | None:
    """A hash of everything synth's output depends on besides the definition; None if a pack's source is unknown."""
    parts: list[str | bytes] = [str(FORMAT), sys.version]
    for library in _LIBRARIES:
        try:
            parts.append(f"{library}={importlib.metadata.version(library)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{library}=none")
    parts.extend(_package_files(_PACKAGE))
    hashed = {_PACKAGE}
    # packs often share a config model or a module (a family of packs made by one function): each taken once
    schemas: dict[type, str] = {}
    sources: dict[str, tuple[bytes, Path]] = {}
    for pack in registry:
        module = sys.modules.get(getattr(pack.bind, "__module__", "") or "")
        source = getattr(module, "__file__", None)
        if not source or not os.path.isfile(source):
            return None
        schema = schemas.get(pack.config)
        if schema is None:
            schema = schemas[pack.config] = _json(pack.config.model_json_schema())
        if source not in sources:
            sources[source] = (Path(source).read_bytes(), Path(source).resolve().parent)
        content, folder = sources[source]
        parts.extend(
            (
                _json(
                    [pack.name, pack.version, pack.layer, list(pack.requires), list(pack.crd_groups), list(pack.crds)]
                ),
                schema,
                source,
                content,
            )
        )
        in_package = module is not None and module.__spec__ is not None and bool(module.__spec__.parent)
        if in_package and not any(folder == done or done in folder.parents for done in hashed):
            # a pack in a package of its own: its data files too (IAM policies read with load_policy), once
            hashed.add(folder)
            parts.extend(_package_files(folder))
    return content_hash(*parts)


def input_keys(plan: FleetPlan, code: str) -> dict[str, str]:
    """Per workload cluster: the hash of the code and of every input its own files are built from."""
    fleet = plan.fleet
    shared = fleet.model_dump_json(exclude={"environments"})
    pack_configs = _json({name: config.model_dump_json() for name, config in sorted(plan.base_configs.items())})
    # what every cluster of an environment shares, hashed once for all of them
    environments = {
        env.name: content_hash(
            code,
            shared,
            pack_configs,
            env.model_dump_json(exclude={"clusters"}),
            _json(
                {
                    name: config.model_dump_json()
                    for (env_name, name), config in sorted(plan.environment_configs.items())
                    if env_name == env.name
                }
            ),
        )
        for env in fleet.environments
    }
    models = {cluster.name: cluster.model_dump_json() for cluster in fleet.clusters}
    # The hub keeps some of a cluster's sealed secrets in the cluster's hub namespace (its apps' credentials
    # for their own requests), which the cluster's hub folders carry.
    hub_sealed: dict[str, list[bytes]] = {}
    for item in plan.hub.sealed_secrets:
        # keys in the order written, which dist/ keeps
        hub_sealed.setdefault(item.namespace, []).append(to_json([item.name, item.document], fallback=str))
    apps: dict[str, list[str]] = {}
    for placement in plan.apps:
        apps.setdefault(placement.cluster, []).append(
            _json([placement.environment, placement.region, placement.app.model_dump_json()])
        )
    keys: dict[str, str] = {}
    for cluster in plan.clusters:
        if cluster.environment is None or cluster.name not in models:
            continue
        keys[cluster.name] = content_hash(
            environments[cluster.environment],
            models[cluster.name],
            _cluster_plan(cluster),
            *apps.get(cluster.name, ()),
            *hub_sealed.get(cluster_namespace(cluster.name), ()),
        )
    return keys


def _cluster_plan(cluster: ClusterPlan) -> bytes:
    """The plan of ``cluster`` as JSON, in one serializer call: its packs' configs in their own schemas (pydantic's
    model_dump_json of each), and the documents of its sealed secrets and manifests with their keys in the order
    written, which dist/ keeps."""
    return to_json(
        {
            "name": cluster.name,
            "environment": cluster.environment,
            "variables": cluster.variables,
            "packs": {name: [type(config).__qualname__, config] for name, config in cluster.packs.items()},
            "sealed": [[item.namespace, item.name, item.document] for item in cluster.sealed_secrets],
            "manifests": [[item.layer, item.scope, item.name, list(item.documents)] for item in cluster.manifests],
        },
        by_alias=False,
        fallback=str,
    )


class FolderIndex:
    """The files of a rendered tree by folder: which lie below a prefix, and a hash of them."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.files = files
        self.paths = sorted(files)
        self._digests: dict[str, str] = {}
        self._keys: dict[tuple[str, ...], str] = {}
        #: shared_key by the prefixes as given: a fleet's clusters ask with a few dozen prefixes each, mostly alike
        self._given: dict[tuple[str, ...], str] = {}

    def below(self, prefix: str) -> list[str]:
        """The paths that start with ``prefix``, in order."""
        start = bisect.bisect_left(self.paths, prefix)
        end = start
        while end < len(self.paths) and self.paths[end].startswith(prefix):
            end += 1
        return self.paths[start:end]

    def digest(self, prefix: str) -> str:
        """A hash of the paths and texts below ``prefix``."""
        found = self._digests.get(prefix)
        if found is None:
            parts: list[str] = [prefix]
            for path in self.below(prefix):
                parts.extend((path, self.files[path]))
            found = self._digests[prefix] = content_hash(*parts)
        return found

    def shared_key(self, prefixes: Iterable[str]) -> str:
        """A hash of the files below each of ``prefixes``."""
        given = tuple(prefixes)
        found = self._given.get(given)
        if found is None:
            folders = tuple(sorted(set(given)))
            found = self._keys.get(folders)
            if found is None:
                found = self._keys[folders] = content_hash(*(self.digest(prefix) for prefix in folders))
            self._given[given] = found
        return found


def _role_to_data(role: AddonRole) -> dict[str, Any]:
    return {
        "pack": role.pack,
        "name": role.name,
        "namespace": role.namespace,
        "service_account": role.service_account,
        "managed_policies": list(role.managed_policies),
        "policy": role.policy,
    }


def _role_from_data(data: dict[str, Any]) -> AddonRole:
    # Imported here: the charts are heavy, and only building needs them, not fluxplane.synth (importing this module)
    from fluxplane.charts.addon_identities import AddonRole

    return AddonRole(
        pack=str(data["pack"]),
        name=str(data["name"]),
        namespace=str(data["namespace"]),
        service_account=str(data["service_account"]),
        managed_policies=tuple(str(item) for item in data["managed_policies"]),
        policy=data["policy"],
    )


class SynthCache:
    """The cache folder of one project (see the module docstring).

    ``key`` signs and verifies entries (None: no cache at all); a ``read_only`` cache neither stores
    nor prunes (``synth --check`` writes nothing).
    """

    def __init__(self, folder: Path, key: bytes | None, *, read_only: bool = False) -> None:
        self.folder = folder
        self.key = key
        self.read_only = read_only

    @classmethod
    def for_root(cls, root: Path, *, read_only: bool = False) -> SynthCache:
        return cls(root / CACHE_DIR / "synth", user_key(), read_only=read_only)

    @functools.cached_property
    def _signer(self) -> Signer:
        return Signer(self.folder, self.key)

    def load(self, cluster: str) -> CachedCluster | None:
        """The entry of ``cluster``, or None when there is none, it is damaged, or it was not written here. Only its
        head is read: its texts are read when one is first asked for (DeferredTexts)."""
        head = self._signer.head(f"{cluster}{ENTRY_SUFFIX}")
        if head is None:
            return None
        try:
            fmt, name, input_key, shared_key, paths, digests, roles = marshal.loads(head.head)
            if fmt != FORMAT or name != cluster or not isinstance(input_key, str) or not isinstance(shared_key, str):
                return None
            if not (isinstance(paths, list) and isinstance(digests, list) and len(paths) == len(digests)):
                return None
            if not set(map(type, paths)) | set(map(type, digests)) <= {str}:
                return None
            joined = "\n".join(paths)
            if joined[:1] == "/" or "\n/" in joined or ".." in joined:  # never a path out of dist/
                return None
            source = f"{self.folder}/{cluster}{ENTRY_SUFFIX}"
            return CachedCluster(
                input_key=input_key,
                shared_key=shared_key,
                files=TreeFiles.deferred(
                    DeferredTexts(paths, digests, functools.partial(self._texts, head, len(paths)), source)
                ),
                roles=tuple(_role_from_data(role) for role in roles),
            )
        except (ValueError, EOFError, KeyError, TypeError):
            return None

    def _texts(self, head: Head, count: int) -> list[str] | None:
        """The ``count`` texts of the entry ``head`` was read from, when its body is still the one the head signs; None
        otherwise, and the entry is removed (it changed after its head was read), so the next synth renders the
        cluster again."""
        body = self._signer.body(head)
        with contextlib.suppress(ValueError, EOFError, TypeError):
            texts = marshal.loads(body) if body is not None else None
            if isinstance(texts, list) and len(texts) == count and set(map(type, texts)) <= {str}:
                return texts
        if not self.read_only:
            with contextlib.suppress(OSError):
                (self.folder / head.name).unlink()  # a symlink itself, never what it points to
        return None

    def store(self, cluster: str, entry: CachedCluster) -> None:
        """Write the entry of ``cluster`` atomically; a cache that cannot be written is skipped."""
        if self.read_only:
            return
        head = (
            FORMAT,
            cluster,
            entry.input_key,
            entry.shared_key,
            list(entry.files),
            # text_digest remembers each digest for the write of this output, whose texts these are
            [text_digest(text) for text in entry.files.values()],
            # the order of keys in a role's policy is part of the output, and marshal keeps it
            [_role_to_data(role) for role in entry.roles],
        )
        self._signer.write_headed(
            f"{cluster}{ENTRY_SUFFIX}", marshal.dumps(head), marshal.dumps(list(entry.files.values()))
        )

    def load_dumps(self, code: str) -> dict[str, str]:
        """The texts of the documents the last run dumped (fluxplane.synth.render.Dumps), by their key, when that
        run had the same ``code`` (code_key); none when the file is missing or does not verify."""
        data = self._signer.read_marshalled(DUMPS)
        if data is None or data.get("code") != code or not isinstance(data.get("texts"), dict):
            return {}
        texts = data["texts"]
        return texts if all(isinstance(key, str) and isinstance(text, str) for key, text in texts.items()) else {}

    def store_dumps(self, code: str, texts: Mapping[str, str]) -> None:
        """Keep ``texts`` as the dumps of this ``code`` (replacing the last run's); a cache that cannot be written
        is skipped."""
        if not self.read_only:
            self._signer.write(DUMPS, marshal.dumps({"code": code, "texts": dict(texts)}))

    def prune(self, clusters: Iterable[str]) -> None:
        """Remove the entries of clusters that are no longer in the fleet, and leftover temporary files;
        nothing else in the folder."""
        if self.read_only or not self._signer.usable:
            return
        keep = {f"{name}{ENTRY_SUFFIX}" for name in clusters}
        try:
            found = list(self.folder.iterdir())
        except OSError:
            return
        for path in found:
            name = path.name
            ours = name.endswith(ENTRY_SUFFIX) or (name.startswith(".") and name.endswith(".tmp"))
            if ours and name not in keep:
                with contextlib.suppress(OSError):
                    path.unlink()  # a symlink itself, never what it points to


def render_cached(plan: FleetPlan, cache: SynthCache, *, deferred: bool = False) -> TreeFiles:
    """Render ``plan`` like a full synth, taking from ``cache`` the clusters whose keys still match.

    Clusters whose input key matches are reused; after the render, a reused cluster whose shared key
    no longer matches (a catalogue folder or its spokes changed) is dropped and the fleet rendered
    again without it. Every cluster rendered anew is stored. A reused cluster's texts are read from its entry
    first, and an entry whose texts cannot be read is rendered anew; ``deferred``, they are read only when one is
    asked for (fluxplane.synth.writer.TreeFiles).
    """
    # Imported here: the tree's charts and the render are heavy, and only building needs them, not fluxplane.synth
    # (importing this module)
    from fluxplane.synth.render import Dumps, render_tree
    from fluxplane.synth.tree import FleetTree

    code = code_key(plan.registry)
    if code is None:
        return render_tree(FleetTree(plan))
    dumps = Dumps(cache.load_dumps(code))
    keys = input_keys(plan, code)
    entries: dict[str, CachedCluster] = {}
    for name, key in keys.items():
        entry = cache.load(name)
        if entry is None or entry.input_key != key:
            continue
        if deferred or all(texts.load() for texts in _deferred_texts(entry.files)):
            entries[name] = entry
    by_name = {cluster.name: cluster for cluster in plan.clusters}
    while True:
        app = FleetTree(plan, reused={name: entry.roles for name, entry in entries.items()})
        reused = TreeFiles({})
        for entry in entries.values():
            reused.raw.update(TreeFiles.of(entry.files).raw)
        out = render_tree(app, reused, dumps)
        index = FolderIndex(out)
        stale = [
            name
            for name, entry in entries.items()
            if index.shared_key(app.shared_prefixes(by_name[name])) != entry.shared_key
        ]
        if not stale:
            break
        for name in stale:
            del entries[name]
    for name, key in keys.items():
        if name in entries:
            continue
        files = {path: out[path] for prefix in app.cluster_prefixes(name) for path in index.below(prefix)}
        shared = index.shared_key(app.shared_prefixes(by_name[name]))
        cache.store(name, CachedCluster(input_key=key, shared_key=shared, files=files, roles=app.roles_of(name)))
    if dumps.used.keys() != dumps.known.keys():
        cache.store_dumps(code, dumps.used)
    cache.prune(keys)
    return out


def _deferred_texts(files: Mapping[str, str]) -> set[DeferredTexts]:
    """The DeferredTexts ``files`` holds texts of (TreeFiles)."""
    if not isinstance(files, TreeFiles):
        return set()
    return {text for text in files.raw.values() if not isinstance(text, str)}
