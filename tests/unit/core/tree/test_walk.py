"""Tests for fluxplane.core.tree.walk: which objects land on which cluster and what applied each, kubeConfig,
sources, the problems found on the way, and where the repositories' content lives."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from fluxplane.core.tree import Contested, DistRepository, FleetWalk, Key, MissingPath, MissingSource, Walk

FLEET = "ssh://git@example.com/org/fleet.git"
SHOP = "https://github.com/org/shop.git"
Docs = dict[str, list[dict[str, Any]]]


def kustomization(*resources: str) -> list[dict[str, Any]]:
    return [{"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": list(resources)}]


def source(name: str = "flux-system", namespace: str = "flux-system", url: str = FLEET) -> dict[str, Any]:
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"url": url, "ref": {"branch": "main"}},
    }


def ks(
    name: str, path: str, namespace: str = "flux-system", source: str = "flux-system", **spec: Any
) -> dict[str, Any]:
    ref = {"kind": "GitRepository", "name": source}
    if namespace != "flux-system" and source == "flux-system":
        ref["namespace"] = "flux-system"
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"path": path, "sourceRef": ref, "prune": True, **spec},
    }


def config_map(name: str, namespace: str | None = None, **data: str) -> dict[str, Any]:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


def kube_config(secret: str) -> dict[str, Any]:
    return {"secretRef": {"name": secret, "key": "value"}}


def fleet(platform: str = "./dist/platform", workloads: str = "./dist/workloads") -> Docs:
    """A hub that applies an app with its variables and bootstraps spoke ``a`` through kubeConfig; ``a`` applies
    its tenant ``shop`` from the workloads folder, whose own repository is not fluxplane's."""
    variables = {"substituteFrom": [{"kind": "ConfigMap", "name": "cluster-vars"}]}
    return {
        "platform/clusters/hub/kustomization.yaml": kustomization("flux-system", "vars.yaml", "infrastructure.yaml"),
        "platform/clusters/hub/flux-system/kustomization.yaml": kustomization("gotk-sync.yaml"),
        "platform/clusters/hub/flux-system/gotk-sync.yaml": [source(), ks("flux-system", f"{platform}/clusters/hub")],
        "platform/clusters/hub/vars.yaml": [config_map("cluster-vars", "flux-system", cluster_name="hub")],
        "platform/clusters/hub/infrastructure.yaml": [
            ks("app", f"{platform}/apps/app", postBuild=variables),
            ks("spokes", f"{platform}/spokes"),
        ],
        "platform/apps/app/kustomization.yaml": kustomization("app.yaml"),
        "platform/apps/app/app.yaml": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}},
            config_map("app", "apps", cluster="${cluster_name}"),
        ],
        "platform/spokes/kustomization.yaml": kustomization("a.yaml"),
        "platform/spokes/a.yaml": [
            ks(
                "flux-sync", f"{platform}/clusters/a/flux-system", namespace="a", kubeConfig=kube_config("a-kubeconfig")
            ),
            ks(
                "tools",
                f"{platform}/apps/app",
                namespace="a",
                kubeConfig=kube_config("a-kubeconfig"),
                targetNamespace="tools",
            ),
            ks("elsewhere", f"{platform}/apps/app", namespace="b", kubeConfig=kube_config("b-kubeconfig")),
        ],
        "platform/clusters/a/kustomization.yaml": kustomization("flux-system", "tenants.yaml"),
        "platform/clusters/a/flux-system/kustomization.yaml": kustomization("gotk-sync.yaml"),
        "platform/clusters/a/flux-system/gotk-sync.yaml": [source(), ks("flux-system", f"{platform}/clusters/a")],
        "platform/clusters/a/tenants.yaml": [ks("tenants", f"{workloads}/clusters/a")],
        "workloads/clusters/a/kustomization.yaml": kustomization("shop.yaml"),
        "workloads/clusters/a/shop.yaml": [
            source("shop", "shop", SHOP),
            ks("shop", "./deploy", namespace="shop", source="shop", targetNamespace="shop"),
        ],
    }


def landed(walk: Walk, cluster: str) -> set[tuple[str, str, str, str | None]]:
    """(kind, namespace, name, the Kustomization that applied it or None for the bootstrap) on ``cluster``."""
    return {
        (placed.key.kind, placed.namespace, placed.key.name, placed.applier.key.name if placed.applier else None)
        for placed in walk.on(cluster)
    }


