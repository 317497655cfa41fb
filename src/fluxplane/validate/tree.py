"""Reading the tree validate checks: every YAML document of DIST, with where it came from.

YAML is read the way kubectl and Flux read it: timestamps stay strings and tags the loader does not
know are read as plain data. A file that does not parse is a finding on the document that broke,
not bad input: the rest of the tree is still checked.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fluxplane.errors import FluxplaneError
from fluxplane.system.files import entries_below
from fluxplane.validate.findings import Finding
from fluxplane.validate.yaml12 import check_node

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ManifestLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """Safe loading without timestamps (kubectl keeps them as strings) and with unknown tags as data."""


ManifestLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct_unknown(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


ManifestLoader.add_multi_constructor("!", _construct_unknown)


#: How a finding on a YAML error starts.
PARSE_ERROR = "cannot parse YAML: "


class ValidateError(FluxplaneError):
    """validate or schemas pull cannot run: a missing tree, CRD folder or tool, or a download that failed."""


@dataclass(frozen=True)
class Document:
    """One YAML document: its file relative to the tree, its 1-based index there, and its content."""

    file: str
    index: int
    body: Any

    @property
    def kind(self) -> str:
        kind = self.body.get("kind") if isinstance(self.body, dict) else None
        return kind if isinstance(kind, str) and kind else "-"

    @property
    def name(self) -> str:
        meta = self.body.get("metadata") if isinstance(self.body, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        return name if isinstance(name, str) and name else "-"

    def finding(self, path: str, message: str) -> Finding:
        return Finding(self.file, self.index, self.kind, self.name, path, message)


@dataclass
class DistTree:
    """Every document of DIST, the YAML files and the folders holding a kustomization.yaml."""

    root: Path
    documents: list[Document]
    files: list[str]
    kustomization_dirs: list[str]
    parse_findings: list[Finding]
    #: Every file below the root a kustomize build may read (tree_files), when the tree was read from disk.
    listing: list[str] | None = field(default=None, repr=False, compare=False)

    _by_file: dict[str, list[Any]] | None = field(default=None, init=False, repr=False, compare=False)

    def by_file(self) -> Mapping[str, list[Any]]:
        """The documents' bodies by file, at their index (None where a document was empty); worked out once, and
        shared by every reader of the tree (none changes it)."""
        if self._by_file is None:
            found: dict[str, list[Any]] = {}
            for document in self.documents:
                bodies = found.setdefault(document.file, [])
                bodies.extend([None] * (document.index - 1 - len(bodies)))
                bodies.append(document.body)
            self._by_file = found
        return self._by_file

    def parsed_files(self) -> dict[str, list[Any]]:
        """``by_file`` without the files that did not parse whole."""
        broken = {finding.file for finding in self.parse_findings if finding.message.startswith(PARSE_ERROR)}
        return {file: bodies for file, bodies in self.by_file().items() if file not in broken}


def load_documents(text: str, file: str, typed: bool = True) -> tuple[list[Document], list[Finding]]:
    """The documents of one file, and findings: a YAML error on the document it broke, and (when ``typed``)
    each plain scalar that YAML 1.2 readers type otherwise (:mod:`fluxplane.validate.yaml12`)."""
    documents: list[Document] = []
    retyped: list[Finding] = []
    loader = ManifestLoader(text)
    index = 0
    try:
        while loader.check_node():
            index += 1
            node = loader.get_node()
            document = Document(file, index, loader.construct_document(node))
            documents.append(document)
            if typed and node is not None:
                retyped.extend(check_node(node, file, index, document.kind, document.name))
    except yaml.YAMLError as exc:
        message = " ".join(str(exc).split()).replace('in "<unicode string>", ', "at ")
        return documents, [*retyped, Finding(file, index or 1, "-", "-", "(root)", f"{PARSE_ERROR}{message}")]
    finally:
        loader.dispose()
    return documents, retyped


def check_tree(root: Path) -> None:
    """Refuse what is not a fluxplane tree: one with platform/clusters/<name>/kustomization.yaml."""
    if not root.is_dir():
        raise ValidateError(f"{root}: no such folder (pass the dist/ folder that 'fluxplane synth' writes)")
    clusters = root / "platform" / "clusters"
    if not any(clusters.glob("*/kustomization.yaml")):
        raise ValidateError(f"{root}: not a fluxplane tree (expected platform/clusters/<cluster>/kustomization.yaml)")


@dataclass(frozen=True)
class ParsedFile:
    """One file read: its documents (empty ones left out), the findings of YAML 1.2 typing, and a YAML error."""

    documents: list[Document]
    retyped: list[Finding]
    errors: list[Finding]


def parse_file(text: str, file: str, typed: bool = True) -> ParsedFile:
    """``text`` (the file ``file``) parsed; ``retyped`` is left empty unless ``typed``."""
    found, problems = load_documents(text, file, typed)
    errors = [problem for problem in problems if problem.message.startswith(PARSE_ERROR)]
    retyped = [problem for problem in problems if not problem.message.startswith(PARSE_ERROR)]
    return ParsedFile([document for document in found if document.body is not None], retyped, errors)


#: Reads one file of the tree (its path, and its path relative to the tree) for :func:`load_tree`, which asks
#: whether its YAML 1.2 typing is wanted; a finding when it cannot be read.
Reader = Callable[[str, str, bool], ParsedFile | Finding]


def read_file(path: str, relative: str, typed: bool) -> ParsedFile | Finding:
    """The file at ``path`` read and parsed."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        return Finding(relative, 1, "-", "-", "(root)", f"cannot read: {exc}")
    return parse_file(text, relative, typed)


