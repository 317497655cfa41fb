"""The documentation site in a real browser (headless Chromium, tests.support.browser): built with mkdocs in strict
mode, every page loads with no console error and no failed request (nothing is fetched from outside the site), the
dependency graphs are drawn as pictures, and the search finds a command.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import pytest

from tests.conftest import ROOT
from tests.support.browser import Visit, browser_page, missing

#: A real tool, the browser, over the whole site: `-m "not slow"` leaves it out with the others.
pytestmark = pytest.mark.slow

GRAPHS = ROOT / "docs" / "reference" / "graphs.md"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The documentation site, as `make docs` builds it (strict: a broken link or anchor fails the build)."""
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("docs-site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture
def visit(built: Path) -> Iterator[Visit]:
    with browser_page(built) as visit:
        yield visit


def test_every_page_loads_cleanly_and_every_link_inside_the_site_resolves(built: Path, visit: Visit) -> None:
    # GIVEN the site, crawled from its front page through every link that stays inside it
    start = visit.base + "index.html"
    queue, seen = deque([start]), {start}
    while queue:
        url = queue.popleft()
        visit.open(url.removeprefix(visit.base))
        # the search's worker loads after the page: let it finish before the next page cancels it
        visit.page.wait_for_load_state("networkidle")
        for link in visit.page.eval_on_selector_all("a[href]", "links => links.map(link => link.href)"):
            target, _ = urldefrag(urljoin(url, link))
            if not target.startswith(visit.base) or not target.endswith(".html"):
                continue
            if target not in seen:
                seen.add(target)
                queue.append(target)
    # THEN every page of the site was reached
    written = {path.relative_to(built).as_posix() for path in built.rglob("*.html") if path.name != "404.html"}
    assert written <= {url.removeprefix(visit.base) for url in seen}
    # AND none had a console error, a failed request or a response of 400 or more (nothing outside is asked for)
    assert visit.problems == []


def test_the_graphs_are_drawn_as_pictures(visit: Visit) -> None:
    # GIVEN the example's graphs page: mermaid, shipped with the site (not fetched), draws each graph's text
    visit.open("reference/graphs.html")
    visit.page.wait_for_function("typeof mermaid === 'object'", timeout=30_000)
    # THEN each graph's box holds a picture (the theme draws into a closed shadow root: its size is what shows)
    visit.page.wait_for_function(
        "Array.from(document.querySelectorAll('div.mermaid')).every(box => box.getBoundingClientRect().height > 100)",
        timeout=30_000,
    )
    assert visit.page.locator("div.mermaid").count() == 2
    # AND the page's mermaid turns the hub's graph into an SVG with its Kustomizations
    text = GRAPHS.read_text().split("```mermaid\n", 1)[1].split("```", 1)[0]
    svg = visit.page.evaluate("async text => (await mermaid.render('hub-graph', text)).svg", text)
    assert svg.startswith("<svg") and "crossplane-providers" in svg and "spoke-bootstrap" in svg
    assert visit.problems == []


def test_the_search_finds_a_command(visit: Visit) -> None:
    visit.open("index.html")
    # the search's index loads in a worker after the page: a query typed before it is ready finds nothing
    visit.page.wait_for_load_state("networkidle")
    visit.page.locator("label.md-search__icon, .md-search__input").first.click()
    # typed as a reader types it: the search answers key presses
    visit.page.locator("input.md-search__input").press_sequentially("sealing-key", delay=30)
    results = visit.page.locator(".md-search-result__item")
    results.first.wait_for(timeout=30_000)
    found = " ".join(visit.page.locator(".md-search-result__link").evaluate_all("links => links.map(l => l.href)"))
    assert "reference/commands.html" in found
    assert visit.problems == []
