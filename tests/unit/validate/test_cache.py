"""The validate cache: content ids as Git's, entries signed with this user's key, and only the clusters a change
reaches walked again."""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from fluxplane.core.codec import dump_documents
from fluxplane.validate import cache as cache_module
from fluxplane.validate.cache import DOCUMENTS, REFERENCES, ValidateCache, blob_id, tracked_blobs
from fluxplane.validate.findings import Finding
from fluxplane.validate.references import check_references
from fluxplane.validate.tree import load_tree
from tests.support.git import git
from tests.support.trees import flux, kustomization, tree


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    """The hand-written tree of tests.support.trees (a hub that brings up spoke ``a``, and ``b``), committed."""
    top = tmp_path / "repo"
    for path, text in tree().items():
        (top / "dist" / path).parent.mkdir(parents=True, exist_ok=True)
        (top / "dist" / path).write_text(text)
    git(top, "init", "-q")
    git(top, "add", ".")
    git(top, "commit", "-qm", "first")
    return top / "dist"


def _references(dist: Path, key: bytes = b"k" * 32) -> list[Any]:
    cache = ValidateCache(dist.parent / ".fluxplane-cache" / "validate", key)
    cache.start()
    cache.track(dist)
    loaded = load_tree(dist, None, cache.read)
    cache.finish()
    return cache.references(loaded)


def _walked(monkeypatch: pytest.MonkeyPatch) -> list[Sequence[str] | None]:
    walked: list[Sequence[str] | None] = []
    real = cache_module.RuntimeFleet

    def recording(tree: Any, clusters: Sequence[str] | None = None, *args: Any, **kwargs: Any) -> Any:
        walked.append(clusters)
        return real(tree, clusters, *args, **kwargs)

    monkeypatch.setattr(cache_module, "RuntimeFleet", recording)
    return walked


def test_content_ids_are_git_s_blob_ids(dist: Path) -> None:
    # GIVEN a tracked file, unchanged WHEN its id is read from the index THEN it is what Git hashes it to
    path = "platform/clusters/b/namespace.yaml"
    hashed = subprocess.run(["git", "hash-object", str(dist / path)], capture_output=True, text=True, check=True)
    assert tracked_blobs(dist)[path] == hashed.stdout.strip() == blob_id((dist / path).read_bytes())
    # AND a file changed in the working tree has no id from the index (it is hashed instead)
    (dist / path).write_text("changed: true\n")
    assert path not in tracked_blobs(dist)


