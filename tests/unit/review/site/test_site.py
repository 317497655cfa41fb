"""fluxplane.review.site: the pages written into a folder, the same bytes for the same fleet, old cluster pages gone."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fluxplane.review import site
from fluxplane.review.site import pages
from fluxplane.review.site.model import PullRequestChange, SiteError
from tests.conftest import ROOT
from tests.support.files import read_tree
from tests.support.html import parse
from tests.support.site import TODAY, example


def test_the_site_is_every_page_and_the_stylesheet_and_the_same_bytes_each_time(tmp_path: Path) -> None:
    written = site.write(example(), tmp_path / "one")
    assert written == sorted(
        ["index.html", "addons.html", "apps.html", "style.css"]
        + [f"clusters/{cluster.name}.html" for cluster in example().clusters]
    )
    site.write(example(), tmp_path / "two")
    assert read_tree(tmp_path / "one") == read_tree(tmp_path / "two")
    assert (tmp_path / "one" / "style.css").read_text() == site.stylesheet()


def test_build_reads_the_project_and_is_deterministic(tmp_path: Path) -> None:
    site.build(ROOT, tmp_path / "a", TODAY)
    site.build(ROOT, tmp_path / "b", TODAY)
    assert read_tree(tmp_path / "a") == read_tree(tmp_path / "b")
    assert read_tree(tmp_path / "a")["index.html"] == pages.fleet_page(example()).encode()


def test_a_rewrite_drops_pages_of_clusters_gone_and_a_change_page_of_a_run_without_base(tmp_path: Path) -> None:
    folder = tmp_path / "site"
    site.write(example(), folder)  # a previous run, which made the folder the site's own
    (folder / "clusters" / "removed-cluster.html").write_text("old")
    (folder / "change.html").write_text("old")
    (folder / "notes.txt").write_text("mine")
    site.write(example(), folder)
    assert not (folder / "clusters" / "removed-cluster.html").exists()
    assert not (folder / "change.html").exists()
    assert (folder / "notes.txt").read_text() == "mine"


def test_with_a_change_the_change_page_is_linked_from_every_page(tmp_path: Path) -> None:
    change = PullRequestChange(
        "main", "0123456789abcdef", "Plan: AWS 1 to create", "+ added <Secret>", "  + creates queue"
    )
    fleet = dataclasses.replace(example(), change=change)
    written = site.write(fleet, tmp_path)
    assert "change.html" in written
    page = parse((tmp_path / "change.html").read_text())
    assert page.find("p", "summary").text == "Plan: AWS 1 to create"
    reports = [pre.text for pre in page.iter("pre", "report")]
    assert reports == ["+ creates queue", "+ added <Secret>"]
    assert [span.text for span in page.iter("span", "add")] == ["+ creates queue", "+ added <Secret>"]
    for path in written:
        if path.endswith(".html"):
            links = [
                a.attributes["href"] for a in parse((tmp_path / path).read_text()).find("nav", "sections").iter("a")
            ]
            expected = "../change.html" if path.startswith("clusters/") else "change.html"
            assert links[-1] == expected


def test_a_folder_it_cannot_write_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(SiteError, match=r"^.*file/site: cannot write the site: ") as raised:
        site.write(example(), tmp_path / "file" / "site")
    assert len(raised.value.problems) == 1


def test_a_folder_with_files_the_site_did_not_write_is_left_alone(tmp_path: Path) -> None:
    # GIVEN someone's folder, with an index.html and cluster pages of their own
    (tmp_path / "clusters").mkdir()
    (tmp_path / "clusters" / "notes.html").write_text("mine")
    (tmp_path / "index.html").write_text("mine")
    # WHEN the site is written there THEN it is refused in one line, and nothing is written or removed
    with pytest.raises(SiteError, match=r"holds files fluxplane site did not write \(no \.fluxplane-site\)"):
        site.write(example(), tmp_path)
    assert read_tree(tmp_path) == {"clusters/notes.html": b"mine", "index.html": b"mine"}
    # AND a new or empty folder becomes the site's own, rewritten on the next run
    site.write(example(), tmp_path / "new")
    site.write(example(), tmp_path / "new")
    assert (tmp_path / "new" / site.MARKER).is_file()
