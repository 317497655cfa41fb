"""Tests for fluxplane.review.diff.scope: which folders and clusters a change reaches, read from the files alone."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.core.tree import FleetWalk, KubectlBuilder, objects
from fluxplane.review.diff import scope as scope_module
from fluxplane.review.diff.scope import (
    Definitions,
    Follow,
    Index,
    Scope,
    ScopedFolders,
    Shared,
    changed_files,
    reached,
)
from fluxplane.synth.composed import Texts, changed_kinds, definitions
from tests.conftest import ROOT


def kustomization(*resources: str, **fields: Any) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": list(resources),
            **fields,
        }
    )


def flux(name: str, path: str, namespace: str = "flux-system") -> dict[str, Any]:
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"path": path, "prune": True, "sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
    }


SOURCE = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "GitRepository",
    "metadata": {"name": "flux-system", "namespace": "flux-system"},
    "spec": {"url": "ssh://git@example.com/fleet.git", "ref": {"branch": "main"}},
}


def config_map(name: str, value: str = "1") -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "apps"},
            "data": {"value": value},
        }
    )


def fleet() -> dict[str, str]:
    """A hub that applies the spokes' folder (every cluster's chain), and two spokes that apply the shared app."""
    files = {
        "platform/clusters/hub/kustomization.yaml": kustomization("sync.yaml"),
        "platform/clusters/hub/sync.yaml": yaml.safe_dump_all(
            [SOURCE, flux("flux-system", "./dist/platform/clusters/hub"), flux("spokes", "./dist/platform/spokes")]
        ),
        "platform/spokes/kustomization.yaml": kustomization("a", "b"),
        "platform/apps/app/kustomization.yaml": kustomization("app.yaml"),
        "platform/apps/app/app.yaml": config_map("app"),
    }
    for spoke in ("a", "b"):
        files[f"platform/spokes/{spoke}/kustomization.yaml"] = kustomization("chain.yaml")
        files[f"platform/spokes/{spoke}/chain.yaml"] = yaml.safe_dump(
            flux(f"{spoke}-extra", f"./dist/platform/extra/{spoke}")
        )
        files[f"platform/extra/{spoke}/extra.yaml"] = config_map(f"extra-{spoke}")
        files[f"platform/clusters/{spoke}/kustomization.yaml"] = kustomization("sync.yaml", "overlays/app")
        files[f"platform/clusters/{spoke}/sync.yaml"] = yaml.safe_dump_all(
            [SOURCE, flux("flux-system", f"./dist/platform/clusters/{spoke}")]
        )
        files[f"platform/clusters/{spoke}/overlays/app/kustomization.yaml"] = kustomization("../../../../apps/app")
    return files


def test_changed_files_are_those_whose_text_differs() -> None:
    assert changed_files({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "x", "d": "4"}) == {"b", "c", "d"}


def test_a_folder_is_read_by_its_kustomization_file_its_listing_and_a_generated_parent() -> None:
    index = Index(fleet())
    assert index.readers("platform/spokes/a/chain.yaml") == {"platform/spokes/a"}
    # the kustomization file of a folder is read by it; a folder listed by another is read by that one
    assert index.readers("platform/spokes/a/kustomization.yaml") == {"platform/spokes/a"}
    assert index.readers("platform/spokes/a") == {"platform/spokes"}
    assert index.readers("platform/apps/app") == {
        "platform/apps",
        "platform/clusters/a/overlays/app",
        "platform/clusters/b/overlays/app",
    }
    # AND a file without a kustomization file above it is read by the folder Flux generates
    assert index.readers("platform/extra/a/extra.yaml") == {"platform/extra/a"}


def test_kustomizations_that_lead_to_a_folder_are_found_by_their_path() -> None:
    index = Index(fleet())
    assert index.appliers("platform/extra/a") == {"platform/spokes/a/chain.yaml"}
    assert index.appliers("platform/spokes") == {"platform/clusters/hub/sync.yaml"}
    assert index.appliers("platform/apps/app") == set()


def test_readers_parse_only_the_kustomization_files_that_may_list_the_target(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN twenty clusters whose kustomization files all list their own flux-system folder
    files = {}
    for number in range(20):
        folder = f"platform/clusters/c{number}"
        files[f"{folder}/kustomization.yaml"] = kustomization("flux-system", f"sync-{number}.yaml")
        files[f"{folder}/flux-system/kustomization.yaml"] = kustomization("gotk.yaml", namespace="flux-system")
    parsed: list[str] = []
    real = scope_module.parse_documents
    monkeypatch.setattr(scope_module, "parse_documents", lambda text: parsed.append(text) or real(text))
    # WHEN one cluster's flux-system folder is looked for
    readers = Index(files).readers("platform/clusters/c3/flux-system")
    # THEN its cluster's folder reads it, and no other cluster's kustomization file was parsed to know it
    assert readers == {"platform/clusters/c3"}
    assert parsed == [files["platform/clusters/c3/kustomization.yaml"]]


def test_readers_and_appliers_find_entries_outside_the_folder_and_in_every_spelling() -> None:
    # GIVEN overlays that list what lies outside their folder: a quoted entry with a final slash, a patch's file,
    # a name with a space; and Kustomizations whose path is quoted, or on the line after ``path:``
    files = fleet()
    files["platform/apps/my app/app.yaml"] = config_map("my-app")
    files["platform/apps/kustomization.yaml"] = kustomization("app", "my app")
    files["platform/patches/replicas.yaml"] = config_map("app", "2")
    files["platform/clusters/a/overlays/app/kustomization.yaml"] = (
        'resources:\n- "../../../../apps/app/"\n- ../../../../apps/my app\n'
        "patches:\n- path: ../../../../patches/replicas.yaml\n"
    )
    files["platform/spokes/a/chain.yaml"] = files["platform/spokes/a/chain.yaml"].replace(
        "path: ./dist/platform/extra/a", "path:\n\n      ./dist/platform/extra/a/"
    )
    files["platform/spokes/b/chain.yaml"] = files["platform/spokes/b/chain.yaml"].replace(
        "path: ./dist/platform/extra/b", "path: './dist/platform/extra/b'"
    )
    index = Index(files)
    # THEN each is found
    overlay = "platform/clusters/a/overlays/app"
    assert index.readers("platform/apps/app") == {"platform/apps", overlay, "platform/clusters/b/overlays/app"}
    assert index.readers("platform/apps/my app") == {"platform/apps", overlay}
    assert index.readers("platform/patches/replicas.yaml") == {overlay, "platform/patches"}
    assert index.appliers("platform/extra/a") == {"platform/spokes/a/chain.yaml"}
    assert index.appliers("platform/extra/b") == {"platform/spokes/b/chain.yaml"}


def test_a_change_to_one_spokes_chain_reaches_the_hub_alone() -> None:
    scope = Scope(frozenset({"platform/extra/a/extra.yaml"}))
    scope.add(Index(fleet()), scope.changed)
    assert scope.touched == {"platform/extra/a", "platform/extra", "platform"}
    assert {"platform/spokes/a", "platform/spokes", "platform/clusters/hub"} <= scope.dirty
    assert "platform/spokes/b" not in scope.dirty
    assert scope.clusters == {"hub"}
    assert scope.files == {
        "platform/extra/a/extra.yaml",
        "platform/spokes/a/chain.yaml",
        "platform/clusters/hub/sync.yaml",
    }


def test_a_change_to_a_shared_folder_reaches_every_cluster_that_applies_it() -> None:
    scope = Scope(frozenset({"platform/apps/app/app.yaml"}))
    scope.add(Index(fleet()), scope.changed)
    assert scope.clusters == {"a", "b"}


needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")


@needs_kubectl
def test_the_walk_follows_only_what_leads_to_the_change(tmp_path: Path) -> None:
    # GIVEN spoke a's extra folder changed
    before = fleet()
    after = {**before, "platform/extra/a/extra.yaml": config_map("extra-a", "2")}
    scope = Scope(changed_files(before, after))
    for files in (before, after):
        scope.add(Index(files), scope.changed)
    builder = KubectlBuilder()
    mine = ScopedFolders(after, tmp_path / "head", builder, "head", scope)
    other = ScopedFolders(before, tmp_path / "base", builder, "base", scope)
    repositories = FleetWalk(mine).find_repositories(["hub"])
    walk = FleetWalk(mine, repositories, follow=Follow(scope, mine, other, set())).walk(sorted(scope.clusters))
    # THEN the hub walks to spoke a's chain and its extra folder, and the spokes' folder is gathered from a alone
    folders = {application.folder for application in walk.applications}
    assert folders == {"platform/clusters/hub", "platform/spokes", "platform/extra/a"}
    names = {placed.key.name for placed in walk.on("hub")}
    assert "a-extra" in names and "b-extra" not in names
    assert ("ConfigMap", "extra-a") in {(placed.key.kind, placed.key.name) for placed in walk.on("hub")}
    # AND the folders that only gather what they list were built without kubectl
    assert builder.builds == 0


@needs_kubectl
def test_a_kustomization_that_differs_is_followed_everywhere_below(tmp_path: Path) -> None:
    # GIVEN the hub's sync file changed so that its spokes' Kustomization prunes no more
    before = fleet()
    changed = yaml.safe_load_all(before["platform/clusters/hub/sync.yaml"])
    documents = list(changed)
    documents[2]["spec"]["prune"] = False
    after = {**before, "platform/clusters/hub/sync.yaml": yaml.safe_dump_all(documents)}
    scope = Scope(changed_files(before, after))
    for files in (before, after):
        scope.add(Index(files), scope.changed)
    builder = KubectlBuilder()
    mine = ScopedFolders(after, tmp_path / "head", builder, "head", scope)
    other = ScopedFolders(before, tmp_path / "base", builder, "base", scope)
    repositories = FleetWalk(mine).find_repositories(["hub"])
    walk = FleetWalk(mine, repositories, follow=Follow(scope, mine, other, set())).walk(sorted(scope.clusters))
    # THEN everything the changed Kustomization applies is walked: both spokes' chains and what they lead to
    folders = {application.folder for application in walk.applications}
    assert {"platform/spokes", "platform/extra/a", "platform/extra/b"} <= folders


@needs_kubectl
def test_a_folder_a_differing_kustomization_applies_is_built_whole(tmp_path: Path) -> None:
    # GIVEN spoke a's extra folder changed, and the hub's spokes Kustomization prunes no more
    before = fleet()
    documents = list(yaml.safe_load_all(before["platform/clusters/hub/sync.yaml"]))
    documents[2]["spec"]["prune"] = False
    after = {
        **before,
        "platform/clusters/hub/sync.yaml": yaml.safe_dump_all(documents),
        "platform/extra/a/extra.yaml": config_map("extra-a", "2"),
    }
    scope = Scope(changed_files(before, after))
    for files in (before, after):
        scope.add(Index(files), scope.changed)
    builder = KubectlBuilder()
    mine = ScopedFolders(after, tmp_path / "head", builder, "head", scope)
    other = ScopedFolders(before, tmp_path / "base", builder, "base", scope)
    repositories = FleetWalk(mine).find_repositories(["hub"])
    walk = FleetWalk(mine, repositories, follow=Follow(scope, mine, other, set())).walk(sorted(scope.clusters))
    # THEN the spokes' folder, which only spoke a's change makes dirty, is built whole: spoke b's chain is walked too
    folders = {application.folder for application in walk.applications}
    assert {"platform/extra/a", "platform/extra/b"} <= folders


def example_dist() -> dict[str, str]:
    return {path.relative_to(ROOT / "dist").as_posix(): path.read_text() for path in (ROOT / "dist").rglob("*.yaml")}


OVERLAY = "platform/clusters/production-usw2/overlays/app-compositions/kustomization.yaml"
COMPOSITIONS = "platform/infrastructure/configs/app-compositions/base/app-compositions.yaml"


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        # an overlay of the Compositions, a Composition, and a new overlay of them (naming no definition kind)
        (OVERLAY, "toFieldPath: spec.forProvider.region", "toFieldPath: spec.forProvider.regionName"),
        (COMPOSITIONS, "toFieldPath: spec.forProvider.region", "toFieldPath: spec.forProvider.regionName"),
        (
            "platform/clusters/production-euw1/overlays/app-compositions/kustomization.yaml",
            None,
            kustomization("../../../../infrastructure/configs/app-compositions/base", commonLabels={"team": "data"}),
        ),
    ],
)
def test_definitions_are_read_again_when_a_changed_file_may_hold_or_overlay_one(
    path: str, old: str | None, new: str
) -> None:
    before = example_dist()
    after = dict(before)
    if old is None:
        after[path] = new
    else:
        assert old in before[path]
        after[path] = before[path].replace(old, new)
    first = Definitions(before)
    second = Definitions(after, base=first, changed=changed_files(before, after))
    assert not second.same
    assert changed_kinds(first.definitions, second.definitions)
    assert second.definitions == Definitions(after).definitions


def test_definitions_are_not_read_again_when_no_changed_file_may_hold_or_overlay_one() -> None:
    before = example_dist()
    [path] = [path for path in before if path.endswith("overlays/metrics-server/kustomization.yaml")]
    after = {**before, path: before[path] + "commonLabels:\n  team: platform\n"}
    first = Definitions(before)
    second = Definitions(after, base=first, changed=changed_files(before, after))
    # THEN the change reaches the changed file alone, and no tree's definitions were read to know it
    assert reached({path}, (first, second)) == {path}
    assert "definitions" not in vars(first) and "definitions" not in vars(second)
    # AND when asked for, the definitions are read once, for both
    assert second.definitions is first.definitions
    assert second.definitions == Definitions(after).definitions


def test_the_trees_compared_parse_a_kustomization_file_they_share_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the folders of two trees that differ in one file, and share what they read of kustomization files
    before = fleet()
    after = {**before, "platform/extra/a/extra.yaml": config_map("extra-a", "2")}
    scope = Scope(changed_files(before, after))
    shared = Shared()
    builder = KubectlBuilder()
    trees = [
        ScopedFolders(files, tmp_path / name, builder, name, scope, shared)
        for name, files in (("base", before), ("head", after))
    ]
    parsed: list[str] = []
    real = objects.load_documents
    monkeypatch.setattr(objects, "load_documents", lambda text: parsed.append(text) or real(text))
    # WHEN both read what the spokes' folder lists
    for folders in trees:
        assert folders.inputs("platform/spokes") >= {"platform/spokes/a/chain.yaml", "platform/spokes/b/chain.yaml"}
    # THEN each kustomization file was parsed for one tree only
    assert sorted(parsed) == sorted(
        {before[path] for path in before if path.startswith("platform/spokes/") and path.endswith("kustomization.yaml")}
    )


def test_definitions_are_those_of_reading_every_file() -> None:
    # GIVEN the example's dist/: Compositions, XRDs and Functions, a cluster's overlay that patches its
    # Compositions, and another's that names no definition kind
    files = example_dist()
    other = "platform/clusters/production-euw1/overlays/app-compositions/kustomization.yaml"
    files[other] = kustomization("../../../../infrastructure/configs/app-compositions/base", commonLabels={"a": "b"})
    found = Definitions(files).definitions
    # THEN they are what reading every file finds, both overlays' Compositions among them
    assert found == definitions(Texts(files))
    assert {OVERLAY, other} <= {document.file for document in found}
