"""fluxplane.commands: what the command modules share."""

from __future__ import annotations

from importlib import metadata

import pytest

from fluxplane.commands import installed_version, warn


def test_warn_prints_a_line_on_standard_error_and_nothing_for_none(capsys: pytest.CaptureFixture[str]) -> None:
    warn(None)
    warn("")
    warn("node: old")
    assert capsys.readouterr() == ("", "node: old\n")


def test_installed_version_is_the_distribution_s() -> None:
    assert installed_version() == metadata.version("fluxplane")


def test_installed_version_from_a_source_tree_is_the_package_s(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN no installed distribution
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    # THEN the package's own version
    assert installed_version() == "0.1.0"
