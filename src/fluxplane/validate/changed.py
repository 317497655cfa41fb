"""``validate --changed BASE``: check what a change touches, the way a pull request usually changes one cluster.

The files of DIST that differ from the commit BASE names (added, modified, deleted or untracked, as Git
sees the working tree) are the change. The whole tree is still read, so that the references Flux and
Crossplane resolve across files are checked everywhere: a deleted object that another file still names is
found (with the validate cache, fluxplane.validate.cache, each file's documents are read back by content, and
only the clusters whose walk reads a changed file are walked again, with those applying to them; the findings
are the same). What is narrowed is what only depends on a file itself:

* YAML 1.2 typing, schemas, CEL rules and health expressions: the documents of changed files;
* compositions: the composite resources of changed files, rendered and checked;
* kustomize builds: the folders whose build reads a changed file, or that hold one.

A change to a definition (a CRD, XRD, Composition or Function, in the working tree or at BASE) can change
what every other document means; validate then checks everything and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import yaml

from fluxplane.system import git
from fluxplane.validate.tree import ManifestLoader, ValidateError

_PURPOSE = "validate --changed compares dist/ with a Git ref"

#: (apiVersion group, kind) of the documents that give meaning to others.
DEFINITIONS = frozenset(
    {
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiextensions.crossplane.io", "CompositeResourceDefinition"),
        ("apiextensions.crossplane.io", "Composition"),
        ("pkg.crossplane.io", "Function"),
    }
)


def is_definition(body: object) -> bool:
    if not isinstance(body, dict):
        return False
    api_version = body.get("apiVersion")
    group = api_version.rsplit("/", 1)[0] if isinstance(api_version, str) and "/" in api_version else ""
    return (group, body.get("kind")) in DEFINITIONS


@dataclass(frozen=True)
class ChangedFiles:
    """The files of DIST (relative, POSIX) that differ from ``base``, and whether a definition is among them."""

    base: str
    commit: str
    files: frozenset[str]
    definitions: tuple[str, ...]

    def covers(self, file: str) -> bool:
        return file in self.files

    def touches(self, folder: str, inputs: frozenset[str]) -> bool:
        """Whether a build of ``folder``, which reads ``inputs``, can differ: it reads or holds a changed file."""
        if folder in (".", ""):
            return bool(self.files)
        prefix = folder + "/"
        return any(file in inputs or file.startswith(prefix) for file in self.files)


def _lines(output: str) -> list[str]:
    return [line for line in output.split("\0") if line]


def changed_since(dist: Path, base: str) -> ChangedFiles:
    """The change of ``dist`` since ``base``; ValidateError when DIST is not in Git or BASE names no commit."""
    with Comparison(dist, base) as comparison:
        return comparison.result()


class Comparison:
    """Git comparing ``dist`` with ``base`` while the caller goes on; :meth:`result` waits for the change.

    After a synth rewrote the tree, Git's index no longer vouches for the files by their stat, and Git hashes each
    one again: seconds for a large tree. That is done once, as ``git status`` does it (``update-index
    --refresh``: the index learns the files' stat, never their content), on a core the caller does not use, and
    the comparison with ``base`` that follows reads the index. The checks that make ``base`` bad input run at
    once: ValidateError when DIST is not in Git or BASE names no commit. Leaving the ``with`` block ends Git when
    it still runs."""

    def __init__(self, dist: Path, base: str) -> None:
        top = git.run(["rev-parse", "--show-toplevel"], dist, purpose=_PURPOSE)
        if top.returncode != 0:
            raise ValidateError(f"{dist}: not in a Git repository (--changed compares with a Git ref)")
        commit = git.commit_of(dist, base, purpose=_PURPOSE)
        if commit is None:
            raise ValidateError(f"--changed: unknown Git ref {base!r}")
        self.dist = dist
        self.base = base
        self.commit = commit
        self._refreshed = git.Running(["update-index", "-q", "--refresh"], dist, purpose=_PURPOSE)
        try:
            self._untracked = git.Running(
                ["ls-files", "--others", "--exclude-standard", "-z", "--", "."], dist, purpose=_PURPOSE
            )
        except BaseException:
            self._refreshed.end()
            raise

    def __enter__(self) -> Comparison:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._refreshed.end()
        self._untracked.end()

    def result(self) -> ChangedFiles:
        """The change, once Git is done; ValidateError with Git's line when it could not list it."""
        # An index Git could not refresh (another Git holds its lock, a read-only checkout) only makes the diff
        # hash the files itself.
        self._refreshed.result()
        # Running, as the refresh: a stopped validate asks Git to stop, so Git removes the index lock it may hold
        with git.Running(
            ["diff", "--name-only", "--no-renames", "--relative", "-z", self.commit, "--", "."],
            self.dist,
            purpose=_PURPOSE,
        ) as running:
            diffed = running.result()
        untracked = self._untracked.result()
        for result in (diffed, untracked):
            if result.returncode != 0:
                detail = (result.stderr.strip().splitlines() or ["no message"])[-1]
                raise ValidateError(
                    f"--changed: git cannot list the changes of {self.dist} since {self.base!r}: {detail}"
                )
        files = frozenset(_lines(diffed.stdout)) | frozenset(_lines(untracked.stdout))
        definitions = sorted(_definitions_at(self.dist, self.commit, files) | _definitions_now(self.dist, files))
        return ChangedFiles(self.base, self.commit, files, tuple(definitions))


def _manifests(files: frozenset[str]) -> list[str]:
    return sorted(file for file in files if file.endswith((".yaml", ".yml")))


def _holds_definition(text: str) -> bool:
    try:
        return any(is_definition(body) for body in yaml.load_all(text, Loader=ManifestLoader))
    except yaml.YAMLError:
        return False


def _definitions_now(dist: Path, files: frozenset[str]) -> set[str]:
    found = set()
    for file in _manifests(files):
        path = dist / file
        try:
            text = path.read_text(encoding="utf-8") if path.is_file() and not path.is_symlink() else ""
        except (OSError, UnicodeDecodeError):
            continue
        if _holds_definition(text):
            found.add(file)
    return found


def _definitions_at(dist: Path, commit: str, files: frozenset[str]) -> set[str]:
    """The changed files whose content at ``commit`` held a definition (a deleted or rewritten XRD counts)."""
    wanted = _manifests(files)
    found = set()
    for file, blob in zip(wanted, git.blobs(dist, commit, wanted, purpose=_PURPOSE), strict=True):
        if blob is not None and _holds_definition(blob.decode("utf-8", errors="replace")):
            found.add(file)
    return found
