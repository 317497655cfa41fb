"""Tests for fluxplane.validate.references: one fault of each kind in a copy of the example dist/, and in a copy
of the example synthesized with the platform's content under deploy/ of the fleet repository."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.synth import load_plan, render_plan
from fluxplane.validate.references import check_references
from fluxplane.validate.runtime import RuntimeFleet
from fluxplane.validate.tree import load_tree
from tests.conftest import ROOT

HUB = "platform/clusters/hub/infrastructure.yaml"
SPOKE = "platform/spokes/staging-usw2/bootstrap.yaml"


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    return Path(shutil.copytree(ROOT / "dist", tmp_path / "dist"))


@pytest.fixture(scope="module")
def synthesized_under_deploy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example synthesized with ``repositories.platform.path: deploy``: Flux finds the platform's content at
    ./deploy and the workloads' at ./workloads of the fleet repository, not under ./dist."""
    project = tmp_path_factory.mktemp("deploy")
    shutil.copytree(ROOT / "environments", project / "environments")
    base = project / "environments" / "base.yaml"
    text = base.read_text()
    assert "    secretRef: flux-system\n" in text
    base.write_text(text.replace("    secretRef: flux-system\n", "    secretRef: flux-system\n    path: deploy\n", 1))
    for path, content in render_plan(load_plan(project)).items():
        (project / "dist" / path).parent.mkdir(parents=True, exist_ok=True)
        (project / "dist" / path).write_text(content)
    return project / "dist"


@pytest.fixture
def deploy_dist(synthesized_under_deploy: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(synthesized_under_deploy, tmp_path / "dist"))


def edit(dist: Path, file: str, index: int, change: Callable[[dict[str, Any]], None]) -> None:
    """Change document ``index`` (1-based) of ``file`` in place."""
    path = dist / file
    documents = list(yaml.safe_load_all(path.read_text()))
    change(documents[index - 1])
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))


def lines(dist: Path) -> list[str]:
    return [finding.line() for finding in check_references(load_tree(dist))]


def test_example_fleet_is_clean(dist: Path) -> None:
    assert lines(dist) == []


def test_dependson_must_resolve(dist: Path) -> None:
    edit(dist, HUB, 1, lambda d: d["spec"]["dependsOn"].__setitem__(0, {"name": "nothing"}))
    assert lines(dist) == [
        f"{HUB}:1 Kustomization/app-compositions: spec.dependsOn[0].name: "
        "Kustomization 'flux-system/nothing' not found in cluster 'hub'"
    ]


def test_sourceref_must_resolve_in_the_same_cluster(dist: Path) -> None:
    edit(dist, SPOKE, 5, lambda d: d["spec"]["sourceRef"].__setitem__("name", "fleet"))
    assert lines(dist) == [
        f"{SPOKE}:5 Kustomization/external-secrets: spec.sourceRef.name: "
        "GitRepository 'flux-system/fleet' not found in cluster 'hub'"
    ]


def test_helmrelease_chart_source_must_resolve(dist: Path) -> None:
    file = "platform/spokes/staging-usw2/flux/flux.yaml"
    edit(dist, file, 1, lambda d: d["spec"]["chart"]["spec"]["sourceRef"].__setitem__("name", "flux3"))
    assert lines(dist) == [
        f"{file}:1 HelmRelease/flux: spec.chart.spec.sourceRef.name: "
        "HelmRepository 'flux-system/flux3' not found in cluster 'hub'"
    ]


def test_health_check_must_be_applied_by_the_kustomization(dist: Path) -> None:
    edit(dist, HUB, 2, lambda d: d["spec"]["healthChecks"][0].__setitem__("name", "cert-manger"))
    assert lines(dist) == [
        f"{HUB}:2 Kustomization/cert-manager: spec.healthChecks[0]: "
        "HelmRelease 'flux-system/cert-manger' is not among the objects this Kustomization applies"
    ]


