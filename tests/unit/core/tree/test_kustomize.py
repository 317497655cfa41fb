"""Tests for fluxplane.core.tree.kustomize: a folder read the way kustomize builds it, and Flux when it has no
kustomization file; what a build read; the kubectl backend."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from fluxplane.core.tree import Folders, KubectlBuilder, KubectlFolders, LazyDocuments
from fluxplane.core.tree import kustomize as kustomize_module
from fluxplane.core.tree.kustomize import bases

needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")

Docs = dict[str, list[Any]]


def kustomization(*resources: str, **fields: Any) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": list(resources),
            **fields,
        }
    ]


def config_map(name: str, namespace: str | None = None) -> dict[str, Any]:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}


def names(folders: Folders, folder: str) -> list[str]:
    return [item.doc["metadata"]["name"] for item in folders.build(folder).items]


DELETE_B = "$patch: delete\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"


def test_resources_and_components_files_and_folders_in_order() -> None:
    # GIVEN a folder listing a file, a folder, a component and a remote base
    documents: Docs = {
        "app/kustomization.yaml": kustomization(
            "one.yaml", "base", "https://github.com/x/y//z", components=["../component"]
        ),
        "app/one.yaml": [config_map("one"), None, config_map("three")],
        "app/base/kustomization.yml": kustomization("two.yaml"),
        "app/base/two.yaml": [config_map("two")],
        "component/Kustomization": [{"kind": "Component", "resources": ["c.yaml"]}],
        "component/c.yaml": [config_map("c")],
    }
    folders = Folders(documents)
    build = folders.build("app")
    # THEN the objects come in the order listed, the remote base is not read, and each remembers where it came
    # from: its file and its position there (an empty document keeps its place)
    assert [(item.doc["metadata"]["name"], item.path, item.position) for item in build.items] == [
        ("one", "app/one.yaml", 1),
        ("three", "app/one.yaml", 3),
        ("two", "app/base/two.yaml", 1),
        ("c", "component/c.yaml", 1),
    ]
    # AND the build lists the kustomization files it read, and the folder every file a build reads
    assert folders.inputs("app") == {
        "app/kustomization.yaml",
        "app/one.yaml",
        "app/base/kustomization.yml",
        "app/base/two.yaml",
        "component/Kustomization",
        "component/c.yaml",
    }
    assert [item.path for item in build.configs] == [
        "app/kustomization.yaml",
        "app/base/kustomization.yml",
        "component/Kustomization",
    ]


def test_namespace_field_moves_what_it_builds_and_the_outer_one_wins() -> None:
    documents: Docs = {
        "outer/kustomization.yaml": kustomization("../inner", "own.yaml", namespace="outer"),
        "outer/own.yaml": [config_map("own", "mine")],
        "inner/kustomization.yaml": kustomization("inner.yaml", namespace="inner"),
        "inner/inner.yaml": [config_map("deep")],
    }
    folders = Folders(documents)
    assert [item.namespace for item in folders.build("inner").items] == ["inner"]
    assert [(item.doc["metadata"]["name"], item.namespace) for item in folders.build("outer").items] == [
        ("deep", "outer"),
        ("own", "outer"),
    ]


def test_patch_delete_removes_the_object_it_names_inline_or_from_a_file() -> None:
    documents: Docs = {
        "base/kustomization.yaml": kustomization("objects.yaml"),
        "base/objects.yaml": [config_map("a"), config_map("b"), config_map("c", "x"), config_map("c", "y")],
        "inline/kustomization.yaml": kustomization("../base", patches=[{"patch": DELETE_B}]),
        "file/kustomization.yaml": kustomization("../base", patches=[{"path": "delete.yaml"}]),
        "targeted/kustomization.yaml": kustomization(
            "../base", patches=[{"path": "../file/delete.yaml", "target": {"kind": "ConfigMap", "name": "a|b"}}]
        ),
        "file/delete.yaml": [{"$patch": "delete", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "y"}}],
        "other/kustomization.yaml": kustomization(
            "../base", patches=[{"patch": "- op: replace\n  path: /data\n  value: {}\n", "target": {"name": "a"}}]
        ),
    }
    folders = Folders(documents)
    assert names(folders, "inline") == ["a", "c", "c"]
    # a deletion that names a namespace removes that object only
    assert [item.doc["metadata"].get("namespace") for item in folders.build("file").items] == [None, None, "x"]
    assert "file/delete.yaml" in folders.inputs("file")
    # with a target, it removes every object the target selects, whatever it names (as kubectl kustomize does)
    assert names(folders, "targeted") == ["c", "c"]
    # a patch that deletes nothing adds and removes nothing
    assert names(folders, "other") == ["a", "b", "c", "c"]


def test_folder_without_kustomization_file_is_what_flux_generates() -> None:
    # GIVEN a folder with files at two depths, a subfolder with a kustomization file that lists one of its two
    # files, and a file that is not YAML
    documents: Docs = {
        "apps/b.yaml": [config_map("b")],
        "apps/a/deep.yaml": [config_map("deep")],
        "apps/k/kustomization.yaml": kustomization("listed.yaml"),
        "apps/k/listed.yaml": [config_map("listed")],
        "apps/k/unlisted.yaml": [config_map("unlisted")],
    }
    folders = Folders(LazyDocuments({}, {**{p: yaml.safe_dump_all(d) for p, d in documents.items()}, "apps/x.md": "#"}))
    # THEN every YAML file below it, and each folder with a kustomization file as kustomize builds it, in path order
    assert names(folders, "apps") == ["deep", "b", "listed"]
    assert folders.inputs("apps") == {
        "apps/a/deep.yaml",
        "apps/b.yaml",
        "apps/k/kustomization.yaml",
        "apps/k/listed.yaml",
    }
    assert folders.is_folder("apps/a") and not folders.is_folder("apps/none") and not folders.is_folder("apps/b.yaml")
    assert folders.listing("apps") == ["apps/a", "apps/b.yaml", "apps/k"]


class _NotedPath(str):
    """A path of the tree that notes each time its characters are looked at (found, split, cut, matched), which a
    comparison in sorting or searching does not do."""

    noted: ClassVar[list[str]] = []

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("__"):
            _NotedPath.noted.append(str.__str__(self))
        return super().__getattribute__(name)

    def __getitem__(self, key: Any) -> str:
        _NotedPath.noted.append(str.__str__(self))
        return super().__getitem__(key)


def test_a_listing_reads_one_path_per_entry_not_every_path_below_the_folder() -> None:
    # GIVEN a hub's folder of many clusters' chains, each many files deep, a file beside them whose name sorts
    # between a chain's name and its files, a folder of the same name as a file, and a folder after the hub's
    documents: Docs = {
        _NotedPath(f"platform/spokes/c{index:02}/{step}/{name}.yaml"): [config_map(name)]
        for index in range(20)
        for step in ("cluster", "flux", "secrets")
        for name in ("a", "b", "kustomization")
    }
    documents.update({_NotedPath(path): [] for path in ("platform/spokes/c00.yaml", "platform/spokes/c01")})
    documents.update({_NotedPath(path): [] for path in ("platform/spokes-other/x.yaml", "workloads/w/x.yaml")})
    folders = Folders(documents)
    folders.is_folder("platform/none")
    # WHEN the hub's folder and the root are listed
    _NotedPath.noted.clear()
    listing = folders.listing("platform/spokes")
    read = set(_NotedPath.noted)
    _NotedPath.noted.clear()
    top = folders.listing(".")
    # THEN each lists its entries, sorted, a name that is both a file and a folder once
    assert listing == [
        "platform/spokes/c00",
        "platform/spokes/c00.yaml",
        "platform/spokes/c01",
        *(f"platform/spokes/c{index:02}" for index in range(2, 20)),
    ]
    assert top == ["platform", "workloads"]
    # AND reads one path for each entry (two for the name that is both, and the one after the folder's), not the
    # 180 files below the chains
    assert len(read) <= len(listing) + 2
    assert len(set(_NotedPath.noted)) <= len(top) + 1
    # AND a folder is one when any path lies below it
    assert folders.is_folder("platform/spokes/c07/flux") and not folders.is_folder("platform/spokes/c0")


def test_inputs_follow_resources_and_patches_without_reading_the_resources() -> None:
    documents: Docs = {
        "app/base/kustomization.yaml": kustomization("app.yaml"),
        "app/production/kustomization.yaml": kustomization("../base", patches=[{"path": "size.yaml"}]),
        "app/production/size.yaml": [config_map("app")],
    }
    read: list[str] = []

    class Watched(dict[str, list[Any]]):
        def __getitem__(self, path: str) -> list[Any]:
            read.append(path)
            return super().__getitem__(path)

    files = Watched(documents)
    files["app/base/app.yaml"] = [config_map("app")]
    read.clear()
    assert Folders(files).inputs("app/production") == {
        "app/base/app.yaml",
        "app/base/kustomization.yaml",
        "app/production/kustomization.yaml",
        "app/production/size.yaml",
    }
    assert sorted(read) == ["app/base/kustomization.yaml", "app/production/kustomization.yaml"]


def test_inputs_read_each_kustomization_file_once_across_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN many overlays of one base, each listed by a folder above them
    documents: Docs = {"base/kustomization.yaml": kustomization("cm.yaml"), "base/cm.yaml": [config_map("cm")]}
    for index in range(5):
        documents[f"overlays/o{index}/kustomization.yaml"] = kustomization("../../base")
    documents["overlays/kustomization.yaml"] = kustomization(*(f"o{index}" for index in range(5)))
    listed: list[str] = []
    real = kustomize_module.listed

    def counting(folder: str, config: Any) -> tuple[str, ...]:
        listed.append(folder)
        return real(folder, config)

    monkeypatch.setattr(kustomize_module, "listed", counting)
    folders = Folders(documents)
    # WHEN the inputs of every folder are asked for, the folder above them first
    found = {folder: folders.inputs(folder) for folder in ["overlays", *(f"overlays/o{i}" for i in range(5)), "base"]}
    # THEN each kustomization file's entries are read once, and each folder's inputs are what its build reads
    assert sorted(listed) == sorted(["overlays", "base", *(f"overlays/o{index}" for index in range(5))])
    assert found["overlays/o3"] == {"overlays/o3/kustomization.yaml", "base/kustomization.yaml", "base/cm.yaml"}
    assert found["overlays"] == {"overlays/kustomization.yaml", "base/cm.yaml"} | {
        f"overlays/o{index}/kustomization.yaml" for index in range(5)
    } | {"base/kustomization.yaml"}


def test_inputs_of_folders_on_a_cycle_are_every_file_the_cycle_reaches() -> None:
    # GIVEN a listing b, b listing a (kustomize refuses it), and c listing a
    documents: Docs = {
        "a/kustomization.yaml": kustomization("../b", "a.yaml"),
        "a/a.yaml": [config_map("a")],
        "b/kustomization.yaml": kustomization("../a", "b.yaml"),
        "b/b.yaml": [config_map("b")],
        "c/kustomization.yaml": kustomization("../a"),
    }
    both = {"a/kustomization.yaml", "a/a.yaml", "b/kustomization.yaml", "b/b.yaml"}
    # THEN whichever is asked first, each reaches every file of the cycle
    folders = Folders(documents)
    assert folders.inputs("c") == {"c/kustomization.yaml", *both}
    assert folders.inputs("b") == both
    assert folders.inputs("a") == both


def test_bases_are_the_resources_and_bases_a_build_builds_whole() -> None:
    # GIVEN a kustomization file listing resources, legacy bases, components, patches and a URL
    config = {
        "resources": ["../base", "cm.yaml", "https://example.com/remote.yaml"],
        "bases": ["../../legacy/"],
        "components": ["../component"],
        "patches": [{"path": "patch.yaml"}],
    }
    # WHEN its bases are asked for THEN they are its resources and bases as paths of the tree, nothing else
    assert bases("envs/prod", config) == ("envs/base", "envs/prod/cm.yaml", "legacy")


def test_a_folder_that_includes_itself_adds_nothing_the_second_time() -> None:
    documents: Docs = {"loop/kustomization.yaml": kustomization("a.yaml", "."), "loop/a.yaml": [config_map("a")]}
    assert names(Folders(documents), "loop") == ["a"]


def test_forget_drops_the_folders_built_below_a_folder_only() -> None:
    # GIVEN two clusters' folders and a shared one, built, counting how often each file is made
    made: list[str] = []

    def maker(path: str, name: str) -> Any:
        def make() -> list[dict[str, Any]]:
            made.append(path)
            return [config_map(name)]

        return make

    makers = {
        "platform/clusters/a/kustomization.yaml": lambda: kustomization("a.yaml", "../../shared"),
        "platform/clusters/a/a.yaml": maker("a", "a"),
        "platform/clusters/ab/kustomization.yaml": lambda: kustomization("ab.yaml", "../../shared"),
        "platform/clusters/ab/ab.yaml": maker("ab", "ab"),
        "platform/shared/kustomization.yaml": lambda: kustomization("shared.yaml"),
        "platform/shared/shared.yaml": maker("shared", "shared"),
    }
    folders = Folders(LazyDocuments(makers))
    folders.build("platform/clusters/a")
    folders.build("platform/clusters/ab")
    # WHEN cluster a's folder is forgotten and everything is built again
    folders.forget(["platform/clusters/a"])
    folders.build("platform/clusters/a")
    folders.build("platform/clusters/ab")
    # THEN only a's own file is made again: not ab's (a longer name), nor the shared one
    assert made == ["a", "shared", "ab", "a"]
    folders.forget(["platform"])
    folders.build("platform/clusters/ab")
    assert made[-2:] == ["ab", "shared"]


@needs_kubectl
def test_kubectl_builds_the_folders_with_a_kustomization_file(tmp_path: Path) -> None:
    # GIVEN an overlay that patches its base, and a folder without a kustomization file holding the overlay
    files = {
        "app/base/kustomization.yaml": yaml.safe_dump(kustomization("app.yaml")[0]),
        "app/base/app.yaml": yaml.safe_dump({**config_map("app", "x"), "data": {"size": "1"}}),
        "app/prod/kustomization.yaml": yaml.safe_dump(
            kustomization(
                "../base",
                patches=[{"patch": "- op: replace\n  path: /data/size\n  value: '2'\n", "target": {"name": "app"}}],
            )[0]
        ),
        "all/extra.yaml": yaml.safe_dump(config_map("extra")),
    }
    files["all/prod/kustomization.yaml"] = yaml.safe_dump(kustomization("../../app/prod")[0])
    builder = KubectlBuilder()
    folders = KubectlFolders(files, tmp_path, builder, "head")
    # WHEN built THEN kubectl applied the patch, and the items have no file to point at
    [item] = folders.build("app/prod").items
    assert item.doc["data"] == {"size": "2"}
    assert item.path is None
    # AND a folder without one is generated around what kubectl builds of its subfolders
    assert [item.doc["metadata"]["name"] for item in folders.build("all").items] == ["extra", "app"]
    # AND a folder is built once per content: the same inputs in another tree are not built again
    again = KubectlFolders(files, tmp_path / "again", builder, "base")
    again.prefetch(["app/prod", "all/prod"])
    assert builder.builds == 2
    assert again.fingerprint("app/prod") == folders.fingerprint("app/prod")


@needs_kubectl
def test_a_lazy_tree_writes_only_what_a_build_reads(tmp_path: Path) -> None:
    # GIVEN a tree of an overlay, its base, and a folder nothing builds
    files = {
        "app/base/kustomization.yaml": yaml.safe_dump(kustomization("app.yaml")[0]),
        "app/base/app.yaml": yaml.safe_dump(config_map("app", "x")),
        "app/prod/kustomization.yaml": yaml.safe_dump(kustomization("../base")[0]),
        "other/kustomization.yaml": yaml.safe_dump(kustomization("other.yaml")[0]),
        "other/other.yaml": yaml.safe_dump(config_map("other")),
    }
    folders = KubectlFolders(files, tmp_path, KubectlBuilder(), "head", lazy=True)
    assert list(tmp_path.iterdir()) == []
    # WHEN the overlay is built THEN it is, and only its inputs were written
    [item] = folders.build("app/prod").items
    assert item.doc["metadata"]["name"] == "app"
    written = sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*") if path.is_file())
    assert written == ["app/base/app.yaml", "app/base/kustomization.yaml", "app/prod/kustomization.yaml"]


def test_an_inline_patch_is_parsed_once_per_text_and_two_texts_never_share(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN many overlays of one base, the same inline patch in most of them and another text in one
    replace = "- op: add\n  path: /data\n  value: {{k: '{value}'}}\n"
    target = {"kind": "ConfigMap"}
    documents: Docs = {"base/kustomization.yaml": kustomization("cm.yaml"), "base/cm.yaml": [config_map("cm")]}
    for index in range(4):
        patch = {"patch": replace.format(value=1), "target": target}
        documents[f"o{index}/kustomization.yaml"] = kustomization("../base", patches=[patch])
    patch = {"patch": replace.format(value=2), "target": target}
    documents["other/kustomization.yaml"] = kustomization("../base", patches=[patch])
    documents["broken/kustomization.yaml"] = kustomization("../base", patches=[{"patch": "a: [\n", "target": target}])
    parsed: list[str] = []
    real = kustomize_module.load_documents

    def counting(text: str) -> list[Any]:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(kustomize_module, "load_documents", counting)
    folders = Folders(documents)
    # WHEN every overlay is built, twice over (a cluster's folders are forgotten after its graph)
    for _ in range(2):
        built = {folder: folders.build(folder).items[0].doc for folder in ["o0", "o1", "o2", "o3", "other", "broken"]}
        folders.forget(["o0", "o1", "o2", "o3", "other", "broken"])
    # THEN each text is parsed once, each overlay gets its own text's change, and the base is left as it was
    assert sorted(parsed) == sorted([replace.format(value=1), replace.format(value=2), "a: [\n"])
    assert [built[f"o{index}"]["data"] for index in range(4)] == [{"k": "1"}] * 4
    assert built["other"]["data"] == {"k": "2"}
    assert "data" not in built["broken"]
    assert documents["base/cm.yaml"] == [config_map("cm")]
