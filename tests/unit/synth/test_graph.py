"""The Flux dependency graph: from a hand-built tree and the example fleet, its Mermaid and dot forms,
the README synth writes in each cluster folder, and ``fluxplane graph`` through the CLI."""

from __future__ import annotations

import itertools
import stat
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.charts.spokes import chain_steps
from fluxplane.cli import EXIT_BAD_INPUT, main
from fluxplane.core.tree import DistRepository, LazyDocuments
from fluxplane.core.tree.objects import Item
from fluxplane.core.tree.walk import Application, Placed
from fluxplane.synth import load_plan, render_plan
from fluxplane.synth.graph import (
    Edge,
    FluxNode,
    FluxTree,
    Graph,
    cluster_graph,
    dot,
    mermaid,
    readme,
    waits,
)
from fluxplane.synth.graph import _key as doc_key
from fluxplane.synth.graph import _placed_key as placed_key
from tests.conftest import ROOT

#: The bootstrap steps of a cluster of the example (the flux2 chart, sealed Git credentials).
STEPS = chain_steps("flux2-chart", git_credentials=True)

Docs = dict[str, list[dict[str, Any]]]


def _kustomize(*resources: str, patches: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    config: dict[str, Any] = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": list(resources),
    }
    if patches:
        config["patches"] = patches
    return [config]


def _ks(name: str, path: str, namespace: str = "flux-system", **spec: Any) -> dict[str, Any]:
    source = {"kind": "GitRepository", "name": "flux-system"}
    if namespace != "flux-system":
        source["namespace"] = "flux-system"
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"interval": "10m", "path": path, "sourceRef": source, "prune": True, **spec},
    }


def _hr(name: str, namespace: str = "flux-system", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"interval": "30m", **spec},
    }


def _gotk(cluster: str) -> list[dict[str, Any]]:
    repository = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "flux-system", "namespace": "flux-system"},
        "spec": {"url": "ssh://git@example.com/fleet.git"},
    }
    return [repository, _ks("flux-system", f"./dist/platform/clusters/{cluster}")]


KUBECONFIG = {"secretRef": {"name": "a-kubeconfig", "key": "value"}}
HR_CHECK = {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "namespace": "flux-system"}


