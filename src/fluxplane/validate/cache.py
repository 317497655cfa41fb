"""The validate cache: what validate learnt of a tree, reused where the files it came from are the same.

Where: ``<root>/.fluxplane-cache/validate/``, beside the synth cache, signed the same way (fluxplane.system.keys.Signer:
an HMAC with this user's key, outside the project; a file that does not verify, or is a symlink or a FIFO, is
ignored, writes are atomic), so that a pull request cannot plant results: what it brings never verifies. It is
derived data: delete it at any time, and the next run reads everything again. ``--no-cache`` leaves it alone.

A file is known by its content: Git's blob id, which a checkout has for free (``git ls-files -s`` for the tracked
files the working tree has not changed; the others are hashed the way Git does). Two files:

* ``documents``: per blob id, the documents parsed from that content and the YAML findings on them (a YAML error,
  and YAML 1.2 typing), so that a tree is read without parsing what was parsed before;
* ``references``: per cluster, the reference findings on it (fluxplane.validate.references.by_cluster), with what
  they were drawn from: the files and folders the walk of what lands on the cluster read, and the clusters
  applying to it through a ``kubeConfig`` (whose walks decide what they apply). A cluster whose key (those files'
  blob ids, those folders' listings, its appliers' keys, the tree's clusters and Compositions, the code) is
  unchanged keeps its findings; the others are walked again, with the clusters applying to them, and nothing
  else. An applier whose key is unchanged is walked only along its leads to the cluster (the Kustomizations on
  the way from its entry folder, their sources and the objects their ``substituteFrom`` names), which the
  cluster's record keeps with the applications they made there: a hub applying to a thousand workload clusters
  is not walked whole for a change to one. Should the walk make other applications there than the record says,
  the whole tree is walked instead. A deleted object that an unchanged file still names is found: the cluster
  whose walk read the deleted object's file is walked again, and the unchanged file with it;
* ``builds``: per key of a kustomize build (fluxplane.validate.kustomize: the path of each file the build reads
  relative to the folder, and its blob id), the folder built and kubectl's error, the root's path in it left out
  so that it can be told of a folder of that key anywhere; for one kubectl (its file and the versions it tells)
  and the code. A folder whose key is there is not built again. A whole run keeps the keys of its tree's
  folders, a ``--changed`` run adds to them;
* ``schemas``: per blob id, the schema findings on the file's documents and the kinds no schema covers, for one
  CRD corpus, one set of kinds the tree defines, and the code (fluxplane.validate.schemas.check_documents).

The findings are those of a run without the cache; tests hold the two to it, on the example and on a generated
fleet, after each kind of change.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import marshal
import posixpath
import sys
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fluxplane.core.tree import Application as TreeApplication
from fluxplane.core.tree import DistRepository, FleetWalk, MissingPath, Placed, Walk, elect
from fluxplane.core.tree.kustomize import Folders, listed
from fluxplane.core.tree.objects import KUSTOMIZE_FILES, metadata_of, spec_of
from fluxplane.errors import FluxplaneError
from fluxplane.system import git
from fluxplane.system.keys import CACHE_DIR, Signer, content_hash, user_key
from fluxplane.validate.findings import Finding
from fluxplane.validate.references import by_cluster, check_functions, defined_source
from fluxplane.validate.runtime import RuntimeFleet
from fluxplane.validate.tree import DistTree, Document, ParsedFile, read_file

#: This cache's folder in the caches' (fluxplane.system.keys.CACHE_DIR).
FOLDER = "validate"
#: Bumped when what the files hold changes.
FORMAT = 1
DOCUMENTS = "documents.entry"
#: The documents file is written again when more than one file in this many was not in it.
REWRITE = 50
REFERENCES = "references.entry"
BUILDS = "builds.entry"
SCHEMAS = "schemas.entry"
_PURPOSE = "validate reads the blob ids of dist/ from Git"
#: The code whose results are kept: how files are read and walked, and the rules.
_CODE = Path(__file__).resolve().parents[1]


@functools.cache
def code_key() -> str:
    """A hash of what the results depend on besides the tree: fluxplane's tree reader and checks, PyYAML, Python."""
    parts: list[str | bytes] = [str(FORMAT), sys.version, yaml.__version__]
    for folder in ("core", "validate"):
        for path in sorted((_CODE / folder).rglob("*.py")):
            parts.extend((path.relative_to(_CODE).as_posix(), path.read_bytes()))
    return content_hash(*parts)


