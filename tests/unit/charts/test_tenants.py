"""TenantsChart and the entry point's tenants.yaml: one tenant per app, from one repository or two."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.synth import load_plan
from fluxplane.synth.app import FleetApp
from fluxplane.synth.render import render_app
from tests.conftest import FleetWriter
from tests.support.packs import DEMO_HUB, demo_registry

PLATFORM = {"url": "ssh://git@example.com/org/fleet.git", "secretRef": None}
BASE: dict[str, Any] = {
    "repositories": {"platform": PLATFORM},
    "management": DEMO_HUB,
    "packs": {"ctrl": {}, "conf": {}},
}
ENVS = {
    "staging": {
        "clusters": [{"name": "staging-1", "region": "us-west-2"}, {"name": "staging-2", "region": "us-west-2"}]
    }
}
APP: dict[str, Any] = {
    "repository": {"url": "https://github.com/org/shop.git", "ref": {"tag": "v1.0.0"}},
    "path": "k8s",
    "overlay": "cluster",
    "namespace": "store",
    "clusters": ["staging-1"],
}


def render(write_fleet: FleetWriter, base: dict[str, Any], apps: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    project: Path = write_fleet(base=base, envs=ENVS)
    (project / "environments" / "apps").mkdir()
    for name, app in apps.items():
        (project / "environments" / "apps" / f"{name}.yaml").write_text(yaml.safe_dump(app))
    files = render_app(FleetApp(load_plan(project, demo_registry())))
    return {
        path: [doc for doc in yaml.safe_load_all(text) if doc] for path, text in files.items() if path.endswith(".yaml")
    }


def test_only_clusters_with_apps_get_tenants(write_fleet: FleetWriter) -> None:
    files = render(write_fleet, BASE, {"shop": APP})
    assert "platform/clusters/staging-1/tenants.yaml" in files
    assert "platform/clusters/staging-2/tenants.yaml" not in files
    assert not any(path.startswith("workloads/clusters/staging-2/") for path in files)
    assert files["workloads/clusters/staging-1/kustomization.yaml"][0]["resources"] == ["shop"]
    assert files["workloads/clusters/staging-1/shop/kustomization.yaml"][0]["resources"] == ["tenant.yaml", "sync.yaml"]


def test_a_tenant_in_its_own_namespace_deploys_its_cluster_overlay_after_the_top_infrastructure_layer(
    write_fleet: FleetWriter,
) -> None:
    files = render(write_fleet, BASE, {"shop": APP})
    tenant = {doc["kind"]: doc for doc in files["workloads/clusters/staging-1/shop/tenant.yaml"]}
    assert tenant["Namespace"]["metadata"]["name"] == "store"
    assert tenant["RoleBinding"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "shop-deployer", "namespace": "store"}
    ]
    assert tenant["RoleBinding"]["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "shop"}
    source, sync = files["workloads/clusters/staging-1/shop/sync.yaml"]
    assert source["spec"]["ref"] == {"tag": "v1.0.0"} and "secretRef" not in source["spec"]
    assert sync["metadata"] == {"name": "shop", "namespace": "store", "labels": {"fluxplane.io/tenant": "shop"}}
    assert sync["spec"]["path"] == "./k8s/staging-1"
    # configs wait for controllers; the tenant waits for the configs layer
    assert sync["spec"]["dependsOn"] == [{"name": "conf", "namespace": "flux-system"}]


def test_the_same_repository_serves_the_tenants_through_the_entry_points_source(write_fleet: FleetWriter) -> None:
    files = render(write_fleet, BASE, {"shop": APP})
    (tenants,) = files["platform/clusters/staging-1/tenants.yaml"]
    assert tenants["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "flux-system"}
    assert tenants["spec"]["path"] == "./dist/workloads/clusters/staging-1"
    assert "tenants.yaml" in files["platform/clusters/staging-1/kustomization.yaml"][0]["resources"]


def test_a_workloads_repository_of_its_own_gets_a_source_on_the_cluster(write_fleet: FleetWriter) -> None:
    workloads = {"url": "https://github.com/org/workloads.git", "secretRef": None, "path": "."}
    base = {**BASE, "repositories": {"platform": PLATFORM, "workloads": workloads}}
    files = render(write_fleet, base, {"shop": APP})
    source, tenants = files["platform/clusters/staging-1/tenants.yaml"]
    assert (source["kind"], source["metadata"]["name"], source["spec"]["url"]) == (
        "GitRepository",
        "workloads",
        "https://github.com/org/workloads.git",
    )
    assert tenants["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "workloads"}
    assert tenants["spec"]["path"] == "./clusters/staging-1"


MANAGE = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]


def tenant_role(write_fleet: FleetWriter) -> dict[str, Any]:
    files = render(write_fleet, BASE, {"shop": APP})
    (role,) = [doc for doc in files["workloads/clusters/staging-1/shop/tenant.yaml"] if doc["kind"] == "Role"]
    return role


def test_the_tenants_role_lists_its_verbs(write_fleet: FleetWriter) -> None:
    # GIVEN an app WHEN its tenant is rendered
    role = tenant_role(write_fleet)
    # THEN every rule names its verbs; pods' logs are only read
    assert role["rules"] == [
        {
            "apiGroups": [""],
            "resources": [
                "configmaps",
                "events",
                "persistentvolumeclaims",
                "pods",
                "secrets",
                "serviceaccounts",
                "services",
            ],
            "verbs": MANAGE,
        },
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["endpoints"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
        {
            "apiGroups": ["apps", "batch", "autoscaling", "policy", "networking.k8s.io"],
            "resources": ["*"],
            "verbs": MANAGE,
        },
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"], "verbs": MANAGE},
        {"apiGroups": ["bitnami.com"], "resources": ["sealedsecrets"], "verbs": MANAGE},
        {"apiGroups": ["external-secrets.io"], "resources": ["externalsecrets"], "verbs": MANAGE},
        {"apiGroups": ["helm.toolkit.fluxcd.io"], "resources": ["helmreleases"], "verbs": MANAGE},
        {"apiGroups": ["source.toolkit.fluxcd.io"], "resources": ["*"], "verbs": MANAGE},
    ]


def test_no_rule_of_the_tenants_role_grants_a_wildcard_escalate_bind_or_impersonate(write_fleet: FleetWriter) -> None:
    # GIVEN a tenant's Role
    rules = tenant_role(write_fleet)["rules"]
    # THEN no rule holds a verb that grants more than the objects: a wildcard, escalate, bind or impersonate
    assert [sorted({"*", "escalate", "bind", "impersonate"} & set(rule["verbs"])) for rule in rules] == [
        [] for _ in rules
    ]


def granted(rules: list[dict[str, Any]], group: str, resource: str) -> set[str]:
    """The verbs ``rules`` grant on ``resource`` of API group ``group``, wildcards included."""
    return {
        verb
        for rule in rules
        if {group, "*"} & set(rule["apiGroups"]) and {resource, "*"} & set(rule["resources"])
        for verb in rule["verbs"]
    }


@pytest.mark.parametrize(("group", "resource"), [("", "endpoints"), ("discovery.k8s.io", "endpointslices")])
def test_the_tenant_only_reads_endpoints_as_kubernetes_edit_and_admin_roles_do(
    write_fleet: FleetWriter, group: str, resource: str
) -> None:
    # GIVEN a tenant's Role
    rules = tenant_role(write_fleet)["rules"]
    # THEN it reads Endpoints and EndpointSlices, as Kubernetes' view role does, and writes neither: a Service's
    # endpoints written by hand could send its traffic anywhere (CVE-2021-25740, which took the write out of the
    # edit and admin roles)
    assert granted(rules, group, resource) == {"get", "list", "watch"}


def test_the_tenant_still_writes_roles_and_bindings_up_to_its_own_rights(write_fleet: FleetWriter) -> None:
    # GIVEN a tenant's Role
    rules = tenant_role(write_fleet)["rules"]
    (rbac,) = [rule for rule in rules if rule["apiGroups"] == ["rbac.authorization.k8s.io"]]
    # THEN it manages Roles and RoleBindings, which the API server lets it write up to the rights it holds
    # (without escalate and bind it cannot go beyond them)
    assert rbac["resources"] == ["roles", "rolebindings"]
    assert {"create", "update", "patch", "delete"} <= set(rbac["verbs"])


def test_flux_deploys_as_the_deployer_and_pods_run_as_the_app_which_holds_no_role(write_fleet: FleetWriter) -> None:
    # GIVEN an app in namespace store WHEN its tenant is rendered
    files = render(write_fleet, BASE, {"shop": APP})
    tenant = files["workloads/clusters/staging-1/shop/tenant.yaml"]
    labels = {"fluxplane.io/tenant": "shop"}

    # THEN it has two accounts: the app's own, for its pods, and a deployer that mounts no token by default
    assert [doc for doc in tenant if doc["kind"] == "ServiceAccount"] == [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "shop", "namespace": "store", "labels": labels},
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "shop-deployer", "namespace": "store", "labels": labels},
            "automountServiceAccountToken": False,
        },
    ]
    # AND the Role, named after the app, is bound to the deployer alone
    (binding,) = [doc for doc in tenant if doc["kind"] == "RoleBinding"]
    assert binding["metadata"]["name"] == "shop"
    assert binding["roleRef"]["name"] == "shop"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "shop-deployer", "namespace": "store"}]
    # AND Flux applies the app's manifests as the deployer
    _, sync = files["workloads/clusters/staging-1/shop/sync.yaml"]
    assert sync["spec"]["serviceAccountName"] == "shop-deployer"


def test_the_longest_app_name_still_names_its_deployer(write_fleet: FleetWriter) -> None:
    # GIVEN an app whose name is the longest DNS label (63): a ServiceAccount's name may have 253 characters
    name = "a" * 63
    files = render(write_fleet, BASE, {name: {**APP, "namespace": None}})
    # THEN its deployer is <app>-deployer, 72 characters
    tenant = files[f"workloads/clusters/staging-1/{name}/tenant.yaml"]
    assert [doc["metadata"]["name"] for doc in tenant if doc["kind"] == "ServiceAccount"] == [name, f"{name}-deployer"]
