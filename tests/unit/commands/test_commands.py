"""fluxplane.commands: what the command modules share."""

from __future__ import annotations

from importlib import metadata

import pytest

import fluxplane
from fluxplane.commands import installed_version, warn


def test_warn_prints_a_line_on_standard_error_and_nothing_for_none(capsys: pytest.CaptureFixture[str]) -> None:
    warn(None)
    warn("")
    warn("node: old")
    assert capsys.readouterr() == ("", "node: old\n")


def test_installed_version_is_the_distribution_s() -> None:
    assert installed_version() == metadata.version("fluxplane")


def test_installed_version_from_a_source_tree_says_it_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN no installed distribution (the package imported from a source tree)
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    assert fluxplane.__version__  # read once, so that the monkeypatch below puts it back afterwards
    monkeypatch.setattr(metadata, "version", missing)
    monkeypatch.delattr(fluxplane, "__version__")
    # THEN the version says it is unknown, rather than naming a release this source may not be
    assert installed_version() == "0+unknown"
