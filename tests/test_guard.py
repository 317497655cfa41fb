"""The src layout keeps fluxplane's own ``constructs`` subpackage from shadowing the library."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT


def test_import_constructs_is_the_installed_library() -> None:
    import constructs

    origin = Path(constructs.__file__).resolve()
    assert "site-packages" in origin.parts
    assert ROOT not in origin.parents or ".venv" in origin.parts
    assert hasattr(constructs, "Construct")


def test_fluxplane_constructs_is_a_subpackage() -> None:
    import fluxplane.constructs

    assert Path(fluxplane.constructs.__file__).resolve().parent == ROOT / "src" / "fluxplane" / "constructs"
