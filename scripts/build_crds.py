"""Build the CRDs fluxplane ships (src/fluxplane/validate/data/crds) from the shared CRD corpus.

``python scripts/build_crds.py [CORPUS]`` (``make crds``; CORPUS defaults to ../shared/crds, whose files are each
an upstream file byte for byte, SOURCES.md saying which) converts the CRDs that
fluxplane.validate.upstream.SHIPPED names into:

* ``<group>.json.gz``: the group's CRDs, a JSON list in the order of their plurals, each reduced to what validate
  reads of it (apiVersion, kind, metadata.name and the whole spec: every version's schema with its descriptions,
  defaults and CEL rules), read as validate reads the YAML; gzip, which every Python has;
* ``partial-groups.txt``: the groups shipped in part, whose other kinds validate leaves unchecked;
* ``SOURCES.json``: for every CRD its kind, versions, repository, path and commit, the upstream version, the
  licence, and the sha256 of the upstream file;
* ``NOTICE``: the licence of each repository, and the notices their NOTICE files ask to keep.

tests/scripts/test_build_crds.py checks that the committed files are what this builds from the corpus.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from fluxplane.validate.schemas import SHIPPED_CRDS
from fluxplane.validate.tree import ManifestLoader
from fluxplane.validate.upstream import SHIPPED

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "crds"

#: The licence (SPDX) of each repository the shipped CRDs come from.
LICENCES: dict[str, str] = {
    "aws/karpenter-provider-aws": "Apache-2.0",
    "bitnami-labs/sealed-secrets": "Apache-2.0",
    "cert-manager/cert-manager": "Apache-2.0",
    "crossplane-contrib/provider-kubernetes": "Apache-2.0",
    "crossplane-contrib/provider-upjet-aws": "Apache-2.0",
    "crossplane/crossplane": "Apache-2.0",
    "envoyproxy/gateway": "Apache-2.0",
    "external-secrets/external-secrets": "Apache-2.0",
    "fluxcd/helm-controller": "Apache-2.0",
    "fluxcd/kustomize-controller": "Apache-2.0",
    "fluxcd/notification-controller": "Apache-2.0",
    "fluxcd/source-controller": "Apache-2.0",
    "kubernetes-sigs/gateway-api": "Apache-2.0",
    "kyverno/kyverno": "Apache-2.0",
}
#: What the NOTICE files of these repositories say (Apache-2.0 section 4(d) asks a derived work to keep it).
UPSTREAM_NOTICES: dict[str, str] = {
    "aws/karpenter-provider-aws": "Karpenter\nCopyright Amazon.com, Inc. or its affiliates. All Rights Reserved.",
    "crossplane-contrib/provider-upjet-aws": (
        "This project is a larger work that combines with software written by third parties, licensed under\n"
        "their own terms. Notably, this larger work combines with Terraform components, which are licensed\n"
        "under the Mozilla Public License 2.0 (https://www.mozilla.org/en-US/MPL/2.0/), among them\n"
        "https://github.com/hashicorp/terraform-provider-aws."
    ),
    "kyverno/kyverno": (
        "Kyverno\nCopyright The Kyverno Authors\n\n"
        "This product includes software developed by the Kyverno project (https://kyverno.io) and its contributors."
    ),
}


class BuildError(Exception):
    """The corpus does not hold what SHIPPED names, or SOURCES.md does not say where a file comes from."""


def sources(text: str) -> dict[str, dict[str, str]]:
    """{corpus file (``<group>/<plural>.yaml``): repository, path, commit, version}, from SOURCES.md's tables.

    Tables with a ``file`` column name a file's repository and upstream path, and some its commit and version;
    tables whose first column is ``repository`` give each repository's snapshot commit and version, for the rest.
    """
    files: dict[str, dict[str, str]] = {}
    snapshots: dict[str, dict[str, str]] = {}
    header: list[str] | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [cell.strip().strip("`").strip() for cell in line.strip().strip("|").split("|")]
        if header is None:
            header = [re.sub(r" \(.*\)$", "", cell).removeprefix("upstream ") for cell in cells]
            continue
        if set(line) <= set("|- :"):
            continue
        row = dict(zip(header, cells, strict=False))
        if header[0] == "file":
            files[row["file"]] = {key: row[key] for key in ("repository", "path", "commit", "version") if key in row}
        elif header[0] == "repository" and "commit" in header:
            snapshots[row["repository"]] = {"commit": row["commit"], "version": row["version"]}
    for row in files.values():
        snapshot = snapshots.get(row["repository"], {})
        for key in ("commit", "version"):
            row.setdefault(key, snapshot.get(key, ""))
    return files


def shipped_files(corpus: Path) -> dict[str, list[Path]]:
    """{group: its corpus files fluxplane ships}, each group's in the order of their plurals."""
    out: dict[str, list[Path]] = {}
    for group, plurals in sorted(SHIPPED.items()):
        folder = corpus / group
        if plurals is None:
            found = sorted(folder.glob("*.yaml"))
            if not found:
                raise BuildError(f"{folder}: no CRD files")
        else:
            found = [folder / f"{plural}.yaml" for plural in sorted(plurals)]
            missing = [str(path) for path in found if not path.is_file()]
            if missing:
                raise BuildError(f"not in the corpus: {', '.join(missing)}")
        out[group] = found
    return out


