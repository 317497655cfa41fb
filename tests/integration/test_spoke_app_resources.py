"""App resources made on the workload cluster itself (``appResources: spoke``): the packs the cluster runs, the
roles the hub makes for its Crossplane, where the apps' composites go, the tenants' rights and the names they own."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.config.loader import load_fleet
from fluxplane.core.layout import cluster_of
from fluxplane.errors import ConfigError
from fluxplane.kinds import APP_KINDS, PLURALS, REQUESTABLE
from fluxplane.kinds.app import GROUP
from fluxplane.kinds.app_identity import SPOKE_IDENTITY
from fluxplane.packs import app_compositions, crossplane_providers
from fluxplane.synth import load_plan, render_plan
from fluxplane.validate.admission import AdmissionRequest, decide
from tests.conftest import MINIMAL_BASE, MINIMAL_ENV, FleetWriter

APP_PACKS = {**MINIMAL_BASE["management"]["packs"], "app-compositions": {}}


def base() -> dict[str, Any]:
    fleet = copy.deepcopy(MINIMAL_BASE)
    fleet["management"]["packs"] = {
        **APP_PACKS,
        "crossplane-providers": {
            "roleArn": "arn:aws:iam::111122223333:role/crossplane-providers",
            "services": ["ec2", "eks", "iam", "dynamodb", "sqs", "s3"],
        },
    }
    return fleet


def env(**cluster: Any) -> dict[str, Any]:
    return {"clusters": [{**MINIMAL_ENV["clusters"][0], "appResources": "spoke", **cluster}]}


def write_app(root: Path, name: str, **extra: Any) -> None:
    app = {
        "repository": {"url": f"https://example.com/{name}.git", "secretRef": None, "ref": {"branch": "main"}},
        "clusters": ["staging-1"],
        "aws": {"queues": [{"name": "events"}]},
        **extra,
    }
    (root / "environments" / "apps").mkdir(parents=True, exist_ok=True)
    (root / "environments" / "apps" / f"{name}.yaml").write_text(yaml.safe_dump(app))


def documents(files: dict[str, str], path: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(files[path]) if doc]


@pytest.fixture
def spoke(write_fleet: FleetWriter) -> Path:
    root = write_fleet(base=base(), envs={"staging": env()})
    write_app(root, "shop", aws={"queues": [{"name": "events"}], "path": "deploy/aws"})
    return root


# -- the definition ---------------------------------------------------------------------------------


def test_a_spoke_cluster_runs_crossplane_the_app_providers_and_the_app_kinds(spoke: Path) -> None:
    packs = load_fleet(spoke).fleet.clusters[0].packs
    assert packs["crossplane"] == {}
    assert packs["crossplane-providers"] == {
        "identity": "pod-identity",
        "hubRoles": True,
        "services": ["dynamodb", "s3", "sqs"],
        "kubernetes": False,
    }
    assert packs["crossplane-provider-configs"] == {"identity": "pod-identity", "accounts": False}
    assert packs["app-compositions"] == {"mode": "spoke"}


def test_the_clusters_own_pack_sections_go_over_what_spoke_sets(write_fleet: FleetWriter) -> None:
    root = write_fleet(base=base(), envs={"staging": env(packs={"crossplane-providers": {"services": ["sqs"]}})})
    providers = load_fleet(root).fleet.clusters[0].packs["crossplane-providers"]
    assert providers["services"] == ["sqs"] and providers["hubRoles"] is True


def test_a_hub_cluster_runs_none_of_them(write_fleet: FleetWriter) -> None:
    root = write_fleet(base=base(), envs={"staging": env(appResources="hub")})
    assert "crossplane" not in load_fleet(root).fleet.clusters[0].packs


def test_a_spoke_without_the_provider_its_apps_need_is_refused(write_fleet: FleetWriter) -> None:
    root = write_fleet(base=base(), envs={"staging": env(packs={"crossplane-providers": {"services": ["s3"]}})})
    write_app(root, "shop")
    with pytest.raises(ConfigError) as exc:
        load_plan(root)
    assert any(
        "crossplane-providers.services: cluster 'staging-1' makes its apps' resources" in line and "sqs" in line
        for line in exc.value.problems
    ), exc.value.problems


# -- the providers' roles ---------------------------------------------------------------------------


def test_hub_roles_need_pod_identity_and_scoped_services() -> None:
    config = crossplane_providers.CrossplaneProvidersConfig
    with pytest.raises(ValueError, match="hubRoles needs identity 'pod-identity'"):
        config.model_validate({"hubRoles": True, "roleArn": "arn:aws:iam::111122223333:role/x", "services": ["sqs"]})
    with pytest.raises(ValueError, match="no role limited to the cluster's own resources for ec2"):
        config.model_validate({"hubRoles": True, "identity": "pod-identity", "services": ["ec2", "sqs"]})


def test_each_provider_role_may_touch_the_clusters_own_resources_only(spoke: Path) -> None:
    files = render_plan(load_plan(spoke))
    identities = {
        doc["spec"]["serviceAccount"]: doc
        for doc in documents(files, "platform/addon-identities/staging-1/addon-identities.yaml")
        if doc["metadata"]["labels"]["fluxplane.io/pack"] == "crossplane-providers"
    }
    assert sorted(identities) == ["provider-aws-dynamodb", "provider-aws-s3", "provider-aws-sqs"]
    owned = {
        account: [
            resource
            for statement in json.loads(doc["spec"]["inlinePolicies"][0]["policy"])["Statement"]
            if statement["Action"] != ["dynamodb:DescribeLimits", "dynamodb:ListTables"]
            and statement["Resource"] != ["*"]
            for resource in statement["Resource"]
        ]
        for account, doc in identities.items()
    }
    assert owned == {
        "provider-aws-dynamodb": ["arn:aws:dynamodb:us-west-2:*:table/staging-1-*"],
        "provider-aws-s3": ["arn:aws:s3:::staging-1-*"],
        "provider-aws-sqs": ["arn:aws:sqs:us-west-2:*:staging-1-*"],
    }
    for doc in identities.values():
        assert "iam:" not in doc["spec"]["inlinePolicies"][0]["policy"]


# -- where the composites go ------------------------------------------------------------------------


def test_the_hub_makes_the_identity_and_the_cluster_the_resources(spoke: Path) -> None:
    files = render_plan(load_plan(spoke))
    hub = documents(files, "platform/cloud/staging-1/shop.yaml")
    assert [doc["kind"] for doc in hub] == ["AppIdentity"]
    assert hub[0]["spec"]["crossplane"] == {"compositionRef": {"name": SPOKE_IDENTITY}}
    (queue,) = documents(files, "workloads/clusters/staging-1/app-resources/shop.yaml")
    assert (queue["kind"], queue["metadata"]["namespace"], queue["spec"]["queueName"]) == (
        "AppQueue",
        "shop",
        "staging-1-shop-events",
    )
    assert "providerConfigName" not in queue["spec"]


def test_the_clusters_app_resources_wait_for_the_tenants_and_the_kinds(spoke: Path) -> None:
    files = render_plan(load_plan(spoke))
    (resources,) = [
        doc
        for doc in documents(files, "platform/clusters/staging-1/tenants.yaml")
        if doc["metadata"]["name"] == "app-resources"
    ]
    assert resources["spec"]["path"] == "./dist/workloads/clusters/staging-1/app-resources"
    assert [item["name"] for item in resources["spec"]["dependsOn"]] == ["tenants", "app-compositions"]
    assert resources["spec"]["healthChecks"][0]["name"] == "shop-queue-events"


def test_a_tenant_manages_the_app_kinds_in_its_namespace_and_applies_its_own_requests(spoke: Path) -> None:
    files = render_plan(load_plan(spoke))
    (role,) = [
        doc for doc in documents(files, "workloads/clusters/staging-1/shop/tenant.yaml") if doc["kind"] == "Role"
    ]
    kinds = [rule for rule in role["rules"] if rule["apiGroups"] == ["platform.fluxplane.io"]]
    assert kinds == [
        {
            "apiGroups": ["platform.fluxplane.io"],
            "resources": ["apptables", "appqueues", "appbuckets"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"],
        }
    ]
    requests = [
        doc
        for doc in documents(files, "workloads/clusters/staging-1/shop/sync.yaml")
        if doc["kind"] == "Kustomization" and doc["metadata"]["name"] == "shop-cloud"
    ]
    assert requests[0]["spec"]["serviceAccountName"] == "shop-deployer"
    assert requests[0]["spec"]["path"] == "./deploy/aws"
    # and the hub reads none of them
    assert not any("shop-cloud" in text for path, text in files.items() if path.startswith("platform/cloud/"))


def test_on_a_hub_cluster_a_tenant_gets_no_app_kinds(write_fleet: FleetWriter) -> None:
    root = write_fleet(base=base(), envs={"staging": env(appResources="hub")})
    write_app(root, "shop")
    files = render_plan(load_plan(root))
    assert "platform.fluxplane.io" not in files["workloads/clusters/staging-1/shop/tenant.yaml"]
    assert "AppQueue" in files["platform/cloud/staging-1/shop.yaml"]


# -- names an app owns ------------------------------------------------------------------------------


def test_an_app_whose_names_fall_inside_an_owners_is_refused(spoke: Path) -> None:
    write_app(spoke, "shop-cart")
    with pytest.raises(ConfigError) as exc:
        load_fleet(spoke)
    assert any(
        "the AWS names of app 'shop-cart' begin 'staging-1-shop-cart-', inside those app 'shop' owns" in line
        for line in exc.value.problems
    ), exc.value.problems


def test_on_the_hub_an_app_without_requests_owns_no_prefix(write_fleet: FleetWriter) -> None:
    root = write_fleet(base=base(), envs={"staging": env(appResources="hub")})
    write_app(root, "shop")
    write_app(root, "shop-cart")
    assert len(load_fleet(root).apps) == 2


def test_no_cluster_may_be_named_inside_a_spoke_clusters_names(write_fleet: FleetWriter) -> None:
    envs = {"staging": env(), "other": {"clusters": [{"name": "staging-1-b", "region": "us-west-2"}]}}
    root = write_fleet(base=base(), envs=envs)
    write_app(root, "shop", clusters=["staging-1", "staging-1-b"])
    with pytest.raises(ConfigError) as exc:
        load_fleet(root)
    assert any("cluster 'staging-1-b': its AWS names begin 'staging-1-'" in line for line in exc.value.problems)


# -- the tenant policy, decided by the project's CEL engine -----------------------------------------


def tenant_admits(obj: dict[str, Any], namespace_app: str) -> bool:
    policy = app_compositions.tenant_policy_props().dump()
    text = json.dumps(policy).replace("${cluster_name}", "prod-1").replace("${cluster_region}", "us-west-2")
    labels = {"fluxplane.io/tenant": namespace_app}
    request = AdmissionRequest("CREATE", GROUP, PLURALS[obj["kind"]], "tenant", obj, namespace_labels=labels)
    decision = decide(json.loads(text), request)
    assert decision.applies
    return decision.allowed


def queue(app: str = "shop", name: str = "shop-events", queue_name: str = "prod-1-shop-events", **spec: Any) -> Any:
    return {
        "kind": "AppQueue",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"app": app, "queueName": queue_name, "region": "us-west-2", **spec},
    }


def test_a_tenant_may_ask_for_its_own_apps_resources() -> None:
    assert tenant_admits(queue(), "shop")
    assert tenant_admits(queue(providerConfigName="default"), "shop")


@pytest.mark.parametrize(
    "obj",
    [
        queue(app="cart", name="cart-events", queue_name="prod-1-cart-events"),  # another app's, in shop's namespace
        queue(name="events"),  # not named after the app
        queue(queue_name="prod-1-cart-events"),  # another app's AWS name: it would adopt that queue
        queue(queue_name="prod-2-shop-events"),  # another cluster's
        queue(region="us-east-1"),  # outside the cluster's region
        queue(providerConfigName="production"),  # another account
    ],
)
def test_a_tenant_may_not_ask_for_what_is_not_its_apps(obj: dict[str, Any]) -> None:
    assert not tenant_admits(obj, "shop")


def test_the_tenant_policy_holds_in_tenant_namespaces_only() -> None:
    constraints = app_compositions.tenant_policy_props().dump()["matchConstraints"]
    assert constraints["namespaceSelector"] == {
        "matchExpressions": [{"key": "fluxplane.io/tenant", "operator": "Exists"}]
    }


def test_the_spoke_compositions_compose_no_iam() -> None:
    for kind in REQUESTABLE:
        resources = APP_KINDS[kind].composition_props(spoke=True).dump()["pipeline"][0]["input"]["resources"]
        assert not any(".iam." in resource["base"]["apiVersion"] for resource in resources), kind


def test_the_spoke_identity_grants_the_apps_named_resources() -> None:
    (role, _, policy_resource) = app_compositions.spoke_identity_props().dump()["pipeline"][0]["input"]["resources"]
    # THEN the grant is a RolePolicy on the composed role, not the role's own inlinePolicy: a role that lists its
    # inline policies owns them all, and would remove the one an AppDatabase puts on it
    assert "inlinePolicy" not in role["base"]["spec"]["forProvider"]
    assert policy_resource["base"]["kind"] == "RolePolicy"
    assert policy_resource["base"]["spec"]["forProvider"]["roleSelector"]["matchControllerRef"] is True
    (grant,) = [patch for patch in policy_resource["patches"] if patch["type"] == "CombineFromComposite"]
    assert grant["toFieldPath"] == "spec.forProvider.policy"
    variables = [item["fromFieldPath"] for item in grant["combine"]["variables"]]
    policy = grant["combine"]["string"]["fmt"] % tuple(
        {"spec.region": "r", "spec.clusterName": "c", "metadata.name": "a"}[v] for v in variables
    )
    resources = [resource for statement in json.loads(policy)["Statement"] for resource in statement["Resource"]]
    assert resources == [
        "arn:aws:dynamodb:r:*:table/c-a-*",
        "arn:aws:sqs:r:*:c-a-*",
        "arn:aws:s3:::c-a-*",
        "arn:aws:s3:::c-a-*/*",
    ]


# -- validate renders a cluster's composites with that cluster's compositions -----------------------


def test_a_files_cluster_is_read_from_its_path() -> None:
    assert cluster_of("workloads/clusters/staging-1/app-resources/shop.yaml") == "staging-1"
    assert cluster_of("platform/clusters/staging-1/overlays/app-compositions/kustomization.yaml") == "staging-1"
    assert cluster_of("platform/cloud/staging-1/shop.yaml") is None
    assert cluster_of("platform/infrastructure/configs/app-compositions/base/app-compositions.yaml") is None


def test_no_app_may_take_the_folder_of_the_clusters_app_resources(spoke: Path) -> None:
    write_app(spoke, "app-resources")
    with pytest.raises(ConfigError) as exc:
        load_fleet(spoke)
    assert any(
        "app 'app-resources' on cluster 'staging-1': its tenant folder would be the folder" in line
        for line in exc.value.problems
    ), exc.value.problems


def test_a_spoke_without_the_app_kinds_is_refused(write_fleet: FleetWriter) -> None:
    root = write_fleet(base=base(), envs={"staging": env(packs={"app-compositions": {"enabled": False}})})
    write_app(root, "shop")
    with pytest.raises(ConfigError) as exc:
        load_plan(root)
    assert any("which needs the 'app-compositions' pack" in line for line in exc.value.problems), exc.value.problems