def blob_id(data: bytes) -> str:
    """Git's id of a file holding ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def tracked_blobs(dist: Path) -> dict[str, str]:
    """The blob id of each file below ``dist`` (relative, POSIX) that Git tracks and the working tree has not
    changed, from the index; empty when ``dist`` is not in a Git repository."""
    try:
        listed_files = git.run(["ls-files", "-s", "-z", "--", "."], dist, purpose=_PURPOSE)
        changed = git.run(["diff-files", "--name-only", "--relative", "-z", "--", "."], dist, purpose=_PURPOSE)
    except FluxplaneError:
        return {}
    if listed_files.returncode != 0 or changed.returncode != 0:
        return {}
    modified = set(changed.stdout.split("\0"))
    found: dict[str, str] = {}
    for entry in listed_files.stdout.split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split(" ")
        if len(parts) == 3 and parts[2] == "0" and parts[0] in ("100644", "100755") and path not in modified:
            found[path] = parts[1]
    return found


def _finding(data: Any, file: str) -> Finding:
    return Finding(file, int(data[1]), str(data[2]), str(data[3]), str(data[4]), str(data[5]))


def _repository_row(repository: DistRepository) -> list[str | None]:
    return [repository.key, repository.url, repository.prefix, repository.branch]


def _row(finding: Finding) -> list[Any]:
    return [finding.file, finding.doc, finding.kind, finding.name, finding.path, finding.message]


#: One application a walk makes, as its ``follow`` is asked of it: the cluster of the Kustomization applying it, and
#: the folder it applies.
Lead = tuple[str, str]


@dataclass
class _Record:
    """One cluster's reference findings and what they were drawn from (module docstring)."""

    key: str
    reads: list[str]
    generated: list[str]
    configured: list[str]
    owners: list[str]
    vote: list[DistRepository]
    findings: list[Finding] = field(default_factory=list)
    #: What the walks of ``owners`` follow to reach the cluster and what its checks read there (_Leads).
    leads: list[Lead] = field(default_factory=list)
    #: The applications of the cluster that ``owners`` make, each as the Lead a walk follows to make it.
    arrivals: list[Lead] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "reads": self.reads,
            "generated": self.generated,
            "configured": self.configured,
            "owners": self.owners,
            "vote": [_repository_row(repository) for repository in self.vote],
            "findings": [_row(finding) for finding in self.findings],
            "leads": [list(lead) for lead in self.leads],
            "arrivals": [list(lead) for lead in self.arrivals],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _Record:
        return cls(
            key=str(data["key"]),
            reads=[str(path) for path in data["reads"]],
            generated=[str(path) for path in data["generated"]],
            configured=[str(path) for path in data["configured"]],
            owners=[str(name) for name in data["owners"]],
            vote=[DistRepository(*item) for item in data["vote"]],
            findings=[_finding(row, str(row[0])) for row in data["findings"]],
            leads=[(str(cluster), str(folder)) for cluster, folder in data["leads"]],
            arrivals=[(str(cluster), str(folder)) for cluster, folder in data["arrivals"]],
        )


class _Keys:
    """The current key of each cluster of a record set, from the tree's blob ids and listings."""

    def __init__(self, records: Mapping[str, _Record], blobs: Mapping[str, str], paths: list[str], base: str) -> None:
        self.records = records
        self.blobs = blobs
        self.paths = paths
        self.present = set(paths)
        self.base = base
        self._keys: dict[str, str | None] = {}

    def below(self, folder: str) -> str:
        prefix = folder + "/" if folder not in ("", ".") else ""
        start = bisect.bisect_left(self.paths, prefix)
        found: list[str] = []
        for path in self.paths[start:]:
            if not path.startswith(prefix):
                break
            found.append(path)
        return content_hash(*found)

    def config(self, folder: str) -> str:
        for name in KUSTOMIZE_FILES:
            path = f"{folder}/{name}" if folder not in ("", ".") else name
            if path in self.present:
                return path
        return ""

    def key(self, cluster: str, record: _Record) -> str | None:
        """The key ``record``'s cluster has now; None when one of its appliers has no record."""
        if cluster in self._keys:
            return self._keys[cluster]
        self._keys[cluster] = None  # an applier cycle has no key
        owners: list[str] = []
        for owner in record.owners:
            known = self.records.get(owner)
            owned = None if known is None else self.key(owner, known)
            if owned is None:
                return None
            owners.append(owned)
        found = content_hash(
            self.base,
            json.dumps([[path, self.blobs.get(path, "")] for path in record.reads]),
            json.dumps([[folder, self.below(folder)] for folder in record.generated]),
            json.dumps([[folder, self.config(folder)] for folder in record.configured]),
            json.dumps(owners),
        )
        self._keys[cluster] = found
        return found


