"""The errors fluxplane raises for bad input.

Every error a user can fix by editing their input is a :class:`FluxplaneError`. It carries one
line per problem so that all problems are reported at once; the CLI prints the lines and exits 2.
Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Iterable


class FluxplaneError(Exception):
    """Bad input: one or more problems, each a self-contained line."""

    def __init__(self, problems: str | Iterable[str]) -> None:
        lines = [problems] if isinstance(problems, str) else list(problems)
        if not lines:
            raise ValueError("a FluxplaneError needs at least one problem")
        self.problems: tuple[str, ...] = tuple(lines)
        super().__init__("\n".join(self.problems))


class ConfigError(FluxplaneError):
    """The fleet definition in environments/ is missing, unreadable or invalid."""


class ConstructError(FluxplaneError):
    """A construct was given props it cannot accept; the message names the construct path."""


class TreeError(FluxplaneError):
    """A check over the whole construct tree failed (unresolved reference, dependency cycle, ...)."""


class PackError(FluxplaneError):
    """The pack registry cannot be built (duplicate, unknown or cyclic packs)."""


class OutputError(FluxplaneError):
    """dist/ cannot be written (permissions, disk full, a file where a folder should be)."""


class CacheChanged(OutputError):
    """A file of the synth cache changed while synth read it (fluxplane.synth.writer.DeferredTexts): synth renders
    what it held again."""
