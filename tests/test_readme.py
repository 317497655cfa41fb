"""The README stays true: its reference matches the models, its Quick start is the two make targets."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from fluxplane.config.reference import BEGIN, END, markdown, replace_in
from tests.conftest import CRDS, ROOT

README = (ROOT / "README.md").read_text()


def test_fleet_reference_matches_the_models() -> None:
    # The section between the markers is exactly what the models generate (`make docs` rewrites it).
    assert replace_in(README) == README
    assert markdown() in README


def test_reference_documents_every_field_of_every_model() -> None:
    from fluxplane.config.reference import SECTIONS

    section = README[README.index(BEGIN) : README.index(END)]
    for model, heading, _ in SECTIONS:
        assert f"#### {heading}" in section
        for name, field in model.model_fields.items():
            assert f"| `{field.alias or name}` |" in section, (model.__name__, name)
            assert field.description, f"{model.__name__}.{name} has no description"


def test_quick_start_is_make_synth_and_make_test() -> None:
    quick_start = README[README.index("## Quick start") : README.index("## Bring up")]
    assert "make synth" in quick_start and "make test" in quick_start


def test_reference_command_prints_the_same_reference() -> None:
    out = subprocess.run([sys.executable, "-m", "fluxplane", "reference"], capture_output=True, text=True, check=True)
    assert out.stdout == markdown()


def test_the_catalogue_table_lists_every_installed_pack() -> None:
    from fluxplane.packs.registry import PackRegistry

    section = README[README.index("## Packs: the add-on catalogue") : README.index("### Write your own pack")]
    listed = {line.split("|")[1].strip().strip("`") for line in section.splitlines() if line.startswith("| `")}
    assert listed == set(PackRegistry.from_entry_points().names)


def _transcript(command: str) -> list[str]:
    """The lines the README shows after ``$ COMMAND``, up to the end of its block, without the elisions."""
    block = README[README.index(f"$ {command}\n") + len(command) + 3 :]
    lines = block[: block.index("```")].splitlines()
    return [line for line in lines if line.strip() != "..." and not line.startswith(("$ ", "... "))]


def test_the_graph_transcript_is_real_output() -> None:
    # GIVEN the README's graph excerpt WHEN the command runs on the example THEN every line shown is in its output
    out = subprocess.run(
        [sys.executable, "-m", "fluxplane", "--root", str(ROOT), "graph", "--cluster", "staging-usw2"],
        capture_output=True,
        text=True,
        check=True,
    )
    shown = _transcript("fluxplane graph --cluster staging-usw2")
    assert len(shown) > 5
    assert [line for line in shown if line not in out.stdout.splitlines()] == []


@pytest.mark.skipif(not CRDS.is_dir(), reason="../shared/crds (the upstream CRDs) is not beside the project")
def test_the_clean_validate_summary_is_real_output() -> None:
    # GIVEN the committed dist/ WHEN validate runs on it (schemas aside) THEN it ends with the summary the README quotes
    out = subprocess.run(
        [sys.executable, "-m", "fluxplane", "validate", "dist", "--crds", str(CRDS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout
    summary = out.stdout.splitlines()[-1]
    assert f"On the unchanged example: `{summary}`" in README


def _anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_link_inside_the_readme_finds_its_heading() -> None:
    # GIVEN the README's headings and its links to them
    headings = {_anchor(line.lstrip("#")) for line in README.splitlines() if re.match(r"^#{1,6} ", line)}
    links = set(re.findall(r"\]\(#([^)]+)\)", README))
    # THEN each link has its heading
    assert links
    assert links - headings == set()
