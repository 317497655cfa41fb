"""scripts/build_crds.py: the CRDs fluxplane ships are what it builds from the shared corpus, with their sources."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from scripts.build_crds import LICENCES, build, sources

from fluxplane.validate.schemas import SHIPPED_CRDS
from fluxplane.validate.upstream import SHIPPED
from tests.conftest import CRDS


def _content(name: str, data: bytes) -> object:
    """What a shipped file says: a bundle's CRDs (gzip's bytes differ between zlib builds), else its text."""
    return json.loads(gzip.decompress(data)) if name.endswith(".json.gz") else data.decode("utf-8")


@pytest.mark.skipif(not CRDS.is_dir(), reason=f"the CRD corpus {CRDS} is missing: the shipped CRDs are not rebuilt")
def test_the_shipped_crds_are_what_the_build_makes_of_the_corpus() -> None:
    # GIVEN the corpus beside the project WHEN the shipped folder is built from it
    built = build(CRDS)
    # THEN the committed folder holds the same files, saying the same (run `make crds` after changing either)
    committed = {path.name: path.read_bytes() for path in SHIPPED_CRDS.iterdir()}
    assert sorted(committed) == sorted(built)
    for name, data in built.items():
        assert _content(name, committed[name]) == _content(name, data), name


def test_every_shipped_crd_has_its_source_licence_and_checksum() -> None:
    # GIVEN the shipped folder's manifest
    manifest = json.loads((SHIPPED_CRDS / "SOURCES.json").read_text())["crds"]
    shipped = {
        crd["spec"]["group"] + "/" + crd["spec"]["names"]["plural"] + ".yaml"
        for path in SHIPPED_CRDS.glob("*.json.gz")
        for crd in json.loads(gzip.decompress(path.read_bytes()))
    }
    # THEN it names every shipped CRD once, each with its upstream file, commit, licence and sha256
    assert sorted(entry["file"] for entry in manifest) == sorted(shipped)
    for entry in manifest:
        assert entry["repository"] in LICENCES and entry["licence"] == LICENCES[entry["repository"]]
        assert len(entry["commit"]) == 40 and len(entry["sha256"]) == 64 and entry["path"].endswith(".yaml")
    # AND a group file for every group SHIPPED names, and the NOTICE names every repository with its licence
    assert sorted(path.name.removesuffix(".json.gz") for path in SHIPPED_CRDS.glob("*.json.gz")) == sorted(SHIPPED)
    notice = (SHIPPED_CRDS / "NOTICE").read_text()
    for repository in {entry["repository"] for entry in manifest}:
        assert f"https://github.com/{repository}: {LICENCES[repository]}, at " in notice


def test_sources_reads_each_table_kind() -> None:
    # GIVEN a SOURCES.md with a snapshot table, a file table relying on it, and a file table with its own commit
    text = """\
| repository | commit (HEAD of default branch) | commit date | `git describe` | version |
|---|---|---|---|---|
| fluxcd/source-controller | `39b711b1` | 2026-07-02 | v1.9.0-13 | main after v1.9.1 |

| file | kind | versions | repository | upstream path |
|---|---|---|---|---|
| source.toolkit.fluxcd.io/buckets.yaml | Bucket | v1* | fluxcd/source-controller | config/crd/bases/b.yaml |

| file | repository | path | commit | version |
|---|---|---|---|---|
| s3.aws.m.upbound.io/buckets.yaml | crossplane-contrib/provider-upjet-aws | p/s.yaml | 75a4c571 | main after v2.6.0 |
"""
    # THEN each file has its repository, path, commit and version
    assert sources(text) == {
        "source.toolkit.fluxcd.io/buckets.yaml": {
            "repository": "fluxcd/source-controller",
            "path": "config/crd/bases/b.yaml",
            "commit": "39b711b1",
            "version": "main after v1.9.1",
        },
        "s3.aws.m.upbound.io/buckets.yaml": {
            "repository": "crossplane-contrib/provider-upjet-aws",
            "path": "p/s.yaml",
            "commit": "75a4c571",
            "version": "main after v2.6.0",
        },
    }


def test_the_shipped_folder_stays_small() -> None:
    size = sum(path.stat().st_size for path in Path(SHIPPED_CRDS).iterdir())
    assert size < 1024 * 1024, f"{size} bytes"
