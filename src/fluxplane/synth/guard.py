"""The replacement guard: synth never replaces or moves live infrastructure unless asked to.

Before writing, synth compares what it would write with the tree it replaces (the committed dist/)
and refuses, one line each, these changes to an object that exists in both:

* **a replacement**: a field the API server, a CRD or the cloud API treats as immutable changes (a
  VPC or subnet CIDR, a cluster's region, a table's key schema; the table in fluxplane.synth.hazards).
  Flux's apply then fails, or the cloud resource is deleted and created anew. ``--replace PATTERN``
  allows it.
* **a reinstallation**: a HelmRelease's release target changes (its release name, the namespace it installs
  into or the one Helm keeps its records in): helm-controller uninstalls the release, deleting what it
  installed (a spoke's Flux, with its CRDs and every object of theirs), then installs the new one.
  ``--replace PATTERN`` allows it.
* **a deletion** of a cloud resource that holds a cluster or data (an EKSCluster, an app's table, queue or
  bucket): Crossplane deletes it in AWS. Renaming a cluster or an app is such a deletion (and a new
  resource). ``--delete PATTERN`` allows it.
* **a move**: the Flux Kustomization that applies an object changes (the hub's objects whose deletion
  deletes something live carry it, fluxplane.config.hub.APPLIED_BY). When the old Kustomization stops
  applying the object it deletes it, before the new one adopts it, unless the old one is suspended
  first. ``--move PATTERN`` allows it, once the old Kustomization is suspended on the hub.
* **a Kubernetes version EKS refuses**: an EKSCluster's version going down, or up by more than one minor
  version, from the one in the old tree. The definition is checked against the versions recorded in
  environments/allocations.yaml; this check holds when that file says otherwise. No flag allows it.
* **a Kubernetes version only the record moves**: a cluster whose definition names no ``kubernetesVersion``
  follows environments/allocations.yaml, which only follows the definition: an edited (or deleted) entry
  there that would give the cluster another version than its variables in the old tree hold is refused at
  the record. No flag allows it: the definition's ``kubernetesVersion`` upgrades a cluster.

A pattern is ``Kind/namespace/name`` (``Kind/name`` for cluster-scoped objects), with shell wildcards.

Only the files whose text changes are parsed, so a change to one cluster of a large fleet costs a
read of the old tree and a few parses. The old tree is state that arrives from elsewhere: it is read,
never trusted to be fluxplane's (an object without the annotation is placed by following the hub's
Flux paths), and symlinks in it are not followed.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any

import yaml

from fluxplane.config.awsdata import minor
from fluxplane.config.hub import APPLIED_BY
from fluxplane.config.network import FollowedVersion
from fluxplane.core.codec import parse_documents
from fluxplane.core.layout import PLATFORM, cluster_vars_file
from fluxplane.core.tree import Fleet, LazyDocuments
from fluxplane.synth import writer
from fluxplane.synth.hazards import (
    ABSENT,
    CLOUD_GROUPS,
    DELETES,
    EKS_CLUSTER,
    EXTERNAL_NAME,
    HELM_RELEASE,
    IMMUTABLE,
    Key,
    allowed,
    applier,
    field,
    immutable_change,
    immutable_fields,
    key_of,
    label,
    release_target,
    version_step,
)

# What diff's risk report reads from here stays importable from here.
__all__ = [
    "EXTERNAL_NAME",
    "HELM_RELEASE",
    "IMMUTABLE",
    "OldTree",
    "applier",
    "field",
    "guard",
    "immutable_change",
    "immutable_fields",
    "read_tree",
    "release_target",
]

#: Kinds whose changes the guard looks at; a file holding none of them is not parsed.
_KINDS = frozenset({*(kind for _, kind in IMMUTABLE if kind != "*"), HELM_RELEASE[1]})
_TOP_KIND = re.compile(r"(?m)^kind: (\S+)$")
_AWS_API = re.compile(r"(?m)^apiVersion: \S+\.aws(\.m)?\.upbound\.io/")


def _change(old: Any, new: Any) -> str:
    """`` from A to B`` for scalar values; nothing for structures, which the diff of dist/ shows."""
    scalars = (str, int, float, bool)
    if isinstance(old, scalars) and (new is None or isinstance(new, scalars)):
        return f" from {old} to {new if new is not None else 'nothing'}"
    return ""


def _release_text(target: tuple[str, str, str]) -> str:
    storage, namespace, name = target
    return f"{name} in {namespace}" + (f" (stored in {storage})" if storage != namespace else "")


def _worth_parsing(text: str) -> bool:
    if APPLIED_BY in text or _AWS_API.search(text):
        return True
    return any(kind in _KINDS for kind in _TOP_KIND.findall(text))


def read_tree(outdir: Path) -> dict[str, bytes]:
    """The files of the tree at ``outdir`` by their path below it; symlinks are not followed."""
    return OldTree(outdir).read_all()


class OldTree:
    """The tree a write replaces: its files, read only where they may differ from what synth writes."""

    def __init__(self, outdir: Path) -> None:
        self.outdir = outdir
        self._stats: dict[str, tuple[int, int]] | None = None
        self._linked: dict[str, bool] = {}

    @property
    def exists(self) -> bool:
        return self.outdir.is_dir() and not self.outdir.is_symlink()

    @property
    def stats(self) -> dict[str, tuple[int, int]]:
        """Every regular file of the tree, by its path below it: (size, mtime_ns). Symlinks are left out."""
        if self._stats is None:
            self._stats = {}
            if self.exists:
                pending = [("", str(self.outdir))]
                while pending:
                    prefix, folder = pending.pop()
                    try:
                        entries = list(os.scandir(folder))
                    except OSError:
                        continue
                    for entry in entries:
                        path = prefix + entry.name
                        if entry.is_dir(follow_symlinks=False):
                            pending.append((path + "/", entry.path))
                        elif entry.is_file(follow_symlinks=False):
                            stat = entry.stat(follow_symlinks=False)
                            self._stats[path] = (stat.st_size, stat.st_mtime_ns)
        return self._stats

    def _stat(self, paths: Iterable[str]) -> dict[str, tuple[int, int]]:
        """(size, mtime_ns) of the regular files among ``paths``: a file is read only after ``_own`` says so."""
        found: dict[str, tuple[int, int]] = {}
        root = os.fspath(self.outdir) + "/"
        for path in paths:
            try:
                stat = os.stat(root + path)
            except OSError:
                continue
            if S_ISREG(stat.st_mode):
                found[path] = (stat.st_size, stat.st_mtime_ns)
        return found

    def _own(self, path: str) -> bool:
        """Whether ``path`` lies in the tree itself: no symlink on the way to it, the file included."""
        known = self._linked
        root = os.fspath(self.outdir)
        parts = path.split("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            linked = known.get(prefix)
            if linked is None:
                linked = known[prefix] = os.path.islink(os.path.join(root, prefix))
            if linked:
                return False
        return True

    def read(self, path: str) -> bytes | None:
        if not self._own(path):
            return None
        try:
            with open(os.path.join(self.outdir, path), "rb") as handle:
                return handle.read()
        except OSError:
            return None

    def read_all(self) -> dict[str, bytes]:
        found = {path: self.read(path) for path in self.stats}
        return {path: data for path, data in found.items() if data is not None}

    def changed(self, files: Mapping[str, str]) -> dict[str, bytes | None]:
        """The paths whose content differs from ``files`` (new ones, changed ones, gone ones), with their old bytes.

        A file whose size and time match what the last write recorded for the same content (the
        writer's manifest, fluxplane.synth.writer.recorded) is not read; with such a record, only the
        files it lists and the new ones are looked at (a file added to dist/ by hand is not dist/'s).
        """
        if not self.exists:
            return {}
        recorded = writer.recorded(self.outdir)
        stats = self._stat(files.keys() | recorded.keys()) if recorded else self.stats
        found: dict[str, bytes | None] = {}
        writer.forget_text_digests()
        for path, text in files.items():
            stat = stats.get(path)
            entry = recorded.get(path)
            if stat is not None and entry is not None and entry[1:] == stat and entry[0] == writer.text_digest(text):
                continue
            data = text.encode("utf-8")
            old = self.read(path) if stat is not None else None
            if old != data:
                found[path] = old
        for path in stats.keys() - files.keys():
            found[path] = self.read(path)
        return found


@dataclass(frozen=True)
class _Found:
    path: str
    document: dict[str, Any]


def _objects(texts: Iterable[tuple[str, str]]) -> dict[Key, _Found]:
    found: dict[Key, _Found] = {}
    for path, text in texts:
        if not path.endswith(".yaml") or not _worth_parsing(text):
            continue
        try:
            documents = parse_documents(text)
        except yaml.YAMLError:  # a file the old tree holds that is not YAML guards nothing
            continue
        for document in documents:
            key = key_of(document)
            if key is not None:
                found.setdefault(key, _Found(path, document))
    return found


def _legacy_appliers(old: Mapping[str, bytes], hub: str) -> dict[Key, str]:
    """For a tree written before objects said who applies them: each hub object's Kustomization, found by
    following the hub's Flux paths the way kustomize builds them."""
    texts = {path: data.decode("utf-8", "replace") for path, data in old.items() if path.endswith(".yaml")}
    appliers: dict[Key, str] = {}
    try:
        for applier, placed in Fleet(LazyDocuments({}, texts)).applied(hub):
            key = key_of(placed.doc)
            if key is not None:
                appliers.setdefault(key, f"{applier.namespace}/{applier.key.name}")
    except (yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError):  # an old tree that cannot be followed
        return {}
    return appliers


def _kubernetes_version(text: str | None) -> str | None:
    """The ``kubernetes_version`` of a cluster's variables file (None when it holds none, or is not YAML)."""
    if text is None:
        return None
    try:
        documents = parse_documents(text)
    except yaml.YAMLError:
        return None
    value = field(documents[0] if documents else None, ("data", "kubernetes_version"))
    return value if isinstance(value, str) else None


def _versions_the_record_moves(
    changed: Mapping[str, bytes | None], files: Mapping[str, str], followed: Mapping[str, FollowedVersion]
) -> dict[str, str]:
    """By cluster, why its version may not change: its definition names none, so only the record would move it."""
    found: dict[str, str] = {}
    for cluster, version in sorted(followed.items()):
        path = f"{PLATFORM}/{cluster_vars_file(cluster)}"
        old_data = changed.get(path)
        old = _kubernetes_version(old_data.decode("utf-8", "replace") if old_data is not None else None)
        new = _kubernetes_version(files.get(path))
        if old is None or new is None or old == new:
            continue
        try:
            upgrade = f'"1.{minor(old) + 1}"'
        except (IndexError, ValueError):
            upgrade = "the next minor version"
        found_value = (
            f'"{version.recorded}"' if version.recorded is not None else f'nothing recorded, so the default "{new}"'
        )
        found[cluster] = (
            f"{version.record}: {found_value} would move the cluster from Kubernetes {old}, its version in dist/ "
            f"({path}), though its definition names no version; the record only follows the definition: put back "
            f'"{old}", or upgrade the cluster with kubernetesVersion: {upgrade} at {version.definition}'
        )
    return found


def guard(
    files: Mapping[str, str],
    outdir: Path,
    *,
    hub: str,
    replace: Sequence[str] = (),
    delete: Sequence[str] = (),
    move: Sequence[str] = (),
    followed_versions: Mapping[str, FollowedVersion] | None = None,
) -> list[str]:
    """The replacements, deletions and moves writing ``files`` over the tree at ``outdir`` would make, not allowed.

    ``followed_versions`` are the clusters whose definition names no Kubernetes version
    (fluxplane.synth.plan.FleetPlan.followed_versions): the record alone may not change theirs.
    """
    tree = OldTree(outdir)
    changed = tree.changed(files)
    if not changed:
        return []
    moved_versions = _versions_the_record_moves(changed, files, followed_versions or {})
    before = _objects(
        (path, data.decode("utf-8", "replace")) for path, data in sorted(changed.items()) if data is not None
    )
    after = _objects((path, files[path]) for path in sorted(changed) if path in files)
    problems: list[str] = list(moved_versions.values())
    for key in sorted(before.keys() - after.keys()):
        deleted = DELETES.get(key[:2])
        if deleted is not None and not allowed(key, delete):
            problems.append(
                f"{before[key].path}: {key[1]} {key[2] + '/' if key[2] else ''}{key[3]}: removed, so Crossplane "
                f"deletes {deleted} in AWS (renaming is removing and adding); to do it on purpose, run synth with "
                f"--delete '{label(key)}'"
            )
    moves: dict[str, None] = {}
    legacy: dict[Key, str] | None = None
    for key in sorted(after.keys() & before.keys()):
        was, now = before[key], after[key]
        where = f"{now.path}: {key[1]} {key[2] + '/' if key[2] else ''}{key[3]}"
        if not allowed(key, replace):
            for path in immutable_fields(key[0], key[1]):
                values = immutable_change(was.document, now.document, path)
                if values is None:
                    continue
                old_value, new_value = values
                cloud = any(fnmatch.fnmatchcase(key[0], group) for group in CLOUD_GROUPS)
                if path in ABSENT:
                    effect = "makes the cloud resources anew in the other AWS account, leaving the old ones unmanaged"
                elif cloud:
                    effect = "replaces the cloud resource (deleted and made anew)"
                else:
                    effect = "is refused by the API server: the object has to be made anew"
                problems.append(
                    f"{where}: {'.'.join(path)} changes{_change(old_value, new_value)}, which "
                    f"{effect}; to do it on purpose, run synth with --replace '{label(key)}'"
                )
        if key[:2] == HELM_RELEASE and not allowed(key, replace):
            old_target, new_target = release_target(was.document), release_target(now.document)
            if old_target != new_target:
                problems.append(
                    f"{where}: the release changes from {_release_text(old_target)} to {_release_text(new_target)}, "
                    "so helm-controller uninstalls it, deleting what it installed, before it installs the new one; to "
                    f"do it on purpose, run synth with --replace '{label(key)}'"
                )
        if key[:2] == EKS_CLUSTER and key[3] not in moved_versions:
            refused = version_step(
                field(was.document, ("spec", "kubernetesVersion")), field(now.document, ("spec", "kubernetesVersion"))
            )
            if refused is not None:
                problems.append(
                    f"{where}: {refused}; set kubernetesVersion to the next minor version of the one in dist/ (the "
                    "versions recorded in environments/allocations.yaml disagree with it)"
                )
        new_applier = applier(now.document)
        if new_applier is None or allowed(key, move):
            continue
        old_applier = applier(was.document)
        if old_applier is None:
            if legacy is None:
                legacy = _legacy_appliers(tree.read_all(), hub)
            old_applier = legacy.get(key)
        if old_applier is None or old_applier == new_applier:
            continue
        namespace, name = old_applier.split("/", 1)
        moves[f"flux suspend kustomization {name} -n {namespace}"] = None
        problems.append(
            f"{where}: now applied by Kustomization {new_applier} instead of {old_applier}, which deletes it when it "
            f"stops applying it, before {new_applier} takes it over; suspend {old_applier} on the hub first, then run "
            f"synth with --move '{label(key)}'"
        )
    if moves:
        problems.append(
            f"to move them all: on the hub, {'; '.join(moves)}; then run synth with --move '*', merge, and resume "
            "those that remain once the objects are adopted"
        )
    return problems
