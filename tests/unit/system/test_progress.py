"""Progress on standard error: a bar on a terminal, one line per stage elsewhere, nothing when off."""

from __future__ import annotations

import io

import pytest

from fluxplane.system.progress import Progress, mode


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_lines_mode_prints_one_line_per_finished_stage() -> None:
    stream = io.StringIO()
    progress = Progress("synth", stream, show="lines")
    with progress.stage("render") as stage:
        stage.advance(3)
        stage.note("141 files")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("synth: render done in ") and lines[0].endswith("s, 141 files")


def test_a_stage_that_fails_prints_nothing() -> None:
    stream = io.StringIO()
    with pytest.raises(RuntimeError), Progress("synth", stream, show="lines").stage("load"):
        raise RuntimeError("bad input")
    assert stream.getvalue() == ""


def test_bar_mode_redraws_in_place_and_ends_with_the_line() -> None:
    stream = Terminal()
    progress = Progress("validate", stream, show="bar")
    with progress.stage("schemas", total=4) as stage:
        for _ in range(4):
            stage.advance()
    text = stream.getvalue()
    assert text.startswith("\r\033[Kvalidate: schemas [------------------------] 0/4")
    assert text.endswith("validate: schemas done in " + text.rsplit("done in ", 1)[1])
    assert text.count("\n") == 1


def test_off_prints_nothing() -> None:
    stream = Terminal()
    with Progress("diff", stream, show="off").stage("base"):
        pass
    assert stream.getvalue() == ""


def test_the_mode_follows_the_terminal_and_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLUXPLANE_PROGRESS", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert (mode(Terminal()), mode(io.StringIO())) == ("bar", "lines")
    monkeypatch.setenv("CI", "true")
    assert mode(Terminal()) == "lines"
    monkeypatch.setenv("FLUXPLANE_PROGRESS", "off")
    assert mode(Terminal()) == "off"


# a stage that ends by an error or an interruption takes its bar away, so the message starts a line


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_a_stopped_stage_clears_its_bar(error: type[BaseException]) -> None:
    # GIVEN a bar on a terminal
    stream = Terminal()
    # WHEN its stage ends by an exception (Ctrl-C, or bad input)
    with pytest.raises(error), Progress("synth", stream, show="bar").stage("render", total=10):
        raise error
    # THEN the line is cleared: what the command prints next starts at its beginning
    assert stream.getvalue() == "\r\033[Ksynth: render [------------------------] 0/10\r\033[K"