def convert(path: Path) -> dict[str, Any]:
    """The CRD in ``path``, reduced to what validate reads of it."""
    [crd] = [
        document
        for document in yaml.load_all(path.read_text(encoding="utf-8"), Loader=ManifestLoader)
        if isinstance(document, dict) and document.get("kind") == "CustomResourceDefinition"
    ]
    return {
        "apiVersion": crd["apiVersion"],
        "kind": crd["kind"],
        "metadata": {"name": crd["metadata"]["name"]},
        "spec": crd["spec"],
    }


def build(corpus: Path = CORPUS) -> dict[str, bytes]:
    """{file name: content} of the shipped CRD folder, built from ``corpus``."""
    table = sources((corpus / "SOURCES.md").read_text(encoding="utf-8"))
    corpus_partial = {
        line.split("#", 1)[0].strip() for line in (corpus / "partial-groups.txt").read_text().splitlines()
    } - {""}
    out: dict[str, bytes] = {}
    manifest: list[dict[str, Any]] = []
    partial: list[str] = []
    for group, paths in shipped_files(corpus).items():
        crds = [convert(path) for path in paths]
        text = json.dumps(crds, ensure_ascii=False, separators=(",", ":"))
        out[f"{group}.json.gz"] = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
        if group in corpus_partial or len(paths) < len(list((corpus / group).glob("*.yaml"))):
            partial.append(group)
        for path, crd in zip(paths, crds, strict=True):
            name = f"{group}/{path.name}"
            if name not in table:
                raise BuildError(f"{corpus / 'SOURCES.md'}: says nothing of {name}")
            row = table[name]
            if row["repository"] not in LICENCES:
                raise BuildError(f"{name}: no licence recorded for {row['repository']} (scripts/build_crds.py)")
            manifest.append(
                {
                    "file": name,
                    "kind": crd["spec"]["names"]["kind"],
                    "versions": [version["name"] for version in crd["spec"]["versions"]],
                    "repository": row["repository"],
                    "path": row["path"],
                    "commit": row["commit"],
                    "version": row["version"],
                    "licence": LICENCES[row["repository"]],
                    "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                }
            )
    out["partial-groups.txt"] = (
        "# API groups shipped in part: validate leaves their other kinds unchecked, with a warning\n"
        + "".join(f"{group}\n" for group in partial)
    ).encode("utf-8")
    rows = ",\n".join(f"  {json.dumps(entry, ensure_ascii=False)}" for entry in manifest)
    out["SOURCES.json"] = f'{{"crds": [\n{rows}\n]}}\n'.encode()
    out["NOTICE"] = notice(manifest).encode("utf-8")
    return out


def notice(manifest: list[dict[str, Any]]) -> str:
    """The NOTICE of the shipped CRDs: what they are, and each repository's licence and notice."""
    repositories: dict[str, set[tuple[str, str]]] = {}
    for entry in manifest:
        repositories.setdefault(entry["repository"], set()).add((entry["commit"], entry["version"]))
    lines = [
        "The files of this folder are derived from the CustomResourceDefinitions of the projects below: each",
        "group's CRDs converted from YAML to compressed JSON, reduced to their names and spec, unchanged otherwise.",
        "SOURCES.json names the upstream file, commit and sha256 of each. Each project is licensed under the",
        "licence named with it; the Apache License 2.0 is in fluxplane's LICENSE.",
        "",
    ]
    for repository, snapshots in sorted(repositories.items()):
        at = "; ".join(f"{commit} ({version})" for commit, version in sorted(snapshots))
        lines.append(f"https://github.com/{repository}: {LICENCES[repository]}, at {at}")
        if repository in UPSTREAM_NOTICES:
            lines.extend(f"    {line}" if line else "" for line in UPSTREAM_NOTICES[repository].splitlines())
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    corpus = Path(argv[0]) if argv else CORPUS
    if not (corpus / "SOURCES.md").is_file():
        print(f"{corpus}: not the CRD corpus (no SOURCES.md)", file=sys.stderr)
        return 2
    try:
        files = build(corpus)
    except BuildError as exc:
        print(exc, file=sys.stderr)
        return 2
    SHIPPED_CRDS.mkdir(parents=True, exist_ok=True)
    for stale in SHIPPED_CRDS.iterdir():
        if stale.name not in files:
            stale.unlink()
    for name, data in files.items():
        (SHIPPED_CRDS / name).write_bytes(data)
    size = sum(len(data) for data in files.values())
    print(f"{SHIPPED_CRDS}: {len(files)} files, {size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
