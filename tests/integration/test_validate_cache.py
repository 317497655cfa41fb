"""The validate cache changes nothing validate reports: ``validate`` and ``validate --changed`` print the same with a
warm cache as with ``--no-cache``, after each kind of change a pull request makes, on the example and on a
generated fleet."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fluxplane import validate
from fluxplane.cli import main
from fluxplane.validate.cache import DOCUMENTS, REFERENCES
from fluxplane.validate.schemas import SchemaReport
from fluxplane.validate.tree import Document
from tests.conftest import CRDS, ROOT
from tests.support.git import git

pytestmark = pytest.mark.skipif(not CRDS.is_dir(), reason=f"the CRD corpus {CRDS} is missing")

BENCHMARKS = ROOT / "benchmarks"
CLUSTER_VARS = "platform/clusters/staging-usw2/cluster-vars.yaml"
SHARED = "platform/infrastructure/controllers/cert-manager/base/cert-manager.yaml"
XRDS = "platform/infrastructure/configs/eks-compositions/base/eks-compositions.yaml"
SOURCES = "platform/spokes/sources.yaml"
CLUSTER_KUSTOMIZATION = "platform/clusters/staging-usw2/kustomization.yaml"
KUBECTL = shutil.which("kubectl")


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def _cluster_value(dist: Path) -> None:
    _replace(dist / CLUSTER_VARS, "cluster_name: staging-usw2", "cluster_name: staging-usw9")


def _shared_value(dist: Path) -> None:
    _replace(dist / SHARED, "interval: ", "interval: 7")


def _pack_version(dist: Path) -> None:
    _replace(dist / SHARED, "version: v1.21.1", "version: v1.22.0")


def _added_cluster(dist: Path) -> None:
    shutil.copytree(dist / "platform/clusters/staging-usw2", dist / "platform/clusters/staging-usw3")


def _removed_cluster(dist: Path) -> None:
    shutil.rmtree(dist / "platform/clusters/production-euc1")


def _changed_definition(dist: Path) -> None:
    _replace(dist / XRDS, "type: object", "type: object\n")


def _deleted_source(dist: Path) -> None:
    # the HelmRepository the hub's unchanged HelmReleases for each spoke name
    first, _, rest = (dist / SOURCES).read_text().partition("\n---\n")
    assert "name: external-secrets" in first
    (dist / SOURCES).write_text(rest)


CHANGES: dict[str, Callable[[Path], None]] = {
    "a cluster value": _cluster_value,
    "a shared value": _shared_value,
    "a pack version": _pack_version,
    "an added cluster": _added_cluster,
    "a removed cluster": _removed_cluster,
    "a changed definition": _changed_definition,
    "a deleted object still referenced": _deleted_source,
}


def _validate(
    dist: Path, capsys: pytest.CaptureFixture[str], *args: str, kustomize: bool = False
) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["validate", str(dist), "--crds", str(CRDS), *([] if kustomize else ["--no-kustomize"]), *args])
    captured = capsys.readouterr()
    return code, captured.out.splitlines() + [line for line in captured.err.splitlines() if line.startswith("no ")]


def _committed(source: Path, top: Path) -> Path:
    dist = Path(shutil.copytree(source, top / "dist"))
    git(top, "init", "-q")
    git(top, "add", "dist")
    git(top, "commit", "-qm", "base")
    return dist


def _same_with_and_without_cache(
    dist: Path, change: Callable[[Path], None], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a cache warmed on the base (as CI restores the main branch's)
    _validate(dist, capsys, "--changed", "HEAD")
    assert (dist.parent / ".fluxplane-cache/validate" / REFERENCES).is_file()
    # WHEN the change is made
    change(dist)
    # THEN validate --changed, then the whole validate, print the same with the cache as without it
    for args in (("--changed", "HEAD"), ()):
        assert _validate(dist, capsys, *args) == _validate(dist, capsys, *args, "--no-cache"), args


@pytest.mark.parametrize("kind", sorted(CHANGES))
def test_the_example_validates_the_same_with_a_warm_cache(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _same_with_and_without_cache(_committed(ROOT / "dist", tmp_path / "repo"), CHANGES[kind], capsys)


def test_a_deleted_object_is_found_in_the_unchanged_file_with_a_warm_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dist = _committed(ROOT / "dist", tmp_path / "repo")
    _validate(dist, capsys, "--changed", "HEAD")
    _deleted_source(dist)
    code, out = _validate(dist, capsys, "--changed", "HEAD")
    assert code == 1
    assert any(
        line.startswith("platform/spokes/staging-usw2/external-secrets/external-secrets.yaml:1 HelmRelease/")
        and "HelmRepository 'flux-system/external-secrets' not found in cluster 'hub'" in line
        for line in out
    ), out


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_a_failing_build_and_a_schema_finding_kept_are_told_of_each_place_without_a_build_or_a_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a kubectl that logs what it runs, and the example with a cluster whose kustomization lists a file that
    # is not there and whose cluster-vars ConfigMap has a field it does not take, validated with its builds (the
    # cache keeps them and the schema findings)
    tools = tmp_path / "bin"
    tools.mkdir()
    log = tmp_path / "kubectl.log"
    (tools / "kubectl").write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{KUBECTL}" "$@"\n')
    (tools / "kubectl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    dist = _committed(ROOT / "dist", tmp_path / "repo")
    _replace(dist / CLUSTER_KUSTOMIZATION, "- tenants.yaml\n", "- tenants.yaml\n- missing.yaml\n")
    _replace(dist / CLUSTER_VARS, "  namespace: flux-system\n", "  namespace: flux-system\n  replicas: 2\n")
    _validate(dist, capsys, kustomize=True)
    checked: list[str] = []
    check_documents = validate.check_documents

    def counting(documents: list[Document], *args: Any) -> SchemaReport:
        checked.extend(document.file for document in documents)
        return check_documents(documents, *args)

    monkeypatch.setattr(validate, "check_documents", counting)
    # WHEN the cluster is copied to another (the same files), and the project moved to another folder
    _added_cluster(dist)
    dist = Path(shutil.move(dist.parent, tmp_path / "elsewhere")) / "dist"
    # THEN validate, and validate --changed, build nothing and check no document against its schema again
    for args in (("--changed", "HEAD"), ()):
        log.write_text("")
        checked.clear()
        cached = _validate(dist, capsys, *args, kustomize=True)
        assert [line.split()[0] for line in log.read_text().splitlines()] == ["version"], args
        assert checked == [], args
        # AND print what they print without the cache: the error told of each cluster's own folder, below the root
        # the project lies in now
        assert cached == _validate(dist, capsys, *args, "--no-cache", kustomize=True), args
        failed = [line for line in cached[1] if "kubectl kustomize failed" in line]
        assert [line.partition(" ")[0] for line in failed] == [
            f"platform/clusters/{name}/kustomization.yaml:1" for name in ("staging-usw2", "staging-usw3")
        ], args
        assert "platform/clusters/staging-usw3/missing.yaml" in failed[1]
        assert str(tmp_path) not in "".join(failed)
        # AND the schema finding is told of each file of that content
        assert [line.partition(" ")[0] for line in cached[1] if "replicas" in line] == [
            f"platform/clusters/{name}/cluster-vars.yaml:1" for name in ("staging-usw2", "staging-usw3")
        ], args


def test_no_cache_leaves_the_cache_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = _committed(ROOT / "dist", tmp_path / "repo")
    _validate(dist, capsys, "--no-cache")
    assert not (dist.parent / ".fluxplane-cache").exists()
    _validate(dist, capsys)
    assert (dist.parent / ".fluxplane-cache/validate" / DOCUMENTS).is_file()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated fleet of eight workload clusters (the benchmarks' generator), synthesized once."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from synth_fleet import synth_with_cache, write_fleet
    finally:
        sys.path.remove(str(BENCHMARKS))
    root = tmp_path_factory.mktemp("fleet")
    write_fleet(root, 8)
    synth_with_cache(root)
    return root / "dist"


ADDON = "platform/infrastructure/configs/addon-01/base/addon-01.yaml"
CRD = """---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
"""

FLEET_CHANGES: dict[str, Callable[[Path], None]] = {
    "a cluster value": lambda dist: _replace(
        dist / "platform/clusters/dev-0000/overlays/addon-00/kustomization.yaml", "value: 2", "value: 99"
    ),
    "a shared value": lambda dist: _replace(dist / ADDON, "interval: 1h", "interval: 2h"),
    "a pack version": lambda dist: _replace(dist / ADDON, "version: 1.2.3", "version: 1.2.4"),
    "a changed CRD": lambda dist: (dist / ADDON).write_text((dist / ADDON).read_text() + CRD),
    "an added cluster": lambda dist: shutil.copytree(
        dist / "platform/clusters/dev-0004", dist / "platform/clusters/dev-0009"
    ),
    "a removed cluster": lambda dist: shutil.rmtree(dist / "platform/clusters/staging-0001"),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(FLEET_CHANGES))
def test_a_generated_fleet_validates_the_same_with_a_warm_cache(
    kind: str, fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _same_with_and_without_cache(_committed(fleet, tmp_path / "repo"), FLEET_CHANGES[kind], capsys)
