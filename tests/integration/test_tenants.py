"""The example fleet's apps: one tenant per app and cluster, least privilege by construction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.charts.tenants import TENANT_LABEL, deployer_account
from fluxplane.errors import ConfigError
from fluxplane.synth import load_plan, render_plan
from tests.conftest import ROOT, load_documents
from tests.support.codeowners import owners_of

DIST = ROOT / "dist"
PLATFORM = DIST / "platform"
WORKLOADS = DIST / "workloads"


def every_document(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    return [
        (path, doc)
        for path in sorted(root.rglob("*.yaml"))
        if path.name != "kustomization.yaml"
        for doc in load_documents(path)
    ]


def placements() -> list[tuple[str, str, str]]:
    """(cluster, app, namespace) of every app of the example fleet."""
    return [(p.cluster, p.app.name, p.app.target_namespace) for p in load_plan(ROOT).apps]


def tenant(cluster: str, app: str) -> dict[tuple[str, str], dict[str, Any]]:
    folder = WORKLOADS / "clusters" / cluster / app
    files = [file for file in folder.glob("*.yaml") if file.name != "kustomization.yaml"]
    return {(doc["kind"], doc["metadata"]["name"]): doc for file in files for doc in load_documents(file)}


def test_the_example_has_two_apps_on_different_clusters_with_a_table_and_a_queue() -> None:
    plan = load_plan(ROOT)
    by_app = {p.app.name: p for p in plan.apps}
    assert by_app["orders"].app.aws.tables and by_app["notifications"].app.aws.queues
    assert {p.cluster for p in plan.apps if p.app.name == "orders"}.isdisjoint(
        {p.cluster for p in plan.apps if p.app.name == "notifications"}
    )


def test_every_placement_has_a_namespace_account_role_binding_source_and_sync() -> None:
    assert placements()
    for cluster, app, namespace in placements():
        objects = tenant(cluster, app)
        assert objects[("Namespace", namespace)]["metadata"]["labels"] == {TENANT_LABEL: app}
        for kind in ("ServiceAccount", "Role", "RoleBinding", "GitRepository", "Kustomization"):
            assert objects[(kind, app)]["metadata"]["namespace"] == namespace, (cluster, app, kind)
        assert objects[("ServiceAccount", deployer_account(app))]["metadata"]["namespace"] == namespace


def test_no_tenant_account_is_bound_to_a_cluster_role_and_pods_accounts_to_nothing() -> None:
    accounts = {(namespace, name) for _, app, namespace in placements() for name in (app, deployer_account(app))}
    bindings = [doc for _, doc in every_document(DIST) if doc["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    tenant_bindings = 0
    for binding in bindings:
        subjects = {
            (subject.get("namespace"), subject["name"])
            for subject in binding.get("subjects", [])
            if subject["kind"] == "ServiceAccount"
        }
        if not subjects & accounts:
            continue
        tenant_bindings += 1
        # Only a tenant's deployer is bound, only in its own namespace, only to its own namespaced Role
        assert binding["kind"] == "RoleBinding", binding
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": binding["metadata"]["name"],
        }
        assert subjects == {(binding["metadata"]["namespace"], deployer_account(binding["metadata"]["name"]))}
    assert tenant_bindings == len(placements())


def test_each_apps_aws_identity_is_its_pods_account_not_its_deployer() -> None:
    # GIVEN the example apps, which all need AWS
    for cluster, app, namespace in placements():
        (identity,) = [
            doc for doc in load_documents(PLATFORM / "cloud" / cluster / f"{app}.yaml") if doc["kind"] == "AppIdentity"
        ]
        # THEN the IAM role is bound to the account the pods run as, which holds no Role
        assert (identity["spec"]["serviceAccountNamespace"], identity["spec"]["serviceAccount"]) == (namespace, app)
        assert ("ServiceAccount", app) in tenant(cluster, app)


def test_tenant_roles_grant_nothing_cluster_wide_or_over_their_own_limits() -> None:
    for cluster, app, _ in placements():
        rules = tenant(cluster, app)[("Role", app)]["rules"]
        for rule in rules:
            assert "*" not in rule["apiGroups"], rule
            if "" in rule["apiGroups"]:
                assert not {"resourcequotas", "limitranges", "namespaces", "*"} & set(rule["resources"]), rule
            # Endpoints and EndpointSlices are only read, as Kubernetes' edit and admin roles keep them
            if ("" in rule["apiGroups"] and "endpoints" in rule["resources"]) or "discovery.k8s.io" in rule[
                "apiGroups"
            ]:
                assert set(rule["verbs"]) <= {"get", "list", "watch"}, rule


def test_every_tenant_kustomization_impersonates_its_deployer_in_its_namespace() -> None:
    plan = load_plan(ROOT)
    for placement in plan.apps:
        app, namespace = placement.app, placement.app.target_namespace
        objects = tenant(placement.cluster, app.name)
        spec = objects[("Kustomization", app.name)]["spec"]
        assert spec["serviceAccountName"] == deployer_account(app.name)
        assert ("ServiceAccount", deployer_account(app.name)) in objects
        assert spec["targetNamespace"] == namespace
        assert spec["prune"] is True and spec["wait"] is True
        assert spec["sourceRef"] == {"kind": "GitRepository", "name": app.name}
        assert spec["path"] == app.manifests_path(placement.cluster, placement.environment)
        source = objects[("GitRepository", app.name)]["spec"]
        assert source["url"] == app.repository.url
        assert source["ref"] == app.repository.ref.flux()


def test_tenants_wait_for_the_clusters_infrastructure() -> None:
    for cluster, app, _ in placements():
        infrastructure = {
            doc["metadata"]["name"]
            for doc in load_documents(PLATFORM / "clusters" / cluster / "infrastructure.yaml")
            if doc["kind"] == "Kustomization"
        }
        depends = tenant(cluster, app)[("Kustomization", app)]["spec"]["dependsOn"]
        assert depends, (cluster, app)
        for entry in depends:
            assert entry["namespace"] == "flux-system"
            assert entry["name"] in infrastructure


def test_every_spoke_applies_its_tenants_from_the_workloads_folder() -> None:
    for cluster in {cluster for cluster, _, _ in placements()}:
        entry = load_documents(PLATFORM / "clusters" / cluster / "kustomization.yaml")[0]
        assert "tenants.yaml" in entry["resources"]
        tenants, *resources = load_documents(PLATFORM / "clusters" / cluster / "tenants.yaml")
        # and, on a cluster that makes its apps' resources, the Kustomization of those the apps' files name
        assert [item["metadata"]["name"] for item in resources] == (
            ["app-resources"] if cluster == "production-usw2" else []
        )
        assert tenants["spec"]["path"] == f"./dist/workloads/clusters/{cluster}"
        assert tenants["spec"]["serviceAccountName"] == "kustomize-controller"
        listed = load_documents(WORKLOADS / "clusters" / cluster / "kustomization.yaml")[0]["resources"]
        assert listed == sorted(app for c, app, _ in placements() if c == cluster)


def test_app_credentials_travel_with_their_tenant_not_the_clusters_secrets() -> None:
    plan = load_plan(ROOT)
    for placement in plan.apps:
        secret = placement.app.repository.secret_ref
        if secret is None:
            continue
        folder = WORKLOADS / "clusters" / placement.cluster / placement.app.name
        (sealed,) = load_documents(folder / f"{secret}.yaml")
        assert sealed["kind"] == "SealedSecret"
        assert sealed["metadata"] == {"name": secret, "namespace": placement.app.target_namespace}
        listing = load_documents(folder / "kustomization.yaml")[0]["resources"]
        # The Namespace comes first in the same apply, so the secret has somewhere to go
        assert listing.index("tenant.yaml") < listing.index(f"{secret}.yaml")
        assert not (PLATFORM / "clusters" / placement.cluster / "secrets" / placement.app.target_namespace).exists()


def _seal_copy(project: Path, cluster: str, namespace: str, name: str) -> None:
    """A sealed file for ``namespace/name`` on ``cluster``, from one of the example's (synth reads only its shape)."""
    (source,) = load_documents(project / "environments/secrets/staging-usw2/flux-system/flux-system.yaml")
    source["metadata"] = {"name": name, "namespace": namespace}
    source["spec"]["template"]["metadata"] = {"name": name, "namespace": namespace}
    target = project / "environments/secrets" / cluster / namespace / f"{name}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(source, sort_keys=False))


