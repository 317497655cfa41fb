"""Moving a running fleet to fluxplane (docs/how-to/adopt-an-existing-fleet.md: Move an existing fleet to fluxplane).

``tests/fixtures/migration/flux-repository/`` is a hand-written Flux repository in the layout of fluxcd's
flux2-kustomize-helm-example: two clusters bootstrapped with ``flux bootstrap`` (``clusters/staging``,
``clusters/production``), their controllers under ``infrastructure/`` and podinfo under ``apps/`` with a base and
an overlay per cluster. ``tests/fixtures/migration/fleet/`` is the definition the guide yields for it: the two
clusters registered, each running its own Flux, every release named as it runs. The test walks the guide on a
copy: the definition added beside the old folders, each cluster's ``flux-system/`` moved as ``flux bootstrap
--path`` rewrites it, synth, then what each cluster applies compared with what the old repository applied.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.cli import main
from fluxplane.core.tree import FleetWalk, LazyDocuments
from fluxplane.synth.hazards import HELM_RELEASE, release_target
from tests.conftest import ROOT
from tests.support.git import git
from tests.support.manifests import assert_valid_and_built

FIXTURE = ROOT / "tests" / "fixtures" / "migration"
#: The old repository's cluster folders, and the EKS clusters (the fleet's cluster names) they run on.
CLUSTERS = {"staging": "staging-usw2", "production": "production-usw2"}
#: The AWS groups of managed resources and fluxplane's composites: none may be applied for an adopted cluster.
AWS_GROUPS = (".aws.m.upbound.io", ".aws.upbound.io", "platform.fluxplane.io")

pytestmark = pytest.mark.skipif(
    not shutil.which("kubectl"),
    reason="kubectl is not installed: the old repository is built as Flux builds it, with kubectl kustomize",
)


def _documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict)]


def _built(folder: Path) -> list[dict[str, Any]]:
    out = subprocess.run(["kubectl", "kustomize", str(folder)], capture_output=True, text=True, check=True)
    return _documents(out.stdout)


def _old_releases(repository: Path, cluster: str) -> dict[tuple[str, str, str], str]:
    """Each release the old repository installs on ``cluster`` (storage namespace, namespace, name), and its chart:
    the Flux Kustomizations of ``clusters/<cluster>/`` besides flux-system, built as kustomize-controller builds
    them."""
    found: dict[tuple[str, str, str], str] = {}
    for path in sorted((repository / "clusters" / cluster).glob("*.yaml")):
        for flux in _documents(path.read_text()):
            folder = repository / str(flux["spec"]["path"]).removeprefix("./")
            for doc in _built(folder):
                if doc["kind"] == "HelmRelease":
                    found[release_target(doc)] = _chart(doc)
    return found


def _chart(doc: dict[str, Any]) -> str:
    spec = doc["spec"].get("chart", {}).get("spec")
    return str(spec["chart"]) if spec else str(doc["spec"]["chartRef"]["name"])


def _dist(project: Path) -> dict[str, str]:
    dist = project / "dist"
    return {path.relative_to(dist).as_posix(): path.read_text() for path in dist.rglob("*") if path.is_file()}


@pytest.fixture
def moved(tmp_path: Path) -> Path:
    """The old repository in Git, then the change the guide makes: the definition, each spoke's flux-system/ where
    ``flux bootstrap --path=dist/platform/clusters/<cluster>`` puts it, the hub's as its bootstrap wrote it, and
    dist/ synthesized."""
    project = tmp_path / "fleet"
    shutil.copytree(FIXTURE / "flux-repository", project)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "the running fleet")
    shutil.copytree(FIXTURE / "fleet" / "environments", project / "environments")
    kept = project / "dist" / "platform" / "clusters"
    for old, cluster in [*CLUSTERS.items(), ("staging", "hub")]:
        target = kept / cluster / "flux-system"
        shutil.copytree(project / "clusters" / old / "flux-system", target)
        sync = target / "gotk-sync.yaml"
        sync.write_text(
            sync.read_text().replace(f"path: ./clusters/{old}\n", f"path: ./dist/platform/clusters/{cluster}\n")
        )
    assert main(["--root", str(project), "synth"]) == 0
    return project


def test_every_release_keeps_its_name_namespace_and_records(moved: Path) -> None:
    # GIVEN the moved fleet WHEN each cluster's Flux applies its entry point as fluxplane wrote it
    fleet = FleetWalk(LazyDocuments({}, _dist(moved)), substitute=True)
    for old, cluster in CLUSTERS.items():
        new = {
            release_target(placed.doc): _chart(placed.doc)
            for _, placed in fleet.applied(cluster)
            if (placed.key[0], placed.key[1]) == HELM_RELEASE
        }
        # THEN every release the old repository installed is there under the same name, namespace and records, with
        # the same chart: helm-controller takes each over in place instead of installing a second one
        was = _old_releases(moved, old)
        assert len(was) == 4
        assert {target: new.get(target) for target in was} == was, cluster


def test_no_aws_resource_of_an_adopted_cluster_is_created(moved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the moved fleet WHEN the hub's Flux applies its entry point
    fleet = FleetWalk(LazyDocuments({}, _dist(moved)), substitute=True)
    applied = [placed for _, placed in fleet.applied("hub")]
    # THEN no composite and no AWS managed resource is made for the two clusters
    aws = [placed.key for placed in applied if str(placed.key[0]).endswith(AWS_GROUPS)]
    assert aws == []
    # AND the plan of the change against the running fleet's commit creates nothing in AWS
    capsys.readouterr()
    assert main(["--root", str(moved), "plan", "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["resources"] == []
    assert (plan["summary"]["create"], plan["summary"]["import"], plan["summary"]["manage"]) == (0, 0, 0)
    # AND it names each spoke's releases as `helm ls -A` lists them, to be checked before the merge
    cert_manager = [
        change["reason"]
        for change in plan["kubernetes"]
        if change["cluster"] in CLUSTERS.values() and change["name"] == "cert-manager"
    ]
    assert cert_manager == [
        "installs chart cert-manager v1.21.1 as release cert-manager in cert-manager, or takes over the one running "
        "there"
    ] * len(CLUSTERS)


def test_the_kept_flux_system_folders_are_untouched(moved: Path) -> None:
    # GIVEN the flux-system folders as flux bootstrap left them, committed
    git(moved, "add", "-A")
    git(moved, "commit", "-qm", "fluxplane")
    # WHEN synth runs again, and in check mode THEN it changes none of their files, and nothing else
    assert main(["--root", str(moved), "synth"]) == 0
    assert git(moved, "status", "--porcelain", "dist") == ""
    assert main(["--root", str(moved), "synth", "--check"]) == 0
    for old, cluster in CLUSTERS.items():
        folder = moved / "dist" / "platform" / "clusters" / cluster / "flux-system"
        was = moved / "clusters" / old / "flux-system"
        assert (folder / "gotk-components.yaml").read_bytes() == (was / "gotk-components.yaml").read_bytes()
        assert (folder / "kustomization.yaml").read_bytes() == (was / "kustomization.yaml").read_bytes()


def test_the_moved_fleet_is_valid_and_every_entry_point_builds(moved: Path) -> None:
    dist = moved / "dist"
    assert main(["--root", str(moved), "validate", "dist"]) == 0
    assert_valid_and_built(dist, [dist / "platform" / "clusters" / cluster for cluster in [*CLUSTERS.values(), "hub"]])


def test_the_guide_quotes_the_definition_the_test_walks() -> None:
    # GIVEN the guide WHEN it shows an environment of the definition THEN it is the fixture's, line for line
    readme = (ROOT / "docs" / "how-to" / "adopt-an-existing-fleet.md").read_text()
    staging = (FIXTURE / "fleet" / "environments" / "staging.yaml").read_text()
    assert "".join(f"   {line}" if line.strip() else line for line in staging.splitlines(True)) in readme