def test_each_object_lands_on_its_cluster_with_the_kustomization_that_applied_it() -> None:
    walk = FleetWalk(fleet()).walk()
    # THEN the hub has its entry folder (from its bootstrap, and again from its flux-system Kustomization), the app
    # and the spokes' Kustomizations
    entry = {
        ("GitRepository", "flux-system", "flux-system"),
        ("Kustomization", "flux-system", "flux-system"),
        ("ConfigMap", "flux-system", "cluster-vars"),
        ("Kustomization", "flux-system", "app"),
        ("Kustomization", "flux-system", "spokes"),
    }
    assert landed(walk, "hub") == {
        *((*key, applier) for key in entry for applier in (None, "flux-system")),
        ("Namespace", "", "apps", "app"),
        ("ConfigMap", "apps", "app", "app"),
        ("Kustomization", "a", "flux-sync", "spokes"),
        ("Kustomization", "a", "tools", "spokes"),
        ("Kustomization", "b", "elsewhere", "spokes"),
    }
    # AND spoke a has what the hub applies there through kubeConfig (tools moved into its targetNamespace, the
    # cluster-scoped Namespace left alone), its own entry folder, and its tenant from the workloads folder
    assert landed(walk, "a") == {
        ("GitRepository", "flux-system", "flux-system", "flux-sync"),
        ("Kustomization", "flux-system", "flux-system", "flux-sync"),
        ("Namespace", "", "apps", "tools"),
        ("ConfigMap", "tools", "app", "tools"),
        *(
            (kind, namespace, name, applier)
            for applier in (None, "flux-system")
            for kind, namespace, name in [
                ("GitRepository", "flux-system", "flux-system"),
                ("Kustomization", "flux-system", "flux-system"),
                ("Kustomization", "flux-system", "tenants"),
            ]
        ),
        ("GitRepository", "shop", "shop", "tenants"),
        ("Kustomization", "shop", "shop", "tenants"),
    }
    # AND a kubeConfig whose cluster the tree does not hold reaches a remote cluster of its own
    assert landed(walk, "remote b/b-kubeconfig") == {
        ("Namespace", "", "apps", "elsewhere"),
        ("ConfigMap", "apps", "app", "elsewhere"),
    }
    # AND the tenant's own repository is not followed, which is no problem
    assert walk.problems == []
    assert {application.folder: application.repository for application in walk.applications}[
        "workloads/clusters/a"
    ] == "workloads"


def test_a_clusters_own_walk_lists_kube_config_kustomizations_without_following_them() -> None:
    tree = FleetWalk(fleet())
    walk = tree.local("hub")
    assert {application.cluster for application in walk.applications} == {"hub"}
    remote = {placed.key.name: placed for placed in walk.on("hub") if placed.key.namespace in ("a", "b")}
    # the folder each applies is known, and the cluster it reaches: the one whose entry folder goes through the
    # same kubeConfig (flux-sync hands a its bootstrap), else the one its namespace names, else a remote one
    assert walk.folders[remote["flux-sync"]] == "platform/clusters/a/flux-system"
    assert [walk.target(remote[name]) for name in ("flux-sync", "tools", "elsewhere")] == [
        "a",
        "a",
        "remote b/b-kubeconfig",
    ]
    assert tree.clusters == ["a", "hub"]


def test_a_kube_config_reaches_the_cluster_its_namespace_names_when_nothing_else_says() -> None:
    documents = fleet()
    documents["platform/spokes/a.yaml"] = [
        ks("flux-sync", "./dist/platform/apps/app", namespace="a", kubeConfig=kube_config("a-access"))
    ]
    walk = FleetWalk(documents).walk()
    assert ("ConfigMap", "apps", "app", "flux-sync") in landed(walk, "a")


def test_a_kustomization_waits_for_a_source_applied_later() -> None:
    # GIVEN a hub Kustomization whose GitRepository is in the app's folder, applied one step later
    documents = fleet()
    documents["platform/clusters/hub/infrastructure.yaml"].append(ks("late", "./dist/platform/spokes", source="late"))
    documents["platform/apps/app/app.yaml"].append(source("late"))
    walk = FleetWalk(documents).walk()
    # THEN it is followed once its source is there
    assert ("Kustomization", "a", "flux-sync", "late") in landed(walk, "hub")
    assert walk.problems == []


