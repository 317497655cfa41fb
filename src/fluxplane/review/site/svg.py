"""A cluster's Flux dependency graph (fluxplane.synth.graph.Graph) drawn as SVG in pure Python, for the fleet pages.

``fluxplane graph --format svg`` asks Graphviz, which a reader of the pages may not have; the pages need nothing
installed, so they lay the graph out here. A layered layout, left to right as the Mermaid form reads:

* a *unit* is a node no other node applies (``parent`` None) with what it applies stacked below it, indented, in
  one frame (the Kustomization and its HelmRelease, as Mermaid's boxes show them);
* each unit sits one column right of every unit it waits for (the longest path over ``dependsOn`` and
  ``applies`` edges between units; a cycle, which Flux refuses anyway, is broken at its last edge);
* within a column, units are ordered by the mean row of what they wait for (a few sweeps), ties kept in the
  graph's own order, so the same graph always gives the same picture, byte for byte.

Every label is escaped; the text width is estimated for a monospace face, so nothing is measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

from fluxplane.constructs.props import FLUX_NAMESPACE
from fluxplane.synth.graph import HELM_RELEASE, Edge, FluxNode, Graph

#: Font size and the width of one character of a monospace face at that size, in pixels.
FONT = 12
CHAR = 7.3
LINE = 16
PAD_X = 10
PAD_Y = 7
#: Indent of an applied node below the one that applies it, and the gap between the nodes of a unit.
INDENT = 14
INNER_GAP = 6
#: Gaps between columns and between the units of a column, and the margin around the picture.
COLUMN_GAP = 56
ROW_GAP = 18
MARGIN = 16
SWEEPS = 4
#: The longest detail line (namespace, waits) drawn; the node's tooltip holds the whole.
DETAIL = 40
#: Room above a band for its title, and left of the hub's chain for the arcs between its steps.
BAND_TITLE = 26
ARC_GUTTER = 40


@dataclass(frozen=True)
class Box:
    """Where a node is drawn: its top-left corner and size."""

    x: float
    y: float
    width: float
    height: float

    @property
    def left(self) -> tuple[float, float]:
        return (self.x, self.y + self.height / 2)

    @property
    def right(self) -> tuple[float, float]:
        return (self.x + self.width, self.y + self.height / 2)


@dataclass(frozen=True)
class Layout:
    """The boxes of every node, the frame of every unit of more than one node, the picture's size, each node's
    lines, and the bands of a workload cluster's graph (the hub's chain, the cluster's own) with their side."""

    boxes: Mapping[str, Box]
    frames: tuple[Box, ...]
    width: float
    height: float
    lines: Mapping[str, Sequence[str]]
    bands: tuple[tuple[Box, str], ...] = ()


def _detail(text: str) -> str:
    return text if len(text) <= DETAIL else text[: DETAIL - 1] + "…"


def labels(node: FluxNode, namespace: str | None = None) -> list[str]:
    """A node's lines as drawn: its name (the shape and colour tell its kind), its namespace unless it is
    ``namespace`` (the band's) or flux-system, and what it waits on, cut to DETAIL characters."""
    lines = [node.name]
    if node.namespace not in (FLUX_NAMESPACE, namespace):
        lines.append(_detail(f"namespace: {node.namespace}"))
    if node.waits:
        lines.append(_detail(f"waits: {node.waits}"))
    return lines


def _size(lines: Sequence[str]) -> tuple[float, float]:
    return (max(len(line) for line in lines) * CHAR + 2 * PAD_X, len(lines) * LINE + 2 * PAD_Y)


def _units(nodes: Sequence[FluxNode]) -> tuple[list[str], dict[str, list[tuple[FluxNode, int]]], dict[str, str]]:
    """The units' heads in the graph's order, each unit's nodes with their depth, and each node's unit."""
    present = {node.id for node in nodes}
    children: dict[str | None, list[FluxNode]] = {}
    for node in nodes:
        children.setdefault(node.parent if node.parent in present else None, []).append(node)
    heads: list[str] = []
    members: dict[str, list[tuple[FluxNode, int]]] = {}
    unit_of: dict[str, str] = {}

    def walk(node: FluxNode, head: str, depth: int) -> None:
        if node.id in unit_of:
            return
        unit_of[node.id] = head
        members[head].append((node, depth))
        for child in children.get(node.id, []):
            walk(child, head, depth + 1)

    for node in children.get(None, []):
        heads.append(node.id)
        members[node.id] = []
        walk(node, node.id, 0)
    return heads, members, unit_of