def tree_files(root: Path) -> tuple[list[str], list[str]]:
    """The files under ``root`` (hidden folders skipped), relative POSIX paths: every ``*.yaml``/``*.yml`` file
    validate reads (hidden files skipped; symlinks to files count as files, as ``Path.is_file`` says), sorted as
    paths are (folder by folder); and every file a kustomize build may read (hidden files too; a link to a folder
    left out, as ``os.walk`` leaves it), in no set order. One walk of the tree gives both."""
    yaml_files: list[str] = []
    every: list[str] = []
    for relative, entry in entries_below(os.fspath(root), hidden=True, hidden_folders=False):
        if entry.is_dir():
            continue
        every.append(relative)
        if relative.endswith((".yaml", ".yml")) and not entry.name.startswith(".") and entry.is_file():
            yaml_files.append(relative)
    return sorted(yaml_files, key=lambda path: path.split("/")), every


def load_tree(root: Path, typed: Callable[[str], bool] | None = None, read: Reader = read_file) -> DistTree:
    """Every ``*.yaml``/``*.yml`` file under ``root`` (hidden folders skipped), sorted by path; the YAML 1.2
    typing of the files ``typed`` accepts (all when None). ``read`` reads each file (the validate cache's reader
    takes what it can from the cache)."""
    check_tree(root)
    documents: list[Document] = []
    findings: list[Finding] = []
    files: list[str] = []
    top = os.fspath(root) + os.sep
    yaml_paths, listing = tree_files(root)
    for relative in yaml_paths:
        path = top + relative
        files.append(relative)
        wanted = typed is None or typed(relative)
        parsed = read(path, relative, wanted)
        if isinstance(parsed, Finding):
            findings.append(parsed)
            continue
        documents.extend(parsed.documents)
        if wanted:
            findings.extend(parsed.retyped)
        findings.extend(parsed.errors)
    kustomization_dirs = sorted(
        {
            file.rsplit("/", 1)[0] if "/" in file else "."
            for file in files
            if file.rsplit("/", 1)[-1] == "kustomization.yaml"
        }
    )
    return DistTree(root, documents, files, kustomization_dirs, findings, listing)
