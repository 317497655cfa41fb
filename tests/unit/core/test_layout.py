"""Paths in dist/ and the Flux paths that point at them."""

from __future__ import annotations

from fluxplane.config.models import Repository
from fluxplane.core.layout import RepositoryLayout, catalogue_dir, cluster_dir, relative


def test_flux_path_defaults_to_dist_folder_of_the_fleet_repository() -> None:
    layout = RepositoryLayout("platform", Repository.model_validate({"url": "https://example.com/fleet.git"}))
    assert layout.prefix == "dist/platform"
    assert layout.flux_path("clusters/hub") == "./dist/platform/clusters/hub"


def test_flux_path_with_repository_root_path() -> None:
    layout = RepositoryLayout("platform", Repository.model_validate({"url": "https://example.com/x.git", "path": "."}))
    assert layout.flux_path("clusters/hub") == "./clusters/hub"
    assert layout.flux_path("") == "./"


def test_catalogue_and_cluster_dirs() -> None:
    assert catalogue_dir("controllers", "metrics-server") == "infrastructure/controllers/metrics-server"
    assert catalogue_dir("apps", "podinfo") == "apps/podinfo"
    assert cluster_dir("hub") == "clusters/hub"
    assert relative("clusters/a/overlays/p", "apps/p/production") == "../../../../apps/p/production"
