"""Plain manifests for an environment or one cluster (environments/manifests/), applied in their layer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.cli import main
from tests.conftest import FleetWriter, load_documents
from tests.support.files import read_tree
from tests.support.manifests import assert_valid_and_built

QUOTAS = """apiVersion: v1
kind: Namespace
metadata:
  name: batch
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: batch
  namespace: batch
spec:
  hard:
    pods: "50"
"""
BANNER = """apiVersion: v1
kind: ConfigMap
metadata:
  name: banner
  namespace: batch
data:
  text: welcome to ${cluster_name}
  account: "012345678912"
"""

LIST_WITH_A_SECRET = """apiVersion: v1
kind: List
metadata:
  name: bundle
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: settings
      namespace: batch
  - apiVersion: v1
    kind: Secret
    metadata:
      name: db
      namespace: batch
    stringData:
      password: hunter2
"""
SEALED_IN_CLEAR = """apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  name: db
  namespace: batch
spec:
  encryptedData: {}
  template:
    data:
      password: hunter2
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / "environments" / "manifests" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _kustomizations(path: Path) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc["spec"] for doc in load_documents(path)}


def test_an_environments_and_a_clusters_manifests_land_in_their_layers(write_fleet: FleetWriter) -> None:
    # GIVEN the staging environment's quotas (configs) and one cluster's banner (apps)
    root = write_fleet()
    _write(root, {"staging/configs/quotas.yaml": QUOTAS, "staging/staging-1/apps/banner.yaml": BANNER})
    # WHEN synthesized
    assert main(["--root", str(root), "synth"]) == 0
    cluster = root / "dist" / "platform" / "clusters" / "staging-1"
    # THEN each file is in the cluster's folder for its layer, listed by its kustomization.yaml
    assert yaml.safe_load((cluster / "manifests/configs/kustomization.yaml").read_text())["resources"] == [
        "environment/quotas.yaml"
    ]
    assert [doc["kind"] for doc in load_documents(cluster / "manifests/configs/environment/quotas.yaml")] == [
        "Namespace",
        "ResourceQuota",
    ]
    # AND values reach the API server as written (a number-like string stays a string), variables substituted
    banner = (cluster / "manifests/apps/cluster/banner.yaml").read_text()
    assert "account: '012345678912'" in banner
    assert "text: welcome to ${cluster_name}" in banner
    # AND each layer's Kustomization waits for what it applies and comes after the layer below
    configs = _kustomizations(cluster / "infrastructure.yaml")["manifests-configs"]
    assert configs["path"] == "./dist/platform/clusters/staging-1/manifests/configs"
    assert configs["wait"] is True
    assert {"name": "metrics-server"} in configs["dependsOn"]
    apps = _kustomizations(cluster / "apps.yaml")["manifests-apps"]
    assert {"name": "manifests-configs"} in apps["dependsOn"]
    # AND the hub gets none of it
    assert not (root / "dist" / "platform" / "clusters" / "hub" / "manifests").exists()
    # AND everything validates and builds
    assert_valid_and_built(root / "dist", [cluster / "manifests" / layer for layer in ("configs", "apps")])


def test_a_changed_manifest_is_rendered_again_with_the_cache(write_fleet: FleetWriter) -> None:
    root = write_fleet()
    _write(root, {"staging/configs/quotas.yaml": QUOTAS})
    assert main(["--root", str(root), "synth"]) == 0
    _write(root, {"staging/configs/quotas.yaml": QUOTAS.replace('pods: "50"', 'pods: "80"')})
    assert main(["--root", str(root), "synth"]) == 0
    path = root / "dist/platform/clusters/staging-1/manifests/configs/environment/quotas.yaml"
    assert load_documents(path)[1]["spec"]["hard"]["pods"] == "80"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {
                "staging/configs/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n"
                "stringData:\n  p: x\n"
            },
            "environments/manifests/staging/configs/secret.yaml:1: a plain Secret would put its values in Git: seal "
            "it with `fluxplane seal` (environments/secrets/) instead",
        ),
        (
            {"staging/apps/x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n"},
            "environments/manifests/staging/apps/x.yaml:1: metadata.name: expected a Kubernetes name (a DNS-1123 "
            "subdomain), got null",
        ),
        (
            {"prod/apps/x.yaml": BANNER},
            "environments/manifests/prod: not an environment's folder (environments: staging)",
        ),
        (
            {"staging/nowhere/apps/x.yaml": BANNER},
            "environments/manifests/staging/nowhere: neither a layer (controllers, configs, apps) nor a cluster of "
            "environment 'staging' (clusters: staging-1)",
        ),
        (
            {"staging/apps/a.yaml": BANNER, "staging/staging-1/apps/b.yaml": BANNER},
            "environments/manifests/staging/staging-1/apps/b.yaml: ConfigMap 'banner' is also in "
            "environments/manifests/staging/apps/a.yaml, for cluster 'staging-1''s apps",
        ),
        ({"staging/apps/x.yaml": "a: [\n"}, "environments/manifests/staging/apps/x.yaml:2:1: invalid YAML"),
        (
            {"staging/configs/bundle.yaml": BANNER + "---\n" + LIST_WITH_A_SECRET},
            "environments/manifests/staging/configs/bundle.yaml:2: items[1]: Secret 'batch/db' holds plaintext data "
            "or stringData; seal it with 'fluxplane seal' (a SealedSecret) or fetch it with an ExternalSecret",
        ),
        (
            {"staging/staging-1/apps/sealed.yaml": SEALED_IN_CLEAR},
            "environments/manifests/staging/staging-1/apps/sealed.yaml:1: SealedSecret 'batch/db': spec.template.data: "
            "holds plaintext, which must not be committed; seal the values with 'fluxplane seal' (spec.encryptedData)",
        ),
    ],
    ids=["secret", "unnamed", "environment", "cluster", "repeated", "yaml", "secret-in-a-list", "sealed-in-clear"],
)
def test_what_flux_could_not_apply_is_refused_with_its_file(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str], files: dict[str, str], message: str
) -> None:
    root = write_fleet()
    _write(root, files)
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message), err
    assert not any(shown in err for shown in ("stringData:", "password", "hunter2", ": x")), err
    assert not (root / "dist").exists()


POLICY = """apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: pod-security-baseline
spec:
  rules: []
"""


def test_a_manifest_that_writes_a_packs_object_is_refused_with_its_file(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example with a staging manifest declaring the Kyverno policy pack kyverno writes on every cluster
    _write(example_project, {"staging/configs/policies.yaml": POLICY})
    dist = read_tree(example_project / "dist")
    # WHEN synthesized THEN it is refused, with the file, the pack and the cluster, and dist/ is left as it was
    assert main(["--root", str(example_project), "synth"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "environments/manifests/staging/configs/policies.yaml: ClusterPolicy pod-security-baseline is written by "
        "pack 'kyverno' too on clusters 'staging-euw1', 'staging-usw2'; remove it from the file or give it another "
        "name"
    )
    assert read_tree(example_project / "dist") == dist
