"""The example fleet's hub chains: per workload cluster, build it, make its roles and resources, bootstrap it."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import yaml

from fluxplane.charts.spokes import SEALING_KEY_SECRET, chain_steps
from fluxplane.config.hub import (
    EXTERNAL_SECRETS_ROLE_ARN_KEY,
    bootstrap_values,
    cluster_namespace,
    hub_access_config_map,
    kubeconfig_secret,
)
from fluxplane.config.models import ExistingCluster
from fluxplane.synth import load_plan
from tests.conftest import ROOT, load_documents

#: The bootstrap steps of a cluster of the example (the flux2 chart, sealed Git credentials).
STEPS = chain_steps("flux2-chart", git_credentials=True)

DIST = ROOT / "dist"
PLATFORM = DIST / "platform"
HELM_STEPS = ("external-secrets", "sealed-secrets", "flux")
HANDED_OVER = ("git-credentials", "flux-sync")


def clusters() -> list[str]:
    return sorted(cluster.name for cluster in load_plan(ROOT).fleet.clusters)


def chain(cluster: str) -> dict[str, dict[str, Any]]:
    """The bootstrap steps of ``cluster``'s chain, in order."""
    return {name: doc for name, doc in whole_chain(cluster).items() if name in STEPS}


def whole_chain(cluster: str) -> dict[str, dict[str, Any]]:
    """Every Kustomization of ``cluster``'s chain on the hub, in order."""
    return {
        doc["metadata"]["name"]: doc
        for doc in load_documents(PLATFORM / "spokes" / cluster / "bootstrap.yaml")
        if doc["kind"] == "Kustomization"
    }


def composite(cluster: str) -> dict[str, Any]:
    (found,) = [
        doc
        for doc in load_documents(PLATFORM / "spokes" / cluster / "cluster" / "cluster.yaml")
        if doc["kind"] == "EKSCluster"
    ]
    return found


def folder(spec: dict[str, Any]) -> Path:
    return ROOT / spec["path"]


def applied(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        doc
        for file in sorted(folder(spec).rglob("*.yaml"))
        if file.name != "kustomization.yaml"
        for doc in load_documents(file)
    ]


def test_every_workload_cluster_has_the_whole_chain_in_order() -> None:
    assert clusters()
    for cluster in clusters():
        steps = whole_chain(cluster)
        # THEN every step is there, in the cluster's hub namespace: the cluster, its add-ons' roles and its
        # apps' resources, then the bootstrap, each waiting for the one before
        assert list(steps)[:2] == ["cluster", "addon-identities"]
        assert list(chain(cluster)) == list(STEPS)
        assert {doc["metadata"]["namespace"] for doc in steps.values()} == {cluster_namespace(cluster)}
        assert steps["cluster"]["spec"]["dependsOn"] == [{"name": "eks-compositions", "namespace": "flux-system"}]
        assert steps[STEPS[0]]["spec"]["dependsOn"] == [{"name": "cluster"}, {"name": "addon-identities"}]
        for earlier, later in pairwise(STEPS):
            assert steps[later]["spec"]["dependsOn"] == [{"name": earlier}], (cluster, later)


