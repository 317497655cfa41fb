"""An app's own requests: the hub applies a folder of the app's repository as the app, nothing more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fluxplane.constructs.app_resources import REQUESTABLE
from fluxplane.synth import load_plan
from tests.conftest import ROOT

CLOUD = ROOT / "dist" / "platform" / "cloud"


def load(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {(doc["kind"], doc["metadata"]["name"]): doc for doc in yaml.safe_load_all(path.read_text()) if doc}


def test_apps_with_a_requests_folder_get_an_account_that_may_only_request() -> None:
    placements = [p for p in load_plan(ROOT).apps if p.app.aws.path is not None]
    assert placements, "the example fleet has an app that requests from its own repository"
    for placement in placements:
        app, namespace = placement.app.name, placement.cluster
        objects = load(CLOUD / placement.cluster / f"{app}.yaml")
        account = f"{app}-cloud"
        assert objects[("ServiceAccount", account)]["metadata"]["namespace"] == namespace
        (rule,) = objects[("Role", account)]["rules"]
        assert rule == {"apiGroups": ["platform.fluxplane.io"], "resources": list(REQUESTABLE.values()), "verbs": ["*"]}
        binding = objects[("RoleBinding", account)]
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]
        source = objects[("GitRepository", app)]["spec"]
        assert (source["url"], source["ref"]) == (placement.app.repository.url, placement.app.repository.ref.flux())
        spec = objects[("Kustomization", account)]["spec"]
        assert spec["serviceAccountName"] == account
        assert spec["targetNamespace"] == namespace
        assert spec["path"] == f"./{placement.app.aws.path}"
        assert spec["sourceRef"] == {"kind": "GitRepository", "name": app}
        assert spec["postBuild"]["substitute"] == {
            "app": app,
            "app_namespace": placement.app.target_namespace,
            "cluster_name": placement.cluster,
            "cluster_region": placement.region,
        }
