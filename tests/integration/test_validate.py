"""fluxplane validate end to end: the example dist/ is clean, one fault of each kind is found, bad input exits 2."""

from __future__ import annotations

import re
import shutil
import socket
import urllib.request
from pathlib import Path

import pytest
import yaml

from fluxplane.cli import main
from tests.conftest import CRDS, ROOT
from tests.support.manifests import dist_counts

needs_crds = pytest.mark.skipif(not CRDS.is_dir(), reason=f"the CRD corpus {CRDS} is missing")
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
HUB = "platform/clusters/hub/infrastructure.yaml"


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    return Path(shutil.copytree(ROOT / "dist", tmp_path / "dist"))


def _summary(dist: Path, tail: str) -> str:
    documents, files, kustomizations = dist_counts(dist)
    return f"{dist}: {documents} documents in {files} files, {kustomizations} kustomizations: {tail}"


#: The one kind of the example no schema covers: EKS Auto Mode's NodeClass, which has no published CRD.
NODE_CLASS_UNCHECKED = (
    "no schema for eks.amazonaws.com/v1 NodeClass (1 document): not checked: EKS Auto Mode's own kind, whose CRD AWS "
    "does not publish\n"
)
#: What validate checked on the example beyond the schemas (the line before the summary).
COVERAGE = re.compile(
    r"checked: [1-9][0-9]* CEL rules evaluated \(0 not evaluated, [1-9][0-9]* transition rules skipped\), "
    r"[1-9][0-9]* health expressions, 58 composite resources, 58 compositions rendered \(0 not rendered\), "
    r"[1-9][0-9]* composed resources"
)