def _columns(heads: Sequence[str], links: Iterable[tuple[str, str]]) -> dict[str, int]:
    """Each unit's column: one right of the furthest unit it waits for; edges that close a cycle are dropped."""
    order = {head: index for index, head in enumerate(heads)}
    after: dict[str, list[str]] = {head: [] for head in heads}
    for source, target in sorted(set(links), key=lambda link: (order[link[0]], order[link[1]])):
        if source != target:
            after[source].append(target)
    state: dict[str, int] = {}
    acyclic: dict[str, list[str]] = {head: [] for head in heads}
    finished: list[str] = []

    def visit(head: str) -> None:
        state[head] = 1
        for target in after[head]:
            if state.get(target) == 1:
                continue  # a back edge: it would close a cycle
            acyclic[head].append(target)
            if target not in state:
                visit(target)
        state[head] = 2
        finished.append(head)

    for head in heads:
        if head not in state:
            visit(head)
    column = dict.fromkeys(heads, 0)
    for head in reversed(finished):  # a topological order
        for target in acyclic[head]:
            column[target] = max(column[target], column[head] + 1)
    return column


@dataclass
class _Side:
    """The nodes of one side of the graph (the hub's chain, or the cluster's own), grouped in units."""

    heads: list[str]
    members: dict[str, list[tuple[FluxNode, int]]]
    unit_of: dict[str, str]
    column: dict[str, int]
    links: list[tuple[str, str]]

    @classmethod
    def of(cls, nodes: Sequence[FluxNode], edges: Iterable[Edge]) -> _Side:
        heads, members, unit_of = _units(nodes)
        links = [
            (unit_of[edge.source], unit_of[edge.target])
            for edge in edges
            if edge.source in unit_of and edge.target in unit_of
        ]
        return cls(heads, members, unit_of, _columns(heads, links), links)


def _unit_size(nodes: Sequence[tuple[FluxNode, int]], sizes: Mapping[str, tuple[float, float]]) -> tuple[float, float]:
    width = max(depth * INDENT + sizes[node.id][0] for node, depth in nodes)
    height = sum(sizes[node.id][1] for node, _ in nodes) + INNER_GAP * (len(nodes) - 1)
    return (width, height)


def _place_unit(
    nodes: Sequence[tuple[FluxNode, int]],
    x: float,
    y: float,
    sizes: Mapping[str, tuple[float, float]],
    boxes: dict[str, Box],
    frames: list[Box],
) -> float:
    """Put a unit's nodes at (x, y), one below the other; the y below it."""
    top = y
    for node, depth in nodes:
        width, height = sizes[node.id]
        boxes[node.id] = Box(x + depth * INDENT, y, width, height)
        y += height + INNER_GAP
    y -= INNER_GAP
    if len(nodes) > 1:
        frames.append(Box(x - 5, top - 5, _unit_size(nodes, sizes)[0] + 10, y - top + 10))
    return y


def _ordered(side: _Side) -> list[list[str]]:
    """The units of each column, ordered by the mean row of what they wait for (a few sweeps)."""
    count = max(side.column.values(), default=-1) + 1
    stacks: list[list[str]] = [[] for _ in range(count)]
    for head in side.heads:
        stacks[side.column[head]].append(head)
    before: dict[str, list[str]] = {head: [] for head in side.heads}
    for source, target in side.links:
        if side.column[source] < side.column[target]:
            before[target].append(source)
    rank = {head: float(index) for stack in stacks for index, head in enumerate(stack)}
    for _ in range(SWEEPS):
        for stack in stacks[1:]:
            keyed = []
            for index, head in enumerate(stack):
                sources = before[head]
                mean = sum(rank[source] for source in sources) / len(sources) if sources else rank[head]
                keyed.append((mean, index, head))
            stack[:] = [head for _, _, head in sorted(keyed)]
            for index, head in enumerate(stack):
                rank[head] = float(index)
    return stacks


