"""Every kustomization builds: ``kubectl kustomize`` of each folder holding a kustomization.yaml.

Flux runs the same build (kustomize as a library) before it applies a folder; a folder that does not
build stops its whole Kustomization. A failure is a finding on that folder's kustomization.yaml.

A build is mostly the start of a process, and most folders of a fleet need none of their own:

* **the same inputs, one build**: a folder's build is keyed by every file it reads (its kustomization
  file, and what that lists, again and again: fluxplane.core.tree.kustomize.Folders.inputs), each by its
  path relative to the folder and its content. Folders with the same key build alike wherever they lie
  (a thousand clusters' overlays over the same bases): one of them is built, and its error, if any, is
  told of each of the others with the paths moved to theirs. A kustomization file that may read files
  it does not list (generators, Helm charts, transformers: fields other than those of ``_LISTING``) or
  a file outside the tree keys its builds by their folder too, so that they are shared with none.
* **the same inputs, one build, across runs**: a key is the content of what the build reads, so its result holds
  wherever and whenever that content is built by the same kubectl: the validate cache (fluxplane.validate.cache)
  keeps the result of each key whose digest covers all its build reads, its error with the root's path left out,
  and a folder of a key it holds is not built again. A key is drawn from the documents validate read and the Git
  blob ids it knows of the files, not from the files read and parsed again.
* **what a build covers**: kustomize builds the folders a kustomization lists as resources or bases
  whole, as on their own (fluxplane.core.tree.kustomize.bases), so when a folder builds, those folders
  do too, and need no process. The folders no other folder reads are built first; a base is built on
  its own only when every folder that reads it failed, so that its error is its own finding too.
* **many in one process**: what is left to build is built in batches (``_Batches``) of up to ``BATCH``
  folders, as many batches as the workers at least; a batch that fails is built again in parts, down to
  the folders that fail, each built on its own for its error. A folder whose kustomization files may read
  files they do not list, or give kustomize CRDs (which it knows for the whole process then), or whose
  build reads more than ``HEAVY`` files, is built alone.

The findings are those of a build of every folder. The builds run on a thread pool, each a separate
process (fluxplane.system.processes: a signal ends them at once).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from fluxplane.core.codec import load_documents
from fluxplane.core.tree.kustomize import Folders, bases, listed
from fluxplane.core.tree.objects import KUSTOMIZE_FILES
from fluxplane.system.processes import Processes
from fluxplane.validate.cache import blob_id
from fluxplane.validate.findings import Finding
from fluxplane.validate.tree import ValidateError


def find_kubectl() -> str:
    """The kubectl on PATH; refuse with the way out when there is none."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise ValidateError(
            "kubectl not found on PATH: install it, or pass --no-kustomize to skip the kustomize builds"
        )
    return kubectl


#: Newer kubectl logs the failure through klog: ``E1123 10:50:52.039405 9804 run.go:72] "command failed"
#: err="..."``; the time and process id would make findings differ from run to run.
_KLOG = re.compile(r'^[EWIF]\d{4} [\d:.]+\s+\d+ \S+\] "command failed" err=(".*")$')


def _message(line: str) -> str:
    match = _KLOG.match(line)
    if match is None:
        return line
    try:
        return str(json.loads(match.group(1)))
    except ValueError:
        return line


def _error(result: subprocess.CompletedProcess[str]) -> str | None:
    """None when ``kubectl kustomize`` succeeded, else its error on one line, as kubectl tells it."""
    if result.returncode == 0:
        return None
    lines = [_message(line.strip()) for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith("error: ")] or lines
    return " ".join(" ".join(errors).split()) or f"exit status {result.returncode}"


def _shown(text: str, root: Path | None) -> str:
    if root is not None:
        text = text.replace(f"{root.resolve()}/", "").replace(f"{root}/", "")
    return text.removeprefix("Error: ").removeprefix("error: ")


def build_error(processes: Processes, kubectl: str, folder: Path, root: Path | None = None) -> str | None:
    """None when ``kubectl kustomize folder`` succeeds, else its error on one line, paths relative to ``root``."""
    text = _error(processes.run([kubectl, "kustomize", str(folder)]))
    return None if text is None else _shown(text, root)