def _collect(folders: Folders, folder: str, reads: set[str], generated: set[str], configured: set[str]) -> None:
    """What a build of ``folder`` reads (fluxplane.core.tree.kustomize.Folders.inputs), and the folders whose
    listing or kustomization file it depends on."""
    if folder in generated or folder in configured:
        return
    config = folders.config(folder)
    if config is None:
        generated.add(folder)
        for entry in folders.listing(folder):
            if folders.is_file(entry):
                reads.add(entry)
            else:
                _collect(folders, entry, reads, generated, configured)
        return
    configured.add(folder)
    reads.add(config)
    documents = folders.documents[config]
    own = documents[0] if documents and isinstance(documents[0], dict) else {}
    for target in listed(folder, own):
        if folders.is_file(target):
            reads.add(target)
        else:
            _collect(folders, target, reads, generated, configured)


def _reaches_more(fleet: RuntimeFleet, walked: set[str], records: Mapping[str, _Record]) -> bool:
    """Whether a cluster walked applies, through a ``kubeConfig``, to one not walked that it did not apply to
    before (that one's findings must be drawn again)."""
    walk = fleet.walk
    for placed in walk.folders:
        if walk.access(placed) is None:
            continue
        target = walk.target(placed)
        record = records.get(target)
        if target not in walked and (record is None or placed.cluster not in record.owners):
            return True
    return False


class _Leads:
    """Per cluster, what the walks of the clusters applying to it through a ``kubeConfig`` (its owners) follow to
    reach it, and what its checks read on them (module docstring): each Kustomization on the way from an owner's
    entry folder to the cluster, with the source it names and the objects its ``substituteFrom`` names, each as
    the application that placed it. A cluster walked again with its owners unchanged has them walked along those
    alone: what else they apply lands elsewhere, and nothing of it is looked for."""

    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self._defining: dict[tuple[str, str, str, str], list[TreeApplication]] | None = None

    def of(self, cluster: str, applications: Iterable[TreeApplication]) -> tuple[list[Lead], list[Lead]]:
        """The leads of ``cluster``, whose applications are ``applications``, and its arrivals (_Record)."""
        leads: set[Lead] = set()
        arrivals: set[Lead] = set()
        seen: set[int] = set()
        for application in applications:
            applier = application.applier
            if applier is None or applier.cluster == cluster:
                continue
            arrivals.add((applier.cluster, application.folder))
            pending = [application]
            while pending:
                made = pending.pop()
                if made.applier is None or id(made) in seen:
                    continue
                seen.add(id(made))
                leads.add((made.applier.cluster, made.folder))
                pending.append(made.applier.application)
                pending.extend(self._read(made.applier))
        return sorted(leads), sorted(arrivals)

    def _read(self, applier: Placed) -> list[TreeApplication]:
        """The applications that placed what the walk and the checks read of ``applier`` on its own cluster: the
        source it names and the objects its ``substituteFrom`` names."""
        spec = spec_of(applier.doc)
        found: list[TreeApplication] = []
        ref = spec.get("sourceRef")
        if isinstance(ref, dict):
            namespace = str(ref.get("namespace") or applier.namespace)
            source = self.walk.source(applier.cluster, str(ref.get("kind")), namespace, str(ref.get("name")))
            if source is not None:
                found.append(source.application)
        post_build = spec.get("postBuild")
        entries = post_build.get("substituteFrom") if isinstance(post_build, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict):
                key = (applier.cluster, applier.namespace, str(entry.get("kind")), str(entry.get("name")))
                found.extend(self._definers().get(key, []))
        return found

    def _definers(self) -> dict[tuple[str, str, str, str], list[TreeApplication]]:
        """The applications placing each ConfigMap and Secret, by cluster, namespace, kind and name
        (fluxplane.validate.references.defined_source)."""
        if self._defining is None:
            self._defining = {}
            for cluster, placed_list in self.walk.placed.items():
                for placed in placed_list:
                    name = metadata_of(placed.doc).get("name")
                    defined = defined_source(str(placed.doc.get("kind")), placed.doc, str(name or "-"))
                    if defined is not None:
                        key = (cluster, placed.namespace, defined[0], defined[1])
                        self._defining.setdefault(key, []).append(placed.application)
        return self._defining


