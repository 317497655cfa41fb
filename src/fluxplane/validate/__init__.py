"""``fluxplane validate`` and ``fluxplane schemas pull``: what a reviewer and CI need to trust dist/.

validate checks a tree in three ways: every document strictly against its schema (schemas), every
kustomization builds (kustomize), and the references Flux and Crossplane resolve only at run time
(references). Findings print one per line on standard output; exit 1 when there is any, 0 when the
tree is clean, 2 for bad input (no tree, no CRD schemas, no kubectl).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fluxplane.progress import Progress
from fluxplane.validate.findings import Finding
from fluxplane.validate.kustomize import check_builds, find_kubectl
from fluxplane.validate.references import check_references
from fluxplane.validate.schemas import CoreSchemas, CrdCorpus, check_documents, default_crd_dirs, defined_kinds
from fluxplane.validate.schemas import warning_lines as schema_warnings
from fluxplane.validate.tree import Tree, ValidateError, load_tree

__all__ = ["Finding", "ValidateError", "command", "validate_tree"]

EXIT_FINDINGS = 1


def validate_tree(
    tree: Tree,
    crd_dirs: list[Path],
    kustomize: bool = True,
    progress: Progress | None = None,
    warnings: list[str] | None = None,
) -> list[Finding]:
    """Every finding in ``tree`` (see load_tree), sorted; lines about kinds without a schema are appended to
    ``warnings``."""
    progress = progress or Progress("validate", show="off")
    with progress.stage("load") as stage:
        corpus = CrdCorpus.from_dirs(crd_dirs)
        kubectl = find_kubectl() if kustomize else None
        stage.note(f"{len(tree.documents)} documents")
    findings = list(tree.parse_findings)
    with progress.stage("schemas", total=len(tree.documents)) as stage:
        report = check_documents(tree.documents, corpus, CoreSchemas(), defined_kinds(tree.documents))
        findings.extend(report.findings)
        stage.note(f"{len(report.findings)} findings")
    if warnings is not None:
        warnings.extend(schema_warnings(report.uncovered))
    if kubectl is not None:
        with progress.stage("kustomize", total=len(tree.kustomization_dirs)) as stage:
            built = check_builds(tree.root, tree.kustomization_dirs, kubectl, stage.advance)
            findings.extend(built)
            stage.note(f"{len(tree.kustomization_dirs)} kustomizations")
    with progress.stage("references") as stage:
        referenced = check_references(tree)
        findings.extend(referenced)
        stage.note(f"{len(referenced)} findings")
    return sorted(set(findings))


def _validate(args: argparse.Namespace) -> int:
    dist: Path = args.dist if args.dist is not None else args.root / "dist"
    crd_dirs: list[Path] = list(args.crds) or default_crd_dirs()
    warnings: list[str] = []
    tree = load_tree(dist)
    findings = validate_tree(tree, crd_dirs, not args.no_kustomize, Progress("validate"), warnings)
    for line in warnings:
        print(line, file=sys.stderr)
    for finding in findings:
        print(finding.line())
    summary = (
        f"{dist}: {len(tree.documents)} documents in {len(tree.files)} files, "
        f"{len(tree.kustomization_dirs)} kustomizations"
    )
    if findings:
        noun = "finding" if len(findings) == 1 else "findings"
        print(f"{summary}: {len(findings)} {noun}")
        return EXIT_FINDINGS
    print(f"{summary}: valid")
    return 0


def command(args: argparse.Namespace) -> int:
    """Run ``validate`` or ``schemas pull`` from the parsed arguments; the exit code."""
    if args.command == "schemas":
        from fluxplane.validate.pull import pull_command

        return pull_command(args)
    return _validate(args)