#: The fields of a kustomization file whose builds read no file but those ``listed`` names
#: (fluxplane.core.tree.kustomize.listed).
_LISTING = frozenset(
    {
        "apiVersion",
        "kind",
        "metadata",
        "resources",
        "bases",
        "components",
        "crds",
        "patches",
        "patchesStrategicMerge",
        "patchesJson6902",
        "namespace",
        "namePrefix",
        "nameSuffix",
        "commonLabels",
        "labels",
        "commonAnnotations",
        "images",
        "replicas",
        "sortOptions",
        "buildMetadata",
    }
)


def _files(root: Path) -> list[str]:
    """Every file below ``root`` (hidden folders skipped, as the tree validate reads skips them), relative."""
    found: list[str] = []
    start = os.fspath(root)
    for top, folders, names in os.walk(start):
        folders[:] = [name for name in folders if not name.startswith(".")]
        # os.walk joins each folder's name to its parent's: the root's path, then the folder's
        prefix = "" if top == start else top[len(start) + 1 :].replace(os.sep, "/") + "/"
        found.extend([prefix + name for name in names])
    return found


class _Disk(Mapping[str, list[Any]]):
    """The files below a root, as fluxplane.core.tree.kustomize.Folders reads them: each one is there, the
    kustomization files are parsed when asked for (once; nothing else is), or taken from ``parsed`` (the documents
    validate read of the files it parsed whole). ``paths`` are the files below the root when the caller listed them
    (fluxplane.validate.tree.tree_files), else they are listed now."""

    def __init__(
        self, root: Path, parsed: Mapping[str, list[Any]] | None = None, paths: Collection[str] | None = None
    ) -> None:
        self.root = root
        self.paths = frozenset(_files(root) if paths is None else paths)
        self._parsed: dict[str, list[Any]] = dict(parsed or {})

    def __getitem__(self, path: str) -> list[Any]:
        if path not in self.paths:
            raise KeyError(path)
        found = self._parsed.get(path)
        if found is None:
            try:
                found = load_documents((self.root / path).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, yaml.YAMLError):
                found = []
            self._parsed[path] = found
        return found

    def __contains__(self, path: object) -> bool:
        return path in self.paths

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


def _relative(path: str, folder: str) -> str:
    """``path`` of the tree as seen from ``folder`` (both normal, relative to the root)."""
    if folder in ("", "."):
        return path
    mine, theirs = folder.split("/"), path.split("/")
    common = 0
    while common < min(len(mine), len(theirs)) and mine[common] == theirs[common]:
        common += 1
    return "/".join([".."] * (len(mine) - common) + theirs[common:]) or "."


def _up(path: str) -> int:
    """How many folders up a relative path goes first."""
    count = 0
    while path == ".." or path.startswith("../"):
        count += 1
        path = path[3:]
    return count


def _join(folder: str, name: str) -> str:
    return name if folder in ("", ".") else f"{folder}/{name}"


def _parent(folder: str, levels: int) -> str:
    parts = [] if folder in ("", ".") else folder.split("/")
    return "/".join(parts[: len(parts) - levels]) or "."


class _Key(NamedTuple):
    """The key of a folder's build (module docstring)."""

    digest: str
    #: How many folders up from the folder its inputs lie.
    depth: int
    #: How many files the build reads.
    size: int
    #: Whether the build runs alone, not in a batch: its kustomization files may read files they do not list, or
    #: give kustomize CRDs (which it then knows in the whole process).
    alone: bool
    #: Whether the digest covers every file the build reads (each listed, in the tree): its result can be kept
    #: for another run.
    shared: bool = True