def test_problems_are_data_on_the_kustomization_and_field() -> None:
    # GIVEN a path that names no folder, a path outside what fluxplane writes in the fleet repository, and a
    # sourceRef that names no source
    documents = fleet()
    documents["platform/clusters/hub/infrastructure.yaml"] += [
        ks("nowhere", "./dist/platform/nowhere"),
        ks("outside", "./no/such/dir"),
        ks("sourceless", "./dist/platform/apps/app", source="fleet"),
    ]
    walk = FleetWalk(documents).walk()
    found = sorted(
        (problem.placed.cluster, problem.placed.key.name, problem.field, problem.message) for problem in walk.problems
    )
    assert found == [
        ("hub", "nowhere", "spec.path", "folder './dist/platform/nowhere' does not exist in the tree"),
        (
            "hub",
            "outside",
            "spec.path",
            f"folder './no/such/dir' does not exist in the tree: it lies outside what fluxplane writes in repository "
            f"'{FLEET}' (./dist/platform, ./dist/workloads)",
        ),
        ("hub", "sourceless", "spec.sourceRef.name", "GitRepository 'flux-system/fleet' not found in cluster 'hub'"),
    ]
    missing = next(problem for problem in walk.problems if isinstance(problem, MissingSource))
    assert (missing.kind, missing.namespace, missing.name) == ("GitRepository", "flux-system", "fleet")
    outside = next(p for p in walk.problems if isinstance(p, MissingPath) and p.location.folder is None)
    assert (outside.placed.item.path, outside.placed.item.position) == ("platform/clusters/hub/infrastructure.yaml", 4)


def test_the_repositories_are_read_from_the_bootstrap_of_each_entry_folder() -> None:
    # THEN the platform lies where each cluster's flux-system Kustomization finds its entry folder, and the
    # workloads where another Kustomization of an entry folder finds the other folder holding clusters/<cluster>
    assert FleetWalk(fleet()).repositories == (
        DistRepository("platform", FLEET, "dist/platform", "main"),
        DistRepository("workloads", FLEET, "dist/workloads", "main"),
    )


def test_a_repository_whose_content_lives_under_deploy_is_walked_the_same() -> None:
    # GIVEN the fleet with the platform's content under deploy/ and the workloads' under workloads/ of the
    # fleet repository (repositories.platform.path: deploy)
    moved = FleetWalk(fleet("./deploy", "./workloads"))
    # THEN the repositories are found there, and every object lands where it does in the dist/ layout
    assert moved.repositories == (
        DistRepository("platform", FLEET, "deploy", "main"),
        DistRepository("workloads", FLEET, "workloads", "main"),
    )

    def placements(walk: Walk) -> set[tuple[str, str | None, int, str]]:
        return {
            (cluster, placed.item.path, placed.item.position, placed.namespace)
            for cluster, placed_here in walk.placed.items()
            for placed in placed_here
        }

    walk = moved.walk()
    assert walk.problems == []
    assert placements(walk) == placements(FleetWalk(fleet()).walk())
    # AND told that the content lies under dist/, every path into the fleet repository is outside it
    stale = FleetWalk(fleet("./deploy", "./workloads"), [DistRepository("platform", FLEET, "dist/platform")]).walk()
    assert {(type(p).__name__, p.placed.key.name) for p in stale.problems} == {
        ("MissingPath", name) for name in ("flux-system", "app", "spokes", "tenants")
    }


def test_a_workloads_repository_of_its_own_is_read_from_the_tenants_source() -> None:
    documents = fleet(workloads="./tenants")
    other = "ssh://git@example.com/org/workloads.git"
    documents["platform/clusters/a/tenants.yaml"] = [
        source("workloads", url=other),
        ks("tenants", "./tenants/clusters/a", source="workloads"),
    ]
    tree = FleetWalk(documents)
    assert tree.repositories == (
        DistRepository("platform", FLEET, "dist/platform", "main"),
        DistRepository("workloads", other, "tenants", "main"),
    )
    assert ("Kustomization", "shop", "shop", "tenants") in landed(tree.walk(), "a")


def test_where_the_bootstraps_disagree_most_clusters_win() -> None:
    # GIVEN three clusters, one of whose bootstrap names a path that is not where the others find theirs
    documents = fleet()
    for cluster in ("b", "c"):
        documents[f"platform/clusters/{cluster}/kustomization.yaml"] = kustomization("gotk-sync.yaml")
        documents[f"platform/clusters/{cluster}/gotk-sync.yaml"] = [
            source(),
            ks("flux-system", f"./dist/{'platfrom' if cluster == 'c' else 'platform'}/clusters/{cluster}"),
        ]
    walk = FleetWalk(documents).walk()
    # THEN the platform lies at dist/platform, and the odd bootstrap is a problem
    assert walk.fleet.repositories[0] == DistRepository("platform", FLEET, "dist/platform", "main")
    assert [(p.placed.cluster, p.message) for p in walk.problems] == [
        (
            "c",
            f"folder './dist/platfrom/clusters/c' does not exist in the tree: it lies outside what fluxplane writes "
            f"in repository '{FLEET}' (./dist/platform, ./dist/workloads)",
        )
    ]


