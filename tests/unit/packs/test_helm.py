"""chart_release: a HelmRepository and a HelmRelease with the fleet's release defaults."""

from __future__ import annotations

from fluxplane.constructs import Manifest, Root
from fluxplane.packs.helm import chart_release
from fluxplane.packs.versions import Chart


def test_chart_release_pairs_a_repository_and_a_release_in_flux_system() -> None:
    manifest = Manifest(Root(), "m", path="x.yaml")
    release = chart_release(
        manifest,
        name="demo",
        chart=Chart("https://charts.example.com", "demo-chart", "1.2.3"),
        version="1.2.4",
        target_namespace="demo",
        repository="example",
    )
    repository, released = manifest.documents()
    assert repository == {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmRepository",
        "metadata": {"name": "example", "namespace": "flux-system"},
        "spec": {"interval": "1h", "url": "https://charts.example.com"},
    }
    assert released["metadata"] == {"name": "demo", "namespace": "flux-system"}
    assert released["spec"]["chart"] == {
        "spec": {"chart": "demo-chart", "version": "1.2.4", "sourceRef": {"kind": "HelmRepository", "name": "example"}}
    }
    assert released["spec"]["targetNamespace"] == "demo"
    assert released["spec"]["releaseName"] == "demo"
    assert released["spec"]["install"] == {"crds": "CreateReplace", "remediation": {"retries": 3}}
    assert released["spec"]["upgrade"] == {
        "crds": "CreateReplace",
        "remediation": {"retries": 3, "strategy": "rollback"},
    }
    assert released["spec"]["driftDetection"] == {"mode": "enabled"}
    assert release.name == "demo"


def test_repository_defaults_to_the_release_name() -> None:
    manifest = Manifest(Root(), "m", path="x.yaml")
    chart_release(
        manifest, name="demo", chart=Chart("https://c.example.com", "demo", "1"), version="1", target_namespace="d"
    )
    assert manifest.documents()[0]["metadata"]["name"] == "demo"
