"""CloudChart: an app's composites on the hub, and the hub-side credentials of its own requests."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml

from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import load_plan, render_plan
from tests.conftest import FleetWriter

HUB_PACKS = {
    "crossplane": {},
    "crossplane-providers": {"roleArn": "arn:aws:iam::111122223333:role/p", "services": ["ec2", "eks", "iam", "sqs"]},
    "crossplane-provider-configs": {},
    "eks-compositions": {},
    "workload-clusters": {},
    "app-compositions": {},
}
BASE: dict[str, Any] = {
    "repositories": {"platform": {"url": "ssh://git@example.com/org/fleet.git", "secretRef": None}},
    "management": {"name": "hub", "region": "us-west-2", "packs": HUB_PACKS},
}
ENVS = {"staging": {"clusters": [{"name": "staging-1", "region": "us-west-2"}]}}
APP = {
    "repository": {"url": "ssh://git@example.com/org/shop.git", "ref": {"tag": "v1"}, "secretRef": "shop-git"},
    "clusters": ["staging-1"],
    "aws": {"queues": [{"name": "jobs", "fifo": True}], "path": "deploy/aws"},
}
#: The shape of a sealed value: 2-byte length, the RSA part, an AES-GCM tag and more.
CIPHERTEXT = base64.b64encode(b"\x00\x04" + b"rsa!" + b"t" * 20).decode()


def sealed(path: Path, name: str, namespace: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "apiVersion": "bitnami.com/v1alpha1",
        "kind": "SealedSecret",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "encryptedData": {"identity": CIPHERTEXT},
            "template": {"metadata": {"name": name, "namespace": namespace}},
        },
    }
    path.write_text(yaml.safe_dump(document))


def render(write_fleet: FleetWriter) -> dict[str, list[dict[str, Any]]]:
    project: Path = write_fleet(base=BASE, envs=ENVS)
    (project / "environments" / "apps").mkdir()
    (project / "environments" / "apps" / "shop.yaml").write_text(yaml.safe_dump(APP))
    secrets = project / "environments" / "secrets"
    sealed(secrets / "staging-1" / "shop" / "shop-git.yaml", "shop-git", "shop")
    sealed(secrets / "hub" / "staging-1" / "shop-git.yaml", "shop-git", "staging-1")
    files = render_plan(load_plan(project, PackRegistry.from_entry_points()))
    return {
        path: [doc for doc in yaml.safe_load_all(text) if doc] for path, text in files.items() if path.endswith(".yaml")
    }


def test_the_hubs_copy_of_an_apps_credentials_travels_with_its_composites(write_fleet: FleetWriter) -> None:
    files = render(write_fleet)
    assert files["platform/cloud/staging-1/kustomization.yaml"][0]["resources"] == ["shop-git.yaml", "shop.yaml"]
    (secret,) = files["platform/cloud/staging-1/shop-git.yaml"]
    assert (secret["kind"], secret["metadata"]["namespace"]) == ("SealedSecret", "staging-1")
    # not in the hub's own secrets, applied before the cluster's hub namespace exists
    assert not any(path.startswith("platform/clusters/hub/secrets/") for path in files)


def test_composites_and_requests_of_an_app(write_fleet: FleetWriter) -> None:
    objects = {
        (doc["kind"], doc["metadata"]["name"]): doc for doc in render(write_fleet)["platform/cloud/staging-1/shop.yaml"]
    }
    assert objects[("AppIdentity", "shop")]["spec"]["serviceAccountNamespace"] == "shop"
    queue = objects[("AppQueue", "shop-queue-jobs")]["spec"]
    assert (queue["queueName"], queue["fifo"]) == ("staging-1-shop-jobs.fifo", True)
    assert objects[("GitRepository", "shop")]["spec"]["secretRef"] == {"name": "shop-git"}
    assert objects[("Kustomization", "shop-cloud")]["spec"]["serviceAccountName"] == "shop-cloud"


def test_the_clusters_chain_applies_its_app_resources_after_the_kinds_and_the_cluster(write_fleet: FleetWriter) -> None:
    files = render(write_fleet)
    # GIVEN the hub's own Kustomizations: none applies the apps' resources of all clusters
    hub = {doc["metadata"]["name"] for doc in files["platform/clusters/hub/infrastructure.yaml"]}
    assert "app-resources" not in hub
    # THEN the cluster's chain does, in its hub namespace, after its cluster and the app kinds
    chain = {doc["metadata"]["name"]: doc for doc in files["platform/spokes/staging-1/bootstrap.yaml"]}
    resources = chain["app-resources"]
    assert resources["metadata"]["namespace"] == "staging-1"
    spec = resources["spec"]
    assert spec["path"] == "./dist/platform/cloud/staging-1"
    assert spec["dependsOn"] == [{"name": "cluster"}, {"name": "app-compositions", "namespace": "flux-system"}]
    assert {check["kind"] for check in spec["healthChecks"]} == {"AppIdentity", "AppQueue"}
    assert {expr["kind"] for expr in spec["healthCheckExprs"]} == {"AppIdentity", "AppQueue"}
    # AND every object of the app's file says which Kustomization applies it
    assert {
        doc["metadata"]["annotations"]["fluxplane.io/applied-by"] for doc in files["platform/cloud/staging-1/shop.yaml"]
    } == {"staging-1/app-resources"}