class _Inputs:
    """What the build of each folder below ``root`` reads, its key, and the folders it builds whole. ``parsed``
    holds documents already read, ``blobs`` the Git blob ids of files already known by content (what the validate
    cache read): those are neither parsed nor read again."""

    def __init__(
        self,
        root: Path,
        parsed: Mapping[str, list[Any]] | None = None,
        blobs: Mapping[str, str] | None = None,
        paths: Collection[str] | None = None,
    ) -> None:
        self.root = root
        self.disk = _Disk(root, parsed, paths)
        self.folders = Folders(self.disk)
        self._digests: dict[str, str] = dict(blobs or {})
        self._keys: dict[str, _Key] = {}

    def _digest(self, path: str) -> str:
        """The content of the file ``path``, by its Git blob id."""
        found = self._digests.get(path)
        if found is None:
            try:
                found = blob_id((self.root / path).read_bytes())
            except OSError as exc:
                found = f"unreadable: {exc.strerror}"
            self._digests[path] = found
        return found

    def config(self, folder: str) -> dict[str, Any]:
        path = self.folders.config(folder)
        documents = self.disk[path] if path is not None else []
        first = documents[0] if documents else None
        return first if isinstance(first, dict) else {}

    def listing(self, folder: str) -> bool:
        """Whether ``folder``'s kustomization file reads no file but those it lists."""
        return set(self.config(folder)) <= _LISTING

    def bases(self, folder: str) -> tuple[str, ...]:
        """The folders a build of ``folder`` builds whole (none when its kustomization file may read more)."""
        return bases(folder, self.config(folder)) if self.listing(folder) else ()

    def key(self, folder: str) -> _Key:
        """The key of ``folder``'s build (module docstring)."""
        known = self._keys.get(folder)
        if known is not None:
            return known
        inputs = set(self.folders.inputs(folder))
        shared = True
        alone = False
        depth = 0
        for config in [path for path in inputs if path.rpartition("/")[2] in KUSTOMIZE_FILES]:
            place = config.rpartition("/")[0] or "."
            # kustomize refuses a folder with two kustomization files: the other one is an input too
            inputs.update(path for name in KUSTOMIZE_FILES if (path := _join(place, name)) in self.disk)
            shared = shared and self.listing(place)
            alone = alone or "crds" in self.config(place)
            for target in listed(place, self.config(place)):
                outside = target == ".." or target.startswith(("../", "/"))
                there = target in self.disk or self.folders.is_folder(target)
                if outside or (not there and os.path.lexists(self.root / target)):
                    shared = False
                depth = max(depth, _up(_relative(target, folder)))
        digest = hashlib.sha256(b"" if shared else f"{folder}\0".encode())
        for path in sorted(inputs):
            relative = _relative(path, folder)
            depth = max(depth, _up(relative))
            digest.update(f"{relative}\0{self._digest(path)}\0".encode())
        found = self._keys[folder] = _Key(digest.hexdigest(), depth, len(inputs), alone or not shared, shared)
        return found


#: A character of a path's segment in kubectl's message: anything but a slash, a quote, a space or a colon.
_PART = r"[^/\s'\"`:,;()\[\]{}]"
#: A path in kubectl's message: segments up to a quote, a space or a colon.
_SEGMENTS = rf"((?:/{_PART}+)*)(?!{_PART})"
#: Where the tree's root stood in an error kept for another run (fluxplane.validate.cache): no message holds it.
ROOT = "\0"


def kubectl_identity(kubectl: str) -> str:
    """What tells one kubectl from another, whose kustomize may judge a folder otherwise: the file it is (its
    path, size and time) and the versions it tells."""
    path = os.path.realpath(kubectl)
    try:
        stat = os.stat(path)
        where = f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}"
    except OSError:
        where = path
    version = Processes(1).run([kubectl, "version", "--client", "-o", "json"])
    return f"{where}\0{version.returncode}\0{version.stdout}"


class _Mover:
    """Moves the paths of one folder's error to another folder's whose build reads the same, in the same places
    relative to it: the folders above each, up to the highest one the build reads below."""

    def __init__(self, root: Path) -> None:
        prefixes = sorted({str(root.resolve()), os.path.abspath(root)}, key=len, reverse=True)
        self.pattern = re.compile("(" + "|".join(re.escape(prefix) for prefix in prefixes) + ")" + _SEGMENTS)

    def move(self, text: str, source: str, target: str, depth: int) -> str:
        if source == target:
            return text
        pairs = [(_parent(source, levels), _parent(target, levels)) for levels in range(depth + 1)]

        def moved(match: re.Match[str]) -> str:
            path = match.group(2).removeprefix("/")
            stop = "." if path.endswith(".") and not path.endswith("..") else ""
            path = path.removesuffix(stop) if stop else path
            for mine, theirs in pairs:
                if mine == ".":
                    rest = path
                elif path == mine or path.startswith(mine + "/"):
                    rest = path[len(mine) + 1 :]
                else:
                    continue
                path = "/".join(part for part in (theirs, rest) if part not in ("", "."))
                return match.group(1) + (f"/{path}" if path else "") + stop
            return match.group(0)

        return self.pattern.sub(moved, text)


#: The most folders one process builds: kustomize takes longer per object the more a build holds (a batch of 40
#: of a fleet's cluster folders takes about as long per folder as a build of one takes to start, one of 80 ten
#: times as long).
BATCH = 25
#: A folder whose build reads more files than this is built alone: a hub's folder of a thousand clusters' chains
#: takes long enough on its own.
HEAVY = 100
#: A batch's n-th folder, its objects renamed ``m<n>/<name>``: unique in the batch, though two folders may hold the
#: same object (a Namespace's and a CRD's names too, which ``namePrefix`` leaves alone).
_MEMBER = """apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- {path}
transformers:
- |-
  apiVersion: builtin
  kind: ValueAddTransformer
  metadata:
    name: member
  value: m{index}
  targets:
  - fieldPath: metadata/name
    filePathPosition: 1
"""


