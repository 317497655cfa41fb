"""Tests for fluxplane.review.plan.kube: the releases and packages a cluster installs or upgrades, and the destructive
Kubernetes changes."""

from __future__ import annotations

from typing import Any

from fluxplane.review.diff.objects import ClusterDiff, ObjectChange
from fluxplane.review.plan.kube import kubernetes_changes


def release(version: str = "1.0.0", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "app", "namespace": "flux-system"},
        "spec": {"chart": {"spec": {"chart": "app", "version": version}}, **spec},
    }


def doc(api: str, kind: str, name: str, namespace: str = "", **spec: Any) -> dict[str, Any]:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": api, "kind": kind, "metadata": metadata, "spec": spec}


def changes(before: dict[str, Any] | None, after: dict[str, Any] | None, status: str = "") -> list[tuple[str, str]]:
    body = after if after is not None else before
    assert body is not None
    api = str(body["apiVersion"])
    metadata = body["metadata"]
    key = (api.rpartition("/")[0], body["kind"], metadata.get("namespace", ""), metadata["name"])
    section = ClusterDiff("platform", "c1", status, [ObjectChange("platform", "c1", key, before, after)])
    return [(change.action, change.reason) for change in kubernetes_changes([section])]


def test_a_release_is_installed_upgraded_reinstalled_and_uninstalled() -> None:
    assert changes(None, release()) == [
        ("create", "installs chart app 1.0.0 as release app in flux-system, or takes over the one running there")
    ]
    assert changes(release(), release("1.1.0")) == [("update", "upgrades chart app from 1.0.0 to 1.1.0")]
    assert changes(release(), release(values={"a": 1})) == [("update", "its values or settings change")]
    assert changes(release(), release(targetNamespace="apps")) == [
        (
            "reinstall",
            "the release moves from app in flux-system to apps-app in apps (stored in flux-system): helm-controller "
            "uninstalls it, deleting what it installed, then installs the new one",
        )
    ]
    assert changes(release(), None) == [
        ("delete", "helm-controller uninstalls release app in flux-system, deleting what it installed")
    ]


def test_a_release_of_another_chart_is_reinstalled() -> None:
    # GIVEN a release of chart app from a HelmRepository WHEN it installs chart web instead
    def of(chart: str) -> dict[str, Any]:
        made = release()
        made["spec"]["chart"]["spec"].update(chart=chart, sourceRef={"kind": "HelmRepository", "name": "charts"})
        return made

    # THEN the plan says helm-controller reinstalls it
    assert changes(of("app"), of("web")) == [
        (
            "reinstall",
            "the chart of release app in flux-system changes from app to web: helm-controller uninstalls it, "
            "deleting what it installed, then installs the new one",
        )
    ]


def test_a_release_is_named_as_helm_ls_lists_it_records_included() -> None:
    # GIVEN a release installed into its own namespace with Helm's records there, then moved to flux-system's records
    own = release(targetNamespace="web", releaseName="web", storageNamespace="web")
    # WHEN it is added, and WHEN only its records move THEN each names the release as helm ls -A lists it
    assert changes(None, own) == [
        ("create", "installs chart app 1.0.0 as release web in web, or takes over the one running there")
    ]
    moved = release(targetNamespace="web", releaseName="web", storageNamespace="flux-system")
    assert changes(own, moved)[0][1].startswith(
        "the release moves from web in web to web in web (stored in flux-system)"
    )


def test_a_crossplane_package_upgrade_names_its_tag() -> None:
    old = doc("pkg.crossplane.io/v1", "Provider", "p", package="xpkg.crossplane.io/org/provider-aws-rds:v2.6.0")
    new = doc("pkg.crossplane.io/v1", "Provider", "p", package="xpkg.crossplane.io/org/provider-aws-rds:v2.7.0")
    assert changes(old, new) == [("update", "upgrades xpkg.crossplane.io/org/provider-aws-rds from v2.6.0 to v2.7.0")]


def test_deletions_that_take_more_with_them() -> None:
    assert changes(doc("v1", "Namespace", "apps"), None) == [("delete", "deletes everything in the namespace")]
    crd = doc("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com", names={"kind": "Widget"})
    assert changes(crd, None) == [("delete", "deletes every Widget on the cluster")]
    pruning = doc("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "apps", "flux-system", prune=True)
    assert changes(pruning, None) == [("delete", "Flux prunes everything it applied")]
    kept = doc("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "apps", "flux-system", prune=False)
    assert changes(kept, None) == []
    assert changes(doc("v1", "ConfigMap", "x", "apps"), None) == []


def test_an_immutable_field_is_a_replacement_but_not_for_cloud_kinds() -> None:
    old = doc("apps/v1", "Deployment", "web", "apps", selector={"matchLabels": {"app": "web"}})
    new = doc("apps/v1", "Deployment", "web", "apps", selector={"matchLabels": {"app": "site"}})
    assert changes(old, new) == [
        ("replace", "spec.selector changed, which the API server refuses: the object has to be made anew")
    ]
    table = doc("platform.fluxplane.io/v1alpha1", "AppTable", "t", "apps", hashKey="a")
    assert changes(table, doc("platform.fluxplane.io/v1alpha1", "AppTable", "t", "apps", hashKey="b")) == []


def test_a_cluster_that_goes_is_one_line() -> None:
    assert changes(doc("v1", "Namespace", "apps"), None, status="removed") == [
        ("delete", "the cluster goes, and the 1 objects platform/ gives it with it")
    ]
