"""The example fleet's pages in a real browser (headless Chromium, tests.support.browser): every page loads with no
console error and no failed request, every link resolves, the graphs are drawn, the add-on matrix lists every pack.

The run writes screenshots of the fleet overview, a cluster page and the add-on matrix into docs/images/
(SCREENSHOTS), where the documentation shows them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import pytest

from fluxplane.review import site
from fluxplane.synth import load_plan
from tests.conftest import ROOT
from tests.support.browser import VIEWPORT, Visit, browser_page, missing

#: A real tool, the browser, over the whole example: `-m "not slow"` leaves it out with the others.
pytestmark = pytest.mark.slow

#: Where the screenshots go, and the day the pages judge EKS support on (so they look the same every run).
SCREENSHOTS = ROOT / "docs" / "images"
TODAY = date(2026, 11, 28)
#: The example hub's Flux objects, as its graph names them.
HUB_NODES = {
    "addon-identities",
    "app-compositions",
    "cert-manager",
    "cert-manager-configs",
    "crossplane",
    "crossplane-provider-configs",
    "crossplane-providers",
    "eks-compositions",
    "fluent-bit",
    "flux-system",
    "kyverno",
    "kyverno-configs",
    "metrics-server",
    "spoke-bootstrap",
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's site, with the change page of the working tree against HEAD."""
    reason = missing()
    if reason is not None:
        pytest.skip(reason)  # before the build, which takes a while
    folder = tmp_path_factory.mktemp("site")
    site.build(ROOT, folder, TODAY, base="HEAD")
    return folder


@pytest.fixture
def visit(pages: Path) -> Iterator[Visit]:
    with browser_page(pages) as visit:
        yield visit


def test_every_page_loads_cleanly_and_every_link_resolves(pages: Path, visit: Visit) -> None:
    # GIVEN the site, crawled from its front page
    start = visit.base + "index.html"
    queue, seen, anchors = deque([start]), {start}, []
    while queue:
        url = queue.popleft()
        visit.open(url.removeprefix(visit.base))
        links = visit.page.eval_on_selector_all("a[href]", "links => links.map(link => link.href)")
        for link in links:
            target, fragment = urldefrag(urljoin(url, link))
            # THEN no link leaves the site
            assert target.startswith(visit.base), (url, link)
            if fragment:
                anchors.append((target, fragment))
            if target not in seen:
                seen.add(target)
                queue.append(target)
    # AND every page of the folder was reached, and each loaded with no console error or failed request
    written = {path.relative_to(pages).as_posix() for path in pages.rglob("*.html")}
    assert {url.removeprefix(visit.base) for url in seen} == written
    assert visit.problems == []
    # AND every #anchor names an element of its page
    for target, fragment in sorted(set(anchors)):
        visit.open(target.removeprefix(visit.base))
        assert visit.page.locator(f"#{fragment}").count() == 1, (target, fragment)
    assert "change.html" in written


def test_the_hubs_graph_is_drawn_with_its_nodes(visit: Visit) -> None:
    visit.open("clusters/hub.html")
    graph = visit.page.locator("svg.graph")
    box = graph.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    names = set(visit.page.locator("svg.graph g.node text.name").all_text_contents())
    assert names == HUB_NODES
    # every edge has a drawn path of some length
    lengths = visit.page.eval_on_selector_all(
        "svg.graph path.edge.depends", "paths => paths.map(path => path.getTotalLength())"
    )
    assert lengths and all(length > 10 for length in lengths)
    assert visit.problems == []


def test_a_workload_clusters_graph_shows_the_hubs_chain(visit: Visit) -> None:
    visit.open("clusters/staging-usw2.html")
    assert visit.page.locator("svg.graph g.node.hub").count() > 5
    assert visit.page.locator("svg.graph path.edge.applies").count() >= 1
    assert visit.problems == []


def test_the_addon_matrix_lists_every_pack_of_the_example(visit: Visit) -> None:
    plan = load_plan(ROOT)
    packs = sorted({name for cluster in plan.clusters for name in cluster.packs})
    visit.open("addons.html")
    rows = visit.page.locator("table.matrix tbody tr td:first-child").all_text_contents()
    assert rows == packs
    columns = visit.page.locator("table.matrix thead th a").all_text_contents()
    assert columns == [cluster.name for cluster in plan.clusters]
    assert visit.problems == []


@pytest.mark.parametrize(
    ("page", "image", "down_to"),
    [
        ("index.html", "fleet-overview.png", None),
        # a cluster page down to its graph: its tables below run long
        ("clusters/staging-usw2.html", "cluster.png", "#graph"),
        ("addons.html", "addons.png", None),
    ],
)
def test_screenshots(visit: Visit, page: str, image: str, down_to: str | None) -> None:
    visit.open(page)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = str(SCREENSHOTS / image)
    if down_to is None:
        visit.page.screenshot(path=path, full_page=True)
    else:
        box = visit.page.locator(down_to).bounding_box()
        assert box is not None
        clip = {"x": 0, "y": 0, "width": VIEWPORT["width"], "height": box["y"] + box["height"] + 24}
        visit.page.screenshot(path=path, full_page=True, clip=clip)
    assert (SCREENSHOTS / image).stat().st_size > 10_000
    assert visit.problems == []