class _Batches:
    """Builds of folders, several in one process: a kustomization file lists them all, each through a kustomization
    of its own that renames its objects (``_MEMBER``). Kustomize builds each folder a resource names whole, as on
    its own: when the batch builds, each of them does. When it fails, it is built again in parts of about the
    square root of its size, down to single folders, each built as on its own, whose error is the finding. Each
    worker writes its batches' kustomizations in a folder of ``place`` of its own, again and again."""

    def __init__(self, root: Path, kubectl: str, runner: Processes, place: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self.kubectl = kubectl
        self.runner = runner
        self.runs = 0
        self._lock = threading.Lock()
        self._slots: queue.SimpleQueue[Path] = queue.SimpleQueue()
        for index in range(runner.workers):
            slot = Path(os.path.realpath(place)) / f"worker-{index}"
            (slot / "batch").mkdir(parents=True)
            self._slots.put(slot)

    def _run(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        with self._lock:
            self.runs += 1
        return self.runner.run(args)

    def build(self, folders: Sequence[str]) -> dict[str, str | None]:
        """The error of each of ``folders`` (None: it builds)."""
        if len(folders) == 1:
            return {folders[0]: _error(self._run([self.kubectl, "kustomize", str(self.root / folders[0])]))}
        slot = self._slots.get()
        try:
            for index, folder in enumerate(folders):
                member = slot / f"m{index}"
                member.mkdir(exist_ok=True)
                path = os.path.relpath(self.root / folder, member)
                (member / "kustomization.yaml").write_text(_MEMBER.format(path=path, index=index), encoding="utf-8")
            return self._batch(slot, list(enumerate(folders)))
        finally:
            self._slots.put(slot)

    def _batch(self, slot: Path, members: list[tuple[int, str]]) -> dict[str, str | None]:
        if len(members) == 1:
            return self.build([members[0][1]])
        listing = "".join(f"- ../m{index}\n" for index, _ in members)
        (slot / "batch" / "kustomization.yaml").write_text(
            f"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n{listing}", encoding="utf-8"
        )
        if self._run([self.kubectl, "kustomize", str(slot / "batch"), "-o", os.devnull]).returncode == 0:
            return {folder: None for _, folder in members}
        size = min(len(members) - 1, math.isqrt(len(members) - 1) + 1)
        errors: dict[str, str | None] = {}
        for start in range(0, len(members), size):
            errors.update(self._batch(slot, members[start : start + size]))
        return errors


#: A build's result: the folder built (relative to the root) and its error as kubectl told it (None: it built).
Result = tuple[str, str | None]


class Builds:
    """The kustomize builds of ``folders`` (relative to ``root``): one per distinct key, none for a folder another
    build covers, many in one process (module docstring). ``processes`` counts the processes run, ``workers`` at a
    time. ``parsed``, ``blobs`` and ``paths`` are what validate read of the tree (``_Inputs``). ``known`` holds the
    results of earlier runs' builds by key (fluxplane.validate.cache), their errors with ``ROOT`` where the root's
    path stood (below another root, maybe): a folder of such a key takes it as its own build's, as it takes the
    result of a folder of its key built in this run. After ``findings``, ``results`` holds in that form the result
    of each key settled whose digest covers all its build reads, to be kept for another run."""

    def __init__(
        self,
        root: Path,
        folders: Sequence[str],
        kubectl: str,
        workers: int | None = None,
        *,
        parsed: Mapping[str, list[Any]] | None = None,
        blobs: Mapping[str, str] | None = None,
        known: Mapping[str, Result] | None = None,
        paths: Collection[str] | None = None,
    ) -> None:
        self.root = root
        self.folders = list(folders)
        self.kubectl = kubectl
        self.workers = workers or min(16, (os.cpu_count() or 2) * 2)
        self.processes = 0
        self.results: dict[str, Result] = {}
        self._known = known or {}
        #: The root's path in kubectl's errors (it builds the folders there).
        self._place = os.path.realpath(root)
        self._inputs = _Inputs(root, parsed, blobs, paths)
        self._mover = _Mover(root)
        checked = set(self.folders)
        self._bases = {folder: [base for base in self._inputs.bases(folder) if base in checked] for folder in checked}
        self._readers: dict[str, list[str]] = {folder: [] for folder in checked}
        for folder in sorted(checked):
            for base in self._bases[folder]:
                self._readers[base].append(folder)

    def _jobs(self, folders: list[str]) -> list[list[str]]:
        """``folders`` in batches, as many as the workers at least, those that build alone on their own, the
        largest first (so that the last to end is a small one)."""
        keys = {folder: self._inputs.key(folder) for folder in folders}
        alone = [[folder] for folder, key in keys.items() if key.alone or key.size > HEAVY]
        batched = [folder for folder, key in keys.items() if not key.alone and key.size <= HEAVY]
        count = max(min(self.workers, len(batched)), -(-len(batched) // BATCH))
        jobs = [batched[index::count] for index in range(count)] + alone
        return sorted(jobs, key=lambda job: -sum(keys[folder].size for folder in job))

    def findings(self, advance: Callable[[], None] = lambda: None) -> list[Finding]:
        """One finding per folder that fails to build, in the order of ``folders``."""
        with tempfile.TemporaryDirectory(prefix="fluxplane-kustomize-") as place:
            runner = Processes(self.workers)
            batches = _Batches(self.root, self.kubectl, runner, Path(place))
            try:
                errors = self._errors(batches, advance)
            finally:
                self.processes = batches.runs
        findings: list[Finding] = []
        for folder in self.folders:
            error = errors[folder]
            if error is None:
                continue
            file = "kustomization.yaml" if folder == "." else f"{folder}/kustomization.yaml"
            name = self.root.name if folder == "." else folder.rsplit("/", 1)[-1]
            message = f"kubectl kustomize failed: {_shown(error, self.root)}"
            findings.append(Finding(file, 1, "Kustomization", name, "(root)", message))
        return findings

    def _errors(self, batches: _Batches, advance: Callable[[], None]) -> dict[str, str | None]:
        errors: dict[str, str | None] = {}
        #: The result of each key settled: the folder built (or covered) and its error.
        known: dict[str, Result] = {}
        pending = set(self.folders)
        # a key of an earlier run is taken only where it covers all a build reads
        for folder in self.folders:
            key = self._inputs.key(folder)
            if key.shared and key.digest in self._known and key.digest not in known:
                source, error = self._known[key.digest]
                known[key.digest] = (source, None if error is None else error.replace(ROOT, self._place))

        def settle(folder: str, error: str | None) -> None:
            errors[folder] = error
            pending.discard(folder)
            advance()

        def cover(folder: str) -> None:
            """``folder`` built: so did every folder its build builds whole."""
            stack = list(self._bases[folder])
            while stack:
                base = stack.pop()
                if base in errors:
                    continue
                settle(base, None)
                known.setdefault(self._inputs.key(base).digest, (base, None))
                stack.extend(self._bases[base])

        while pending:
            progress = True
            while progress:
                progress = False
                for folder in sorted(pending):
                    key = self._inputs.key(folder)
                    if folder in pending and key.digest in known:
                        source, error = known[key.digest]
                        moved = None if error is None else self._mover.move(error, source, folder, key.depth)
                        settle(folder, moved)
                        if error is None:
                            cover(folder)
                        progress = True
            ready = [
                folder
                for folder in sorted(pending)
                if all(errors.get(reader) is not None for reader in self._readers[folder])
            ] or sorted(pending)  # readers in a cycle: each builds
            todo: dict[str, str] = {}
            for folder in ready:
                todo.setdefault(self._inputs.key(folder).digest, folder)
            for built in batches.runner.map(batches.build, self._jobs(list(todo.values()))):
                for folder, error in built.items():
                    known[self._inputs.key(folder).digest] = (folder, error)
        pattern = re.compile(re.escape(self._place) + rf"(?!{_PART})")
        for folder in errors:
            key = self._inputs.key(folder)
            if not key.shared or key.digest not in known:
                continue
            source, error = known[key.digest]
            if error is None:
                self.results[key.digest] = (source, None)
            elif ROOT not in error:
                self.results[key.digest] = (source, pattern.sub(ROOT, error))
        return errors


def check_builds(
    root: Path,
    folders: list[str],
    kubectl: str,
    advance: Callable[[], None] = lambda: None,
) -> list[Finding]:
    """Build every folder (relative to ``root``); one finding per folder that fails."""
    return Builds(root, folders, kubectl).findings(advance)
