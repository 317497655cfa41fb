"""Tests for fluxplane.validate.pull: CRDs from file:// URLs, an injected fetch, and a fake kubectl."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fluxplane.validate.pull import Pulled, fetch_url, pull, pull_cluster, pull_upstream, split_crds
from fluxplane.validate.schemas import PULLED_BY, default_crd_dirs, pulled_by
from fluxplane.validate.tree import ValidateError
from fluxplane.validate.upstream import URLS
from tests.support.widgets import CRD


def test_pull_from_file_urls_writes_group_plural_files(tmp_path: Path) -> None:
    # GIVEN an upstream file with a CRD and another document
    source = tmp_path / "crds.yaml"
    source.write_text(CRD + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n")
    # WHEN pulled into a cache
    written = pull_upstream(tmp_path / "cache", [source.as_uri()])
    # THEN one file per CRD, laid out as <group>/<plural>.yaml, no temporary left
    assert written == [tmp_path / "cache" / "example.io" / "widgets.yaml"]
    assert sorted(p.name for p in (tmp_path / "cache" / "example.io").iterdir()) == ["widgets.yaml"]


def test_failed_download_names_the_url_and_writes_nothing(tmp_path: Path) -> None:
    missing = (tmp_path / "nothere.yaml").as_uri()
    with pytest.raises(ValidateError, match=rf"^cannot download {missing}: "):
        pull_upstream(tmp_path / "cache", [missing])
    assert not (tmp_path / "cache").exists()


def test_injected_fetch_and_file_without_crds(tmp_path: Path) -> None:
    with pytest.raises(ValidateError, match=r"^https://example\.invalid/x\.yaml: no CustomResourceDefinition in it$"):
        pull_upstream(tmp_path, ["https://example.invalid/x.yaml"], fetch=lambda url: b"kind: Namespace\n")


def test_fetch_url_reads_file_urls(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"x")
    assert fetch_url((tmp_path / "a").as_uri()) == b"x"


def test_split_crds_reads_list_items() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- " + CRD.replace("\n", "\n  ").rstrip() + "\n"
    assert [name for name, _ in split_crds(text, "x")] == ["example.io/widgets.yaml"]


def test_from_cluster_with_a_fake_kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a kubectl that records its arguments and prints a List of CRDs
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    listing = tmp_path / "list.yaml"
    listing.write_text("apiVersion: v1\nkind: List\nitems:\n- " + CRD.replace("\n", "\n  ").rstrip() + "\n")
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(f'#!/bin/sh\necho "$@" > {tmp_path / "args"}\ncat {listing}\n')
    kubectl.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    # WHEN pulled with a context
    written = pull_cluster(tmp_path / "cache", "prod")
    # THEN kubectl was asked for the CRDs in that context and each was written
    assert (tmp_path / "args").read_text() == "--context prod get crd -o yaml\n"
    assert written == [tmp_path / "cache" / "example.io" / "widgets.yaml"]


def test_from_cluster_failure_is_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").write_text("#!/bin/sh\necho 'error: no context' >&2\nexit 1\n")
    (bin_dir / "kubectl").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(ValidateError, match=r"^kubectl get crd failed: error: no context$"):
        pull_cluster(tmp_path / "cache")


def test_pull_fills_the_schema_cache_by_default_and_returns_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a cache folder of its own, and every pinned URL answering with the same CRD
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    fetched: list[str] = []

    def fetch(url: str) -> bytes:
        fetched.append(url)
        return CRD.encode()

    # WHEN pulled without a destination
    pulled = pull(fetch=fetch)

    # THEN every pinned URL was read, the cache holds the CRD, the result says so, and nothing was printed
    cache = tmp_path / "xdg" / "fluxplane" / "crds"
    assert fetched == list(URLS)
    assert pulled == Pulled(cache, [cache / "example.io" / "widgets.yaml"] * len(URLS))
    assert capsys.readouterr() == ("", "")
    # AND it says this fluxplane pulled it, so validate reads it instead of the CRDs fluxplane ships
    assert (cache / PULLED_BY).read_text() == pulled_by()
    monkeypatch.delenv("FLUXPLANE_CRDS", raising=False)
    assert default_crd_dirs() == [cache]


def test_pull_from_cluster_writes_to_dest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a kubectl that prints one CRD
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    listing = tmp_path / "crd.yaml"
    listing.write_text(CRD)
    (bin_dir / "kubectl").write_text(f"#!/bin/sh\ncat {listing}\n")
    (bin_dir / "kubectl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    # WHEN pulled from the cluster into a folder
    pulled = pull(tmp_path / "dest", from_cluster=True)
    # THEN the folder and the file are the result
    assert pulled == Pulled(tmp_path / "dest", [tmp_path / "dest" / "example.io" / "widgets.yaml"])
