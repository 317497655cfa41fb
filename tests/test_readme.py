"""The README and the documentation stay true: the reference pages are what the code generates, the Quick start is
the two make targets, the transcripts are real output, and every link finds its page and heading."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import markdown as markdown_lib
import pytest
import yaml
from pymdownx.slugs import slugify

from fluxplane.config.reference import markdown
from tests.conftest import CRDS, ROOT

README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """A page of the documentation, by its path under docs/."""
    return (DOCS / name).read_text()


def test_the_reference_pages_are_what_the_code_generates() -> None:
    from fluxplane.docs import stale

    assert stale(ROOT, DOCS / "reference") == [], "the reference pages are stale: run 'make docs' and commit them"


def test_the_definition_reference_documents_every_field_of_every_model() -> None:
    from fluxplane.config.reference import SECTIONS

    section = page("reference/definition.md")
    for model, heading, _ in SECTIONS:
        assert f"## {heading}\n" in section
        for name, field in model.model_fields.items():
            assert f"| `{field.alias or name}` |" in section, (model.__name__, name)
            assert field.description, f"{model.__name__}.{name} has no description"


def test_the_commands_reference_has_every_command_and_option() -> None:
    import argparse

    from fluxplane.cli import build_parser

    reference = page("reference/commands.md")

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, subparser in action.choices.items():
                    assert f"# `{name} {sub}`\n" in reference, f"{name} {sub}"
                    walk(subparser, f"{name} {sub}")
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}`" in reference, (name, option)

    walk(build_parser(), "fluxplane")


def test_the_packs_reference_has_every_pack_with_its_iam_policy() -> None:
    from fluxplane.packs.registry import PackRegistry

    reference = page("reference/packs.md")
    for pack in PackRegistry.from_entry_points():
        assert f"## `{pack.name}`\n" in reference
    assert '"route53:ChangeResourceRecordSets"' in reference


def test_quick_start_is_make_synth_and_make_test() -> None:
    quick_start = README[README.index("## Quick start") :]
    quick_start = quick_start[: quick_start.index("\n## ")]
    assert "make synth" in quick_start and "make test" in quick_start


def test_the_readme_is_the_front_door() -> None:
    # what fluxplane is, install, the two commands, a picture and links: the rest is in docs/
    assert len(README.splitlines()) <= 200
    assert "```mermaid" in README and "pip install fluxplane" in README


def test_reference_command_prints_the_same_reference() -> None:
    out = subprocess.run([sys.executable, "-m", "fluxplane", "reference"], capture_output=True, text=True, check=True)
    assert out.stdout == markdown()


def test_the_catalogue_table_lists_every_installed_pack() -> None:
    from fluxplane.packs.registry import PackRegistry

    section = page("explanation/packs.md")
    listed = {line.split("|")[1].strip().strip("`") for line in section.splitlines() if line.startswith("| `")}
    assert listed == set(PackRegistry.from_entry_points().names)


def _transcript(text: str, command: str) -> list[str]:
    """The lines ``text`` shows after ``$ COMMAND``, up to the end of its block, without the elisions."""
    block = text[text.index(f"$ {command}\n") + len(command) + 3 :]
    lines = block[: block.index("```")].splitlines()
    return [line for line in lines if line.strip() != "..." and not line.startswith(("$ ", "... "))]


def test_the_graph_transcript_is_real_output() -> None:
    # GIVEN the guide's graph excerpt WHEN the command runs on the example THEN every line shown is in its output
    out = subprocess.run(
        [sys.executable, "-m", "fluxplane", "--root", str(ROOT), "graph", "--cluster", "staging-usw2"],
        capture_output=True,
        text=True,
        check=True,
    )
    shown = _transcript(page("how-to/review-a-change.md"), "fluxplane graph --cluster staging-usw2")
    assert len(shown) > 5
    assert [line for line in shown if line not in out.stdout.splitlines()] == []


@pytest.mark.skipif(not CRDS.is_dir(), reason="../shared/crds (the upstream CRDs) is not beside the project")
def test_the_clean_validate_summary_is_real_output() -> None:
    # GIVEN the committed dist/ WHEN validate runs on it (schemas aside) THEN it ends with the summary the guide quotes
    out = subprocess.run(
        [sys.executable, "-m", "fluxplane", "validate", "dist", "--crds", str(CRDS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout
    summary = out.stdout.splitlines()[-1]
    assert f"On the unchanged example: `{summary}`" in page("how-to/review-a-change.md")


# -- links ---------------------------------------------------------------------------------------------------------

#: The README and every page of docs/.
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


@cache
def anchors(path: Path) -> frozenset[str]:
    """The ids the site gives the headings of ``path``: Python-Markdown's toc with the slugs mkdocs.yml sets."""
    md = markdown_lib.Markdown(
        extensions=["toc", "tables", "pymdownx.superfences"],
        extension_configs={"toc": {"slugify": slugify(case="lower")}},
    )
    md.convert(path.read_text())
    found: set[str] = set()
    pending = list(md.toc_tokens)  # type: ignore[attr-defined]
    while pending:
        token = pending.pop()
        found.add(token["id"])
        pending.extend(token["children"])
    return frozenset(found)


def _links(path: Path) -> list[str]:
    """The relative links of a page, outside code blocks and code spans."""
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [link for link in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", link)]


def test_the_pages_link_to_each_other() -> None:
    # the link tests below read every relative link: there are many, to pages and to headings
    found = [link for path in PAGES for link in _links(path)]
    assert len(found) > 100 and sum("#" in link for link in found) > 50


@pytest.mark.parametrize("path", PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_link_finds_its_page_and_heading(path: Path) -> None:
    # GIVEN a page's relative links WHEN each is followed THEN the file is there, and so is the heading it names
    broken = []
    for link in _links(path):
        target, _, anchor = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        if not file.is_file():
            broken.append(f"{link}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{link}: no heading '{anchor}' in {file.relative_to(ROOT)}")
    assert broken == []


#: Where a test file the pages name may live besides this project: a fleet repository's own (the template init
#: writes) and the example pack's.
ELSEWHERE = (
    ROOT / "src" / "fluxplane" / "commands" / "scaffold" / "template",
    ROOT / "examples" / "fluxplane-pack-reloader",
)


def test_every_test_file_the_docs_name_exists() -> None:
    named = {
        name for path in PAGES for name in re.findall(r"\btests/[\w/.-]+\.py\b", path.read_text()) if "*" not in name
    }
    assert len(named) > 20
    missing = [
        name
        for name in sorted(named)
        if not (ROOT / name).is_file()
        and not any((place / f"{name}{ext}").is_file() for place in ELSEWHERE for ext in ("", ".in"))
    ]
    assert missing == []


def test_the_site_is_strict_and_fetches_nothing_when_viewed() -> None:
    # GIVEN mkdocs.yml (its !!python tags read as plain values)
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)
    # THEN a broken link or anchor fails the build, no web font is fetched, and the scripts are the site's own
    assert config["strict"] is True and config["validation"]["anchors"] == "warn"
    assert config["theme"]["font"] is False
    assert config["extra_javascript"] == ["assets/javascripts/mermaid.min.js"]
    assert (DOCS / "assets" / "javascripts" / "mermaid.min.js").stat().st_size > 1_000_000
    # AND every page is in the navigation
    listed: set[str] = set()
    pending: list[object] = list(config["nav"])
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        else:
            listed.add(str(item))
    assert listed == {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")}