def _hub_kustomizations() -> dict[tuple[str, str], dict[str, Any]]:
    """Every Flux Kustomization the hub runs: its own (flux-system) and each cluster's chain, by (namespace, name)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in [*sorted((PLATFORM / "clusters" / "hub").glob("*.yaml")), *sorted(PLATFORM.glob("spokes/*/*.yaml"))]:
        for doc in load_documents(path):
            if doc["kind"] == "Kustomization" and doc["apiVersion"].startswith("kustomize.toolkit.fluxcd.io/"):
                found[(doc["metadata"].get("namespace", "flux-system"), doc["metadata"]["name"])] = doc
    return found


def test_no_kustomization_that_serves_one_cluster_waits_on_anything_of_another() -> None:
    # GIVEN the hub's Kustomizations, each serving one workload cluster (its hub namespace) or the fleet
    hub = _hub_kustomizations()
    names = set(clusters())
    owner = {key: key[0] if key[0] in names else None for key in hub}
    assert {cluster for cluster in owner.values() if cluster} == names

    def waits_on(key: tuple[str, str], seen: set[tuple[str, str]]) -> set[tuple[str, str]]:
        """What ``key`` waits for: its dependsOn, transitively."""
        for dependency in hub[key]["spec"].get("dependsOn", []):
            target = (dependency.get("namespace") or key[0], dependency["name"])
            if target not in seen:
                seen.add(target)
                waits_on(target, seen)
        return seen

    for key, cluster in owner.items():
        if cluster is None:
            continue
        # THEN what a cluster's Kustomization waits for is its own chain or the fleet's shared platform,
        waited = waits_on(key, set())
        assert {owner[target] for target in waited} <= {cluster, None}, (key, waited)
        # and the shared Kustomizations it waits for wait for nothing of any cluster
        for target in waited:
            if owner[target] is None:
                assert {owner[deep] for deep in waits_on(target, set())} == {None} or not waits_on(target, set())
        # AND its health checks name only its own objects
        checked = hub[key]["spec"].get("healthChecks", [])
        assert {check.get("namespace") for check in checked} <= {cluster_namespace(cluster)}, key
    # AND no shared Kustomization health-checks a cluster's objects (the one that applies the chains waits for
    # nothing at all: see the next test)
    for key, cluster in owner.items():
        if cluster is None:
            checked = hub[key]["spec"].get("healthChecks", [])
            assert not {check.get("namespace") for check in checked} & names, key


def access() -> dict[str, str]:
    return {cluster.name: cluster.hub_access for cluster in load_plan(ROOT).fleet.clusters}


def test_every_step_reaches_the_spoke_through_the_composed_kubeconfig_or_keyless() -> None:
    modes = access()
    # the example fleet shows both ways in
    assert set(modes.values()) == {"kubeconfig", "keyless"}
    for cluster in clusters():
        secret = kubeconfig_secret(cluster)
        if modes[cluster] == "keyless":
            reference: dict[str, Any] = {"configMapRef": {"name": hub_access_config_map(cluster)}}
        else:
            reference = {"secretRef": {"name": secret.name, "key": "value"}}
        for step, doc in chain(cluster).items():
            spec = doc["spec"]
            if step in HELM_STEPS:
                # The Kustomization applies a HelmRelease on the hub; the release targets the spoke
                assert "kubeConfig" not in spec
                (release,) = applied(spec)
                assert release["kind"] == "HelmRelease"
                assert release["metadata"]["namespace"] == cluster_namespace(cluster)
                assert release["spec"]["kubeConfig"] == reference
                assert release["spec"]["storageNamespace"] == release["spec"]["targetNamespace"]
                assert release["spec"]["install"]["createNamespace"] is True
                assert release["spec"]["postRenderStrategy"] == "nohooks", (cluster, step)
            else:
                assert spec["kubeConfig"] == reference, (cluster, step)


def test_every_step_is_health_gated() -> None:
    for cluster in clusters():
        steps = chain(cluster)
        for step in HELM_STEPS:
            assert steps[step]["spec"]["healthChecks"] == [
                {
                    "apiVersion": "helm.toolkit.fluxcd.io/v2",
                    "kind": "HelmRelease",
                    "name": step,
                    "namespace": cluster_namespace(cluster),
                }
            ]
        gates = {
            "secret-store": ("ClusterSecretStore", "Ready"),
            "sealing-key": ("ExternalSecret", "Ready"),
            "git-credentials": ("SealedSecret", "Synced"),
        }
        for step, (kind, condition) in gates.items():
            spec = steps[step]["spec"]
            assert spec["wait"] is True
            (expr,) = spec["healthCheckExprs"]
            assert expr["kind"] == kind
            assert f"c.type == '{condition}' && c.status == 'True'" in expr["current"]
        # the last step waits for the spoke's own GitRepository and Kustomization (kstatus)
        assert steps["flux-sync"]["spec"]["wait"] is True


def test_what_the_spoke_takes_over_is_not_pruned_by_the_hub() -> None:
    for cluster in clusters():
        for step, doc in chain(cluster).items():
            assert doc["spec"]["prune"] is (step not in HANDED_OVER), (cluster, step)


def test_the_hub_applies_every_chain_and_waits_for_none() -> None:
    hub = {
        doc["metadata"]["name"]: doc["spec"]
        for doc in load_documents(PLATFORM / "clusters" / "hub" / "infrastructure.yaml")
    }
    bootstrap = hub["spoke-bootstrap"]
    assert bootstrap["path"] == "./dist/platform/spokes"
    # each chain gates itself: the parent neither depends on the clusters nor waits for them
    assert not {"dependsOn", "healthChecks", "healthCheckExprs", "wait"} & set(bootstrap)
    assert "workload-clusters" not in hub


def test_secrets_come_first_and_the_sealing_key_is_the_one_the_controller_reads() -> None:
    for cluster in clusters():
        steps = chain(cluster)
        (store,) = applied(steps["secret-store"]["spec"])
        assert store["kind"] == "ClusterSecretStore"
        assert store["spec"]["provider"]["aws"]["service"] == "SecretsManager"
        assert store["spec"]["provider"]["aws"]["auth"] == {
            "jwt": {"serviceAccountRef": {"name": "external-secrets", "namespace": "external-secrets"}}
        }
        (key,) = applied(steps["sealing-key"]["spec"])
        assert key["kind"] == "ExternalSecret"
        # the store serves the key's namespace alone: a tenant's ExternalSecret naming it is refused
        assert store["spec"]["conditions"] == [{"namespaces": [key["metadata"]["namespace"]]}]
        assert key["spec"]["secretStoreRef"] == {"kind": "ClusterSecretStore", "name": store["metadata"]["name"]}
        assert key["spec"]["target"]["template"] == {
            "type": "kubernetes.io/tls",
            "metadata": {"labels": {"sealedsecrets.bitnami.com/sealed-secrets-key": "active"}},
        }
        assert [item["secretKey"] for item in key["spec"]["data"]] == ["tls.crt", "tls.key"]
        # the controller runs in the key's namespace and never makes a key of its own
        (controller,) = applied(steps["sealed-secrets"]["spec"])
        assert controller["spec"]["targetNamespace"] == key["metadata"]["namespace"]
        assert key["spec"]["target"]["name"] == SEALING_KEY_SECRET
        assert controller["spec"]["values"]["keyrenewperiod"] == "0"


def existing() -> dict[str, ExistingCluster]:
    """The example's existing clusters, by name: what the definition records of them."""
    return {c.name: c.existing for c in load_plan(ROOT).fleet.clusters if c.existing is not None}


