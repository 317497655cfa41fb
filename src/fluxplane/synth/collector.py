"""Python's cyclic garbage collector, paused while synth builds and renders a fleet.

Its own module, below the package (``fluxplane.synth``), the construct tree (fluxplane.synth.tree) and
``FleetApp`` (fluxplane.synth.app), which pause it.
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
    again when the block ends. What the block made joins the oldest generation at once, to be looked at by the
    collector's next full collection: left young, the first allocation after the block would start a collection of
    every object made in it (most of a tenth of a second at 1,000 clusters), which still live. Objects someone else
    froze (gc.freeze) stay where they are: the block then leaves its objects young.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if not gc.get_freeze_count():
                gc.freeze()  # every tracked object to the permanent generation, the young ones' count reset
                gc.unfreeze()  # and from there to the oldest generation: two list splices, nothing examined
            gc.enable()