def test_the_repositories_can_be_read_from_some_clusters_alone() -> None:
    # GIVEN the fleet with a third cluster whose bootstrap is wrong WHEN only the others are asked THEN they decide
    documents = fleet()
    documents["platform/clusters/c/kustomization.yaml"] = kustomization("gotk-sync.yaml")
    documents["platform/clusters/c/gotk-sync.yaml"] = [source(), ks("flux-system", "./elsewhere/clusters/c")]
    tree = FleetWalk(documents)
    assert tree.find_repositories(["a"]) == FleetWalk(fleet()).repositories
    assert tree.find_repositories(["c"]) == (DistRepository("platform", FLEET, "elsewhere", "main"),)


def test_follow_leaves_the_folders_it_refuses_unwalked() -> None:
    # GIVEN a walk told to go nowhere but into the spokes' folder and spoke a's entry and tenants
    asked: list[tuple[str, str]] = []

    def follow(placed: Any, folder: str) -> bool:
        asked.append((placed.key.name, folder))
        return folder == "platform/spokes" or folder.startswith(("platform/clusters/a", "workloads/"))

    walk = FleetWalk(fleet(), follow=follow).walk()
    # THEN the app is never built, on the hub or through kubeConfig, and what the followed folders hold is placed
    assert "platform/apps/app" not in {application.folder for application in walk.applications}
    assert ("app", "platform/apps/app") in asked
    assert ("Kustomization", "shop", "shop", "tenants") in landed(walk, "a")
    assert ("ConfigMap", "apps", "app", "app") not in landed(walk, "hub")


def test_post_build_variables_are_substituted_when_asked() -> None:
    documents = fleet()
    walk = FleetWalk(documents, substitute=True).walk()
    data = {
        (placed.cluster, placed.applier.key.name if placed.applier else None): placed.doc["data"]
        for cluster in walk.placed
        for placed in walk.on(cluster)
        if placed.key.name == "app" and placed.key.kind == "ConfigMap"
    }
    # the hub's app has its cluster's variables; what tools applies has no postBuild, so it is as written
    assert data[("hub", "app")] == {"cluster": "hub"}
    assert data[("a", "tools")] == {"cluster": "${cluster_name}"}
    # a variable source that is not in the tree leaves the variables as written
    documents["platform/clusters/hub/vars.yaml"] = []
    walk = FleetWalk(documents, substitute=True).walk()
    assert [p.doc["data"] for p in walk.on("hub") if p.key.name == "app" and p.key.kind == "ConfigMap"] == [
        {"cluster": "${cluster_name}"}
    ]
    # AND without substitution the documents are the tree's own
    documents = fleet()
    placed = FleetWalk(documents).walk().objects("hub")[Key("", "ConfigMap", "apps", "app")]
    assert placed.doc is documents["platform/apps/app/app.yaml"][1]


def test_a_folder_applied_with_other_variables_gets_its_own_and_a_walk_sharing_its_builds_reuses_them() -> None:
    # GIVEN the hub applying the app's folder twice, the second time with a variable of its own
    documents = fleet()
    documents["platform/clusters/hub/infrastructure.yaml"].append(
        ks("app-eu", "./dist/platform/apps/app", postBuild={"substitute": {"cluster_name": "eu"}})
    )
    first = FleetWalk(documents, substitute=True)

    def substituted(walk: Walk) -> dict[str | None, Any]:
        return {
            placed.applier.key.name if placed.applier else None: placed.doc
            for placed in walk.on("hub")
            if placed.key.name == "app" and placed.key.kind == "ConfigMap"
        }

    before = substituted(first.walk())
    # THEN each application has its own variables
    assert {name: doc["data"] for name, doc in before.items()} == {
        "app": {"cluster": "hub"},
        "app-eu": {"cluster": "eu"},
    }
    # AND a second walk over the same builds (the guard's walks of the tree before and after a change) takes the
    # documents substituted by the first, not substituted again
    after = substituted(FleetWalk(first.folders, substitute=True).walk())
    assert all(after[name] is doc for name, doc in before.items())


