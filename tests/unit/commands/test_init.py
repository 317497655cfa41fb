"""fluxplane.commands.init: the lines it prints for the scaffold it writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.commands import init
from tests.unit.commands import parse


def test_init_needs_no_lock_and_defaults_to_the_current_folder() -> None:
    args = parse(init, "init")
    assert (init.NAMES, init.LOCKS_PROJECT, init.stopped(args), args.dir) == (("init",), False, None, Path("."))


def test_run_prints_a_line_per_file_then_what_to_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "fleet"
    assert init.run(parse(init, "init", str(folder))) == 0
    lines = capsys.readouterr().out.splitlines()
    written = sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file())
    assert sorted(lines[:-1]) == [f"wrote {folder}/{path}" for path in written]
    assert lines[-1].startswith(f"next: cd {folder} && python -m venv .venv")
