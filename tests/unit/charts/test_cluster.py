"""ClusterChart (fluxplane.charts.cluster): a cluster's entry point, clusters/<cluster>/ in the platform repository."""

from __future__ import annotations

from typing import Any

import cdk8s
import pytest

from fluxplane.charts import cluster as cluster_module
from fluxplane.charts.cluster import ClusterChart
from fluxplane.config.models import FluxSettings, Repository
from fluxplane.constructs.base import resources_below
from fluxplane.core.layout import PLATFORM, WORKLOADS, RepositoryLayout
from fluxplane.errors import ConstructError

PLATFORM_URL = "ssh://git@example.com/org/fleet.git"
LAYOUT = RepositoryLayout(PLATFORM, Repository.model_validate({"url": PLATFORM_URL}))
#: A workloads repository of its own, not the platform's.
WORKLOADS_LAYOUT = RepositoryLayout(
    WORKLOADS, Repository.model_validate({"url": "https://github.com/org/workloads.git"})
)
#: What each pack's Kustomization shares, with the fleet's default Flux settings.
PACK_SPEC: dict[str, Any] = {
    "interval": "10m",
    "retryInterval": "2m",
    "timeout": "5m",
    "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
    "prune": True,
    "postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "cluster-vars"}]},
    "serviceAccountName": "kustomize-controller",
}


def chart(**options: Any) -> ClusterChart:
    return ClusterChart(
        cdk8s.App(),
        "cluster",
        layout=LAYOUT,
        cluster="a",
        variables={"cluster_name": "a"},
        flux=FluxSettings(),
        **options,
    )


def files(cluster: ClusterChart) -> dict[str, list[dict[str, Any]]]:
    return {file.path: file.documents() for file in cluster.files}


def test_a_cluster_s_entry_point_syncs_its_folder_and_holds_its_variables() -> None:
    # GIVEN a cluster with no pack WHEN its chart is finished
    cluster = chart()
    cluster.finish()
    written = files(cluster)

    # THEN its entry point lists the sync folder and the variables, in that order
    assert list(written) == [
        "clusters/a/flux-system/gotk-sync.yaml",
        "clusters/a/flux-system/kustomization.yaml",
        "clusters/a/cluster-vars.yaml",
        "clusters/a/kustomization.yaml",
    ]
    assert written["clusters/a/kustomization.yaml"][0]["resources"] == ["flux-system", "cluster-vars.yaml"]
    # AND Flux's sync objects read the platform repository's folder of the cluster
    source, sync = written["clusters/a/flux-system/gotk-sync.yaml"]
    assert (source["kind"], source["metadata"]["name"], source["spec"]["url"]) == (
        "GitRepository",
        "flux-system",
        PLATFORM_URL,
    )
    assert sync["spec"]["path"] == "./dist/platform/clusters/a"
    assert sync["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "flux-system"}
    # AND the variables are the cluster-vars ConfigMap every Kustomization substitutes from
    assert written["clusters/a/cluster-vars.yaml"] == [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cluster-vars", "namespace": "flux-system"},
            "data": {"cluster_name": "a"},
        }
    ]
    # AND fluxplane writes the sync folder itself
    assert cluster.owned_elsewhere == ()


def test_a_cluster_flux_bootstrapped_leaves_its_sync_folder_to_flux() -> None:
    assert chart(bootstrap="flux").owned_elsewhere == ("platform/clusters/a/flux-system/",)


def test_packs_go_to_their_layer_s_file_with_their_label_wait_and_timeout() -> None:
    # GIVEN a controllers pack that takes long and an apps pack with no health gate
    cluster = chart()
    cluster.add_pack("metrics", "controllers", "infrastructure/controllers/metrics", timeout="20m")
    cluster.add_pack("web", "apps", "apps/web", wait=True)
    cluster.finish()
    written = files(cluster)

    # THEN the controllers pack is in infrastructure.yaml, the apps pack in apps.yaml, both listed by the entry point
    (metrics,) = written["clusters/a/infrastructure.yaml"]
    (web,) = written["clusters/a/apps.yaml"]
    assert metrics["metadata"] == {
        "name": "metrics",
        "namespace": "flux-system",
        "labels": {"fluxplane.io/layer": "controllers"},
    }
    assert metrics["spec"] == {
        **PACK_SPEC,
        "timeout": "20m",
        "path": "./dist/platform/infrastructure/controllers/metrics",
    }
    assert web["metadata"]["labels"] == {"fluxplane.io/layer": "apps"}
    assert web["spec"] == {**PACK_SPEC, "path": "./dist/platform/apps/web", "wait": True}
    assert written["clusters/a/kustomization.yaml"][0]["resources"] == [
        "flux-system",
        "cluster-vars.yaml",
        "infrastructure.yaml",
        "apps.yaml",
    ]
    assert list(cluster.pack_kustomizations) == ["metrics", "web"]


