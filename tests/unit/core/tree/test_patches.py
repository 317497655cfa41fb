"""A kustomization's patches applied in memory (fluxplane.core.tree.patches), held to what kubectl kustomize does."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.core.tree.kustomize import Folders
from fluxplane.core.tree.patches import KustomizePatch, PatchError, apply_patches

RELEASE: dict[str, Any] = {
    "apiVersion": "helm.toolkit.fluxcd.io/v2",
    "kind": "HelmRelease",
    "metadata": {"name": "podinfo", "namespace": "flux-system", "labels": {"tier": "apps"}},
    "spec": {"releaseName": "podinfo", "values": {"replicaCount": 2, "ports": [80, 443]}},
}
STORAGE: dict[str, Any] = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "gp3"},
    "provisioner": "ebs.csi.aws.com",
    "parameters": {"type": "gp3", "encrypted": "true"},
}
TARGET_RELEASE = {"group": "helm.toolkit.fluxcd.io", "version": "v2", "kind": "HelmRelease", "name": "podinfo"}


def ops(*operations: dict[str, Any]) -> list[dict[str, Any]]:
    return list(operations)


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        (
            KustomizePatch(ops({"op": "replace", "path": "/spec/values/replicaCount", "value": 4}), TARGET_RELEASE),
            {"replicaCount": 4, "ports": [80, 443]},
        ),
        (
            KustomizePatch(ops({"op": "add", "path": "/spec/values/ports/-", "value": 8080}), TARGET_RELEASE),
            {"replicaCount": 2, "ports": [80, 443, 8080]},
        ),
        (
            KustomizePatch(ops({"op": "remove", "path": "/spec/values/ports/0"}), {"kind": "HelmRelease"}),
            {"replicaCount": 2, "ports": [443]},
        ),
        (
            KustomizePatch(
                {"kind": "HelmRelease", "metadata": {"name": "podinfo"}, "spec": {"values": {"replicaCount": None}}}
            ),
            {"ports": [80, 443]},
        ),
    ],
)
def test_a_patch_changes_a_copy_of_what_it_targets(patch: KustomizePatch, expected: dict[str, Any]) -> None:
    (patched,) = apply_patches([RELEASE], [patch])
    assert patched is not None and patched["spec"]["values"] == expected
    # the tree's own document never changes
    assert RELEASE["spec"]["values"] == {"replicaCount": 2, "ports": [80, 443]}


@pytest.mark.parametrize(
    "target",
    [
        {"kind": "Kustomization"},
        {"group": "", "kind": "HelmRelease"},
        {"version": "v2beta1"},
        {"name": "pod"},  # a name is a regular expression matched whole
        {"namespace": "default"},
        {"labelSelector": "tier=infra"},
        {"annotationSelector": "owner"},
    ],
)
def test_a_target_that_does_not_select_leaves_the_object(target: dict[str, Any]) -> None:
    patch = KustomizePatch(ops({"op": "replace", "path": "/spec/releaseName", "value": "other"}), target)
    assert apply_patches([RELEASE], [patch]) == [RELEASE]


def test_a_delete_removes_the_object_and_an_impossible_operation_is_refused() -> None:
    deletion = KustomizePatch({"$patch": "delete", "kind": "StorageClass", "metadata": {"name": "gp3"}})
    assert apply_patches([STORAGE, RELEASE], [deletion]) == [None, RELEASE]
    with pytest.raises(PatchError, match="no such path"):
        apply_patches([STORAGE], [KustomizePatch(ops({"op": "replace", "path": "/parameters/iops", "value": "1"}), {})])


#: Overlays as fluxplane and its users write them: each is built in memory and by kubectl, and both must agree.
OVERLAYS: dict[str, dict[str, Any]] = {
    "json6902-inline": {
        "patches": [
            {
                "patch": "- op: replace\n  path: /parameters/encrypted\n  value: 'false'\n",
                "target": {"group": "storage.k8s.io", "kind": "StorageClass", "name": "gp3"},
            }
        ]
    },
    "json6902-file": {
        "patches": [{"path": "patch.yaml", "target": {"kind": "HelmRelease", "labelSelector": "tier=apps"}}],
        "patch.yaml": ops({"op": "add", "path": "/spec/targetNamespace", "value": "apps"}),
    },
    "strategic-merge": {
        "patches": [
            {
                "patch": "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: podinfo\n"
                "  namespace: flux-system\nspec:\n  values:\n    replicaCount: 9\n"
            }
        ]
    },
    "strategic-merge-legacy": {
        "patchesStrategicMerge": ["sc.yaml"],
        "sc.yaml": {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "gp3"},
            "parameters": {"encrypted": None},
        },
    },
    "delete": {
        "patches": [
            {"patch": "$patch: delete\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: gp3\n"}
        ]
    },
}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed: nothing to compare with")
@pytest.mark.parametrize("name", sorted(OVERLAYS))
def test_in_memory_builds_agree_with_kubectl_kustomize(name: str, tmp_path: Path) -> None:
    overlay = dict(OVERLAYS[name])
    files = {name: overlay.pop(name) for name in [key for key in overlay if key.endswith(".yaml")]}
    config = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["../base"]}
    config.update(overlay)
    documents: dict[str, list[Any]] = {
        "base/kustomization.yaml": [{"resources": ["objects.yaml"]}],
        "base/objects.yaml": [STORAGE, RELEASE],
        "overlay/kustomization.yaml": [config],
        **{f"overlay/{path}": [body] for path, body in files.items()},
    }
    for path, body in documents.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(yaml.safe_dump_all(body))
    built = subprocess.run(
        ["kubectl", "kustomize", str(tmp_path / "overlay")], capture_output=True, text=True, check=True
    ).stdout
    expected = sorted((doc for doc in yaml.safe_load_all(built) if doc), key=lambda doc: doc["kind"])
    found = sorted((item.doc for item in Folders(documents).build("overlay").items), key=lambda doc: doc["kind"])
    assert found == expected


def test_a_json6902_patch_copies_only_what_it_changes_and_the_tree_keeps_its_document() -> None:
    # GIVEN a document with maps and lists below what the operations touch, and beside it
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "labels": {"x": "1"}},
        "spec": {"list": [{"v": 1}, {"v": 2}], "kept": {"deep": [1, 2]}, "from": {"k": "v"}},
    }
    original = copy.deepcopy(doc)
    operations = ops(
        {"op": "replace", "path": "/spec/list/1/v", "value": 3},
        {"op": "add", "path": "/spec/list/-", "value": {"v": 4}},
        {"op": "move", "from": "/spec/from/k", "path": "/metadata/labels/y"},
        {"op": "copy", "from": "/spec/list/0", "path": "/spec/copied"},
        {"op": "test", "path": "/spec/copied/v", "value": 1},
    )
    # WHEN it is patched
    (patched,) = apply_patches([doc], [KustomizePatch(operations, {"kind": "ConfigMap"})])
    # THEN the result is every operation's, the tree's document is as it was, and what no operation changed is shared
    assert patched == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "labels": {"x": "1", "y": "v"}},
        "spec": {"list": [{"v": 1}, {"v": 3}, {"v": 4}], "kept": {"deep": [1, 2]}, "from": {}, "copied": {"v": 1}},
    }
    assert doc == original
    assert patched["spec"]["kept"] is doc["spec"]["kept"]
    assert patched["spec"]["list"][0] is doc["spec"]["list"][0]
    assert patched["spec"]["copied"] is not doc["spec"]["list"][0]
