"""What the loader refuses in a definition, for the tests of its messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError


def problems_of(root: Path) -> list[str]:
    """The lines of the ConfigError loading ``root``'s environments/ raises; a definition that loads fails the test."""
    with pytest.raises(ConfigError) as caught:
        load_fleet(root)
    return list(caught.value.problems)