def test_external_secrets_gets_the_role_the_composition_made_for_it() -> None:
    recorded = existing()
    composites = {cluster: composite(cluster) for cluster in clusters() if cluster not in registered()}
    compositions = [
        doc
        for doc in load_documents(PLATFORM / "infrastructure/configs/eks-compositions/base/eks-compositions.yaml")
        if doc["kind"] == "Composition"
    ]
    for composition in compositions:
        resources = {r["name"]: r for r in composition["spec"]["pipeline"][0]["input"]["resources"]}
        patches = resources["bootstrap-values"]["patches"]
        assert {"type": "FromCompositeFieldPath", "fromFieldPath": "spec.bootstrapConfigMapName"} | {
            "toFieldPath": "metadata.name",
            "policy": {"fromFieldPath": "Required"},
        } in patches
        (arn,) = [p for p in patches if p["toFieldPath"] == f"data[{EXTERNAL_SECRETS_ROLE_ARN_KEY}]"]
        if composition["metadata"]["labels"].get("platform.fluxplane.io/existing"):
            # an imported cluster's role is the one its definition names: nothing is made in AWS for it
            assert arn["fromFieldPath"] == "spec.existing.externalSecretsRoleArn"
            assert "role-external-secrets" not in resources
            continue
        trust = resources["role-external-secrets"]["patches"][0]
        assert "system:serviceaccount:external-secrets:external-secrets" in trust["combine"]["string"]["fmt"]
    for cluster in clusters():
        values = bootstrap_values(cluster)
        if cluster in registered():
            # a registered cluster's cluster step writes the role its definition names
            (config_map,) = [
                doc
                for doc in applied(whole_chain(cluster)["cluster"]["spec"])
                if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == values.name
            ]
            assert config_map["data"] == {EXTERNAL_SECRETS_ROLE_ARN_KEY: recorded[cluster].external_secrets_role_arn}
        else:
            assert composites[cluster]["spec"]["bootstrapConfigMapName"] == values.name
        (release,) = applied(chain(cluster)["external-secrets"]["spec"])
        assert release["spec"]["valuesFrom"] == [
            {
                "kind": "ConfigMap",
                "name": values.name,
                "valuesKey": EXTERNAL_SECRETS_ROLE_ARN_KEY,
                "targetPath": r"serviceAccount.annotations.eks\.amazonaws\.com/role-arn",
            }
        ]
        assert release["spec"]["values"]["serviceAccount"]["name"] == "external-secrets"


