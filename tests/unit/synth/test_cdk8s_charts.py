"""fluxplane.synth.cdk8s_charts: what ends a chart module is its error, and a signal still stops the caller.

These run the charts as a program using fluxplane as a library does (load_plan, with Python's own SIGINT
handler); tests/integration/test_cdk8s_charts.py runs them through the CLI.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

from fluxplane.errors import ConfigError
from fluxplane.synth import load_plan
from tests.conftest import MINIMAL_ENV, FleetWriter

OWN_INTERRUPT = "raise KeyboardInterrupt\n"
REAL_INTERRUPT = "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)\n"
OWN_INTERRUPT_LINE = "charts/quota.py: importing it failed: line 1: KeyboardInterrupt"


def _project(write_fleet: FleetWriter, chart: str) -> Path:
    root = write_fleet(envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}})
    (root / "charts").mkdir()
    (root / "charts" / "quota.py").write_text(chart)
    return root


def _failure(root: Path) -> BaseException | None:
    """What load_plan raises; caught here whatever it is, so that a KeyboardInterrupt does not end the session."""
    try:
        load_plan(root)
    except BaseException as exc:  # whatever escapes is what is under test
        return exc
    return None


def test_a_charts_own_keyboard_interrupt_is_its_error(write_fleet: FleetWriter) -> None:
    # GIVEN a chart that raises KeyboardInterrupt itself, with no signal
    root = _project(write_fleet, OWN_INTERRUPT)
    # WHEN the plan is loaded THEN it is the chart's error, like any other
    failure = _failure(root)
    assert isinstance(failure, ConfigError), repr(failure)
    assert failure.problems == (OWN_INTERRUPT_LINE,)


def test_a_charts_own_keyboard_interrupt_is_its_error_outside_the_main_thread(write_fleet: FleetWriter) -> None:
    # GIVEN a chart that raises KeyboardInterrupt itself, loaded in a thread (where no signal is raised)
    root = _project(write_fleet, OWN_INTERRUPT)
    found: list[BaseException | None] = []
    thread = threading.Thread(target=lambda: found.append(_failure(root)))
    thread.start()
    thread.join(timeout=60)
    # THEN it is the chart's error there too
    assert isinstance(found[0], ConfigError), repr(found)
    assert found[0].problems == (OWN_INTERRUPT_LINE,)


def test_a_real_ctrl_c_while_a_chart_runs_is_raised_as_python_raises_it(write_fleet: FleetWriter) -> None:
    # GIVEN Python's own SIGINT handler, and a chart during which the process gets SIGINT
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    root = _project(write_fleet, REAL_INTERRUPT)
    # WHEN the plan is loaded THEN the KeyboardInterrupt reaches the caller: the user stopped the program
    assert type(_failure(root)) is KeyboardInterrupt
    # AND the handlers are the ones the program had
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("chart", [OWN_INTERRUPT, "def chart(scope, cluster):\n    pass\n"], ids=["failing", "fine"])
def test_the_signal_handlers_are_left_as_they_were(write_fleet: FleetWriter, chart: str) -> None:
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    _failure(_project(write_fleet, chart))
    assert {signum: signal.getsignal(signum) for signum in before} == before
