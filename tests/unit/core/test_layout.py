"""Paths in dist/ and the Flux paths that point at them."""

from __future__ import annotations

import re

from fluxplane.config.models import Repository
from fluxplane.core.layout import (
    CLUSTER_VARIABLE,
    RepositoryLayout,
    catalogue_dir,
    cluster_dir,
    cluster_overlay_dir,
    cluster_variables,
    is_cluster_overlay,
    relative,
)


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


def test_a_clusters_variables_are_named_once_and_referenced_by_one_pattern() -> None:
    # GIVEN a cluster's values WHEN its variables are made THEN each name of CLUSTER_VARIABLE_NAMES has its value
    variables = cluster_variables("staging-usw2", "us-west-2", "staging", "1.34")
    assert variables == {
        "cluster_name": "staging-usw2",
        "cluster_region": "us-west-2",
        "environment": "staging",
        "kubernetes_version": "1.34",
    }
    # AND the pattern a pack checks its values with knows exactly those names
    assert [name for name in variables if re.fullmatch(CLUSTER_VARIABLE, f"${{{name}}}")] == list(variables)
    assert not re.fullmatch(CLUSTER_VARIABLE, "${cluster_zone}")


def test_a_clusters_overlay_of_a_pack_has_one_folder_and_is_told_from_the_catalogue() -> None:
    # GIVEN cluster a's overlay of cert-manager WHEN its folder is made THEN it lies in the cluster's entry point
    folder = cluster_overlay_dir("a", "cert-manager")
    assert folder == "clusters/a/overlays/cert-manager"
    # AND it, and a folder below it, is a cluster's overlay; the catalogue's own overlays are not
    assert is_cluster_overlay(folder) and is_cluster_overlay(f"platform/{folder}/extra")
    assert not is_cluster_overlay("platform/infrastructure/controllers/cert-manager/staging")
    assert not is_cluster_overlay("platform/overlays/cert-manager")
