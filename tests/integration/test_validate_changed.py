"""``validate --changed BASE``: only what changed since BASE is checked, references across the whole tree."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fluxplane.cli import main
from tests.conftest import CRDS, ROOT
from tests.support.git import git

pytestmark = [
    pytest.mark.skipif(not CRDS.is_dir(), reason=f"the CRD corpus {CRDS} is missing"),
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]
SPOKE = "platform/spokes/staging-usw2"
CLUSTER = f"{SPOKE}/cluster/cluster.yaml"
OTHER = "platform/spokes/production-usw2/cluster/cluster.yaml"
XRDS = "platform/infrastructure/configs/eks-compositions/base/eks-compositions.yaml"


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    """The example's dist/ committed in a repository (under fleet/), with a fault already in one cluster's file."""
    top = tmp_path / "repo"
    dist = Path(shutil.copytree(ROOT / "dist", top / "fleet" / "dist"))
    _misspell(dist / OTHER, "nodeGroups:", "nodeGroupz:")
    git(top, "init", "-q")
    git(top, "add", ".")
    git(top, "commit", "-qm", "first")
    return dist


def _misspell(path: Path, field: str, wrong: str) -> None:
    text = path.read_text()
    assert field in text
    path.write_text(text.replace(field, wrong, 1))


def _validate(dist: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["validate", str(dist), "--crds", str(CRDS), *args])
    return code, capsys.readouterr().out.splitlines()


def test_nothing_changed_checks_only_the_references(dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _validate(dist, capsys, "--changed", "HEAD")
    assert code == 0
    assert out[0] == (
        "changed: 0 changed files since HEAD: 0 of 522 documents, 0 of 110 kustomizations checked, "
        "references across the whole tree"
    )
    assert out[-1].endswith(": valid")


def test_a_fault_in_a_changed_file_is_found_and_unchanged_files_are_not_rechecked(
    dist: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN one cluster's file changed since HEAD with a misspelled field (another cluster's file, unchanged, has one)
    _misspell(dist / CLUSTER, "region:", "regoin:")
    # WHEN validated with --changed HEAD THEN the changed file's fault is found, named by file, object and field
    code, out = _validate(dist, capsys, "--changed", "HEAD")
    assert code == 1
    assert f'{CLUSTER}:1 EKSCluster/staging-usw2: spec.regoin: unknown field "regoin" (did you mean "region"?)' in out
    # AND the unchanged file is not checked again, nor folders that do not read the changed file
    assert not any(line.startswith(OTHER) for line in out)
    assert out[-3] == (
        "changed: 1 changed files since HEAD: 2 of 522 documents, 3 of 110 kustomizations checked, "
        "references across the whole tree"
    )
    # AND a run without --changed finds both
    code, out = _validate(dist, capsys, "--no-kustomize")
    assert any(line.startswith(f"{OTHER}:1 EKSCluster/production-usw2: spec.nodeGroupz") for line in out)
    assert any(line.startswith(f"{CLUSTER}:1 EKSCluster/staging-usw2: spec.regoin") for line in out)


def test_a_deleted_file_breaks_the_builds_that_read_it(dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a file a kustomization lists, deleted since HEAD
    (dist / CLUSTER).unlink()
    # WHEN validated with --changed, and without
    code, narrowed = _validate(dist, capsys, "--changed", "HEAD")
    assert code == 1
    _, everything = _validate(dist, capsys)
    # THEN the same builds fail, though only the folders holding the file were built
    failed = [line.split(":", 1)[0] for line in narrowed if "kubectl kustomize failed" in line]
    assert failed == [f"{SPOKE}/cluster/kustomization.yaml"]
    assert failed == [line.split(":", 1)[0] for line in everything if "kubectl kustomize failed" in line]
    assert "0 of 520 documents, 3 of 110 kustomizations checked" in narrowed[-3]


def test_a_reference_broken_by_a_deletion_is_found_in_the_unchanged_file(
    dist: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the HelmRepository for external-secrets, which the hub's unchanged HelmReleases for each spoke name, deleted
    sources = dist / "platform/spokes/sources.yaml"
    first, _, rest = sources.read_text().partition("\n---\n")
    assert "name: external-secrets" in first
    sources.write_text(rest)
    # WHEN validated with --changed THEN the references are checked across the whole tree
    code, out = _validate(dist, capsys, "--changed", "HEAD", "--no-kustomize")
    assert code == 1
    assert any(
        line.startswith(f"{SPOKE}/external-secrets/external-secrets.yaml:1 HelmRelease/external-secrets: ")
        and "HelmRepository 'flux-system/external-secrets' not found in cluster 'hub'" in line
        for line in out
    ), out


def test_a_changed_definition_checks_everything(dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the XRDs' file changed (here: only its last line's spacing)
    (dist / XRDS).write_text((dist / XRDS).read_text() + "\n")
    code, out = _validate(dist, capsys, "--changed", "HEAD", "--no-kustomize")
    # THEN nothing is narrowed: the fault in the unchanged cluster file is found
    assert code == 1
    assert f"changed: 1 changed files since HEAD, definitions among them ({XRDS}): everything checked" in out
    assert any(line.startswith(f"{OTHER}:1 EKSCluster/production-usw2: spec.nodeGroupz") for line in out)


def test_a_deleted_definition_checks_everything(dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (dist / XRDS).unlink()
    code, out = _validate(dist, capsys, "--changed", "HEAD", "--no-kustomize")
    assert code == 1
    assert f"changed: 1 changed files since HEAD, definitions among them ({XRDS}): everything checked" in out


def test_an_unknown_ref_or_no_repository_is_bad_input(
    dist: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for ref in ("nope", "--all"):
        assert main(["validate", str(dist), "--crds", str(CRDS), f"--changed={ref}"]) == 2
        assert capsys.readouterr().err == f"--changed: unknown Git ref {ref!r}\n"
    plain = Path(shutil.copytree(dist, tmp_path / "plain" / "dist"))
    assert main(["validate", str(plain), "--crds", str(CRDS), "--changed", "HEAD"]) == 2
    assert capsys.readouterr().err == f"{plain}: not in a Git repository (--changed compares with a Git ref)\n"