def test_applied_pairs_each_object_with_its_kustomization() -> None:
    pairs = {(applier.key.name, placed.key.name) for applier, placed in FleetWalk(fleet()).applied("hub")}
    assert ("app", "app") in pairs
    assert ("spokes", "flux-sync") in pairs
    assert not any(applier == "flux-sync" for applier, _ in pairs)


def contested(walk: Walk, cluster: str) -> set[tuple[str, str | None, str | None]]:
    """(object, its first writer, its other writer) of each object two writers apply on ``cluster``; None for the
    entry point."""

    def writer(found: Contested, placed: Any) -> str | None:
        applier = walk.writer(placed)
        assert found.cluster == cluster
        return None if applier is None else applier.key.name

    return {
        (found.key.shown, writer(found, found.placed), writer(found, found.other)) for found in walk.contested(cluster)
    }


def test_the_entry_point_is_one_writer_and_a_hand_over_that_does_not_prune_is_none() -> None:
    # GIVEN the hub handing spoke a its bootstrap (the same documents a's entry point applies) without pruning them
    documents = fleet()
    documents["platform/spokes/a.yaml"][0]["spec"]["prune"] = False
    walk = FleetWalk(documents).walk()
    # THEN the entry folder, applied by the bootstrap and again by its own Kustomization, has one writer
    entry = [placed for placed in walk.on("hub") if placed.item.path == "platform/clusters/hub/vars.yaml"]
    assert len(entry) == 2
    assert [walk.writer(placed) for placed in entry] == [None, None]
    # AND another Kustomization of the cluster is the writer of what it applies
    app = next(placed for placed in walk.on("hub") if placed.key.name == "app" and placed.key.kind == "ConfigMap")
    writer = walk.writer(app)
    assert writer is not None and writer.key.name == "app"
    # AND no object has two writers, on any cluster
    assert {cluster: contested(walk, cluster) for cluster in walk.placed} == {cluster: set() for cluster in walk.placed}


def test_a_hand_over_that_prunes_is_a_second_writer() -> None:
    # GIVEN the hub's flux-sync applying a's bootstrap and pruning it: when it stops, it deletes what a's Flux runs on
    walk = FleetWalk(fleet()).walk()
    # THEN a's sync objects have two writers, its entry point and the hub's flux-sync
    assert contested(walk, "a") == {
        ("GitRepository flux-system/flux-system", None, "flux-sync"),
        ("Kustomization flux-system/flux-system", None, "flux-sync"),
    }
    assert contested(walk, "hub") == set()


def test_an_object_two_kustomizations_apply_on_a_cluster_has_two_writers() -> None:
    # GIVEN a second Kustomization of the hub applying its own version of the app's ConfigMap, and the app's Namespace
    documents = fleet()
    documents["platform/spokes/a.yaml"][0]["spec"]["prune"] = False
    documents["platform/clusters/hub/infrastructure.yaml"].append(ks("again", "./dist/platform/apps/again"))
    documents["platform/apps/again/again.yaml"] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}},
        config_map("app", "apps", cluster="mine"),
    ]
    # AND a third one applying the entry point's variables
    documents["platform/clusters/hub/infrastructure.yaml"].append(ks("vars", "./dist/platform/apps/vars"))
    documents["platform/apps/vars/vars.yaml"] = [config_map("cluster-vars", "flux-system", cluster_name="other")]
    walk = FleetWalk(documents).walk()
    # THEN each is listed once, with the first writer and the other, the same document too (both prune)
    assert contested(walk, "hub") == {
        ("Namespace apps", "app", "again"),
        ("ConfigMap apps/app", "app", "again"),
        ("ConfigMap flux-system/cluster-vars", None, "vars"),
    }
    # AND what the hub applies on a through kubeConfig (into namespace tools) takes nothing of a's
    assert contested(walk, "a") == set()


def test_the_package_imports_only_the_core_layer() -> None:
    # fluxplane.core.tree reads documents and knows dist/'s layout, nothing above it (graph, validate, diff, synth)
    allowed = {"fluxplane.errors", "fluxplane.core.codec", "fluxplane.core.layout"}
    package = Path(__file__).resolve().parents[3] / "src" / "fluxplane" / "tree"
    imported: set[str] = set()
    for module in package.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    ours = {name for name in imported if name.startswith("fluxplane") and not name.startswith("fluxplane.core.tree")}
    assert ours <= allowed
