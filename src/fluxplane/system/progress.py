"""Progress of the long commands (synth, validate, diff), on standard error.

On an interactive terminal a bar redraws in place; elsewhere (CI logs, pipes, dumb terminals) each
stage prints one plain line when it ends, so logs stay readable. ``FLUXPLANE_PROGRESS`` chooses
explicitly: ``bar``, ``lines`` or ``off``. Standard output is never touched: it carries the command's
result.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

BAR_WIDTH = 24


MODES = ("bar", "lines", "off")


def interactive(stream: TextIO) -> bool:
    """A terminal a person watches: a TTY, not CI, not a dumb terminal."""
    return stream.isatty() and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"


def mode(stream: TextIO) -> str:
    """``FLUXPLANE_PROGRESS`` when it names a mode, else a bar on an interactive terminal and lines elsewhere."""
    chosen = os.environ.get("FLUXPLANE_PROGRESS", "")
    if chosen in MODES:
        return chosen
    return "bar" if interactive(stream) else "lines"


class Stage:
    """One step of a command; ``advance`` moves its bar when it knows its total."""

    def __init__(self, progress: Progress, name: str, total: int | None) -> None:
        self.progress = progress
        self.name = name
        self.total = total
        self.done = 0
        self.started = time.perf_counter()
        self.detail = ""

    def advance(self, count: int = 1) -> None:
        self.done += count
        self.progress.draw(self)

    def note(self, detail: str) -> None:
        """What the stage ended with, for its line (``141 files``)."""
        self.detail = detail


class Progress:
    """Stages of one command, shown on ``stream`` (standard error by default)."""

    def __init__(self, command: str, stream: TextIO | None = None, show: str | None = None) -> None:
        self.command = command
        self.stream = stream if stream is not None else sys.stderr
        self.mode = show if show is not None else mode(self.stream)
        self.live = self.mode == "bar"
        self._last_draw = 0.0

    @contextmanager
    def stage(self, name: str, total: int | None = None) -> Iterator[Stage]:
        stage = Stage(self, name, total)
        self.draw(stage, force=True)
        try:
            yield stage
        except BaseException:
            # An error or an interruption: take the bar away, so that the command's message starts its own line.
            if self.live:
                self.stream.write("\r\033[K")
                self.stream.flush()
            raise
        elapsed = time.perf_counter() - stage.started
        if self.mode == "off":
            return
        detail = f", {stage.detail}" if stage.detail else ""
        line = f"{self.command}: {name} done in {elapsed:.2f}s{detail}"
        if self.live:
            self.stream.write("\r\033[K" + line + "\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def draw(self, stage: Stage, force: bool = False) -> None:
        if not self.live:
            return
        now = time.perf_counter()
        if not force and now - self._last_draw < 0.05:
            return
        self._last_draw = now
        if stage.total:
            filled = min(BAR_WIDTH, BAR_WIDTH * stage.done // stage.total)
            bar = "#" * filled + "-" * (BAR_WIDTH - filled)
            text = f"{self.command}: {stage.name} [{bar}] {stage.done}/{stage.total}"
        else:
            text = f"{self.command}: {stage.name} ..."
        self.stream.write("\r\033[K" + text)
        self.stream.flush()