def test_kubeconfig_secret_must_be_produced(dist: Path) -> None:
    edit(dist, SPOKE, 6, lambda d: d["spec"]["kubeConfig"]["secretRef"].__setitem__("name", "staging-kubeconfig"))
    assert lines(dist) == [
        f"{SPOKE}:6 Kustomization/secret-store: spec.kubeConfig.secretRef.name: Secret "
        "'staging-usw2/staging-kubeconfig' for kubeConfig not found in cluster 'hub': nothing in the tree produces "
        "it (a Secret, SealedSecret, ExternalSecret or composite resource)"
    ]


def test_substitute_from_must_resolve_unless_optional(dist: Path) -> None:
    edit(dist, HUB, 2, lambda d: d["spec"]["postBuild"]["substituteFrom"].append({"kind": "ConfigMap", "name": "x"}))
    edit(
        dist,
        HUB,
        3,
        lambda d: d["spec"]["postBuild"]["substituteFrom"].append({"kind": "Secret", "name": "y", "optional": True}),
    )
    assert lines(dist) == [
        f"{HUB}:2 Kustomization/cert-manager: spec.postBuild.substituteFrom[1].name: ConfigMap 'flux-system/x' for "
        "postBuild.substituteFrom not found in cluster 'hub': nothing in the tree produces it (a Secret, "
        "SealedSecret, ExternalSecret or composite resource)"
    ]


def test_function_ref_must_name_a_function(dist: Path) -> None:
    file = "platform/infrastructure/configs/app-compositions/base/app-compositions.yaml"
    edit(dist, file, 2, lambda d: d["spec"]["pipeline"][0]["functionRef"].__setitem__("name", "function-go"))
    assert lines(dist) == [
        f"{file}:2 Composition/appidentity: spec.pipeline[0].functionRef.name: Function 'function-go' is not in "
        "the tree (functions: function-auto-ready, function-patch-and-transform)"
    ]


def test_dependson_cycle_is_named(dist: Path) -> None:
    # GIVEN cert-manager depending on cert-manager-configs, which depends on cert-manager
    edit(dist, HUB, 2, lambda d: d["spec"].__setitem__("dependsOn", [{"name": "cert-manager-configs"}]))
    assert lines(dist) == [
        f"{HUB}:2 Kustomization/cert-manager: spec.dependsOn[0]: dependsOn cycle: Kustomization "
        "flux-system/cert-manager -> flux-system/cert-manager-configs -> flux-system/cert-manager"
    ]


def test_undefined_postbuild_variable(dist: Path) -> None:
    # GIVEN a variable nothing defines, an escaped one and one with a default
    file = "platform/infrastructure/configs/karpenter-configs/base/karpenter-configs.yaml"

    def change(document: dict[str, Any]) -> None:
        document["metadata"]["annotations"] = {"a": "${cluster_zone}", "b": "$${escaped}", "c": "${x:=1}"}

    edit(dist, file, 1, change)
    found = lines(dist)
    # THEN only the undefined one is reported, once for each cluster that applies the file
    assert found == [
        f"{file}:1 EC2NodeClass/default: metadata.annotations.a: variable ${{cluster_zone}} is not defined by the "
        "postBuild of Kustomization flux-system/karpenter-configs (defined: cluster_name, cluster_region, "
        "environment, kubernetes_version)"
    ]


def test_crd_and_its_resources_in_one_kustomization(dist: Path) -> None:
    # GIVEN an XR placed next to its XRD
    file = "platform/infrastructure/configs/app-compositions/base/app-compositions.yaml"
    path = dist / file
    path.write_text(
        path.read_text()
        + "---\napiVersion: platform.fluxplane.io/v1alpha1\nkind: AppIdentity\nmetadata:\n  name: x\n  namespace: hub\n"
    )
    documents = len(list(yaml.safe_load_all(path.read_text())))
    assert lines(dist) == [
        f"{file}:{documents} AppIdentity/x: kind: applied by Kustomization flux-system/app-compositions together "
        "with its CompositeResourceDefinition 'appidentities.platform.fluxplane.io': the dry run fails until the "
        "definition exists; apply the definition from a Kustomization this one dependsOn"
    ]