def test_a_change_to_one_cluster_walks_it_and_the_clusters_applying_to_it(
    dist: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a warm cache
    walked = _walked(monkeypatch)
    assert _references(dist) == check_references(load_tree(dist))
    assert walked == [None]
    # WHEN only b's file changes THEN only b is walked again, and the findings are those of a whole walk
    (dist / "platform/clusters/b/namespace.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b2\n")
    assert _references(dist) == check_references(load_tree(dist))
    assert walked[1] == ["b"]
    # AND a change to a, which the hub brings up through a kubeConfig, walks a with the hub
    sync = dist / "platform/clusters/a/flux-system/gotk-sync.yaml"
    sync.write_text(sync.read_text().replace("branch: main", "branch: next"))
    assert _references(dist) == check_references(load_tree(dist))
    assert walked[2] == ["a", "hub"]
    # AND nothing changed: nothing is walked
    assert _references(dist) == check_references(load_tree(dist))
    assert len(walked) == 3


def test_a_cluster_walked_only_as_another_s_applier_keeps_its_findings_unchecked(
    dist: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a warm cache
    _references(dist)
    asked: list[Any] = []
    real = cache_module.by_cluster

    def recording(fleet: Any, clusters: Any = None) -> Any:
        asked.append(clusters)
        return real(fleet, clusters)

    monkeypatch.setattr(cache_module, "by_cluster", recording)
    # WHEN a changes: the hub is walked with it, since it brings a up through a kubeConfig
    sync = dist / "platform/clusters/a/flux-system/gotk-sync.yaml"
    sync.write_text(sync.read_text().replace("branch: main", "branch: next"))
    # THEN only a's findings are looked for again, and they are those of a whole walk
    assert _references(dist) == check_references(load_tree(dist))
    assert asked == [{"a"}]


def test_the_documents_file_holds_each_repeated_string_once(dist: Path) -> None:
    # GIVEN a cold cache WHEN a run keeps the documents it read
    _references(dist)
    cache = ValidateCache(dist.parent / ".fluxplane-cache" / "validate", b"k" * 32)
    data = cache.signer.read_marshalled(DOCUMENTS)
    assert data is not None
    # THEN a key or value that many documents share is one object when read back
    keys = [key for entry in data["blobs"].values() for _, body in entry[0] if isinstance(body, dict) for key in body]
    api_versions = [key for key in keys if key == "apiVersion"]
    assert len(api_versions) > 10
    assert all(key is api_versions[0] for key in api_versions)


def test_a_deleted_source_is_found_on_the_unchanged_release_naming_it(dist: Path) -> None:
    # GIVEN a warm cache WHEN the OCIRepository the hub's karpenter release names is deleted
    _references(dist)
    addons = dist / "platform/addons/addons.yaml"
    documents = addons.read_text().split("---\n")
    addons.write_text("---\n".join(document for document in documents if "\nkind: OCIRepository\n" not in document))
    # THEN the unchanged release's reference is a finding, as in a run without the cache
    found = _references(dist)
    assert found == check_references(load_tree(dist))
    assert any("OCIRepository 'flux-system/karpenter' not found" in finding.message for finding in found)


def test_entries_written_with_another_key_are_ignored(dist: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a cache written with another key (a pull request planting one), that says there is nothing to find
    _references(dist, key=b"x" * 32)
    planted = (dist.parent / ".fluxplane-cache" / "validate" / REFERENCES).read_bytes()
    # WHEN validate runs with this user's key THEN it walks everything again
    walked = _walked(monkeypatch)
    _references(dist)
    assert walked == [None]
    assert (dist.parent / ".fluxplane-cache" / "validate" / REFERENCES).read_bytes() != planted


def test_a_cache_folder_that_is_a_symlink_is_neither_read_nor_written(dist: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (dist.parent / ".fluxplane-cache").mkdir()
    (dist.parent / ".fluxplane-cache" / "validate").symlink_to(elsewhere)
    assert _references(dist) == check_references(load_tree(dist))
    assert list(elsewhere.iterdir()) == []


def test_a_cluster_that_starts_applying_to_another_draws_that_one_s_findings_again(dist: Path) -> None:
    # GIVEN a warm cache, and the hub, which applies to a, starting to apply to b too (b's files unchanged)
    _references(dist)
    spokes = dist / "platform/spokes/a.yaml"
    remote = {"kubeConfig": {"secretRef": {"name": "b-kubeconfig", "key": "value"}}}
    extra = flux("extra", "./dist/platform/spokes", namespace="b", **remote)
    spokes.write_text(spokes.read_text() + "---\n" + dump_documents([extra]))
    # THEN what lands on b is found as in a run without the cache
    found = _references(dist)
    assert found == check_references(load_tree(dist))
    assert any("not found in cluster 'b'" in finding.message for finding in found)


def _write(dist: Path, documents: dict[str, list[dict[str, Any]]]) -> None:
    for path, written in documents.items():
        (dist / path).parent.mkdir(parents=True, exist_ok=True)
        (dist / path).write_text(dump_documents(written))


def test_a_cluster_s_appliers_are_walked_only_along_what_leads_to_it(
    dist: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the hub bringing up a through a Kustomization whose variables come from a ConfigMap another folder of
    # the hub applies, a's objects using one, and a warm cache
    remote = {"kubeConfig": {"secretRef": {"name": "a-kubeconfig", "key": "value"}}}
    variables = {"substituteFrom": [{"kind": "ConfigMap", "name": "a-vars"}]}
    sync_a = flux("flux-sync", "./dist/platform/clusters/a/flux-system", namespace="a", postBuild=variables, **remote)
    hub = (dist / "platform/clusters/hub/infrastructure.yaml").read_text()
    (dist / "platform/clusters/hub/infrastructure.yaml").write_text(
        hub + "---\n" + dump_documents([flux("vars", "./dist/platform/vars")])
    )
    vars_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a-vars", "namespace": "a"}}
    hello = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hello", "namespace": "flux-system"}}
    _write(
        dist,
        {
            "platform/spokes/a.yaml": [sync_a],
            "platform/vars/kustomization.yaml": kustomization("vars.yaml"),
            "platform/vars/vars.yaml": [{**vars_map, "data": {"greeting": "hi"}}],
            "platform/clusters/a/flux-system/kustomization.yaml": kustomization("gotk-sync.yaml", "hello.yaml"),
            "platform/clusters/a/flux-system/hello.yaml": [{**hello, "data": {"text": "${greeting}"}}],
        },
    )
    fleets: list[Any] = []
    real = cache_module.RuntimeFleet

    def recording(*args: Any, **kwargs: Any) -> Any:
        fleets.append(real(*args, **kwargs))
        return fleets[-1]

    monkeypatch.setattr(cache_module, "RuntimeFleet", recording)
    assert _references(dist) == check_references(load_tree(dist))
    # WHEN a changes
    sync = dist / "platform/clusters/a/flux-system/gotk-sync.yaml"
    sync.write_text(sync.read_text().replace("branch: main", "branch: next"))
    # THEN the findings are those of a whole walk (the variable is defined: the ConfigMap's folder was walked)
    found = _references(dist)
    assert found == check_references(load_tree(dist))
    assert not [finding for finding in found if "greeting" in finding.message]
    # AND of the hub, only what leads to a and what its Kustomization reads was walked, not its add-ons
    hub_folders = {application.folder for application in fleets[1].walk.applications if application.cluster == "hub"}
    assert hub_folders == {"platform/clusters/hub", "platform/spokes", "platform/vars"}


def test_a_few_files_changed_do_not_rewrite_the_documents_file(dist: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a warm cache, rewritten only when more than one file in REWRITE (here 1) was not in it
    _references(dist)
    documents = dist.parent / ".fluxplane-cache" / "validate" / DOCUMENTS
    before = documents.read_bytes()
    monkeypatch.setattr(cache_module, "REWRITE", 1)
    # WHEN one file of many changes THEN the documents file stays, and the findings are those without the cache
    (dist / "platform/clusters/b/namespace.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: c\n")
    assert _references(dist) == check_references(load_tree(dist))
    assert documents.read_bytes() == before
    # AND when most files changed, it is written again
    for path in dist.rglob("*.yaml"):
        path.write_text(path.read_text() + "\n")
    assert _references(dist) == check_references(load_tree(dist))
    assert documents.read_bytes() != before


def test_builds_are_kept_for_one_kubectl_signed_and_a_narrowed_run_adds_to_them(tmp_path: Path) -> None:
    folder = tmp_path / ".fluxplane-cache" / "validate"
    first = {"k1": ("a", None), "k2": ("b", "accumulating resources: \0/b/missing.yaml: no such file")}
    # GIVEN the builds of a whole run kept, for one kubectl
    kept = ValidateCache(folder, b"k" * 32)
    assert kept.builds("kubectl 1") == {}
    kept.keep_builds(first, whole=True)
    # WHEN another run reads them THEN it finds them, for that kubectl only, and with this user's key only
    assert ValidateCache(folder, b"k" * 32).builds("kubectl 1") == first
    assert ValidateCache(folder, b"k" * 32).builds("kubectl 2") == {}
    assert ValidateCache(folder, b"x" * 32).builds("kubectl 1") == {}
    # AND a narrowed run adds its builds to them, a whole one keeps its own only
    narrowed = ValidateCache(folder, b"k" * 32)
    narrowed.builds("kubectl 1")
    narrowed.keep_builds({"k3": ("c", None)}, whole=False)
    assert ValidateCache(folder, b"k" * 32).builds("kubectl 1") == {**first, "k3": ("c", None)}
    whole = ValidateCache(folder, b"k" * 32)
    whole.builds("kubectl 1")
    whole.keep_builds({"k3": ("c", None)}, whole=True)
    assert ValidateCache(folder, b"k" * 32).builds("kubectl 1") == {"k3": ("c", None)}


def test_schema_findings_are_kept_by_content_for_one_base_signed(tmp_path: Path) -> None:
    folder = tmp_path / ".fluxplane-cache" / "validate"
    finding = Finding("a.yaml", 1, "ConfigMap", "x", "data.a", "expected a string")
    # GIVEN the schema findings on a file's content kept, for one corpus and set of kinds defined (the base)
    kept = ValidateCache(folder, b"k" * 32)
    kept.blobs = {"a.yaml": "blob-a"}
    kept.start_schemas("corpus 1")
    assert kept.schema_report("a.yaml") is None
    kept.keep_schema_report("a.yaml", [finding], {("v1", "Widget"): 2})
    kept.finish_schemas(whole=True)
    # WHEN another run reads them for a file of that content THEN it finds them, told of that file
    again = ValidateCache(folder, b"k" * 32)
    again.blobs = {"b.yaml": "blob-a", "c.yaml": "blob-c"}
    again.start_schemas("corpus 1")
    assert again.schema_report("b.yaml") == ([dataclasses.replace(finding, file="b.yaml")], {("v1", "Widget"): 2})
    assert again.schema_report("c.yaml") is None
    # AND not for another base, nor with another key
    for key, base in ((b"k" * 32, "corpus 2"), (b"x" * 32, "corpus 1")):
        other = ValidateCache(folder, key)
        other.blobs = {"b.yaml": "blob-a"}
        other.start_schemas(base)
        assert other.schema_report("b.yaml") is None


def test_a_document_nested_deeper_than_python_s_calls_go_is_kept_as_read(dist: Path) -> None:
    # GIVEN a file of a list nested 900 levels deep (which a pull request can bring)
    (dist / "platform/clusters/b/deep.yaml").write_text("deep: " + "[" * 900 + "]" * 900 + "\n")
    # WHEN validated with the cache THEN the findings are those without it, and the documents file is kept
    assert _references(dist) == check_references(load_tree(dist))
    assert (dist.parent / ".fluxplane-cache" / "validate" / DOCUMENTS).is_file()
