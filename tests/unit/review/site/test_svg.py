"""fluxplane.review.site.svg: a Flux graph laid out in columns and drawn as SVG, every node and edge, the same bytes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from fluxplane.review.site.svg import DETAIL, labels, layout, render
from fluxplane.synth.graph import Edge, FluxNode, Graph

SVG = "{http://www.w3.org/2000/svg}"


def _ks(name: str, waits: str | None = None, path: str | None = None) -> FluxNode:
    return FluxNode(id=f"ks_{name}", kind="Kustomization", namespace="flux-system", name=name, waits=waits, path=path)


def _hr(name: str, parent: str) -> FluxNode:
    return FluxNode(id=f"hr_{name}", kind="HelmRelease", namespace="flux-system", name=name, parent=parent)


#: A small cluster: cert-manager (with its release) before its configs, and both before the app.
GRAPH = Graph(
    cluster="staging-1",
    nodes=(
        _ks("app", waits="all it applies"),
        _ks("cert-manager", waits="HelmRelease/cert-manager", path="./infrastructure/cert-manager"),
        _ks("cert-manager-configs"),
        _ks("flux-system"),
        _hr("cert-manager", parent="ks_cert-manager"),
    ),
    edges=(
        Edge("ks_cert-manager", "ks_cert-manager-configs"),
        Edge("ks_cert-manager-configs", "ks_app"),
        Edge("ks_cert-manager", "ks_app"),
    ),
)


def _tree(text: str) -> ET.Element:
    return ET.fromstring(text)


def test_every_node_and_edge_is_drawn_with_its_label() -> None:
    # WHEN the graph is drawn
    svg = _tree(render(GRAPH))
    # THEN each node is a group holding its box and its name, and each edge a path between the two nodes
    groups = {group.get("data-id"): group for group in svg.iter(f"{SVG}g")}
    assert set(groups) == {node.id for node in GRAPH.nodes}
    for node in GRAPH.nodes:
        texts = [text.text for text in groups[node.id].iter(f"{SVG}text")]
        assert texts[0] == node.name
        assert groups[node.id].find(f"{SVG}rect") is not None
    drawn = {
        (path.get("data-source"), path.get("data-target"))
        for path in svg.iter(f"{SVG}path")
        if "depends" in (path.get("class") or "")
    }
    assert drawn == {(edge.source, edge.target) for edge in GRAPH.edges}
    # AND the release hangs below the Kustomization that applies it, joined by a line
    assert len([path for path in svg.iter(f"{SVG}path") if "applied" in (path.get("class") or "")]) == 1


def test_columns_follow_depends_on_and_an_applied_node_sits_below_its_parent() -> None:
    drawn = layout(GRAPH)
    boxes = drawn.boxes
    # an arrow always points right: what waits sits in a later column
    for edge in GRAPH.edges:
        assert boxes[edge.target].x > boxes[edge.source].x + boxes[edge.source].width
    # the release is indented below its Kustomization, in one frame with it
    assert boxes["hr_cert-manager"].y > boxes["ks_cert-manager"].y
    assert boxes["hr_cert-manager"].x > boxes["ks_cert-manager"].x
    assert len(drawn.frames) == 1
    # nothing overlaps
    placed = sorted(boxes.values(), key=lambda box: (box.x, box.y))
    for index, box in enumerate(placed):
        for other in placed[index + 1 :]:
            apart = (
                other.x >= box.x + box.width
                or box.x >= other.x + other.width
                or other.y >= box.y + box.height
                or box.y >= other.y + other.height
            )
            assert apart, (box, other)
    # and the picture holds every box
    assert all(box.x + box.width <= drawn.width and box.y + box.height <= drawn.height for box in boxes.values())


def test_the_same_graph_gives_the_same_bytes_whatever_the_order_it_was_built_in() -> None:
    shuffled = Graph(GRAPH.cluster, tuple(reversed(GRAPH.nodes)), tuple(reversed(GRAPH.edges)))
    assert render(GRAPH) == render(GRAPH)
    # the columns do not depend on the edges' order
    assert {node_id: box.x for node_id, box in layout(shuffled).boxes.items()} == {
        node_id: box.x for node_id, box in layout(GRAPH).boxes.items()
    }


def test_the_hubs_chain_is_a_band_of_its_own_that_applies_to_the_cluster() -> None:
    # GIVEN a workload cluster's graph with the hub's steps that build and bootstrap it
    hub = [
        FluxNode("hub_ks_cluster", "Kustomization", "staging-1", "cluster", hub=True, waits="EKSCluster/staging-1"),
        FluxNode("hub_ks_flux_sync", "Kustomization", "staging-1", "flux-sync", hub=True),
    ]
    graph = Graph(
        "staging-1",
        (*hub, *GRAPH.nodes),
        (Edge("hub_ks_cluster", "hub_ks_flux_sync"), Edge("hub_ks_flux_sync", "ks_flux-system", applies=True)),
        hub="hub",
    )
    drawn = layout(graph)
    # THEN the hub's steps stand in one column, in the order they run, left of the cluster's own
    assert drawn.boxes["hub_ks_cluster"].x == drawn.boxes["hub_ks_flux_sync"].x
    assert drawn.boxes["hub_ks_cluster"].y < drawn.boxes["hub_ks_flux_sync"].y
    own = [box for node_id, box in drawn.boxes.items() if not node_id.startswith("hub_")]
    assert max(box.x + box.width for node_id, box in drawn.boxes.items() if node_id.startswith("hub_")) < min(
        box.x for box in own
    )
    assert [side for _, side in drawn.bands] == ["hub", "cluster"]
    # AND the band names the hub and the cluster, the hub's namespace is said once, and "applies" is dashed
    svg = render(graph)
    assert ">hub: builds and bootstraps staging-1</text>" in svg
    assert drawn.lines["hub_ks_cluster"] == ["cluster", "waits: EKSCluster/staging-1"]
    assert 'class="edge applies"' in svg


def test_a_cycle_is_drawn_without_looping() -> None:
    graph = Graph("c", (_ks("a"), _ks("b")), (Edge("ks_a", "ks_b"), Edge("ks_b", "ks_a")))
    svg = _tree(render(graph))
    assert len([path for path in svg.iter(f"{SVG}path") if "depends" in (path.get("class") or "")]) == 2


def test_labels_and_names_are_escaped_and_long_details_cut() -> None:
    # GIVEN names that would break out of the markup
    hostile = '<script>alert("x")</script>&'
    node = FluxNode("ks_x", "Kustomization", "team-a", hostile, waits="W" * 100)
    graph = Graph(hostile, (node,), ())
    text = render(graph)
    # THEN the SVG parses, and holds the name as text, not as markup
    svg = _tree(text)
    assert "<script>" not in text
    assert next(t.text for t in svg.iter(f"{SVG}text")) == hostile
    assert svg.get("data-cluster") == hostile
    # AND a long waits line is cut, with the whole in the node's tooltip
    assert labels(node) == [hostile, "namespace: team-a", "waits: " + "W" * (DETAIL - 8) + "…"]
    assert "W" * 100 in text


@pytest.mark.parametrize("count", [0, 1])
def test_an_empty_or_single_node_graph_draws(count: int) -> None:
    graph = Graph("c", (_ks("a"),)[:count], ())
    svg = _tree(render(graph))
    assert float(svg.get("width") or 0) > 0