def _follow(
    stale: Iterable[str], owners: Collection[str], records: Mapping[str, _Record]
) -> Callable[[Placed, str], bool] | None:
    """What a walk of ``stale`` clusters and their ``owners`` (walked only for what they apply to those) follows:
    everything on the stale clusters, and on the owners the leads of the stale clusters' records."""
    if not owners:
        return None
    allowed = {lead for name in stale if (record := records.get(name)) is not None for lead in record.leads}
    return lambda placed, folder: placed.cluster not in owners or (placed.cluster, folder) in allowed


def _arrived(
    fleet: RuntimeFleet, stale: Iterable[str], owners: Collection[str], records: Mapping[str, _Record]
) -> bool:
    """Whether the applications ``owners`` make on the ``stale`` clusters are those their records say they made:
    the leads took the walks where they went before."""
    expected = {
        (name, *lead)
        for name in stale
        if (record := records.get(name)) is not None
        for lead in record.arrivals
        if lead[0] in owners
    }
    found = {
        (application.cluster, application.applier.cluster, application.folder)
        for application in fleet.walk.applications
        if application.applier is not None and application.applier.cluster in owners and application.cluster in stale
    }
    return found == expected


def _shared(value: Any, strings: dict[str, str]) -> Any:
    """``value`` with each string that occurs more than once made one object: marshal writes an object it has
    written before as a reference, so that a fleet's documents, which repeat their keys and many values, take half
    the room and read back in about half the time."""
    kind = type(value)
    if kind is str:
        return strings.setdefault(value, value)
    if kind is dict:
        return {
            strings.setdefault(key, key) if type(key) is str else key: _shared(item, strings)
            for key, item in value.items()
        }
    if kind is list:
        return [_shared(item, strings) for item in value]
    if kind is tuple:
        return tuple(_shared(item, strings) for item in value)
    return value


