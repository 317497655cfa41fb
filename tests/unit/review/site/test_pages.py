"""fluxplane.review.site.pages: what each page of the example fleet shows, read back as HTML, and escaping."""

from __future__ import annotations

import dataclasses

import pytest

from fluxplane.review.site import model, pages
from fluxplane.review.site.model import Addon
from tests.support.html import Element, parse
from tests.support.site import example

#: A matrix cell of a pack the cluster does not enable.
OFF = "\N{EN DASH}"


def _rows(table: Element) -> list[list[str]]:
    return [[cell.text for cell in row.iter("td")] for row in table.find("tbody").iter("tr")]


def test_fleet_page_lists_every_cluster_under_its_environment_with_version_support_and_readiness() -> None:
    fleet = example()
    page = parse(pages.fleet_page(fleet))
    shown: dict[str, list[str]] = {}
    for section in page.iter("section", "panel"):
        if section.attributes.get("id", "").startswith("environment-"):
            table = section.find("table", "clusters")
            shown[section.attributes["id"].removeprefix("environment-")] = [row[0] for row in _rows(table)]
            for row in _rows(table):
                name = row[0].removesuffix(" hub")
                cluster = fleet.cluster(name)
                assert row[3] == cluster.versions.kubernetes
                assert row[4] == cluster.versions.support
                assert row[6] == f"ready for {cluster.versions.next}"
    assert shown == {
        "management": ["hub hub"],
        "production": ["production-usw2", "production-use1", "production-euc1", "production-euw1"],
        "staging": ["staging-usw2", "staging-euw1"],
    }
    # the Auto Mode cluster says so, the others name their node groups
    text = page.text
    assert "EKS Auto Mode: node pools general-purpose, system, batch" in text
    assert "node group general: m6i.xlarge, 3 to 9 nodes" in text
    # the cluster list beside every page links each cluster's page
    links = [link.attributes["href"] for link in page.find("nav", "clusters").iter("a")]
    assert links == [f"clusters/{cluster.name}.html" for cluster in fleet.clusters]


def test_timeline_shows_when_each_version_leaves_standard_support() -> None:
    fleet = example()
    release = fleet.cluster("hub").release
    assert release is not None
    section = next(s for s in parse(pages.fleet_page(fleet)).iter("section") if s.attributes.get("id") == "support")
    assert f"standard until {release.end_of_standard_support.isoformat()}" in section.text
    assert f"extended until {release.end_of_extended_support.isoformat()}" in section.text
    rows = _rows(section.find("table"))
    assert sorted(row[0] for row in rows) == sorted(cluster.name for cluster in fleet.clusters)


def test_addon_matrix_has_a_row_per_pack_with_each_clusters_version() -> None:
    fleet = example()
    table = parse(pages.addons_page(fleet)).find("table", "matrix")
    header = [cell.text for cell in table.find("thead").iter("th")]
    assert header == ["pack", "newest", *(cluster.name for cluster in fleet.clusters)]
    rows = {row[0]: row[1:] for row in _rows(table)}
    packs = sorted({name for cluster in fleet.clusters for name in cluster.versions.packs})
    assert sorted(rows) == packs
    for name, (newest, *cells) in rows.items():
        for cluster, cell in zip(fleet.clusters, cells, strict=True):
            assert cell == cluster.versions.packs.get(name, OFF)
        assert newest == next(addon.newest for addon in fleet.addons if addon.name == name)
    # the Auto Mode cluster runs no Karpenter; production-usw2 runs its own Crossplane
    assert rows["karpenter"][1 + [c.name for c in fleet.clusters].index("staging-euw1")] == OFF
    assert rows["crossplane"][1 + [c.name for c in fleet.clusters].index("production-usw2")] != OFF


def test_a_cluster_behind_the_newest_pin_is_marked() -> None:
    fleet = example()
    addon = next(addon for addon in fleet.addons if addon.name == "cert-manager")
    older = dict(addon.versions, **{"staging-usw2": "v1.9.0"})
    fleet = dataclasses.replace(
        fleet, addons=tuple(dataclasses.replace(a, versions=older) if a is addon else a for a in fleet.addons)
    )
    table = parse(pages.addons_page(fleet)).find("table", "matrix")
    row = next(row for row in table.find("tbody").iter("tr") if next(row.iter("td")).text == "cert-manager")
    behind = [span.text for span in row.iter("span", "behind")]
    assert behind == ["v1.9.0 ↓"]
    assert "1 behind" in row.text


def test_cluster_page_shows_its_graph_kustomizations_addons_and_apps() -> None:
    fleet = example()
    cluster = fleet.cluster("staging-usw2")
    page = parse(pages.cluster_page_html(fleet, cluster))
    graph = page.find("svg", "graph")
    drawn = {group.attributes["data-id"] for group in graph.iter("g", "node")}
    assert drawn == {node.id for node in cluster.graph.nodes}
    table = page.find("table", "kustomizations")
    rows = {
        row.find("code", "name").text: [cell.text for cell in row.iter("td")] for row in table.find("tbody").iter("tr")
    }
    assert list(rows) == [node.name for node in cluster.graph.nodes if node.kind == "Kustomization"]
    assert rows["cert-manager"][1:] == ["HelmRelease/cert-manager", "HelmRelease/cert-manager", "\N{EN DASH}"]
    assert rows["cert-manager-configs"][3] == "cert-manager"
    assert rows["flux-system"][3] == "applied by hub's flux-sync"
    assert rows["cluster"][0] == "hub cluster namespace staging-usw2 ./dist/platform/spokes/staging-usw2/cluster"
    apps = next(s for s in page.iter("section") if s.attributes.get("id") == "apps")
    assert _rows(apps.find("table")) == [
        ["notifications", "@example-org/notifications", "hub's own", "SQS queue staging-usw2-notifications-events"]
    ]
    addons = next(s for s in page.iter("section") if s.attributes.get("id") == "addons")
    assert [row[0] for row in _rows(addons.find("table"))] == [*cluster.versions.packs, *cluster.versions.controllers]


