"""fluxplane.commands.graph: what a signal leaves, with and without --output."""

from __future__ import annotations

from pathlib import Path

from fluxplane.commands import graph
from tests.support.commands import parse


def test_stopped_says_nothing_written_only_without_an_output_file(tmp_path: Path) -> None:
    assert (graph.NAMES, graph.LOCKS_PROJECT) == (("graph",), False)
    assert graph.stopped(parse(graph, "graph", "--cluster", "hub")) == "nothing written"
    assert graph.stopped(parse(graph, "graph", "--cluster", "hub", "-o", str(tmp_path / "g.mmd"))) is None