class ValidateCache:
    """The validate cache of one project (module docstring); ``key`` signs and verifies (None: no cache)."""

    def __init__(self, folder: Path, key: bytes | None) -> None:
        self.signer = Signer(folder, key)
        self._documents: dict[str, Any] | None = None
        self._used: dict[str, Any] = {}
        self._missed = 0
        self.blobs: dict[str, str] = {}
        self._tracked: dict[str, str] = {}
        self._builds_base = ""
        self._builds: dict[str, tuple[str, str | None]] = {}
        self._schemas_base = ""
        self._schemas: dict[str, Any] = {}
        self._schemas_used: dict[str, Any] = {}
        self._schemas_missed = 0

    @classmethod
    def for_root(cls, root: Path) -> ValidateCache:
        return cls(root / CACHE_DIR / FOLDER, user_key())

    # -- documents ----------------------------------------------------------------------------------
    def start(self) -> None:
        """Read the documents file (it does not depend on Git: it can be read while Git compares the tree)."""
        self._documents = {}
        data = self.signer.read_marshalled(DOCUMENTS)
        if data is not None and data.get("code") == code_key() and isinstance(data.get("blobs"), dict):
            self._documents = data["blobs"]

    def track(self, dist: Path) -> None:
        """Read the blob ids Git's index has of the files of ``dist`` the working tree has not changed."""
        self._tracked = tracked_blobs(dist)

    def read(self, path: str, relative: str, typed: bool) -> ParsedFile | Finding:
        """A reader for fluxplane.validate.tree.load_tree: the file's documents from the cache when its content was
        read before, else read and parsed (and kept)."""
        blob = self._tracked.get(relative)
        if blob is None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                return read_file(path, relative, typed)
            blob = blob_id(data)
        self.blobs[relative] = blob
        known = self._used.get(blob) or (self._documents or {}).get(blob)
        # an entry read without YAML 1.2 typing (None in its place) serves only a read that does not want it
        if known is not None and (known[1] is not None or not typed):
            self._used[blob] = known
            return ParsedFile(
                [Document(relative, index, body) for index, body in known[0]],
                [_finding(row, relative) for row in known[1] or ()],
                [_finding(row, relative) for row in known[2]],
            )
        parsed = read_file(path, relative, typed)
        if isinstance(parsed, ParsedFile):
            self._missed += 1
            self._used[blob] = (
                [(document.index, document.body) for document in parsed.documents],
                [_row(finding) for finding in parsed.retyped] if typed else None,
                [_row(finding) for finding in parsed.errors],
            )
        return parsed

    def finish(self) -> None:
        """Write the documents file (the documents of this tree's files) when this run read more than a few files
        the cache did not hold: parsing a pull request's few files again costs less than writing them all."""
        if not self._missed or (self._documents and self._missed * REWRITE < len(self._used)):
            return
        try:
            blobs = _shared(self._used, {})
        except RecursionError:  # a document nested deeper than Python's calls go: kept as it was read
            blobs = self._used
        try:
            payload = marshal.dumps({"code": code_key(), "blobs": blobs})
        except ValueError:  # a document of a type marshal does not take
            return
        self.signer.write(DOCUMENTS, payload)

    # -- builds -------------------------------------------------------------------------------------
    def builds(self, kubectl: str) -> dict[str, tuple[str, str | None]]:
        """The kustomize builds' results kept for the kubectl ``kubectl`` tells (fluxplane.validate.kustomize.
        kubectl_identity) and this code, by key: the folder built, and its error (None: it built)."""
        self._builds_base = content_hash(code_key(), kubectl)
        self._builds = {}
        payload = self.signer.read(BUILDS)
        if payload is None:
            return {}
        try:
            data = json.loads(payload)
            if data["base"] == self._builds_base:
                self._builds = {
                    str(key): (str(source), None if error is None else str(error))
                    for key, (source, error) in data["builds"].items()
                }
        except (ValueError, KeyError, TypeError):
            self._builds = {}
        return dict(self._builds)

    def keep_builds(self, results: Mapping[str, tuple[str, str | None]], whole: bool) -> None:
        """Keep ``results`` (as ``builds`` gives them): in place of those kept when the run built the whole tree,
        else beside them."""
        kept = dict(results) if whole else {**self._builds, **results}
        if kept == self._builds:
            return
        payload = {"base": self._builds_base, "builds": dict(sorted(kept.items()))}
        self.signer.write(BUILDS, json.dumps(payload, separators=(",", ":")).encode("utf-8"))
        self._builds = kept

    # -- schemas ------------------------------------------------------------------------------------
    def start_schemas(self, base: str) -> None:
        """Read the schema findings kept for ``base`` (what the checks depend on besides a file and the code)."""
        self._schemas_base = content_hash(code_key(), base)
        self._schemas = {}
        self._schemas_used = {}
        self._schemas_missed = 0
        data = self.signer.read_marshalled(SCHEMAS)
        if data is not None and data.get("base") == self._schemas_base and isinstance(data.get("files"), dict):
            self._schemas = data["files"]

    def schema_report(self, file: str) -> tuple[list[Finding], dict[tuple[str, str], int]] | None:
        """The schema findings on the documents of ``file`` and the kinds no schema covers (by apiVersion and kind,
        how many documents), when its content was checked before; else None."""
        blob = self.blobs.get(file)
        if blob is None:
            return None
        known = self._schemas_used.get(blob) or self._schemas.get(blob)
        if known is None:
            return None
        self._schemas_used[blob] = known
        findings = [Finding(file, int(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4])) for row in known[0]]
        return findings, {(str(api), str(kind)): int(count) for api, kind, count in known[1]}

    def keep_schema_report(self, file: str, findings: list[Finding], uncovered: Mapping[tuple[str, str], int]) -> None:
        """Keep what ``schema_report`` gives for the content of ``file``."""
        blob = self.blobs.get(file)
        if blob is None or any(finding.file != file for finding in findings):
            return
        self._schemas_missed += 1
        self._schemas_used[blob] = (
            [_row(finding)[1:] for finding in findings],
            [[api, kind, count] for (api, kind), count in sorted(uncovered.items())],
        )

    def finish_schemas(self, whole: bool) -> None:
        """Write the schema findings when this run checked a file the cache did not hold: those of this run's files
        when it checked the whole tree, else beside those kept."""
        if not self._schemas_missed:
            return
        kept = self._schemas_used if whole else {**self._schemas, **self._schemas_used}
        try:
            payload = marshal.dumps({"base": self._schemas_base, "files": kept})
        except ValueError:
            return
        self.signer.write(SCHEMAS, payload)

    # -- references ---------------------------------------------------------------------------------
    def _records(self, base: str) -> tuple[dict[str, _Record], list[DistRepository]]:
        payload = self.signer.read(REFERENCES)
        if payload is None:
            return {}, []
        try:
            data = json.loads(payload)
            if data["base"] != base:
                return {}, []
            records = {str(name): _Record.from_json(record) for name, record in data["clusters"].items()}
            return records, [DistRepository(*item) for item in data["elected"]]
        except (ValueError, KeyError, TypeError):
            return {}, []

    def references(self, tree: DistTree) -> list[Finding]:
        """fluxplane.validate.references.check_references, walking only the clusters whose key changed (module
        docstring)."""
        by_file = tree.by_file()
        paths = sorted(by_file)
        compositions = sorted(
            {document.file for document in tree.documents if document.kind in ("Composition", "Function")}
        )
        walker = FleetWalk(by_file)
        clusters = sorted(walker.clusters)
        base = content_hash(
            code_key(),
            json.dumps(clusters),
            json.dumps([[file, self.blobs.get(file, "")] for file in compositions]),
        )
        records, elected = self._records(base)
        keys = _Keys(records, self.blobs, paths, base)
        stale = {name for name in clusters if name not in records}
        stale |= {name for name, record in records.items() if keys.key(name, record) != record.key}
        if not stale:
            return sorted(set(check_functions(tree)).union(*(record.findings for record in records.values())))
        walked = set(stale)
        pending = list(stale)
        while pending:
            record = records.get(pending.pop())
            for owner in record.owners if record is not None else ():
                if owner not in walked:
                    walked.add(owner)
                    pending.append(owner)
        # The clusters walked only because they apply to a stale one keep their records: their key says that
        # nothing they read changed, so neither did what is found on them.
        checked = stale | (walked - records.keys())
        fleet: RuntimeFleet | None = None
        if not set(clusters) <= walked:
            votes: list[Iterable[DistRepository]] = [records[name].vote for name in clusters if name not in walked]
            votes.extend(walker.votes(name) for name in clusters if name in walked)
            if list(elect(votes)) == elected:
                walk = [name for name in clusters if name in walked]
                owners = walked - checked
                follow = _follow(stale, owners, records)
                fleet = RuntimeFleet(tree, walk, elected, targets=walked, checked=checked, follow=follow)
                if _reaches_more(fleet, walked, records) or not _arrived(fleet, stale, owners, records):
                    fleet = None
        if fleet is None:
            walked = set()
            records = {}
            fleet = RuntimeFleet(tree)
            elected = list(fleet.walker.repositories)
        found = by_cluster(fleet, checked if walked else None)
        fresh = {application.cluster for application in fleet.walk.applications} | set(found)
        if walked:
            fresh &= checked
            for name in checked - fresh:
                records.pop(name, None)
        applications: dict[str, list[TreeApplication]] = {}
        for application in fleet.walk.applications:
            applications.setdefault(application.cluster, []).append(application)
        missing: dict[str, list[str]] = {}
        for problem in fleet.walk.problems:
            if isinstance(problem, MissingPath):
                folder = problem.location.folder or posixpath.normpath(problem.path)
                missing.setdefault(problem.placed.cluster, []).append(folder)
        leads = _Leads(fleet.walk)
        for name in sorted(fresh):
            records[name] = self._record(
                fleet, name, applications.get(name, []), missing.get(name, []), found.get(name, set()), leads
            )
        keys = _Keys(records, self.blobs, paths, base)
        for name in sorted(fresh):
            records[name].key = keys.key(name, records[name]) or ""
        payload = {
            "base": base,
            "elected": [_repository_row(repository) for repository in elected],
            "clusters": {name: record.to_json() for name, record in sorted(records.items())},
        }
        self.signer.write(REFERENCES, json.dumps(payload, separators=(",", ":")).encode("utf-8"))
        return sorted(set(check_functions(tree)).union(*(record.findings for record in records.values())))

    @staticmethod
    def _record(
        fleet: RuntimeFleet,
        cluster: str,
        applications: Iterable[TreeApplication],
        missing: Iterable[str],
        findings: Iterable[Finding],
        leads: _Leads,
    ) -> _Record:
        folders = fleet.walker.folders
        reads: set[str] = set()
        generated: set[str] = set(missing)
        configured: set[str] = set()
        owners: set[str] = set()
        for application in applications:
            _collect(folders, application.folder, reads, generated, configured)
            if application.applier is not None and application.applier.cluster != cluster:
                owners.add(application.applier.cluster)
        vote = list(fleet.walker.votes(cluster)) if fleet.walker.is_cluster(cluster) else []
        followed, arrivals = leads.of(cluster, applications)
        return _Record(
            key="",
            reads=sorted(reads),
            generated=sorted(generated),
            configured=sorted(configured),
            owners=sorted(owners),
            vote=vote,
            findings=sorted(findings),
            leads=followed,
            arrivals=arrivals,
        )
