"""Tests for fluxplane.validate.kustomize: every folder with a kustomization.yaml must build."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from fluxplane.system.processes import Processes
from fluxplane.validate.cache import blob_id
from fluxplane.validate.findings import Finding
from fluxplane.validate.kustomize import Builds, _Inputs, _message, build_error, check_builds, find_kubectl
from fluxplane.validate.tree import ValidateError

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
KUSTOMIZATION = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"


@needs_kubectl
def test_failing_build_is_a_finding_on_its_kustomization(tmp_path: Path) -> None:
    # GIVEN one folder that builds and one that lists a file that does not exist
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "kustomization.yaml").write_text(KUSTOMIZATION + "- cm.yaml\n")
    (tmp_path / "good" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    (tmp_path / "bad" / "apps").mkdir(parents=True)
    (tmp_path / "bad" / "apps" / "kustomization.yaml").write_text(KUSTOMIZATION + "- missing.yaml\n")
    advanced: list[int] = []
    # WHEN both are built
    findings = check_builds(tmp_path, ["bad/apps", "good"], str(KUBECTL), lambda: advanced.append(1))
    # THEN one finding names the bad folder's kustomization.yaml; both builds counted
    assert len(findings) == 1
    assert findings[0] == Finding(
        "bad/apps/kustomization.yaml", 1, "Kustomization", "apps", "(root)", findings[0].message
    )
    assert findings[0].message.startswith("kubectl kustomize failed: ")
    assert "missing.yaml" in findings[0].message
    assert len(advanced) == 2
    # AND the message is the same on every run: no klog time or process id, no absolute path
    assert str(tmp_path) not in findings[0].message
    assert "run.go" not in findings[0].message
    assert findings == check_builds(tmp_path, ["bad/apps", "good"], str(KUBECTL))


def test_klog_lines_give_their_error_text() -> None:
    # GIVEN the line newer kubectl logs for a failed build WHEN it is read THEN only its error remains
    line = 'E1123 10:50:52.039405    9804 run.go:72] "command failed" err="accumulating resources: \\"a\\" missing"'
    assert _message(line) == 'accumulating resources: "a" missing'
    assert _message("error: plain") == "error: plain"


def test_missing_kubectl_names_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ValidateError, match=r"^kubectl not found on PATH: install it, or pass --no-kustomize"):
        find_kubectl()


CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"
COMPONENT = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
NO_TARGET = (
    "patches:\n- patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: nowhere\n"
    "    data: {a: b}\n"
)
#: A tree of folders that build and folders that do not, every way a fleet's may not: (folder, files).
BROKEN_TREE: dict[str, dict[str, str]] = {
    "bases/good": {"kustomization.yaml": KUSTOMIZATION + "- cm.yaml\n", "cm.yaml": CONFIG_MAP.format(name="a")},
    "bases/broken": {
        "kustomization.yaml": KUSTOMIZATION + "- cm.yaml\n- missing.yaml\n",
        "cm.yaml": CONFIG_MAP.format(name="b"),
    },
    "bases/lonely": {"kustomization.yaml": KUSTOMIZATION + "- cm.yaml\n", "cm.yaml": CONFIG_MAP.format(name="l")},
    # the same overlay in two clusters, over a good base and over a broken one
    "envs/a/app": {"kustomization.yaml": KUSTOMIZATION + "- ../../../bases/good\n"},
    "envs/b/app": {"kustomization.yaml": KUSTOMIZATION + "- ../../../bases/good\n"},
    "envs/a/bad": {"kustomization.yaml": KUSTOMIZATION + "- ../../../bases/broken\n"},
    "envs/b/bad": {"kustomization.yaml": KUSTOMIZATION + "- ../../../bases/broken\n"},
    # ... and once more elsewhere, with a copy of the broken base: its error names its own folders
    "copy/bases/broken": {
        "kustomization.yaml": KUSTOMIZATION + "- cm.yaml\n- missing.yaml\n",
        "cm.yaml": CONFIG_MAP.format(name="b"),
    },
    "copy/envs/c/bad": {"kustomization.yaml": KUSTOMIZATION + "- ../../../bases/broken\n"},
    # a broken overlay over a good base, and one over a base nothing else reads
    "envs/a/patched": {"kustomization.yaml": KUSTOMIZATION + "- ../../../bases/good\n" + NO_TARGET},
    "envs/a/alone": {"kustomization.yaml": KUSTOMIZATION + "- ../../../bases/lonely\n" + NO_TARGET},
    # a chain over the broken base
    "chain/top": {"kustomization.yaml": KUSTOMIZATION + "- ../mid\n"},
    "chain/mid": {"kustomization.yaml": KUSTOMIZATION + "- ../../bases/broken\n"},
    # a missing resource, the same object twice
    "roots/missing": {"kustomization.yaml": KUSTOMIZATION + "- nothing.yaml\n"},
    "roots/twice": {
        "kustomization.yaml": KUSTOMIZATION + "- one.yaml\n- two.yaml\n",
        "one.yaml": CONFIG_MAP.format(name="same"),
        "two.yaml": CONFIG_MAP.format(name="same"),
    },
    # a component does not build on its own, the folder using it does
    "components/label": {"kustomization.yaml": COMPONENT + NO_TARGET.replace("nowhere", "a")},
    "envs/a/labelled": {
        "kustomization.yaml": KUSTOMIZATION + "- ../../../bases/good\ncomponents:\n- ../../../components/label\n"
    },
    # the same kustomization file, reading files it does not list: one of them is missing
    "gen/a": {
        "kustomization.yaml": "configMapGenerator:\n- name: g\n  files:\n  - data.txt\n",
        "data.txt": "x\n",
    },
    "gen/b": {"kustomization.yaml": "configMapGenerator:\n- name: g\n  files:\n  - data.txt\n"},
    # the same kustomization file with a JSON patch file of another content: one of them does not apply
    "json/a": {
        "kustomization.yaml": KUSTOMIZATION + "- ../../bases/good\npatches:\n- path: patch.json\n"
        "  target:\n    kind: ConfigMap\n",
        "patch.json": '[{"op": "add", "path": "/data", "value": {"k": "v"}}]',
    },
    "json/b": {
        "kustomization.yaml": KUSTOMIZATION + "- ../../bases/good\npatches:\n- path: patch.json\n"
        "  target:\n    kind: ConfigMap\n",
        "patch.json": '[{"op": "replace", "path": "/spec/nothing", "value": 1}]',
    },
}


def _write(root: Path, tree: dict[str, dict[str, str]]) -> list[str]:
    for folder, files in tree.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (root / folder / name).write_text(text)
    return sorted(tree)


def _counting(tmp_path: Path) -> tuple[str, Path]:
    """A kubectl that writes the folder of each build it runs in a file, a line each."""
    log = tmp_path / "runs.log"
    script = tmp_path / "kubectl"
    script.write_text(f'#!/bin/sh\necho "$2" >> "{log}"\nexec "{KUBECTL}" "$@"\n')
    script.chmod(0o755)
    return str(script), log


def _every_folder(root: Path, folders: list[str], kubectl: str) -> list[Finding]:
    """The findings of one build per folder."""
    processes = Processes(workers=4)
    errors = processes.map(lambda folder: build_error(processes, kubectl, root / folder, root), folders)
    findings = []
    for folder, error in zip(folders, errors, strict=True):
        if error is not None:
            name = folder.rsplit("/", 1)[-1]
            message = f"kubectl kustomize failed: {error}"
            findings.append(Finding(f"{folder}/kustomization.yaml", 1, "Kustomization", name, "(root)", message))
    return findings


@needs_kubectl
@pytest.mark.parametrize(("workers", "processes"), [(16, 16), (1, 25)])
def test_builds_each_input_once_and_finds_what_every_folder_built_finds(
    tmp_path: Path, workers: int, processes: int
) -> None:
    # GIVEN a tree with broken bases and overlays, missing resources, duplicates and the same folders twice
    root = tmp_path / "dist"
    folders = _write(root, BROKEN_TREE)
    kubectl, log = _counting(tmp_path)
    advanced: list[int] = []
    # WHEN its folders are built, one per process (as many workers as folders to build at once), or many
    builds = Builds(root, folders, kubectl, workers)
    findings = builds.findings(lambda: advanced.append(1))
    # THEN the findings, their text and order, are those of a build of every folder
    assert findings == _every_folder(root, folders, str(KUBECTL))
    assert [finding.file.rpartition("/")[0] for finding in findings] == [
        "bases/broken",
        "chain/mid",
        "chain/top",
        "components/label",
        "copy/bases/broken",
        "copy/envs/c/bad",
        "envs/a/alone",
        "envs/a/bad",
        "envs/a/patched",
        "envs/b/bad",
        "gen/b",
        "json/b",
        "roots/missing",
        "roots/twice",
    ]
    assert "copy/bases/broken/missing.yaml" in findings[5].message
    # AND each folder is counted once; one per process, 5 of the 21 are not built: the good base (an overlay over
    # it builds), the second and third overlays over the broken base and the second over the good one (the same
    # inputs as the first), the broken base (the same inputs as its copy, which no overlay covers either); in
    # batches, those that fail are built again in parts
    assert len(advanced) == len(folders) == 21
    assert len(log.read_text().splitlines()) == builds.processes == processes


@needs_kubectl
def test_folders_build_many_in_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN 30 folders that build, each with the same Namespace and CRD, and another ConfigMap of the same name
    crd = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\n"
        "spec:\n  group: example.com\n  names: {kind: Thing, plural: things}\n  scope: Namespaced\n  versions: []\n"
    )
    tree = {
        f"clusters/c{index}": {
            "kustomization.yaml": KUSTOMIZATION + "- ns.yaml\n- crd.yaml\n- cm.yaml\n",
            "ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n",
            "crd.yaml": crd,
            "cm.yaml": CONFIG_MAP.format(name="settings") + f"data:\n  cluster: c{index}\n",
        }
        for index in range(30)
    }
    root = tmp_path / "dist"
    folders = _write(root, tree)
    kubectl, log = _counting(tmp_path)
    # WHEN they are built on one core (two workers)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    findings = check_builds(root, folders, kubectl)
    # THEN they build, in two processes
    assert findings == []
    assert len(log.read_text().splitlines()) == 2


@needs_kubectl
def test_a_folder_that_reads_many_files_builds_alone_and_first(tmp_path: Path) -> None:
    # GIVEN a hub's folder of 101 clusters' files, and two small folders
    hub = {f"c{index}.yaml": CONFIG_MAP.format(name=f"c{index}") for index in range(101)}
    tree = {
        "hub": {"kustomization.yaml": KUSTOMIZATION + "".join(f"- {name}\n" for name in hub), **hub},
        "small/a": {"kustomization.yaml": KUSTOMIZATION + "- cm.yaml\n", "cm.yaml": CONFIG_MAP.format(name="a")},
        "small/b": {"kustomization.yaml": KUSTOMIZATION + "- cm.yaml\n", "cm.yaml": CONFIG_MAP.format(name="b")},
    }
    root = tmp_path / "dist"
    folders = _write(root, tree)
    kubectl, log = _counting(tmp_path)
    # WHEN they are built by one worker
    builds = Builds(root, folders, kubectl, workers=1)
    # THEN the hub's folder is built first, on its own, and the small ones together
    assert builds.findings() == []
    built = log.read_text().splitlines()
    assert len(built) == builds.processes == 2
    assert built[0] == str(root / "hub")


@needs_kubectl
def test_results_kept_from_another_run_need_no_build_and_find_the_same_below_another_root(tmp_path: Path) -> None:
    # GIVEN the builds of the broken tree below one root, their results kept
    first = tmp_path / "one" / "dist"
    folders = _write(first, BROKEN_TREE)
    built = Builds(first, folders, str(KUBECTL))
    built.findings()
    # WHEN the same tree is built below another root, and one more cluster's overlay over the broken base is added
    root = tmp_path / "two" / "dist"
    _write(root, {**BROKEN_TREE, "envs/z/bad": BROKEN_TREE["envs/a/bad"]})
    folders = [*folders, "envs/z/bad"]
    kubectl, log = _counting(tmp_path)
    builds = Builds(root, folders, kubectl, known=built.results)
    findings = builds.findings()
    # THEN the findings, their text and order, are those of a build of every folder there, each error told of its
    # own folder
    assert findings == _every_folder(root, folders, str(KUBECTL))
    assert any(finding.file == "envs/z/bad/kustomization.yaml" for finding in findings)
    assert all(str(tmp_path) not in finding.message for finding in findings)
    # AND only the folders whose kustomization files read files they do not list are built again (their keys
    # are not kept)
    assert sorted(log.read_text().splitlines()) == [str(root / "gen/a"), str(root / "gen/b")]
    assert not any(source.startswith("gen/") for source, _ in builds.results.values())
    # AND the errors kept do not hold the root's path
    assert all(str(first) not in (error or "") for _, error in built.results.values())


def test_keys_come_from_what_validate_read_and_the_blob_ids_git_has(tmp_path: Path) -> None:
    # GIVEN a folder, and the documents and Git blob ids validate read of its files
    root = tmp_path / "dist"
    files = {"kustomization.yaml": KUSTOMIZATION + "- cm.yaml\n", "cm.yaml": CONFIG_MAP, "cm2.yaml": CONFIG_MAP}
    _write(root, {"a": files})
    blobs = {f"a/{name}": blob_id(text.encode()) for name, text in files.items()}
    # WHEN its key is drawn from them, or from the files
    read = _Inputs(root, parsed={"a/kustomization.yaml": [{"resources": ["cm2.yaml"]}]}, blobs=blobs)
    alone = _Inputs(root)
    # THEN the documents given are those its build is taken to read (the file is not parsed again)
    assert read.folders.inputs("a") == {"a/kustomization.yaml", "a/cm2.yaml"}
    assert alone.folders.inputs("a") == {"a/kustomization.yaml", "a/cm.yaml"}
    # AND a file's blob id stands for its content: the same key as reading it, another for another id
    assert _Inputs(root, blobs=blobs).key("a") == alone.key("a")
    assert _Inputs(root, blobs={**blobs, "a/cm.yaml": blob_id(b"other")}).key("a") != alone.key("a")