def test_apps_page_says_where_each_app_runs_who_owns_it_and_its_aws_resources() -> None:
    page = parse(pages.apps_page(example()))
    orders = next(s for s in page.iter("section") if s.attributes.get("id") == "app-orders")
    assert "@example-org/orders" in orders.text
    rows = _rows(orders.find("table"))
    assert [row[:4] for row in rows] == [
        ["production-usw2", "production", "production 444455556666", "us-west-2"],
        ["production-use1", "production", "production 444455556666", "us-east-1"],
        ["production-euw1", "production", "production 444455556666", "eu-west-1"],
    ]
    assert rows[1][4] == ("DynamoDB table production-use1-orders-orders RDS database production-use1-orders-main")


def test_a_hostile_name_is_text_everywhere_never_markup() -> None:
    # GIVEN a pack whose name and description (a third-party pack's) hold markup
    hostile = "\"><script>alert(1)</script><b x='&amp;"
    fleet = example()
    fleet = dataclasses.replace(fleet, addons=(*fleet.addons, Addon(hostile, hostile, "1.0.0", {"hub": "<i>0.9</i>"})))
    for text in [*pages.pages(fleet).values()]:
        # THEN no page holds the markup, and each parses back to the same elements
        assert "<script>" not in text
        assert "<i>0.9" not in text
        page = parse(text)
        assert not list(page.iter("script"))
    matrix = parse(pages.addons_page(fleet)).find("table", "matrix")
    row = _rows(matrix)[-1]
    assert row[0] == " ".join(hostile.split())
    assert row[2] == "<i>0.9</i> ↓"


def test_pages_link_the_stylesheet_and_nothing_outside() -> None:
    for path, text in pages.pages(example()).items():
        page = parse(text)
        depth = path.count("/")
        hrefs = [element.attributes.get("href", "") for element in page.iter() if "href" in element.attributes]
        sources = [element.attributes["src"] for element in page.iter() if "src" in element.attributes]
        assert f"{'../' * depth}style.css" in hrefs
        assert not sources
        assert not [href for href in hrefs if "://" in href or href.startswith("//")], path


def test_the_change_marks_added_and_removed_lines_but_not_a_list_item_of_context() -> None:
    diff = "\n".join(
        [
            "platform / staging-1: 0 added, 1 changed, 0 removed",
            "  ~ helm.toolkit.fluxcd.io/v2 HelmRelease flux-system/podinfo",
            "      --- HEAD: helm.toolkit.fluxcd.io/v2 HelmRelease flux-system/podinfo",
            "      +++ working tree: helm.toolkit.fluxcd.io/v2 HelmRelease flux-system/podinfo",
            "      @@ -24,6 +24,6 @@",
            "            values:",
            "      -       replicaCount: 1",
            "      +       replicaCount: 2",
            "              - kind: ConfigMap",
            "",
            "  ! risky: <deletes> a namespace",
        ]
    )
    change = model.PullRequestChange("main", "0123456789abcdef", "Plan: nothing", diff, "")
    page = parse(pages.change_page(dataclasses.replace(example(), change=change)))
    report = list(page.iter("pre", "report"))[1]
    marked = {span.text: span.attributes["class"] for span in report.iter("span")}
    assert marked == {
        "~ helm.toolkit.fluxcd.io/v2 HelmRelease flux-system/podinfo": "change",
        "--- HEAD: helm.toolkit.fluxcd.io/v2 HelmRelease flux-system/podinfo": "remove",
        "+++ working tree: helm.toolkit.fluxcd.io/v2 HelmRelease flux-system/podinfo": "add",
        "@@ -24,6 +24,6 @@": "hunk",
        "- replicaCount: 1": "remove",
        "+ replicaCount: 2": "add",
        "! risky: <deletes> a namespace": "risk",
    }


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://bot:s3cret@example.com/a.git", "https://***@example.com/a.git"),
        # a token alone before the '@' (GitHub's https://TOKEN@github.com/...), and one in the query
        ("https://s3cret@example.com/a.git", "https://***@example.com/a.git"),
        ("https://example.com/a.git?access_token=s3cret", "https://example.com/a.git?***"),
        # an SSH login is only a name
        ("ssh://git@example.com/a.git", "ssh://git@example.com/a.git"),
    ],
)
def test_a_credential_in_an_apps_repository_url_is_masked(url: str, shown: str) -> None:
    fleet = example()
    page = fleet.apps[0]
    app = page.app.model_copy(update={"repository": page.app.repository.model_copy(update={"url": url})})
    fleet = dataclasses.replace(fleet, apps=(dataclasses.replace(page, app=app), *fleet.apps[1:]))
    text = pages.apps_page(fleet)
    assert "s3cret" not in text
    assert shown in text