def test_every_sealed_secret_of_an_apps_namespace_travels_with_its_tenant(example_project: Path) -> None:
    _seal_copy(example_project, "staging-usw2", "notifications", "smtp")
    files = render_plan(load_plan(example_project))
    folder = "workloads/clusters/staging-usw2/notifications"
    (sealed,) = yaml.safe_load_all(files[f"{folder}/smtp.yaml"])
    assert sealed["kind"] == "SealedSecret" and sealed["metadata"]["namespace"] == "notifications"
    listing = yaml.safe_load(files[f"{folder}/kustomization.yaml"])["resources"]
    assert listing.index("tenant.yaml") < listing.index("smtp.yaml")
    assert not any("secrets/notifications" in path for path in files)


def test_a_secret_named_like_a_tenant_file_is_refused(example_project: Path) -> None:
    _seal_copy(example_project, "staging-usw2", "notifications", "sync")
    with pytest.raises(ConfigError) as caught:
        load_plan(example_project)
    assert caught.value.problems == (
        "environments/secrets/staging-usw2/notifications/sync.yaml: a secret of app 'notifications' may not be "
        "named 'sync': its tenant folder has a sync.yaml of its own; seal it under another name",
    )


def test_spoke_flux_is_locked_down_and_platform_objects_name_their_account() -> None:
    plan = load_plan(ROOT)
    for cluster in plan.fleet.clusters:
        (flux,) = load_documents(PLATFORM / "spokes" / cluster.name / "flux" / "flux.yaml")
        assert flux["spec"]["values"]["multitenancy"] == {
            "enabled": True,
            "defaultServiceAccount": "default",
            "privileged": True,
        }
        # Under lockdown an object that names no account runs as `default`, which may do nothing
        entry = PLATFORM / "clusters" / cluster.name
        for file in ("flux-system/gotk-sync.yaml", "infrastructure.yaml", "apps.yaml", "tenants.yaml"):
            if not (entry / file).exists():
                continue
            for doc in load_documents(entry / file):
                if doc["kind"] == "Kustomization":
                    assert doc["spec"]["serviceAccountName"] == "kustomize-controller", (cluster.name, file)
    releases = [doc for _, doc in every_document(PLATFORM / "apps") + every_document(PLATFORM / "infrastructure")]
    helm = [doc for doc in releases if doc["kind"] == "HelmRelease"]
    assert helm
    for release in helm:
        assert release["spec"]["serviceAccountName"] == "helm-controller", release["metadata"]["name"]


