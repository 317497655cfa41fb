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
  resource). An observed cluster's EKSCluster is not one: Crossplane only reads what it imported. A workload
  cluster's Flux HelmRelease removed while its cluster stays (its cluster now runs a Flux of its own, or a
  registered cluster leaves the fleet) is one too: helm-controller uninstalls Flux there. ``--delete PATTERN``
  allows it.
* **a replacement or a deletion of an AWS resource a composite composes**, as ``fluxplane plan`` calls it: a
  Composition that sets a field AWS cannot change in place otherwise (a database's engine, a VPC's CIDR), or
  composes a resource no more, though its composites stay as they are; or a composite's field that reaches such a
  field of what it composes. ``--replace PATTERN`` (``--delete PATTERN``) naming the composite allows it.
* **a change of who manages a cluster's AWS resources**: an EKSCluster that starts to manage the resources it
  imported (an existing cluster's ``observed`` to ``managed``, or managed from the start) or that moves from
  importing them to making them, ``--manage PATTERN`` allows it; one that moves between making and importing
  them otherwise, ``--replace PATTERN`` (fluxplane.synth.hazards.MANAGEMENT_CHANGES).
* **a switch**: a mode of a live resource turned on or off in place (fluxplane.kinds.Switch): an EKSCluster
  moving into or out of EKS Auto Mode, whose nodes EKS then takes over (its managed node groups deleted) or gives
  back. ``--auto-mode PATTERN`` allows it. An EKSCluster in Auto Mode that drops ``autoMode`` is refused whatever
  the flags: nothing would switch Auto Mode off, so its definition says ``autoMode.enabled: false``.
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

The objects are judged twice. First as the files hold them, which is quick and names the file to look at.
Then as each cluster applies them: when a changed file is a kustomization (its patches, its namespace) or
gives Flux's post-build variables, the clusters whose folders hold it (every cluster, for a shared folder)
are walked in the old tree and the new one (fluxplane.core.tree: kustomize's build with its patches, each
Kustomization's variables substituted), and an object that changes there is judged by the same rules. So a
change made only through an environment's or a cluster's overlay is refused as the object's own change is.

Composites are judged a third way, by what they compose, when a changed file holds one or a definition (an XRD,
a Composition, a Function, or a cluster's overlay of one): each composite in both trees whose object changes, or
whose kind's definitions do, is rendered with the old tree's definitions and with the new one's, and compared AWS
resource by AWS resource (fluxplane.synth.composed, which plan compares with too). A composite the first stage
refused, or whose change of management it judged, is not named again; a composite removed is the first stage's
(what deleting it destroys).

Only the files whose text changes are parsed, so a change to one cluster of a large fleet costs a
read of the old tree and a few parses; the old tree's definitions are read only when a changed file may hold one
(else they are the new tree's). The old tree is state that arrives from elsewhere: it is read,
never trusted to be fluxplane's (an object without the annotation is placed by following the hub's
Flux paths), and symlinks in it are not followed.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import os
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fluxplane.config.awsdata import minor
from fluxplane.config.hub import APPLIED_BY
from fluxplane.config.network import FollowedVersion
from fluxplane.core.codec import load_documents, parse_documents
from fluxplane.core.layout import PLATFORM, cluster_dir, cluster_of, cluster_vars_file
from fluxplane.core.tree import Build, FleetWalk, Folders, LazyDocuments, Placed, Walk
from fluxplane.core.tree.objects import KUSTOMIZE_FILES, Documents, Key
from fluxplane.kinds import AUTO_MODE_FLAG, COMPOSITE_GROUP, DEFINITION_KINDS, Switch, noun
from fluxplane.synth import writer
from fluxplane.synth.hazards import (
    ABSENT,
    CLOUD_GROUPS,
    EKS_CLUSTER,
    EXTERNAL_NAME,
    HELM_RELEASE,
    IMMUTABLE,
    allowed,
    applier,
    deletes,
    document_key,
    field,
    immutable_change,
    immutable_fields,
    label,
    left_on,
    management_change,
    reinstall,
    release_target,
    switched,
    version_step,
)
from fluxplane.synth.scan import Listing, Records, Stat, list_tree, records_digest, unit_holds
from fluxplane.system.files import entries_below

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
#: A file that may change what composites compose (the composed stage): one that holds a definition, or a cluster's
#: overlay of one (which names the definition's kind in its patches' targets), or one of fluxplane's composites.
_DEFINES = re.compile(rf"\bkind: (?:{'|'.join(DEFINITION_KINDS)})\b")
_COMPOSES = re.compile(rf"(?m)^apiVersion: {re.escape(COMPOSITE_GROUP)}/")


def _change(old: Any, new: Any) -> str:
    """`` from A to B`` for scalar values; nothing for structures, which the diff of dist/ shows."""
    scalars = (str, int, float, bool)
    if isinstance(old, scalars) and (new is None or isinstance(new, scalars)):
        return f" from {old} to {new if new is not None else 'nothing'}"
    return ""


def _worth_parsing(text: str) -> bool:
    if APPLIED_BY in text or _AWS_API.search(text):
        return True
    return any(kind in _KINDS for kind in _TOP_KIND.findall(text))


def read_tree(outdir: Path) -> dict[str, bytes]:
    """The files of the tree at ``outdir`` by their path below it; symlinks are not followed."""
    return OldTree(outdir).read_all()


class OldTree:
    """The tree a write replaces: its files, read only where they may differ from what synth writes.

    ``listed`` is its listing when synth took it beside its other work (fluxplane.synth.scan); without it, the
    tree is listed here when first needed. A unit the listing found as the writer's manifest records it
    (fluxplane.synth.scan) is looked at file by file only when what synth writes there differs from what it holds,
    or when every file of the tree is asked for (:attr:`paths`)."""

    def __init__(self, outdir: Path, listed: Listing | None = None) -> None:
        self.outdir = outdir
        self._root = os.fspath(outdir)
        self._listed = listed
        #: The files of the units :meth:`changed` found holding what synth writes there, once it ran
        self._same: list[str] | None = None
        self._paths: dict[str, str] | None = None
        self._linked: dict[str, bool] = {}

    @property
    def exists(self) -> bool:
        return self.outdir.is_dir() and not self.outdir.is_symlink()

    def _listing(self, records: Records | None = None) -> Listing:
        """The tree's listing: the one given, else one taken here against ``records``."""
        if self._listed is None:
            found = list_tree(self._root, records=records) if self.exists else None
            if found is None and self.exists:  # a folder below cannot be listed: it holds nothing
                entries: dict[str, Stat] = {}
                for relative, entry in entries_below(self._root):
                    with contextlib.suppress(OSError):
                        stat = entry.stat(follow_symlinks=False)
                        entries[relative] = (stat.st_mode, stat.st_size, stat.st_mtime_ns)
                found = Listing(entries, (), frozenset())
            self._listed = found or Listing({}, (), frozenset())
        return self._listed

    def _whole(self) -> Listing:
        """The listing with every unit listed file by file."""
        listed = self._listing()
        self._listed = listed = listed.expand(self._root, listed.units)
        return listed

    @property
    def paths(self) -> dict[str, str]:
        """Every regular file of the tree: its path below the tree, and its path on disk. Symlinks are left out;
        nothing but the folders is read (the kind of each entry comes with the listing)."""
        if self._paths is None:
            root = self._root + "/"
            self._paths = {relative: root + relative for relative in self._whole().regular}
        return self._paths

    @property
    def files(self) -> Set[str]:
        """The path below the tree of each of its regular files (:attr:`paths`, without joining each to the tree)."""
        if self._same is None:
            return self._whole().regular
        return self._listing().regular | set(self._same)

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
        found = {path: self.read(path) for path in self.paths}
        return {path: data for path, data in found.items() if data is not None}

    def changed(self, files: Mapping[str, str]) -> dict[str, bytes | None]:
        """The paths whose content differs from ``files`` (new ones, changed ones, gone ones), with their old bytes.

        A file whose size and time match what the last write recorded for the same content (the writer's manifest,
        fluxplane.synth.writer.recorded) is not read, nor is a unit found as recorded that holds what ``files`` hold
        there (fluxplane.synth.scan): a listing taken against those records (fluxplane.synth.scan.list_tree) says which
        match them. Every other file is read: one added to dist/ by hand counts, as what the clusters apply.
        """
        if not self.exists:
            return {}
        recorded = writer.recorded(self.outdir)
        listed = self._listing(recorded).against(recorded, self._root)
        units = writer.units_of(files)
        same = {unit for unit, entry in listed.units.items() if units.holds.get(unit) == unit_holds(entry)}
        self._listed = listed = listed.expand(self._root, listed.units.keys() - same)
        self._same = [path for unit in same for path in units.members[unit]]
        kept, regular = listed.kept, listed.regular
        found: dict[str, bytes | None] = {}
        tree = writer.TreeFiles.of(files)
        for path in units.outside(same):
            entry = kept.get(path)
            if entry is not None and records_digest(entry, tree.digest(path)):
                continue
            data = tree[path].encode("utf-8")
            old = self.read(path) if path in regular else None
            if old != data:
                found[path] = old
        for path in regular - files.keys():
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
        except (yaml.YAMLError, ValueError):  # a file the old tree holds that is not YAML guards nothing
            continue
        for document in documents:
            key = document_key(document)
            if key is not None:
                found.setdefault(key, _Found(path, document))
    return found


def _legacy_appliers(old: Mapping[str, bytes], hub: str) -> dict[Key, str]:
    """For a tree written before objects said who applies them: each hub object's Kustomization, found by
    following the hub's Flux paths the way kustomize builds them."""
    texts = {path: data.decode("utf-8", "replace") for path, data in old.items() if path.endswith(".yaml")}
    appliers: dict[Key, str] = {}
    try:
        for applier, placed in FleetWalk(LazyDocuments({}, texts)).applied(hub):
            key = document_key(placed.doc)
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
    except (yaml.YAMLError, ValueError):
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
        if old_data is None:  # its variables did not change (or are new): the definition's own check holds
            continue
        old = _kubernetes_version(old_data.decode("utf-8", "replace"))
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
    manage: Sequence[str] = (),
    auto_mode: Sequence[str] = (),
    followed_versions: Mapping[str, FollowedVersion] | None = None,
    listed: Listing | None = None,
) -> list[str]:
    """The replacements, deletions, moves, changes of management and switches writing ``files`` over the tree at
    ``outdir`` would make, not allowed.

    ``followed_versions`` are the clusters whose definition names no Kubernetes version
    (fluxplane.synth.plan.FleetPlan.followed_versions): the record alone may not change theirs. ``listed`` is the
    tree's listing when synth took it beside its other work (fluxplane.synth.scan).
    """
    tree = OldTree(outdir, listed)
    changed = tree.changed(files)
    if not changed:
        return []
    switches = {AUTO_MODE_FLAG: tuple(auto_mode)}
    moved_versions = _versions_the_record_moves(changed, files, followed_versions or {})
    before = _objects(
        (path, data.decode("utf-8", "replace")) for path, data in sorted(changed.items()) if data is not None
    )
    after = _objects((path, files[path]) for path in sorted(changed) if path in files)
    problems: list[str] = list(moved_versions.values())
    #: The objects a refusal names already: the applied stage does not name them again.
    reported: set[Key] = set()
    # A cluster removed with its EKSCluster: its Flux goes with it, which the cluster's own refusal says.
    removed_clusters = {key[2] for key in before.keys() - after.keys() if key[:2] == EKS_CLUSTER}
    for key in sorted(before.keys() - after.keys()):
        refusal = _deletion(key, before[key].document, delete, removed_clusters)
        if refusal is not None:
            reported.add(key)
            problems.append(f"{before[key].path}: {_name(key)}: {refusal}")
    for key in sorted(after.keys() - before.keys()):
        refusal = _management(key, None, after[key].document, replace, manage)
        if refusal is not None:
            reported.add(key)
            problems.append(f"{after[key].path}: {_name(key)}: {refusal}")
    moves: dict[str, None] = {}
    legacy: dict[Key, str] | None = None
    for key in sorted(after.keys() & before.keys()):
        was, now = before[key], after[key]
        where = f"{now.path}: {_name(key)}"
        refusals = _changes(
            key,
            was.document,
            now.document,
            replace,
            manage=manage,
            switches=switches,
            versions=key[3] not in moved_versions,
        )
        if refusals:
            reported.add(key)
        problems.extend(f"{where}: {refusal}" for refusal in refusals)
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
        reported.add(key)
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
    problems.extend(_composed_refusals(files, changed, reported, replace=replace, delete=delete))
    problems.extend(
        _applied_refusals(
            tree, files, changed, reported, replace=replace, delete=delete, manage=manage, switches=switches
        )
    )
    return problems


def _name(key: Key) -> str:
    return f"{key[1]} {key[2] + '/' if key[2] else ''}{key[3]}"


def _deletion(
    key: Key, document: Mapping[str, Any], delete: Sequence[str], removed_clusters: Iterable[str] = ()
) -> str | None:
    """Why removing the object of ``key`` (``document`` in the old tree) is refused, or None; the Flux of a cluster
    whose EKSCluster goes too (``removed_clusters``, by namespace) is that cluster's refusal's."""
    deleted = deletes(key, document)
    if deleted is None or allowed(key, delete) or (key[:2] == HELM_RELEASE and key[2] in removed_clusters):
        return None
    return (
        f"removed, so {deleted} (renaming is removing and adding); to do it on purpose, run synth with --delete "
        f"'{label(key)}'"
    )


def _management(
    key: Key,
    was: Mapping[str, Any] | None,
    now: Mapping[str, Any],
    replace: Sequence[str],
    manage: Sequence[str],
) -> str | None:
    """Why moving an EKSCluster from ``was`` (None: new) to ``now`` is refused: it changes who manages the cluster's
    AWS resources (fluxplane.synth.hazards.management_change), and the flag that allows it does not name it."""
    if key[:2] != EKS_CLUSTER:
        return None
    change = management_change(was, now)
    if change is None:
        return None
    flag, effect = change
    if allowed(key, manage if flag == "manage" else replace):
        return None
    return f"{effect}; to do it on purpose, run synth with --{flag} '{label(key)}'"


def _switches(
    key: Key, was: Mapping[str, Any], now: Mapping[str, Any], allow: Mapping[str, Sequence[str]]
) -> list[str]:
    """Why the modes the change of ``key`` switches on or off are refused (fluxplane.synth.hazards.switched): the flag
    that allows a switch does not name it; and a mode left on by a field that goes, whatever the flags."""
    found: list[str] = []
    for switch, on in switched(key[0], key[1], was, now):
        if allowed(key, allow.get(switch.flag, ())):
            continue
        state, effect = ("on", switch.on) if on else ("off", switch.off)
        found.append(
            f"{'.'.join(switch.path)} changes from {str(not on).lower()} to {str(on).lower()}, which switches "
            f"{switch.mode} {state} in place: {effect}{_switched_groups(key, was, now, on)}; to do it on purpose, run "
            f"synth with --{switch.flag} '{label(key)}'"
        )
    for switch in left_on(key[0], key[1], was, now):
        found.append(_left_on(switch))
    return found


def _left_on(switch: Switch) -> str:
    return (
        f"{'.'.join(switch.path)} goes while {switch.mode} is on, which leaves it on in the cloud while the rest of "
        f"the object reads as if it were off; to switch it off, say so: {switch.path[-2]}.enabled: false in the "
        f"definition (and synth with --{switch.flag})"
    )


def _switched_groups(key: Key, was: Mapping[str, Any], now: Mapping[str, Any], on: bool) -> str:
    """`` (node groups deleted: a, b)`` for an EKSCluster going into Auto Mode, made ones for one leaving it."""
    if key[:2] != EKS_CLUSTER:
        return ""
    groups = field(was if on else now, ("spec", "nodeGroups"))
    names = (
        [str(group.get("name")) for group in groups if isinstance(group, Mapping)] if isinstance(groups, list) else []
    )
    return f" (node groups {'deleted' if on else 'made'}: {', '.join(names)})" if names else ""


def _changes(
    key: Key,
    was: Mapping[str, Any],
    now: Mapping[str, Any],
    replace: Sequence[str],
    *,
    manage: Sequence[str] = (),
    switches: Mapping[str, Sequence[str]] | None = None,
    versions: bool = True,
) -> list[str]:
    """Why changing the object of ``key`` from ``was`` to ``now`` is refused: its immutable fields, its Helm
    release target, its Kubernetes version (``versions``: not when the record's own refusal names it), who manages
    its AWS resources, the modes it switches (``switches``: the patterns each switch's flag was given)."""
    found: list[str] = []
    managed = _management(key, was, now, replace, manage)
    if managed is not None:
        found.append(managed)
    found.extend(_switches(key, was, now, switches or {}))
    if not allowed(key, replace):
        for path in immutable_fields(key[0], key[1]):
            values = immutable_change(was, now, path)
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
            found.append(
                f"{'.'.join(path)} changes{_change(old_value, new_value)}, which {effect}; to do it on purpose, run "
                f"synth with --replace '{label(key)}'"
            )
    if key[:2] == HELM_RELEASE and not allowed(key, replace):
        reason = reinstall(was, now)
        if reason is not None:
            found.append(
                f"{reason}, so helm-controller uninstalls it, deleting what it installed, before it installs the new "
                f"one; to do it on purpose, run synth with --replace '{label(key)}'"
            )
    if key[:2] == EKS_CLUSTER and versions:
        refused = version_step(field(was, ("spec", "kubernetesVersion")), field(now, ("spec", "kubernetesVersion")))
        if refused is not None:
            found.append(
                f"{refused}; set kubernetesVersion to the next minor version of the one in dist/ (the versions "
                "recorded in environments/allocations.yaml disagree with it)"
            )
    return found


# -- the composed stage: what each changed composite, or each composite of a changed definition, composes ---------


def _composed_refusals(
    files: Mapping[str, str],
    changed: Mapping[str, bytes | None],
    reported: set[Key],
    *,
    replace: Sequence[str],
    delete: Sequence[str],
) -> list[str]:
    """The AWS resources the composites in both trees compose, compared (fluxplane.synth.composed): a composed
    resource replaced or deleted is refused, one line each, unless ``--replace`` (``--delete``) names its composite.
    Only when a changed file holds a composite or a definition; a composite the first stage refused, or whose change
    of management or switch of a mode it judged (its flag's message says what the other Composition deletes), is not
    judged again."""
    old_texts = {path: data.decode("utf-8", "replace") if data is not None else None for path, data in changed.items()}
    texts = [text for path, was in old_texts.items() for text in (was, files.get(path)) if text is not None]
    definitions_changed = any(_DEFINES.search(text) for text in texts)
    if not definitions_changed and not any(_COMPOSES.search(text) for text in texts):
        return []
    # Imported here: the composition renderer (fluxplane.validate) takes most of a second to import, which a write
    # that changes no composite and no definition must not pay.
    from fluxplane.synth.cloud import DELETE, REPLACE, aws_name
    from fluxplane.synth.composed import ChangedTrees, group_kind

    trees = ChangedTrees(files, old_texts, definitions_changed)
    problems: list[str] = []
    for pair in trees.pairs():
        key = pair.key
        judged = management_change(pair.old, pair.new) is not None or switched(key[0], key[1], pair.old, pair.new)
        if key in reported or judged:
            continue
        if allowed(key, replace) and allowed(key, delete):
            continue
        for change in trees.compare(pair).changes:
            action = change.verdict.action
            if action == REPLACE and not allowed(key, replace):
                flag, effect = "replace", "replaced"
            elif action == DELETE and not allowed(key, delete):
                flag, effect = "delete", "deleted"
            else:
                continue
            group, kind = group_kind(change.body)
            name = aws_name(group, kind, change.body)
            why = "; ".join(change.verdict.reasons)
            reported.add(key)
            problems.append(
                f"{pair.path}: {_name(key)}: composes {noun(group, kind)} {name + ' ' if name else ''}({change.name}), "
                f"which is {effect}{': ' + why if why else ''}; to do it on purpose, run synth with --{flag} "
                f"'{label(key)}'"
            )
    return problems


# -- the applied stage: what each cluster applies, patches and variables included --------------------------------


def _reshapes(path: str, text: str | None) -> bool:
    """Whether a change of the file at ``path`` can change objects of other files as a cluster applies them: a
    kustomization file (its patches, its namespace) or one that gives Flux's post-build variables."""
    if posixpath.basename(path) in KUSTOMIZE_FILES:
        return True
    return text is not None and ("postBuild" in text or "kind: ConfigMap" in text)


def _old_documents(tree: OldTree, path: str) -> list[Any]:
    data = tree.read(path)
    return [] if data is None else _documents_of(data)


def _documents_of(data: bytes) -> list[Any]:
    try:
        return [doc for doc in load_documents(data.decode("utf-8", "replace")) if isinstance(doc, dict | list)]
    except (yaml.YAMLError, ValueError):  # a file the old tree holds that is not YAML applies nothing
        return []


def _old_files(
    tree: OldTree, files: Mapping[str, str], new: LazyDocuments, changed: Mapping[str, bytes | None]
) -> LazyDocuments:
    """Every file of the old tree, as dist/ holds it: one whose content the guard found unchanged from ``files``
    (``new``, its documents), which holds the same text; a changed one from the bytes ``changed`` holds; a file added
    by hand, which the last write did not record but which counts in what the clusters run, from the file."""

    def applied(path: str) -> bool:
        return path.endswith((".yaml", ".yml")) or posixpath.basename(path) in KUSTOMIZE_FILES

    makers: dict[str, Callable[[], list[Any]]] = {
        path: functools.partial(_documents_of, data)
        for path, data in changed.items()
        if data is not None and applied(path)
    }
    for path in tree.files - files.keys() - changed.keys():
        if applied(path):
            makers[path] = functools.partial(_old_documents, tree, path)
    return new.but(makers, changed)


class _SharedFolders(Folders):
    """The new tree's folders, with the old tree's builds: a folder whose build reads no changed file in either tree
    (Folders.inputs: the same kustomization files, so the same inputs) builds the same objects from both, and is
    built once. Builds are never changed once made (both trees' walks only read them)."""

    def __init__(self, documents: Documents, old: Folders, changed: Set[str]) -> None:
        super().__init__(documents)
        self._old = old
        self._changed = changed

    def build(self, folder: str) -> Build:
        if self._changed.isdisjoint(self.inputs(folder)) and self._changed.isdisjoint(self._old.inputs(folder)):
            return self._old.build(folder)
        return super().build(folder)


def _walks(
    tree: OldTree, files: Mapping[str, str], changed: Mapping[str, bytes | None], clusters: Sequence[str] | None
) -> tuple[Walk, Walk] | None:
    try:
        walks: list[Walk] = []
        new = LazyDocuments({}, files)
        old = Folders(_old_files(tree, files, new, changed))
        for documents in (old, _SharedFolders(new, old, changed.keys())):
            fleet = FleetWalk(documents, substitute=True)
            chosen = fleet.clusters if clusters is None else [c for c in clusters if fleet.is_cluster(c)]
            # Where the repositories lie is read from the walked clusters' entry folders alone: reading every
            # cluster's would build the whole fleet for a change to one cluster.
            # The second walk shares the first one's folders: each folder is read and built once.
            mine = (
                FleetWalk(fleet.folders, fleet.find_repositories(chosen), substitute=True)
                if clusters is not None
                else fleet
            )
            walks.append(mine.walk(chosen))
        return walks[0], walks[1]
    except (yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError):  # a tree that cannot be followed
        return None


def _applied_refusals(
    tree: OldTree,
    files: Mapping[str, str],
    changed: Mapping[str, bytes | None],
    reported: set[Key],
    *,
    replace: Sequence[str],
    delete: Sequence[str],
    manage: Sequence[str] = (),
    switches: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """What each cluster applies, compared (kustomize's build, with its patches, and Flux's post-build variables):
    a change that reaches an object only through an overlay's patch, a namespace or a variable is judged as the
    object's own change is. Only the clusters whose folders hold a changed kustomization or variables file are
    walked (every cluster when one lies outside a cluster's own folders)."""
    reshaping = [
        path
        for path, data in changed.items()
        if _reshapes(path, files.get(path)) or _reshapes(path, data.decode("utf-8", "replace") if data else None)
    ]
    if not reshaping:
        return []
    own = {cluster_of(path) for path in reshaping}
    walks = _walks(tree, files, changed, None if None in own else sorted(c for c in own if c is not None))
    if walks is None:
        return []
    old, new = walks
    problems: dict[str, None] = {}
    for cluster in sorted({application.cluster for application in (*old.applications, *new.applications)}):
        before, after = old.objects(cluster), new.objects(cluster)
        removed_clusters = {key[2] for key in before.keys() - after.keys() if key[:2] == EKS_CLUSTER}
        for key in sorted(before.keys() | after.keys()):
            if key in reported:
                continue
            was, now = before.get(key), after.get(key)
            if was is not None and now is not None and was.doc != now.doc:
                where = _applied_where(cluster, key, now)
                for refusal in _changes(key, was.doc, now.doc, replace, manage=manage, switches=switches):
                    problems[f"{where}: {refusal}"] = None
            elif was is not None and now is None:
                deletion = _deletion(key, was.doc, delete, removed_clusters)
                if deletion is not None:
                    problems[f"{_applied_where(cluster, key, was)}: {deletion}"] = None
    return list(problems)


def _applied_where(cluster: str, key: Key, placed: Placed) -> str:
    applier = placed.applier
    by = f"Kustomization {applier.namespace}/{applier.key.name}" if applier is not None else "the entry point"
    return f"{PLATFORM}/{cluster_dir(cluster)}: {_name(key)} ({placed.item.path}, as {by} applies it)"
