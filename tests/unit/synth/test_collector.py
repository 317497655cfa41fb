"""paused_gc: the cyclic garbage collector is off while synth builds, and as it was afterwards."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from fluxplane.synth.collector import paused_gc


@pytest.fixture
def collector_state() -> Iterator[None]:
    """Whatever a test does to the collector, the session gets it back as it was."""
    was_enabled = gc.isenabled()
    yield
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.usefixtures("collector_state")
def test_the_collector_is_off_inside_and_on_again_after() -> None:
    # GIVEN a running collector
    gc.enable()
    # WHEN a block runs with it paused
    with paused_gc():
        inside = gc.isenabled()
    # THEN it was off inside the block and runs again after it
    assert inside is False
    assert gc.isenabled() is True


@pytest.mark.usefixtures("collector_state")
def test_the_collector_runs_again_when_the_block_raises() -> None:
    # GIVEN a running collector WHEN the paused block raises
    gc.enable()
    with pytest.raises(RuntimeError, match=r"^boom$"), paused_gc():
        raise RuntimeError("boom")
    # THEN the collector runs again
    assert gc.isenabled() is True


@pytest.mark.usefixtures("collector_state")
def test_a_collector_paused_before_stays_paused() -> None:
    # GIVEN a collector someone else paused WHEN a paused block ends
    gc.disable()
    with paused_gc():
        pass
    # THEN the collector is still off: the block leaves it as it found it
    assert gc.isenabled() is False
