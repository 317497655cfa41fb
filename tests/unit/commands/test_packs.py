"""fluxplane.commands.packs: list and show print the library's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.commands import packs
from fluxplane.packs.describe import list_packs, show_pack
from fluxplane.synth import project_registry
from tests.conftest import FleetWriter
from tests.support.commands import parse


def test_list_and_show(write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]) -> None:
    root: Path = write_fleet()
    registry = project_registry(root)
    assert packs.run(parse(packs, "packs", "list", root=root)) == 0
    assert capsys.readouterr() == (list_packs(registry), "")
    assert packs.run(parse(packs, "packs", "show", "cert-manager", root=root)) == 0
    assert capsys.readouterr() == (show_pack(registry.get("cert-manager")), "")


def test_packs_writes_nothing() -> None:
    args = parse(packs, "packs", "list")
    assert (packs.LOCKS_PROJECT, packs.stopped(args)) == (False, "nothing written")