def test_codeowners_leave_every_privilege_file_to_governance_and_the_rest_of_a_tenant_to_its_team() -> None:
    # GIVEN the example fleet's CODEOWNERS
    plan = load_plan(ROOT)
    text = (DIST / "CODEOWNERS").read_text()
    governance = [str(plan.fleet.teams.governance)]
    privileged = [
        *WORKLOADS.rglob("tenant.yaml"),
        *(PLATFORM / "cloud").rglob("*"),
        *(ROOT / "environments" / "apps").glob("*"),
    ]
    assert len([path for path in privileged if path.name == "tenant.yaml"]) == len(plan.apps)
    # THEN the last line matching each tenant's RBAC, each cloud file and each app definition names only governance
    for path in privileged:
        if path.is_file():
            assert owners_of(path.relative_to(ROOT).as_posix(), text) == governance, path
    # AND so does what can hold any object for a cluster: plain manifests, cdk8s charts and what they make
    for made in (
        "environments/manifests/staging/apps/binding.yaml",
        "charts/quotas.py",
        "charts/_common/rbac.py",
        "dist/platform/clusters/staging-usw2/manifests/apps/environment/binding.yaml",
    ):
        assert owners_of(made, text) == governance, made
    # AND the app's team owns the rest of its tenant: its sync and its sealed secrets
    for placement in plan.apps:
        folder = WORKLOADS / "clusters" / placement.cluster / placement.app.name
        for path in folder.iterdir():
            if path.name != "tenant.yaml":
                assert owners_of(path.relative_to(ROOT).as_posix(), text) == [placement.app.team], path


def test_codeowners_give_onboarding_to_governance_and_each_tenant_to_its_team() -> None:
    plan = load_plan(ROOT)
    owners = dict(
        line.split(" ", 1) for line in (DIST / "CODEOWNERS").read_text().splitlines() if line and line[0] != "#"
    )
    assert owners["*"] == plan.fleet.teams.platform
    assert owners["/environments/apps/"] == owners["/dist/workloads/"] == plan.fleet.teams.governance
    for placement in plan.apps:
        assert owners[f"/dist/workloads/clusters/{placement.cluster}/{placement.app.name}/"] == placement.app.team
