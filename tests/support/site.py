"""The example fleet's pages' content (fluxplane.review.site.model), on a fixed day, for the tests of the fleet
pages."""

from __future__ import annotations

from datetime import date
from functools import cache

from fluxplane.review.site import model
from fluxplane.review.site.model import SiteContent
from tests.conftest import ROOT

#: The day the pages are built on, so that ages and support windows do not move.
TODAY = date(2026, 11, 28)


@cache
def example() -> SiteContent:
    """The example fleet's pages' content, loaded once."""
    return model.load(ROOT, TODAY)
