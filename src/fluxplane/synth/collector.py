"""Python's cyclic garbage collector, paused while synth builds and renders a fleet.

Its own module, below both the package (``fluxplane.synth``, whose import must not start the JavaScript
runtime) and ``FleetApp`` (fluxplane.synth.app, which does), since both pause it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a fleet is built and rendered.

    Synth keeps everything it builds until it is written, so collections during synth free nothing;
    with tens of thousands of live objects they cost a third of the build. The collector runs
    again (and catches up) when the block ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