def layout(graph: Graph) -> Layout:
    """Where every node of ``graph`` is drawn (module docstring)."""
    band = _band_namespace(graph)
    texts = {node.id: labels(node, band if node.hub else None) for node in graph.nodes}
    sizes = {node_id: _size(lines) for node_id, lines in texts.items()}
    boxes: dict[str, Box] = {}
    frames: list[Box] = []
    bands: list[tuple[Box, str]] = []
    top = float(MARGIN + (BAND_TITLE if graph.hub else 0))
    x = float(MARGIN)
    height = 0.0
    hub_nodes = [node for node in graph.nodes if node.hub]
    if hub_nodes:
        # the hub's chain: one column, in the order it runs, its edges arcs in the left gutter
        side = _Side.of(hub_nodes, graph.edges)
        order = sorted(side.heads, key=lambda head: (side.column[head], side.heads.index(head)))
        x += ARC_GUTTER
        y = top
        width = 0.0
        for head in order:
            y = _place_unit(side.members[head], x, y, sizes, boxes, frames) + ROW_GAP
            width = max(width, _unit_size(side.members[head], sizes)[0])
        bands.append(
            (Box(MARGIN - 6, top - BAND_TITLE, x + width - MARGIN + 12, y - ROW_GAP - top + BAND_TITLE + 8), "hub")
        )
        height = y - ROW_GAP
        x += width + COLUMN_GAP + 12
    own = [node for node in graph.nodes if not node.hub]
    side = _Side.of(own, graph.edges)
    stacks = _ordered(side)
    heights = [
        sum(_unit_size(side.members[head], sizes)[1] for head in stack) + ROW_GAP * (len(stack) - 1) for stack in stacks
    ]
    tallest = max(heights, default=0.0)
    left = x
    for stack, stack_height in zip(stacks, heights, strict=True):
        width = max(_unit_size(side.members[head], sizes)[0] for head in stack)
        y = top + (tallest - stack_height) / 2
        for head in stack:
            y = _place_unit(side.members[head], x, y, sizes, boxes, frames) + ROW_GAP
        x += width + COLUMN_GAP
    right = x - COLUMN_GAP if stacks else x
    if hub_nodes:
        bands.append((Box(left - 6, top - BAND_TITLE, right - left + 12, tallest + BAND_TITLE + 8), "cluster"))
    height = max(height, tallest)
    return Layout(
        boxes, tuple(frames), max(right + MARGIN, 2.0 * MARGIN), top + height + MARGIN + 8, texts, tuple(bands)
    )


def _band_namespace(graph: Graph) -> str | None:
    """The namespace every node of the hub's chain shares, if they share one (a cluster's hub namespace)."""
    found = {node.namespace for node in graph.nodes if node.hub}
    return next(iter(found)) if len(found) == 1 else None


def _number(value: float) -> str:
    """A coordinate, rounded and without a needless ``.0``, so the output is stable and small."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _path(start: tuple[float, float], end: tuple[float, float]) -> str:
    """A curve from the right side of one box to the left side of another further right."""
    (x1, y1), (x2, y2) = start, end
    bend = max((x2 - x1) / 2, 24.0)
    points = [(x1, y1), (x1 + bend, y1), (x2 - bend, y2), (x2, y2)]
    p = [f"{_number(px)},{_number(py)}" for px, py in points]
    return f"M{p[0]} C{p[1]} {p[2]} {p[3]}"


def _arc(start: tuple[float, float], end: tuple[float, float]) -> str:
    """A curve between the left sides of two boxes of one column, bulging left as far as they are apart."""
    (x1, y1), (x2, y2) = start, end
    bend = min(ARC_GUTTER - 6.0, 12.0 + abs(y2 - y1) / 8)
    points = [(x1, y1), (x1 - bend, y1), (x2 - bend, y2), (x2, y2)]
    p = [f"{_number(px)},{_number(py)}" for px, py in points]
    return f"M{p[0]} C{p[1]} {p[2]} {p[3]}"


def _applied_path(parent: Box, child: Box) -> str:
    """The elbow from a node down to one it applies, in the unit's left gutter."""
    x = parent.x + INDENT / 2
    return (
        f"M{_number(x)},{_number(parent.y + parent.height)} "
        f"L{_number(x)},{_number(child.y + child.height / 2)} L{_number(child.x)},{_number(child.y + child.height / 2)}"
    )


