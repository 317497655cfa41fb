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


@pytest.mark.usefixtures("collector_state")
def test_what_the_block_made_is_not_collected_young_as_it_ends() -> None:
    # GIVEN a running collector at its default thresholds, nothing frozen (a test before may have frozen objects, as the
    # program's entry does at its end: the block then leaves its objects young), and a block that makes many objects
    # that live on
    gc.enable()
    gc.unfreeze()
    gc.collect()
    thresholds = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    started: list[int] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(watch)
    try:
        with paused_gc():
            kept = [[number] for number in range(100_000)]
        # WHEN the block has ended and the program goes on allocating
        more = [[number] for number in range(500)]
    finally:
        gc.callbacks.remove(watch)
        gc.set_threshold(*thresholds)
    # THEN no collection started for what the block made: it joined the oldest generation
    assert started == []
    assert gc.get_count()[0] < 1000
    assert len(kept) + len(more) == 100_500


@pytest.mark.usefixtures("collector_state")
def test_objects_someone_else_froze_stay_frozen() -> None:
    # GIVEN objects frozen before the block (a program that forks workers freezes what they share)
    gc.enable()
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        with paused_gc():
            made = [[number] for number in range(1000)]
        # THEN they are still frozen after it
        assert gc.get_freeze_count() == frozen and len(made) == 1000
    finally:
        gc.unfreeze()
