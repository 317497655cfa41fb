"""``fluxplane validate`` and ``fluxplane schemas pull``: what a reviewer and CI need to trust dist/.

validate checks a tree as the controllers will see it: every scalar typed as YAML 1.2 readers type it
(yaml12), every document strictly against its schema (schemas) and the CEL rules of its CRD (cel),
every composite resource against its XRD and every Composition rendered for it, the composed
resources checked in turn (compose), every Flux health expression against healthy and failing objects
of its kind (health), every kustomization builds (kustomize), and the references Flux and Crossplane
resolve only at run time (references). :func:`run` returns the findings with what was checked and what
could not be; the command (fluxplane.commands.validate) prints them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from fluxplane.core.layout import cluster_of
from fluxplane.core.tree.kustomize import Folders
from fluxplane.system.progress import Progress
from fluxplane.validate.cache import ValidateCache
from fluxplane.validate.cel import CelCounts, CelRules
from fluxplane.validate.changed import ChangedFiles, Comparison, is_definition
from fluxplane.validate.compose import render_compositions
from fluxplane.validate.compose.overlays import overlay_definitions
from fluxplane.validate.findings import Finding
from fluxplane.validate.health import check_health, unchecked_lines
from fluxplane.validate.kustomize import Builds, find_kubectl, kubectl_identity
from fluxplane.validate.references import check_references
from fluxplane.validate.schemas import (
    CoreSchemas,
    CrdCorpus,
    SchemaReport,
    check_documents,
    default_crd_dirs,
    defined_kinds,
)
from fluxplane.validate.schemas import warning_lines as schema_warnings
from fluxplane.validate.tree import DistTree, Document, ValidateError, check_tree, load_tree

__all__ = ["Coverage", "Finding", "ValidateCache", "ValidateError", "ValidationRun", "run", "validate_tree"]


@dataclass
class Coverage:
    """How much of the tree validate checked beyond the schemas."""

    cel: CelCounts = field(default_factory=CelCounts)
    health_checks: int = 0
    xrs: int = 0
    compositions_rendered: int = 0
    composed_resources: int = 0
    not_rendered: int = 0
    #: What a ``--changed`` run narrowed the checks to ("" when it checked everything).
    narrowed: str = ""

    def line(self) -> str:
        return (
            f"checked: {self.cel.evaluated} CEL rules evaluated ({self.cel.not_evaluated} not evaluated, "
            f"{self.cel.transition_skipped} transition rules skipped), {self.health_checks} health expressions, "
            f"{self.xrs} composite resources, {self.compositions_rendered} compositions rendered "
            f"({self.not_rendered} not rendered), {self.composed_resources} composed resources"
        )


def validate_tree(
    tree: DistTree,
    crd_dirs: list[Path],
    kustomize: bool = True,
    progress: Progress | None = None,
    warnings: list[str] | None = None,
    coverage: Coverage | None = None,
    change: ChangedFiles | None = None,
    cache: ValidateCache | None = None,
) -> list[Finding]:
    """Every finding in ``tree`` (see load_tree), sorted; lines about what could not be checked (kinds without a
    schema, CEL rules not evaluated, compositions not rendered) are appended to ``warnings``, counts of what was
    checked set on ``coverage``. With ``change``, only what the change touches is checked beyond the references
    (:mod:`fluxplane.validate.changed`). With ``cache``, the schema findings of files whose content it checked, the
    results of kustomize builds whose inputs it built, and the references of the clusters whose inputs did not
    change are taken from it (:mod:`fluxplane.validate.cache`)."""
    progress = progress or Progress("validate", show="off")
    coverage = coverage if coverage is not None else Coverage()
    notes: list[str] = []
    with progress.stage("crds") as stage:
        corpus = CrdCorpus.from_dirs(crd_dirs)
        kubectl = find_kubectl() if kustomize else None
        stage.note(f"{len(corpus.group_files)} API groups")
    findings = list(tree.parse_findings)
    scope = _Scope(tree, change)
    with progress.stage("schemas", total=len(scope.documents)) as stage:
        report = _check_schemas(scope.documents, corpus, defined_kinds(tree.documents), cache, scope.whole)
        findings.extend(report.findings)
        stage.note(f"{len(report.findings)} findings")
    notes.extend(schema_warnings(report.uncovered))
    rules = CelRules.from_corpus(corpus, tree.documents)
    with progress.stage("cel") as stage:
        findings.extend(rules.check_all(scope.documents))
        stage.note(f"{rules.counts.evaluated} rules evaluated")
    with progress.stage("compositions") as stage:
        overlays = list(overlay_definitions(tree.documents, scope.clusters, tree.by_file()))
        composed = render_compositions(
            scope.with_definitions, corpus, CoreSchemas(), extra=rules.check, overlays=overlays
        )
        findings.extend(composed.findings)
        notes.extend(composed.warning_lines())
        stage.note(f"{composed.compositions_rendered} rendered")
    notes.extend(rules.not_evaluated_lines())
    with progress.stage("health") as stage:
        health = check_health(scope.with_definitions, corpus)
        findings.extend(health.findings)
        notes.extend(unchecked_lines(health.unchecked))
        stage.note(f"{health.checked} expressions")
    if kubectl is not None:
        with progress.stage("kustomize", total=len(scope.kustomization_dirs)) as stage:
            findings.extend(_builds(tree, scope.kustomization_dirs, kubectl, cache, stage.advance))
            stage.note(f"{len(scope.kustomization_dirs)} kustomizations")
    with progress.stage("references") as stage:
        referenced = check_references(tree) if cache is None else cache.references(tree)
        findings.extend(referenced)
        stage.note(f"{len(referenced)} findings")
    coverage.cel = rules.counts
    coverage.health_checks = health.checked
    coverage.xrs = composed.xrs_checked
    coverage.compositions_rendered = composed.compositions_rendered
    coverage.composed_resources = composed.composed_resources_checked
    coverage.not_rendered = composed.not_rendered
    coverage.narrowed = scope.line(kubectl is not None)
    if warnings is not None:
        warnings.extend(notes)
    return sorted(set(findings))


def _check_schemas(
    documents: list[Document],
    corpus: CrdCorpus,
    defined: set[tuple[str, str]],
    cache: ValidateCache | None,
    whole: bool,
) -> SchemaReport:
    """fluxplane.validate.schemas.check_documents; with ``cache``, a file whose content it checked before, against
    the same corpus and kinds defined, is not checked again."""
    core = CoreSchemas()
    if cache is None:
        return check_documents(documents, corpus, core, defined)
    versions = []
    for package in ("kubernetes-validate", "jsonschema", "referencing"):
        try:
            versions.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(package)
    cache.start_schemas(json.dumps([corpus.identity(), core.version, versions, sorted(defined)]))
    by_file: dict[str, list[Document]] = {}
    for document in documents:
        by_file.setdefault(document.file, []).append(document)
    findings: list[Finding] = []
    uncovered: dict[tuple[str, str], int] = {}
    for file, mine in by_file.items():
        known = cache.schema_report(file)
        if known is None:
            report = check_documents(mine, corpus, core, defined)
            cache.keep_schema_report(file, report.findings, report.uncovered)
            known = report.findings, report.uncovered
        findings.extend(known[0])
        for key, count in known[1].items():
            uncovered[key] = uncovered.get(key, 0) + count
    cache.finish_schemas(whole)
    return SchemaReport(findings, uncovered)


def _builds(
    tree: DistTree, folders: list[str], kubectl: str, cache: ValidateCache | None, advance: Callable[[], None]
) -> list[Finding]:
    """The findings of the kustomize builds of ``folders``: with ``cache``, a folder whose build's key it holds is
    not built again (fluxplane.validate.kustomize.Builds)."""
    if not folders:
        return []
    if cache is None:
        return Builds(tree.root, folders, kubectl, parsed=tree.parsed_files(), paths=tree.listing).findings(advance)
    builds = Builds(
        tree.root,
        folders,
        kubectl,
        parsed=tree.parsed_files(),
        blobs=cache.blobs,
        known=cache.builds(kubectl_identity(kubectl)),
        paths=tree.listing,
    )
    found = builds.findings(advance)
    cache.keep_builds(builds.results, whole=len(folders) == len(tree.kustomization_dirs))
    return found


class _Scope:
    """What a run checks beyond the references: everything, or what ``change`` touches."""

    def __init__(self, tree: DistTree, change: ChangedFiles | None) -> None:
        self.tree = tree
        self.change = change
        #: Whether everything is checked.
        self.whole = change is None or bool(change.definitions)
        #: The clusters whose own folders hold a document checked (None: every cluster).
        self.clusters: set[str] | None = None
        if change is None or change.definitions:
            self.documents = tree.documents
            self.with_definitions = tree.documents
            self.kustomization_dirs = tree.kustomization_dirs
            return
        self.documents = [document for document in tree.documents if change.covers(document.file)]
        # a cluster's composites are rendered with its own overlay's definitions (fluxplane.validate.compose.overlays)
        self.clusters = {owner for document in self.documents if (owner := cluster_of(document.file)) is not None}
        definitions = [document for document in tree.documents if is_definition(document.body)]
        self.with_definitions = definitions + self.documents
        folders = Folders(tree.by_file())
        self.kustomization_dirs = [
            folder for folder in tree.kustomization_dirs if change.touches(folder, folders.inputs(folder))
        ]

    def line(self, kustomize: bool) -> str:
        change = self.change
        if change is None:
            return ""
        since = f"{len(change.files)} changed files since {change.base}"
        if change.definitions:
            shown = ", ".join(change.definitions[:3]) + (", ..." if len(change.definitions) > 3 else "")
            return f"changed: {since}, definitions among them ({shown}): everything checked"
        built = (
            f", {len(self.kustomization_dirs)} of {len(self.tree.kustomization_dirs)} kustomizations"
            if kustomize
            else ""
        )
        return (
            f"changed: {since}: {len(self.documents)} of {len(self.tree.documents)} documents{built} "
            "checked, references across the whole tree"
        )


@dataclass(frozen=True)
class ValidationRun:
    """A finished run over a dist/ tree: its findings, what was checked, and what could not be."""

    dist: Path
    findings: list[Finding]
    coverage: Coverage
    #: Lines about what could not be checked (kinds without a schema, rules not evaluated).
    warnings: list[str]
    documents: int
    files: int
    kustomizations: int


def run(
    dist: Path,
    crd_dirs: Sequence[Path] = (),
    *,
    kustomize: bool = True,
    changed: str | None = None,
    progress: Progress | None = None,
    cache: ValidateCache | None = None,
) -> ValidationRun:
    """Validate the tree at ``dist`` against the CRDs in ``crd_dirs`` (none given: default_crd_dirs); with
    ``changed`` (a Git ref), only what changed since it beyond the references; with ``cache``, reading again only
    what it does not hold (the findings are the same). ValidateError for bad input: no tree, a CRD folder that is
    not there, an unknown ref, no kubectl while ``kustomize``."""
    crds = list(crd_dirs) or default_crd_dirs()
    check_tree(dist)
    progress = progress or Progress("validate", show="off")
    # Git compares the tree with the ref while the cache's documents are read: neither waits for the other.
    comparison = Comparison(dist, changed) if changed is not None else None
    with comparison or contextlib.nullcontext(), progress.stage("read") as stage:
        if cache is not None:
            cache.start()
        change = comparison.result() if comparison is not None else None
        typed = None if change is None or change.definitions else change.covers
        if cache is None:
            tree = load_tree(dist, typed)
        else:
            cache.track(dist)
            tree = load_tree(dist, typed, cache.read)
            cache.finish()
        stage.note(f"{len(tree.documents)} documents")
    warnings: list[str] = []
    coverage = Coverage()
    findings = validate_tree(tree, crds, kustomize, progress, warnings, coverage, change, cache)
    return ValidationRun(
        dist=dist,
        findings=findings,
        coverage=coverage,
        warnings=warnings,
        documents=len(tree.documents),
        files=len(tree.files),
        kustomizations=len(tree.kustomization_dirs),
    )
