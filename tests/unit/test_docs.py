"""fluxplane.docs: the documentation's reference pages, generated from the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.docs import GENERATED, commands_page, graphs_page, main
from tests.conftest import ROOT


def test_the_commands_page_shows_each_option_with_what_it_takes() -> None:
    # WHEN the page is made from the CLI's parser
    page = commands_page()
    # THEN each command has its heading, and an option its argument, whether it repeats, and its default
    assert page.startswith(f"{GENERATED}\n\n# Commands\n")
    assert "## `fluxplane packs`\n" in page and "### `fluxplane packs show`\n" in page
    assert "| `--replace` | `KIND/NAMESPACE/NAME` (repeatable) |  |" in page
    assert "| `--root` | `ROOT` | `.` | project folder holding environments/ (default: .) |" in page
    # AND a placeholder in a help text shows as text, not as an HTML tag
    assert "&lt;root>/dist" in page


def test_the_graphs_page_draws_the_hub_and_a_workload_cluster() -> None:
    page = graphs_page(ROOT)
    assert page.count("```mermaid\nflowchart LR\n") == 2
    assert "## `hub`" in page and "## `staging-usw2`" in page


def test_main_writes_the_pages_and_check_names_a_stale_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the pages written into a folder
    assert main(["--root", str(ROOT), str(tmp_path)]) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["commands.md", "definition.md", "graphs.md", "packs.md"]
    assert main(["--root", str(ROOT), "--check", str(tmp_path)]) == 0
    capsys.readouterr()
    # WHEN one is edited by hand THEN the check fails, naming it and what to run, and writes nothing
    (tmp_path / "packs.md").write_text("edited\n")
    assert main(["--root", str(ROOT), "--check", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"{tmp_path / 'packs.md'}: stale; run 'make docs' to regenerate it\n"
    assert (tmp_path / "packs.md").read_text() == "edited\n"