@needs_crds
@needs_kubectl
def test_example_dist_is_clean(dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the committed dist/ WHEN validated against ../shared/crds THEN it is valid, exit 0
    assert main(["validate", str(dist), "--crds", str(CRDS)]) == 0
    out, err = capsys.readouterr()
    coverage, summary = out.splitlines()
    assert COVERAGE.fullmatch(coverage), coverage
    assert summary == _summary(dist, "valid")
    # AND the corpus has a schema for every kind the example emits but EKS Auto Mode's NodeClass, which has no
    # published CRD (tests/unit/packs/test_auto_mode.py holds it to the fields EKS documents), and every rule and
    # composition ran
    assert err == NODE_CLASS_UNCHECKED


@needs_crds
@needs_kubectl
def test_one_fault_of_each_kind(dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a schema fault (misspelled field), a kustomize fault (a missing resource) and a reference fault
    documents = list(yaml.safe_load_all((dist / HUB).read_text()))
    documents[1]["spec"]["intervall"] = "5m"
    documents[0]["spec"]["dependsOn"][0]["name"] = "nothing"
    (dist / HUB).write_text(yaml.safe_dump_all(documents, sort_keys=False))
    kustomization = dist / "platform/spokes/staging-usw2/kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "- gone.yaml\n")
    # WHEN validated
    assert main(["validate", str(dist), "--crds", str(CRDS)]) == 1
    out = capsys.readouterr().out.splitlines()
    # THEN each is reported with its file, document and path, sorted, then the summary
    assert out[0] == (
        f"{HUB}:1 Kustomization/app-compositions: spec.dependsOn[0].name: "
        "Kustomization 'flux-system/nothing' not found in cluster 'hub'"
    )
    assert (
        out[1]
        == f'{HUB}:2 Kustomization/cert-manager: spec.intervall: unknown field "intervall" (did you mean "interval"?)'
    )
    # (the folder that includes the broken one fails to build too)
    failed = "(root): kubectl kustomize failed: "
    assert out[2].startswith(f"platform/spokes/kustomization.yaml:1 Kustomization/spokes: {failed}")
    assert out[3].startswith(f"platform/spokes/staging-usw2/kustomization.yaml:1 Kustomization/staging-usw2: {failed}")
    assert "gone.yaml: no such file or directory" in out[3]
    assert COVERAGE.fullmatch(out[4])
    assert out[5:] == [_summary(dist, "4 findings")]


@needs_crds
def test_yaml_error_is_a_finding_and_no_kustomize_skips_builds(dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (dist / "platform/cloud/extra.yaml").write_text("a: [\n")
    assert main(["validate", str(dist), "--crds", str(CRDS), "--no-kustomize"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3
    assert out[0].startswith("platform/cloud/extra.yaml:1 -/-: (root): cannot parse YAML: ")
    assert out[2] == _summary(dist, "1 finding")


@needs_crds
def test_paths_and_sources_resolve_wherever_the_repository_keeps_its_content(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example synthesized with the platform's content under deploy/ of the fleet repository
    base = example_project / "environments" / "base.yaml"
    text = base.read_text().replace("    secretRef: flux-system\n", "    secretRef: flux-system\n    path: deploy\n", 1)
    base.write_text(text)
    assert main(["--root", str(example_project), "synth"]) == 0
    dist = example_project / "dist"
    # AND two faults Flux meets only at run time: a catalogue HelmRelease (applied through ./deploy paths) naming
    # no HelmRepository, and a hub Kustomization whose path is nowhere in the fleet repository
    release = "platform/infrastructure/controllers/cert-manager/base/cert-manager.yaml"
    documents = list(yaml.safe_load_all((dist / release).read_text()))
    documents[2]["spec"]["chart"]["spec"]["sourceRef"]["name"] = "nothing"
    (dist / release).write_text(yaml.safe_dump_all(documents, sort_keys=False))
    documents = list(yaml.safe_load_all((dist / HUB).read_text()))
    documents[0]["spec"]["path"] = "./no/such/dir"
    (dist / HUB).write_text(yaml.safe_dump_all(documents, sort_keys=False))
    capsys.readouterr()
    # WHEN validated THEN each is a finding with its file, document, object and field
    assert main(["validate", str(dist), "--crds", str(CRDS), "--no-kustomize"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:-2] == [
        f"{HUB}:1 Kustomization/app-compositions: spec.path: folder './no/such/dir' does not exist in the tree: it "
        "lies outside what fluxplane writes in repository 'ssh://git@github.com/example-org/fleet.git' (./deploy, "
        "./workloads)",
        *(
            f"{release}:3 HelmRelease/cert-manager: spec.chart.spec.sourceRef.name: HelmRepository "
            f"'flux-system/nothing' not found in cluster '{cluster}'"
            for cluster in (
                "hub",
                "production-euc1",
                "production-euw1",
                "production-use1",
                "production-usw2",
                "staging-euw1",
                "staging-usw2",
            )
        ),
    ]
    assert out[-1].endswith(": 8 findings")


def test_missing_dist_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(tmp_path), "validate", "--crds", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"{tmp_path / 'dist'}: no such folder (pass the dist/ folder that 'fluxplane synth' writes)\n"
    )


def test_not_a_tree_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path), "--crds", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"{tmp_path}: not a fluxplane tree (expected platform/clusters/<cluster>/kustomization.yaml)\n"
    )


def test_missing_crd_folder_is_bad_input(dist: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(dist), "--crds", str(tmp_path / "crds")]) == 2
    assert capsys.readouterr().err == f"--crds {tmp_path / 'crds'}: no such folder\n"


def test_with_no_crd_folder_and_no_network_validate_checks_against_the_shipped_crds(
    dist: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN no --crds, no FLUXPLANE_CRDS, an empty cache, and no network
    monkeypatch.delenv("FLUXPLANE_CRDS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def offline(*args: object, **kwargs: object) -> None:
        raise AssertionError("validate reached for the network")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    monkeypatch.setattr(socket, "create_connection", offline)
    # WHEN the example's dist/ is validated THEN every kind it emits has a schema but Auto Mode's NodeClass, and it is
    # valid
    assert main(["validate", str(dist), "--no-kustomize"]) == 0
    out, err = capsys.readouterr()
    assert err == NODE_CLASS_UNCHECKED
    assert out.splitlines()[-1] == _summary(dist, "valid")
    # AND a fault is still found
    documents = list(yaml.safe_load_all((dist / HUB).read_text()))
    documents[1]["spec"]["intervall"] = "5m"
    (dist / HUB).write_text(yaml.safe_dump_all(documents, sort_keys=False))
    assert main(["validate", str(dist), "--no-kustomize"]) == 1
    assert 'spec.intervall: unknown field "intervall"' in capsys.readouterr().out


def test_missing_kubectl_is_bad_input(
    dist: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["validate", str(dist), "--crds", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        "kubectl not found on PATH: install it, or pass --no-kustomize to skip the kustomize builds\n"
    )


def test_schemas_pull_to_dest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a fake kubectl serving one CRD WHEN schemas pull --from-cluster THEN one line per file, then a total
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
    crd += "spec:\n  group: g.io\n  names:\n    plural: xs\n"
    (tmp_path / "crd.yaml").write_text(crd)
    (bin_dir / "kubectl").write_text(f"#!/bin/sh\nexec /bin/cat {tmp_path / 'crd.yaml'}\n")
    (bin_dir / "kubectl").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert main(["schemas", "pull", "--from-cluster", "--dest", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'out' / 'g.io' / 'xs.yaml'}\n{tmp_path / 'out'}: 1 CRDs\n"


@needs_crds
def test_what_only_the_controllers_would_refuse_is_found(dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN faults that pass every schema of dist/ as written but fail once the controllers act on them:
    # a misspelled field in an EKSCluster (checked against its XRD), a Composition patch to a field the VPC
    # does not have (found by rendering it), a health gate no healthy object passes, and an account id that
    # YAML 1.2 reads as a number
    cluster = dist / "platform/spokes/staging-usw2/cluster/cluster.yaml"
    cluster.write_text(cluster.read_text().replace("  region: us-west-2", "  regoin: us-west-2", 1))
    compositions = dist / "platform/infrastructure/configs/eks-compositions/base/eks-compositions.yaml"
    text = compositions.read_text()
    assert "toFieldPath: spec.forProvider.cidrBlock" in text
    compositions.write_text(
        text.replace("toFieldPath: spec.forProvider.cidrBlock", "toFieldPath: spec.forProvider.cidrBlok", 1)
    )
    bootstrap = dist / "platform/spokes/staging-usw2/bootstrap.yaml"
    text = bootstrap.read_text()
    gate = "current: status.?conditions.orValue([]).exists(c, c.type == 'Ready' && c.status == 'True')"
    bootstrap.write_text(text.replace(gate, gate.replace("'True'", "'Yes'"), 1))
    (dist / "platform/cloud/staging-usw2/account.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: account\n  namespace: staging-usw2\n"
        "data:\n  id: 012345678912\n"
    )
    # WHEN validated
    assert main(["validate", str(dist), "--crds", str(CRDS), "--no-kustomize"]) == 1
    out = capsys.readouterr().out
    # THEN each names its file, object and field
    assert (
        "platform/spokes/staging-usw2/cluster/cluster.yaml:1 EKSCluster/staging-usw2: spec.regoin: unknown field" in out
    )
    assert "eks-compositions.yaml:" in out and 'spec.forProvider.cidrBlok: unknown field "cidrBlok"' in out
    assert (
        "platform/spokes/staging-usw2/bootstrap.yaml:2 Kustomization/cluster: spec.healthCheckExprs[0].current: "
        "never passes on a healthy EKSCluster"
    ) in out
    assert (
        'platform/cloud/staging-usw2/account.yaml:1 ConfigMap/account: data.id: "012345678912" is a string here, '
        "but kustomize, Flux and the API server (YAML 1.2) read it as an integer: quote it"
    ) in out
