"""A stage that ends by an error or an interruption takes its bar away, so the message starts a line."""

from __future__ import annotations

import pytest

from fluxplane.progress import Progress
from tests.unit.test_progress import Terminal


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_a_stopped_stage_clears_its_bar(error: type[BaseException]) -> None:
    # GIVEN a bar on a terminal
    stream = Terminal()
    # WHEN its stage ends by an exception (Ctrl-C, or bad input)
    with pytest.raises(error), Progress("synth", stream, show="bar").stage("render", total=10):
        raise error
    # THEN the line is cleared: what the command prints next starts at its beginning
    assert stream.getvalue() == "\r\033[Ksynth: render [------------------------] 0/10\r\033[K"