def test_the_spoke_syncs_its_own_entry_point_with_its_sealed_credentials() -> None:
    repository = load_plan(ROOT).fleet.repositories.platform
    for cluster in clusters():
        steps = chain(cluster)
        sealed = applied(steps["git-credentials"]["spec"])
        assert [(doc["kind"], doc["metadata"]["namespace"], doc["metadata"]["name"]) for doc in sealed] == [
            ("SealedSecret", "flux-system", repository.secret_ref)
        ]
        assert set(sealed[0]["spec"]["encryptedData"]) == {"identity", "known_hosts"}
        sync = {doc["kind"]: doc for doc in applied(steps["flux-sync"]["spec"])}
        assert sync["GitRepository"]["spec"]["secretRef"] == {"name": repository.secret_ref}
        assert sync["Kustomization"]["spec"]["path"] == f"./dist/platform/clusters/{cluster}"
        # and the spoke's entry point keeps managing the credentials afterwards
        entry = yaml.safe_load((PLATFORM / "clusters" / cluster / "kustomization.yaml").read_text())
        assert "secrets" in entry["resources"]


def registered() -> set[str]:
    return {name for name, found in existing().items() if not found.imported}


def test_keyless_access_to_a_registered_cluster_reads_the_arn_its_definition_records() -> None:
    recorded = existing()
    keyless = [cluster for cluster in sorted(registered()) if access()[cluster] == "keyless"]
    assert keyless
    for cluster in keyless:
        (config_map,) = [
            doc
            for doc in applied(whole_chain(cluster)["cluster"]["spec"])
            if doc["metadata"]["name"] == hub_access_config_map(cluster)
        ]
        assert config_map["data"] == {"provider": "aws", "cluster": recorded[cluster].cluster_arn}


def test_keyless_clusters_admit_the_hubs_flux_role_and_publish_their_arn_for_flux() -> None:
    fleet = load_plan(ROOT).fleet
    # the clusters the hub creates: an existing one admits the hub's Flux role itself
    composites = {cluster: composite(cluster) for cluster in clusters() if cluster not in existing()}
    compositions = {
        doc["metadata"]["name"]: doc
        for doc in load_documents(PLATFORM / "infrastructure/configs/eks-compositions/base/eks-compositions.yaml")
        if doc["kind"] == "Composition"
    }
    for cluster, mode in access().items():
        if cluster not in composites:
            continue
        spec = composites[cluster]["spec"]
        composition = compositions[spec["crossplane"]["compositionRef"]["name"]]
        resources = {r["name"]: r for r in composition["spec"]["pipeline"][0]["input"]["resources"]}
        if mode == "kubeconfig":
            assert "hubAccess" not in spec
            assert not {"hub-access", "hub-access-entry", "hub-access-policy"} & set(resources)
            continue
        assert spec["hubAccess"] == {
            "principalArn": fleet.management.flux_role_arn,
            "configMapName": hub_access_config_map(cluster),
        }
        assert resources["hub-access-entry"]["base"]["kind"] == "AccessEntry"
        policy = resources["hub-access-policy"]["base"]["spec"]["forProvider"]
        assert policy["policyArn"].endswith("/AmazonEKSClusterAdminPolicy")
        assert policy["accessScope"] == {"type": "cluster"}
        config_map = resources["hub-access"]
        assert config_map["base"]["data"] == {"provider": "aws"}
        assert {p["fromFieldPath"]: p["toFieldPath"] for p in config_map["patches"]} == {
            "spec.hubAccess.configMapName": "metadata.name",
            "status.clusterArn": "data.cluster",
        }