def small_tree() -> Docs:
    """A hub that runs crossplane and bootstraps spoke ``a``; ``a`` runs cert-manager (a staging overlay
    deletes trust-manager from its base) and its configs."""
    return {
        # the hub
        "platform/clusters/hub/kustomization.yaml": _kustomize("flux-system", "infrastructure.yaml"),
        "platform/clusters/hub/flux-system/kustomization.yaml": _kustomize("gotk-sync.yaml"),
        "platform/clusters/hub/flux-system/gotk-sync.yaml": _gotk("hub"),
        "platform/clusters/hub/infrastructure.yaml": [
            _ks(
                "crossplane",
                "./dist/platform/infrastructure/controllers/crossplane/base",
                healthChecks=[{**HR_CHECK, "name": "crossplane"}],
            ),
            _ks(
                "spoke-bootstrap",
                "./dist/platform/spokes",
                dependsOn=[{"name": "crossplane"}],
                healthChecks=[
                    {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization", "name": "flux-sync"}
                ],
            ),
        ],
        "platform/infrastructure/controllers/crossplane/base/kustomization.yaml": _kustomize("crossplane.yaml"),
        "platform/infrastructure/controllers/crossplane/base/crossplane.yaml": [_hr("crossplane")],
        "platform/spokes/kustomization.yaml": _kustomize("a"),
        "platform/spokes/a/kustomization.yaml": _kustomize("bootstrap.yaml"),
        "platform/spokes/a/bootstrap.yaml": [
            _ks(
                "flux",
                "./dist/platform/spokes/a/flux",
                namespace="a",
                healthChecks=[{**HR_CHECK, "name": "flux", "namespace": "a"}],
            ),
            _ks(
                "flux-sync",
                "./dist/platform/clusters/a/flux-system",
                namespace="a",
                dependsOn=[{"name": "flux"}],
                kubeConfig=KUBECONFIG,
                wait=True,
            ),
        ],
        "platform/spokes/a/flux/kustomization.yaml": _kustomize("flux.yaml"),
        "platform/spokes/a/flux/flux.yaml": [_hr("flux", namespace="a", kubeConfig=KUBECONFIG)],
        # the spoke
        "platform/clusters/a/kustomization.yaml": _kustomize("flux-system", "infrastructure.yaml"),
        "platform/clusters/a/flux-system/kustomization.yaml": _kustomize("gotk-sync.yaml"),
        "platform/clusters/a/flux-system/gotk-sync.yaml": _gotk("a"),
        "platform/clusters/a/infrastructure.yaml": [
            _ks(
                "cert-manager",
                "./dist/platform/infrastructure/controllers/cert-manager/staging",
                healthChecks=[{**HR_CHECK, "name": "cert-manager"}],
            ),
            _ks(
                "cert-manager-configs",
                "./dist/platform/infrastructure/configs/cert-manager-configs",
                dependsOn=[{"name": "cert-manager"}],
                wait=True,
            ),
        ],
        "platform/infrastructure/controllers/cert-manager/base/kustomization.yaml": _kustomize("cert-manager.yaml"),
        "platform/infrastructure/controllers/cert-manager/base/cert-manager.yaml": [
            _hr("cert-manager"),
            _hr("csi-driver", dependsOn=[{"name": "cert-manager"}]),
            _hr("trust-manager", dependsOn=[{"name": "cert-manager"}]),
        ],
        "platform/infrastructure/controllers/cert-manager/staging/kustomization.yaml": _kustomize(
            "../base",
            patches=[
                {
                    "patch": "$patch: delete\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
                    "metadata:\n  name: trust-manager\n  namespace: flux-system\n"
                }
            ],
        ),
        # no kustomization.yaml: Flux generates one from the folder's files
        "platform/infrastructure/configs/cert-manager-configs/issuer.yaml": [
            {"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer", "metadata": {"name": "letsencrypt"}}
        ],
    }


SPOKE_MERMAID = """\
flowchart LR
  subgraph side_hub["hub: builds and bootstraps a"]
    subgraph group_hub_ks_a__flux["./dist/platform/spokes/a/flux"]
      hub_ks_a__flux["Kustomization/flux<br/>namespace: a<br/>waits: HelmRelease/flux"]
      hub_hr_a__flux(["HelmRelease/flux<br/>namespace: a"])
    end
    hub_ks_a__flux_sync["Kustomization/flux-sync<br/>namespace: a<br/>waits: all it applies"]
  end
  subgraph side_cluster["a"]
    subgraph group_ks_cert_manager["./dist/platform/infrastructure/controllers/cert-manager/staging"]
      ks_cert_manager["Kustomization/cert-manager<br/>waits: HelmRelease/cert-manager"]
      hr_cert_manager(["HelmRelease/cert-manager"])
      hr_csi_driver(["HelmRelease/csi-driver"])
    end
    ks_cert_manager_configs["Kustomization/cert-manager-configs<br/>waits: all it applies"]
    ks_flux_system["Kustomization/flux-system"]
  end
  hr_cert_manager --> hr_csi_driver
  hub_ks_a__flux --> hub_ks_a__flux_sync
  hub_ks_a__flux_sync -. applies .-> ks_flux_system
  ks_cert_manager --> ks_cert_manager_configs
"""

SPOKE_DOT = """\
digraph "a" {
  rankdir=LR;
  node [shape=box];
  subgraph "cluster_side_hub" {
    label="hub: builds and bootstraps a";
    subgraph "cluster_group_hub_ks_a__flux" {
      label="./dist/platform/spokes/a/flux";
      "hub_ks_a__flux" [label="Kustomization/flux\\nnamespace: a\\nwaits: HelmRelease/flux"];
      "hub_hr_a__flux" [label="HelmRelease/flux\\nnamespace: a", style=rounded];
    }
    "hub_ks_a__flux_sync" [label="Kustomization/flux-sync\\nnamespace: a\\nwaits: all it applies"];
  }
  subgraph "cluster_side_cluster" {
    label="a";
    subgraph "cluster_group_ks_cert_manager" {
      label="./dist/platform/infrastructure/controllers/cert-manager/staging";
      "ks_cert_manager" [label="Kustomization/cert-manager\\nwaits: HelmRelease/cert-manager"];
      "hr_cert_manager" [label="HelmRelease/cert-manager", style=rounded];
      "hr_csi_driver" [label="HelmRelease/csi-driver", style=rounded];
    }
    "ks_cert_manager_configs" [label="Kustomization/cert-manager-configs\\nwaits: all it applies"];
    "ks_flux_system" [label="Kustomization/flux-system"];
  }
  "hr_cert_manager" -> "hr_csi_driver";
  "hub_ks_a__flux" -> "hub_ks_a__flux_sync";
  "hub_ks_a__flux_sync" -> "ks_flux_system" [style=dashed, label="applies"];
  "ks_cert_manager" -> "ks_cert_manager_configs";
}
"""


def test_mermaid_of_a_spoke_shows_the_hub_chain_boxes_and_gates() -> None:
    # GIVEN the small tree WHEN spoke a is drawn with its hub
    graph = cluster_graph(small_tree(), "a", hub="hub")
    # THEN the hub's chain for a (what reaches a through kubeConfig) is a box of its own, its flux-sync
    # applies a's root, HelmReleases sit with the Kustomization that applies them, the overlay's
    # $patch: delete removed trust-manager, and dependsOn between HelmReleases is drawn too
    assert mermaid(graph) == SPOKE_MERMAID


def test_dot_of_a_spoke() -> None:
    # GIVEN the small tree WHEN spoke a is drawn in dot THEN boxes are clusters and lines break with \n
    assert dot(cluster_graph(small_tree(), "a", hub="hub")) == SPOKE_DOT


def test_hub_graph_leaves_the_spokes_chains_to_the_spokes() -> None:
    # GIVEN the small tree WHEN the hub is drawn
    graph = cluster_graph(small_tree(), "hub", hub="hub")
    # THEN it holds the hub's own objects only, and no hub box
    assert graph == Graph(
        cluster="hub",
        nodes=(
            FluxNode(
                id="hr_crossplane",
                kind="HelmRelease",
                namespace="flux-system",
                name="crossplane",
                parent="ks_crossplane",
            ),
            FluxNode(
                id="ks_crossplane",
                kind="Kustomization",
                namespace="flux-system",
                name="crossplane",
                waits="HelmRelease/crossplane",
                path="./dist/platform/infrastructure/controllers/crossplane/base",
            ),
            FluxNode(
                id="ks_flux_system",
                kind="Kustomization",
                namespace="flux-system",
                name="flux-system",
                path="./dist/platform/clusters/hub",
            ),
            FluxNode(
                id="ks_spoke_bootstrap",
                kind="Kustomization",
                namespace="flux-system",
                name="spoke-bootstrap",
                waits="Kustomization/flux-sync",
                path="./dist/platform/spokes",
            ),
        ),
        edges=(Edge("ks_crossplane", "ks_spoke_bootstrap"),),
        hub=None,
    )


def test_without_a_hub_a_spoke_is_drawn_alone() -> None:
    # GIVEN the small tree WHEN a is drawn without naming the hub THEN there is no hub box
    graph = cluster_graph(small_tree(), "a")
    assert graph.hub is None
    assert [node.id for node in graph.nodes] == [
        "hr_cert_manager",
        "hr_csi_driver",
        "ks_cert_manager",
        "ks_cert_manager_configs",
        "ks_flux_system",
    ]


def test_folder_without_kustomization_file_builds_from_its_files() -> None:
    # GIVEN a folder holding a HelmRelease file and a subfolder with its own kustomization.yaml
    documents: Docs = {
        "platform/clusters/c/kustomization.yaml": _kustomize("flux-system", "apps.yaml"),
        "platform/clusters/c/flux-system/gotk-sync.yaml": _gotk("c"),
        "platform/clusters/c/apps.yaml": [_ks("apps", "./dist/platform/apps")],
        "platform/apps/one.yaml": [_hr("one")],
        "platform/apps/two/kustomization.yaml": _kustomize("two.yaml"),
        "platform/apps/two/two.yaml": [_hr("two")],
        "platform/apps/two/unlisted.yaml": [_hr("unlisted")],
    }
    # WHEN drawn THEN the Kustomization applies the file and what the subfolder lists, nothing else
    graph = cluster_graph(documents, "c")
    assert [(node.id, node.parent) for node in graph.nodes] == [
        ("hr_one", "ks_apps"),
        ("hr_two", "ks_apps"),
        ("ks_apps", None),
        ("ks_flux_system", None),
    ]


def test_ids_are_safe_and_unique() -> None:
    # GIVEN two names that make the same id once non-alphanumerics are replaced
    documents: Docs = {
        "platform/clusters/c/kustomization.yaml": _kustomize("flux-system", "apps.yaml"),
        "platform/clusters/c/flux-system/gotk-sync.yaml": _gotk("c"),
        "platform/clusters/c/apps.yaml": [
            _ks("a-b", "./dist/platform/x"),
            _ks("a.b", "./dist/platform/x", dependsOn=[{"name": "a-b"}]),
            _ks("end", "./dist/platform/x", namespace="team-1"),
        ],
    }
    # WHEN drawn THEN each id is distinct and made of letters, digits and underscores
    graph = cluster_graph(documents, "c")
    assert [node.id for node in graph.nodes] == ["ks_a_b", "ks_a_b_2", "ks_flux_system", "ks_team_1__end"]
    assert graph.edges == (Edge("ks_a_b", "ks_a_b_2"),)


@pytest.mark.parametrize(
    ("doc", "namespace"),
    [
        ({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization", "metadata": {"name": "a"}}, ""),
        ({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization", "metadata": {"name": "a"}}, "x"),
        ({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": {"name": 7}}, "team"),
        ({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": "none"}, ""),
        ({"apiVersion": "v1", "kind": "Kustomization", "metadata": {"name": "a"}}, ""),
        ({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "HelmRelease", "metadata": {"name": "a"}}, ""),
        ({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": ["HelmRelease"], "metadata": {"name": "a"}}, ""),
        ({"apiVersion": 2, "metadata": {"name": "a"}}, "x"),
    ],
)
def test_a_placed_object_s_graph_key_is_the_one_its_document_gives(doc: dict[str, Any], namespace: str) -> None:
    # GIVEN an object a walk placed in a namespace; WHEN the graph keys it from the walk's key
    placed = Placed("c", Item(doc, "f.yaml", 1), namespace, Application("c", "platform/clusters/c", None))
    # THEN it is the key the graph makes of the document itself
    assert placed_key(placed) == doc_key(doc, namespace)


def _moved(documents: Docs, old: str, new: str) -> Docs:
    """``documents`` with every Flux path under ``old`` moved under ``new`` (where the repository keeps them)."""
    return yaml.safe_load(yaml.safe_dump(documents).replace(f"path: {old}", f"path: {new}"))  # type: ignore[no-any-return]


def test_a_repository_whose_content_lives_under_deploy_is_drawn_the_same() -> None:
    # GIVEN the small tree with the platform's content under deploy/ of the fleet repository, not dist/platform/
    moved = _moved(small_tree(), "./dist/platform", "./deploy")
    # WHEN a is drawn, the repositories read from the tree or given THEN it is the same graph, with its paths
    expected = SPOKE_MERMAID.replace("./dist/platform", "./deploy")
    assert mermaid(cluster_graph(moved, "a", hub="hub")) == expected
    given = [DistRepository("platform", "ssh://git@example.com/fleet.git", "deploy")]
    assert mermaid(cluster_graph(moved, "a", hub="hub", repositories=given)) == expected
    # AND told that the content lives under dist/platform, the walk finds none of it past the entry folders
    stale = [DistRepository("platform", "ssh://git@example.com/fleet.git", "dist/platform")]
    assert [node.id for node in cluster_graph(moved, "a", repositories=stale).nodes] == [
        "ks_cert_manager",
        "ks_cert_manager_configs",
        "ks_flux_system",
    ]


def test_waits_names_the_gate() -> None:
    # GIVEN the gates a Kustomization can have THEN its label says what Flux checks
    check = {"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider"}
    assert waits({"wait": True, "healthChecks": [{**check, "name": "x"}]}) == "all it applies"
    assert (
        waits({"healthChecks": [{**check, "name": "a"}, {**check, "name": "b"}, {**HR_CHECK, "name": "c"}]})
        == "HelmRelease/c, Provider (2)"
    )
    # healthCheckExprs are evaluated only for what wait or healthChecks select: alone they gate nothing
    assert waits({"healthCheckExprs": [{**check, "current": "true"}]}) is None
    assert waits({}) is None


def test_readme_of_a_spoke() -> None:
    # GIVEN spoke a of the small tree WHEN its README is written
    text = readme(cluster_graph(small_tree(), "a", hub="hub"))
    # THEN a title, one paragraph and the Mermaid block
    assert text == (
        "# Cluster a\n\n"
        "The Flux entry point of cluster `a`: its `flux-system` Kustomization applies this folder. "
        "It is generated by `fluxplane synth` from `environments/`; change the definition, not these files. "
        "The graph shows the order Flux applies things in: an arrow leads from what must be ready to what depends "
        "on it (`dependsOn`), a box holds what a Kustomization applies, `waits:` names what Flux checks before it "
        "calls a Kustomization ready, and the `hub` box is the hub's chain that builds and bootstraps this cluster "
        "until its "
        "own Flux takes over. `fluxplane graph --cluster a` prints it.\n\n"
        f"```mermaid\n{SPOKE_MERMAID}```\n"
    )


# -- the example fleet ------------------------------------------------------------------------------


@cache
def rendered() -> dict[str, str]:
    return render_plan(load_plan(ROOT))


@cache
def example_tree() -> FluxTree:
    return FluxTree(LazyDocuments({}, rendered()), hub="hub")


def _flux_kustomizations(folder: str) -> list[dict[str, Any]]:
    return [
        doc
        for path, text in rendered().items()
        if path.startswith(folder) and path.endswith(".yaml")
        for doc in yaml.safe_load_all(text)
        if doc and doc["kind"] == "Kustomization" and doc["apiVersion"].startswith("kustomize.toolkit")
    ]


def _names(graph: Graph, hub: bool) -> dict[str, str]:
    return {node.id: node.name for node in graph.nodes if node.kind == "Kustomization" and node.hub == hub}


def _nested(graph: Graph) -> dict[str, str]:
    return {node.id: node.parent for node in graph.nodes if node.kind == "Kustomization" and node.parent}


def test_example_hub_graph_is_exactly_its_depends_on_chain() -> None:
    # GIVEN the hub's Kustomizations as synth writes them
    written = _flux_kustomizations("platform/clusters/hub/")
    expected = {
        (dependency["name"], doc["metadata"]["name"])
        for doc in written
        for dependency in doc["spec"].get("dependsOn", [])
    }
    # WHEN the hub is drawn
    graph = example_tree().graph("hub")
    # THEN its top-level Kustomizations and their dependsOn edges are exactly those
    names = {id_: name for id_, name in _names(graph, hub=False).items() if id_ not in _nested(graph)}
    assert sorted(names.values()) == sorted(doc["metadata"]["name"] for doc in written)
    assert {(names[e.source], names[e.target]) for e in graph.edges if e.source in names} == expected
    # AND each workload cluster's chain, which spoke-bootstrap applies, is drawn with that cluster, not here
    assert _nested(graph) == {}
    # (the Crossplane chain, and each <pack>-configs after its pack: tests/integration/test_example_fleet.py)
    assert len(expected) >= 8
    # AND each add-on's HelmRelease sits in the Kustomization that applies it
    parents = {node.name: node.parent for node in graph.nodes if node.kind == "HelmRelease"}
    assert parents == {
        name: f"ks_{name.replace('-', '_')}"
        for name in ("cert-manager", "crossplane", "fluent-bit", "kyverno", "metrics-server")
    }
    assert graph.hub is None


def test_example_spoke_graph_includes_the_hub_chain() -> None:
    # GIVEN the hub's chain for staging-usw2 as synth writes it: build it, its roles and app resources, bootstrap it
    chain = _flux_kustomizations("platform/spokes/staging-usw2/")
    built = ("cluster", "addon-identities", "app-resources")
    # WHEN staging-usw2 is drawn
    graph = example_tree().graph("staging-usw2")
    # THEN the hub side holds every step (and what app-resources applies: the app's own requests), with the
    # chain's dependsOn edges, and flux-sync applies the root
    hub = _names(graph, hub=True)
    assert sorted(hub.values()) == sorted([*built, *STEPS, "notifications-cloud"])
    assert sorted(doc["metadata"]["name"] for doc in chain) == sorted([*built, *STEPS])
    steps = {(hub[e.source], hub[e.target]) for e in graph.edges if e.source in hub and e.target in hub}
    assert steps == {
        ("cluster", "addon-identities"),
        ("cluster", "app-resources"),
        ("cluster", "external-secrets"),
        ("addon-identities", "external-secrets"),
        *itertools.pairwise(STEPS),
    }
    assert _nested(graph)["hub_ks_staging_usw2__notifications_cloud"] == "hub_ks_staging_usw2__app_resources"
    assert Edge("hub_ks_staging_usw2__flux_sync", "ks_flux_system", applies=True) in graph.edges
    # AND the cluster side holds its own Kustomizations, and the tenant's inside tenants
    own = _flux_kustomizations("platform/clusters/staging-usw2/")
    assert {doc["metadata"]["name"] for doc in own} < set(_names(graph, hub=False).values())
    tenant = next(node for node in graph.nodes if node.name == "notifications" and node.kind == "Kustomization")
    assert tenant.parent == "ks_tenants"
    assert graph.hub == "hub"


def test_synth_writes_a_readme_per_cluster_folder_not_listed_in_its_kustomization() -> None:
    # GIVEN the example fleet rendered WHEN the README files are read
    files = rendered()
    readmes = sorted(path for path in files if path.endswith("README.md"))
    # THEN every cluster folder has one, drawn the way the command draws it, and kustomize does not list it
    clusters = sorted(cluster.name for cluster in load_plan(ROOT).clusters)
    assert readmes == [f"platform/clusters/{name}/README.md" for name in clusters]
    for name in clusters:
        assert files[f"platform/clusters/{name}/README.md"] == readme(example_tree().graph(name))
        listing = yaml.safe_load(files[f"platform/clusters/{name}/kustomization.yaml"])
        assert "README.md" not in listing["resources"]


# -- the command ------------------------------------------------------------------------------------


def run(*args: str) -> int:
    return main(["--root", str(ROOT), "graph", *args])


def test_command_prints_mermaid(capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN the command draws staging-usw2 THEN it prints what the README holds
    assert run("--cluster", "staging-usw2") == 0
    assert capsys.readouterr().out == mermaid(example_tree().graph("staging-usw2"))


def test_command_writes_dot_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN dot is asked for with -o THEN the file holds it and nothing is printed
    target = tmp_path / "hub.dot"
    assert run("--cluster", "hub", "--format", "dot", "-o", str(target)) == 0
    assert target.read_text() == dot(example_tree().graph("hub"))
    assert capsys.readouterr().out == ""


def test_unknown_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN the cluster is not in the fleet THEN exit 2 and the clusters are listed
    assert run("--cluster", "x") == EXIT_BAD_INPUT
    assert capsys.readouterr().err == (
        "--cluster: unknown cluster 'x' (clusters: hub, production-euc1, production-euw1, production-use1, "
        "production-usw2, staging-euw1, staging-usw2)\n"
    )


def _fake_dot(folder: Path) -> None:
    """A ``dot`` that wraps its arguments and standard input in an <svg> element (shell built-ins only)."""
    folder.mkdir()
    program = folder / "dot"
    program.write_text(
        "#!/bin/sh\n"
        'printf \'<svg args="%s">\\n\' "$*"\n'
        "while IFS= read -r line; do printf '%s\\n' \"$line\"; done\n"
        "printf '</svg>\\n'\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)


def test_svg_pipes_dot_through_graphviz(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a dot program on PATH
    _fake_dot(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    # WHEN svg is asked for THEN dot -Tsvg gets the dot text and its output is printed
    assert run("--cluster", "hub", "--format", "svg") == 0
    assert capsys.readouterr().out == f'<svg args="-Tsvg">\n{dot(example_tree().graph("hub"))}</svg>\n'


def test_svg_without_graphviz_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a PATH without dot
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    # WHEN svg is asked for THEN exit 2 with what to install and the formats that need nothing
    assert run("--cluster", "hub", "--format", "svg") == EXIT_BAD_INPUT
    assert capsys.readouterr().err == (
        "--format svg: Graphviz's 'dot' is not on PATH; install graphviz (apt-get install graphviz, "
        "brew install graphviz), or use --format dot or --format mermaid, which need nothing\n"
    )