def test_a_pack_s_timeout_must_be_a_duration() -> None:
    with pytest.raises(ConstructError, match=r"timeout of pack 'metrics' must be a duration such as 30m, got '20'$"):
        chart().add_pack("metrics", "controllers", "infrastructure/controllers/metrics", timeout="20")


def test_tenants_from_a_workloads_repository_of_their_own_get_its_source() -> None:
    # GIVEN a cluster whose tenants live in a repository other than the platform's
    cluster = chart()
    cluster.add_tenants(WORKLOADS_LAYOUT)
    cluster.add_app_resources("clusters/a/app-resources", timeout="20m")
    cluster.finish()

    # THEN tenants.yaml holds that repository's source, and the tenants and app-resources Kustomizations read it
    source, tenants, resources = files(cluster)["clusters/a/tenants.yaml"]
    assert (source["kind"], source["metadata"]["name"]) == ("GitRepository", "workloads")
    assert source["spec"]["url"] == "https://github.com/org/workloads.git"
    assert tenants["metadata"]["name"] == "tenants"
    assert tenants["spec"]["path"] == "./dist/workloads/clusters/a"
    assert tenants["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "workloads"}
    assert resources["metadata"]["name"] == "app-resources"
    assert resources["spec"]["path"] == "./dist/workloads/clusters/a/app-resources"
    assert (resources["spec"]["sourceRef"]["name"], resources["spec"]["timeout"], resources["spec"]["wait"]) == (
        "workloads",
        "20m",
        True,
    )


def test_app_resources_need_the_tenants_first() -> None:
    with pytest.raises(ConstructError, match=r"^cluster 'a': add the tenants before their resources$"):
        chart().add_app_resources("clusters/a/app-resources", timeout="20m")


def test_a_sparse_checkout_fetches_only_the_folders_the_cluster_reads() -> None:
    # GIVEN a pack from the catalogue, an overlay in the cluster's folder, and tenants in a repository of their own
    cluster = chart()
    cluster.add_pack("metrics", "controllers", "infrastructure/controllers/metrics")
    cluster.add_pack("metrics-overlay", "configs", "clusters/a/configs/metrics")
    cluster.add_tenants(WORKLOADS_LAYOUT)

    # WHEN finished with a sparse checkout
    cluster.finish(sparse=True)
    written = files(cluster)

    # THEN the platform source fetches the cluster's own folder and the catalogue's top folder, nothing else
    source = written["clusters/a/flux-system/gotk-sync.yaml"][0]
    assert source["spec"]["sparseCheckout"] == ["dist/platform/clusters/a", "dist/platform/infrastructure"]
    # AND the workloads source fetches the cluster's tenants' folder alone
    workloads = written["clusters/a/tenants.yaml"][0]
    assert workloads["spec"]["sparseCheckout"] == ["dist/workloads/clusters/a"]


def test_a_sparse_checkout_is_worked_out_in_one_walk_of_the_chart(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a cluster with packs from the catalogue and from its own folder, whose walks are counted
    cluster = chart()
    cluster.add_pack("metrics", "controllers", "infrastructure/controllers/metrics")
    cluster.add_pack("metrics-overlay", "configs", "clusters/a/configs/metrics")
    walked: list[Any] = []

    def counted(scope: Any) -> Any:
        walked.append(scope)
        return resources_below(scope)

    monkeypatch.setattr(cluster_module, "resources_below", counted)
    # WHEN its sources are given a sparse checkout
    cluster.check_out_sources()

    # THEN the folders were found in one walk of the chart
    assert walked == [cluster]
    source = files(cluster)["clusters/a/flux-system/gotk-sync.yaml"][0]
    assert source["spec"]["sparseCheckout"] == ["dist/platform/clusters/a", "dist/platform/infrastructure"]


def test_without_a_sparse_checkout_the_source_fetches_the_whole_repository() -> None:
    cluster = chart()
    cluster.add_pack("metrics", "controllers", "infrastructure/controllers/metrics")
    cluster.finish()
    assert "sparseCheckout" not in files(cluster)["clusters/a/flux-system/gotk-sync.yaml"][0]["spec"]


def test_a_cluster_s_overlay_also_fetches_its_layer_s_catalogue() -> None:
    # GIVEN a cluster whose only pack is an overlay in its own folder, which builds on the configs catalogue
    cluster = chart()
    cluster.add_pack("metrics", "configs", "clusters/a/configs/metrics")

    # WHEN finished with a sparse checkout THEN the source fetches the catalogue's top folder too
    cluster.finish(sparse=True)
    source = files(cluster)["clusters/a/flux-system/gotk-sync.yaml"][0]
    assert source["spec"]["sparseCheckout"] == ["dist/platform/clusters/a", "dist/platform/infrastructure"]