def _band_title(graph: Graph, side: str) -> str:
    if side == "hub":
        return f"{graph.hub}: builds and bootstraps {graph.cluster}"
    return graph.cluster


def render(graph: Graph, title: str | None = None) -> str:
    """``graph`` as an inline ``<svg>`` element; ``title`` is its accessible name (default: the cluster's)."""
    drawn = layout(graph)
    label = title or f"Flux dependency graph of cluster {graph.cluster}"
    marker = escape(f"arrow-{graph.cluster}")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" '
        f'width="{_number(drawn.width)}" height="{_number(drawn.height)}" '
        f'viewBox="0 0 {_number(drawn.width)} {_number(drawn.height)}" '
        f'data-cluster="{escape(graph.cluster)}">',
        f"<title>{escape(label)}</title>",
        "<defs>"
        f'<marker id="{marker}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker>'
        "</defs>",
    ]
    for band, side in drawn.bands:
        parts.append(
            f'<rect class="band {side}" x="{_number(band.x)}" y="{_number(band.y)}" '
            f'width="{_number(band.width)}" height="{_number(band.height)}" rx="10"/>'
        )
        parts.append(
            f'<text class="band-title" x="{_number(band.x + 10)}" y="{_number(band.y + 17)}">'
            f"{escape(_band_title(graph, side), quote=False)}</text>"
        )
    for frame in drawn.frames:
        parts.append(
            f'<rect class="unit" x="{_number(frame.x)}" y="{_number(frame.y)}" '
            f'width="{_number(frame.width)}" height="{_number(frame.height)}" rx="8"/>'
        )
    for node in graph.nodes:
        if node.parent is not None and node.parent in drawn.boxes:
            parts.append(
                f'<path class="edge applied" d="{_applied_path(drawn.boxes[node.parent], drawn.boxes[node.id])}"/>'
            )
    for edge in graph.edges:
        source, target = drawn.boxes.get(edge.source), drawn.boxes.get(edge.target)
        if source is None or target is None:
            continue
        kind = "applies" if edge.applies else "depends"
        path = (
            _path(source.right, target.left) if target.x > source.x + source.width else _arc(source.left, target.left)
        )
        parts.append(
            f'<path class="edge {kind}" data-source="{escape(edge.source)}" data-target="{escape(edge.target)}" '
            f'd="{path}" marker-end="url(#{marker})"/>'
        )
    for node in graph.nodes:
        box = drawn.boxes[node.id]
        classes = ["node", "helmrelease" if node.kind == HELM_RELEASE else "kustomization"]
        if node.hub:
            classes.append("hub")
        radius = _number(min(box.height / 2, 12.0)) if node.kind == HELM_RELEASE else "5"
        parts.append(f'<g class="{" ".join(classes)}" data-id="{escape(node.id)}">')
        parts.append(f"<title>{escape(chr(10).join(node.lines), quote=False)}</title>")
        parts.append(
            f'<rect x="{_number(box.x)}" y="{_number(box.y)}" width="{_number(box.width)}" '
            f'height="{_number(box.height)}" rx="{radius}"/>'
        )
        for index, line in enumerate(drawn.lines[node.id]):
            y = box.y + PAD_Y + LINE * index + LINE - 4
            css = "name" if index == 0 else "detail"
            parts.append(
                f'<text class="{css}" x="{_number(box.x + PAD_X)}" y="{_number(y)}">{escape(line, quote=False)}</text>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


__all__ = ["Box", "Layout", "labels", "layout", "render"]
