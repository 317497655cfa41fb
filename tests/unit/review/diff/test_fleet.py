"""What each cluster receives, as ``fluxplane diff`` follows a tree: kubectl builds, kubeConfig targets,
postBuild substitution, the files read and the notes. (The walk's rules: tests/unit/tree.)"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.core.tree import DistRepository
from fluxplane.review.diff.fleet import Builder, DistSnapshot, receive

needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
URL = "ssh://git@example.com/org/fleet.git"
REPOSITORIES = (DistRepository("platform", URL, "dist/platform"), DistRepository("workloads", URL, "dist/workloads"))


def dump(*docs: dict[str, Any]) -> str:
    return "---\n".join(yaml.safe_dump(doc, sort_keys=False) for doc in docs)


def kustomization_file(*resources: str, patches: tuple[str, ...] = ()) -> str:
    spec: dict[str, Any] = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}
    spec["resources"] = list(resources)
    if patches:
        spec["patches"] = [{"path": patch} for patch in patches]
    return yaml.safe_dump(spec, sort_keys=False)


def flux(name: str, namespace: str, path: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "path": path,
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"},
            **spec,
        },
    }


SOURCE = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "GitRepository",
    "metadata": {"name": "flux-system", "namespace": "flux-system"},
    "spec": {"url": URL},
}


def fleet_files() -> dict[str, str]:
    """A hub that applies a catalogue overlay with its variables and a spoke folder through kubeConfig."""
    variables = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cluster-vars", "namespace": "flux-system"},
        "data": {"cluster_name": "hub"},
    }
    sub = {"postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "cluster-vars"}]}}
    app = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "apps"},
        "data": {"cluster": "${cluster_name}", "size": "1"},
    }
    patch = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "apps"},
        "data": {"size": "2"},
    }
    remote = flux(
        "spoke",
        "east",
        "./dist/platform/clusters/east/flux-system",
        kubeConfig={"secretRef": {"name": "east-kubeconfig"}},
    )
    tenant = flux("tenant", "apps", "./deploy", sourceRef={"kind": "GitRepository", "name": "app-repo"})
    tenant_source = {
        **SOURCE,
        "metadata": {"name": "app-repo", "namespace": "apps"},
        "spec": {"url": "ssh://git@example.com/org/app.git"},
    }
    return {
        "platform/clusters/hub/kustomization.yaml": kustomization_file("sync.yaml", "vars.yaml", "apps.yaml"),
        "platform/clusters/hub/sync.yaml": dump(SOURCE),
        "platform/clusters/hub/vars.yaml": dump(variables),
        "platform/clusters/hub/apps.yaml": dump(
            flux("app", "flux-system", "./dist/platform/apps/app/production", **sub), remote
        ),
        "platform/apps/app/base/kustomization.yaml": kustomization_file("app.yaml"),
        "platform/apps/app/base/app.yaml": dump(app),
        "platform/apps/app/production/kustomization.yaml": kustomization_file("../base", patches=("size.yaml",)),
        "platform/apps/app/production/size.yaml": dump(patch),
        "platform/clusters/east/flux-system/kustomization.yaml": kustomization_file("sync.yaml"),
        "platform/clusters/east/flux-system/sync.yaml": dump(
            SOURCE, flux("flux-system", "flux-system", "./dist/platform/clusters/east")
        ),
        "platform/clusters/east/kustomization.yaml": kustomization_file("flux-system", "tenants.yaml"),
        "platform/clusters/east/tenants.yaml": dump(flux("tenants", "flux-system", "./dist/workloads/clusters/east")),
        "workloads/clusters/east/kustomization.yaml": kustomization_file("tenant.yaml"),
        "workloads/clusters/east/tenant.yaml": dump(tenant_source, tenant),
        "CODEOWNERS": "* @org/platform\n",
    }


@needs_kubectl
def test_each_cluster_receives_what_its_kustomizations_build(tmp_path: Path) -> None:
    # GIVEN the small fleet WHEN it is followed from every entry folder
    [received] = receive([DistSnapshot("head", fleet_files(), REPOSITORIES)], tmp_path)
    # THEN the hub gets the overlay with its variable substituted
    hub = received.clusters["hub"]
    assert hub[("", "ConfigMap", "apps", "app")].doc["data"] == {"cluster": "hub", "size": "2"}
    # AND the spoke gets its flux-system folder through kubeConfig, its entry folder and its tenants
    assert sorted((placed.repository, key[1], key[2], key[3]) for key, placed in received.clusters["east"].items()) == [
        ("platform", "GitRepository", "flux-system", "flux-system"),
        ("platform", "Kustomization", "flux-system", "flux-system"),
        ("platform", "Kustomization", "flux-system", "tenants"),
        ("workloads", "GitRepository", "apps", "app-repo"),
        ("workloads", "Kustomization", "apps", "tenant"),
    ]
    # AND the tenant's own repository is not followed, and CODEOWNERS is read by no build
    assert received.notes == []
    assert "CODEOWNERS" not in received.read
    assert "platform/apps/app/production/size.yaml" in received.read


@needs_kubectl
def test_identical_inputs_are_built_once(tmp_path: Path) -> None:
    # GIVEN two trees that differ in one overlay patch WHEN both are followed with one builder
    builder = Builder()
    files = fleet_files()
    changed = {
        **files,
        "platform/apps/app/production/size.yaml": files["platform/apps/app/production/size.yaml"].replace("'2'", "'3'"),
    }
    before, after = receive(
        [DistSnapshot("base", files, REPOSITORIES), DistSnapshot("head", changed, REPOSITORIES)], tmp_path, builder
    )
    # THEN the 5 folders of the first tree are built, and of the second only the changed overlay
    assert builder.builds == 6
    assert before.clusters["hub"][("", "ConfigMap", "apps", "app")].doc["data"]["size"] == "2"
    assert after.clusters["hub"][("", "ConfigMap", "apps", "app")].doc["data"]["size"] == "3"


@needs_kubectl
def test_a_path_outside_dist_is_noted(tmp_path: Path) -> None:
    files = fleet_files()
    files["platform/clusters/east/tenants.yaml"] = dump(
        flux("tenants", "flux-system", "./dist/workloads/clusters/west")
    )
    [received] = receive([DistSnapshot("head", files, REPOSITORIES)], tmp_path)
    assert received.notes == [
        "head: east: Kustomization flux-system/tenants: spec.path './dist/workloads/clusters/west' is not in dist/"
    ]