def test_flux_path_into_the_tree_must_exist(dist: Path) -> None:
    edit(dist, HUB, 1, lambda d: d["spec"].__setitem__("path", "./dist/platform/nowhere"))
    assert lines(dist) == [
        f"{HUB}:1 Kustomization/app-compositions: spec.path: "
        "folder './dist/platform/nowhere' does not exist in the tree"
    ]


def test_flux_path_in_the_fleet_repository_outside_what_fluxplane_writes(dist: Path) -> None:
    # GIVEN a hub Kustomization of the fleet repository whose path is in neither folder fluxplane writes there
    edit(dist, HUB, 1, lambda d: d["spec"].__setitem__("path", "./no/such/dir"))
    # THEN Flux would not find it: the finding names the file, the object and the field
    assert lines(dist) == [
        f"{HUB}:1 Kustomization/app-compositions: spec.path: folder './no/such/dir' does not exist in the tree: "
        "it lies outside what fluxplane writes in repository 'ssh://git@github.com/example-org/fleet.git' "
        "(./dist/platform, ./dist/workloads)"
    ]


def test_a_tree_whose_repository_keeps_its_content_under_deploy_is_followed(deploy_dist: Path) -> None:
    # GIVEN the example synthesized with its platform content under deploy/ (Flux paths ./deploy/...)
    infrastructure = (deploy_dist / HUB).read_text()
    assert "path: ./deploy/infrastructure/controllers/cert-manager/base" in infrastructure
    assert "./dist/" not in infrastructure
    # WHEN its objects are placed THEN every document lands where it does in the dist/ layout (the catalogue on
    # every cluster, the hub's chains on the spokes, the tenants on theirs), and the tree is clean
    fleet = RuntimeFleet(load_tree(deploy_dist))
    assert ("helm.toolkit.fluxcd.io", "HelmRelease", "flux-system", "cert-manager") in fleet.exists["staging-usw2"]
    assert sorted(fleet.placed) == sorted(RuntimeFleet(load_tree(ROOT / "dist")).placed)
    assert lines(deploy_dist) == []


def test_helmrelease_source_must_resolve_in_a_repository_kept_under_deploy(deploy_dist: Path) -> None:
    # GIVEN the cert-manager HelmRelease of the catalogue, which every cluster applies through a ./deploy path,
    # naming a HelmRepository that nothing defines
    file = "platform/infrastructure/controllers/cert-manager/base/cert-manager.yaml"
    edit(deploy_dist, file, 3, lambda d: d["spec"]["chart"]["spec"]["sourceRef"].__setitem__("name", "nothing"))
    # THEN it is found on every cluster that applies it
    assert lines(deploy_dist) == [
        f"{file}:3 HelmRelease/cert-manager: spec.chart.spec.sourceRef.name: "
        f"HelmRepository 'flux-system/nothing' not found in cluster '{cluster}'"
        for cluster in (
            "hub",
            "production-euc1",
            "production-euw1",
            "production-use1",
            "production-usw2",
            "staging-euw1",
            "staging-usw2",
        )
    ]


def test_flux_path_into_the_deploy_folder_must_exist(deploy_dist: Path) -> None:
    edit(deploy_dist, HUB, 1, lambda d: d["spec"].__setitem__("path", "./deploy/nowhere"))
    assert lines(deploy_dist) == [
        f"{HUB}:1 Kustomization/app-compositions: spec.path: folder './deploy/nowhere' does not exist in the tree"
    ]


def test_a_cluster_secret_store_must_name_the_namespaces_it_serves(dist: Path) -> None:
    # GIVEN the spokes' store without its conditions (a tenant could then read the sealing key with it)
    file = "platform/spokes/steps/secret-store/secret-store.yaml"
    edit(dist, file, 1, lambda d: d["spec"].pop("conditions"))
    found = lines(dist)
    # THEN every cluster it is applied to reports it, once per placement
    assert found and all(
        line
        == f"{file}:1 ClusterSecretStore/fleet-secrets-manager: spec.conditions: the store serves every namespace, so "
        "a tenant's ExternalSecret can read whatever the store's identity reads; name the namespaces it serves "
        "(conditions: [{namespaces: [...]}])"
        for line in found
    )
