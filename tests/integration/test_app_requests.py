"""An app's own requests: the hub applies a folder of the app's repository as the app, nothing more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.kinds import REQUESTABLE
from fluxplane.kinds.app import GROUP, REQUEST_ACCOUNT_SUFFIX
from fluxplane.packs.app_compositions.admission import FLUX_OWNER, PHYSICAL_NAME, POLICY
from fluxplane.synth import load_plan
from fluxplane.validate.admission import VERB_OPERATIONS, AdmissionRequest, decide
from tests.conftest import ROOT

DIST = ROOT / "dist" / "platform"
CLOUD = DIST / "cloud"
#: The verbs that never reach admission: reading an app composite reveals names, never data.
READS = {"get", "list", "watch"}


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
        assert rule["apiGroups"] == ["platform.fluxplane.io"]
        assert rule["resources"] == list(REQUESTABLE.values())
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


def requesting_apps() -> list[tuple[str, str]]:
    return sorted((p.cluster, p.app.name) for p in load_plan(ROOT).apps if p.app.aws.path is not None)


def composite(kind: str, cluster: str, app: str, applied_by: str | None) -> dict[str, Any]:
    labels = {FLUX_OWNER[0]: applied_by, FLUX_OWNER[1]: cluster} if applied_by else {}
    name = f"{app}-audit"
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": kind,
        "metadata": {"name": name, "namespace": cluster, "labels": labels},
        "spec": {"app": app, PHYSICAL_NAME[kind]: f"{cluster}-{name}"},
    }


def example_policy() -> dict[str, Any]:
    path = DIST / "infrastructure" / "configs" / "app-compositions" / "base" / "app-compositions.yaml"
    (policy,) = [
        doc["spec"]
        for doc in yaml.safe_load_all(path.read_text())
        if doc and doc["kind"] == "ValidatingAdmissionPolicy" and doc["metadata"]["name"] == POLICY
    ]
    return policy


def writes(
    verb: str, user: str, labels: dict[str, str], old: dict[str, Any] | None, new: dict[str, Any] | None
) -> bool:
    """Whether the example's policy lets ``user`` make ``verb``'s write: from ``old`` to ``new``, as admission sees
    it (a create has no ``old``, a delete no ``new``)."""
    operation = VERB_OPERATIONS[verb]
    plural = REQUESTABLE[(old or new or {})["kind"]]
    old = None if operation == "CREATE" else old
    new = None if operation == "DELETE" else new
    return decide(example_policy(), AdmissionRequest(operation, GROUP, plural, user, new, old, labels)).allowed


@pytest.mark.parametrize(("cluster", "app"), requesting_apps())
def test_an_apps_account_writes_and_deletes_only_its_own_resources_with_every_verb_it_holds(
    cluster: str, app: str
) -> None:
    """Every verb the example's Role grants, on every requestable kind, decided by the example's own policy."""
    namespace = next(doc for doc in yaml.safe_load_all((DIST / "spokes" / cluster / "bootstrap.yaml").read_text()))
    labels = namespace["metadata"]["labels"]
    account = f"{app}{REQUEST_ACCOUNT_SUFFIX}"
    (rule,) = load(CLOUD / cluster / f"{app}.yaml")[("Role", account)]["rules"]
    verbs = [verb for verb in rule["verbs"] if verb not in READS]
    assert set(verbs) <= set(VERB_OPERATIONS), f"{account} holds a verb admission does not see: {verbs}"
    assert {"create", "patch", "delete"} <= set(verbs), "Flux applies and prunes with these"
    user = f"system:serviceaccount:{cluster}:{account}"
    for kind in REQUESTABLE:
        own = composite(kind, cluster, app, applied_by=account)
        # another app's, applied by its own account; the platform's for this app; another app's made by hand
        others = [
            composite(kind, cluster, "billing", "billing-cloud"),
            composite(kind, cluster, app, "app-resources"),
            composite(kind, cluster, "billing", None),
        ]
        for verb in verbs:
            assert writes(verb, user, labels, own, own), (kind, verb, "its own")
            for other in others:
                if VERB_OPERATIONS[verb] == "CREATE" and other["spec"]["app"] == app:
                    continue  # a new object of its own app is its own
                assert not writes(verb, user, labels, other, other), (kind, verb, other["metadata"])
