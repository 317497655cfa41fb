"""An add-on that calls AWS: the hub makes its IAM role for every cluster that runs it (AddonIdentity)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.constructs.namespace import Namespace
from fluxplane.errors import ConfigError
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import load_plan, render_plan

POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": ["logs:PutLogEvents"],
            "Resource": "arn:aws:logs:${cluster_region}:*:log-group:/aws/eks/${cluster_name}/*",
            "Condition": {"StringEquals": {"aws:PrincipalTag/owner": "${aws:username}"}},
        }
    ],
}


class ShipperConfig(PackConfig):
    pass


def _bind(ctx: PackContext, config: ShipperConfig) -> None:
    Namespace(ctx.scope, "namespace", {"name": "shipper"})
    ctx.add_pod_identity(
        "shipper",
        namespace="shipper",
        service_account="shipper",
        managed_policies=("arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy",),
        policy=POLICY,
    )


SHIPPER = Pack("shipper", "1.0.0", "ships logs", ShipperConfig, "controllers", _bind)


def _render(project: Path) -> dict[str, list[dict[str, Any]]]:
    registry = PackRegistry([*PackRegistry.from_entry_points(), SHIPPER])
    files = render_plan(load_plan(project, registry))
    return {
        path: [doc for doc in yaml.safe_load_all(text) if doc] for path, text in files.items() if path.endswith(".yaml")
    }


def _enable(project: Path) -> None:
    base = project / "environments/base.yaml"
    text = base.read_text()
    base.write_text(text.replace("packs:\n  metrics-server: {}", "packs:\n  metrics-server: {}\n  shipper: {}"))


def test_every_cluster_running_the_pack_gets_its_role_in_its_hub_namespace(example_project: Path) -> None:
    _enable(example_project)
    files = _render(example_project)
    # each cluster's roles are a folder of their own
    for cluster in ("hub", "production-use1", "production-usw2", "staging-usw2"):
        folder = f"platform/addon-identities/{cluster}"
        assert files[f"{folder}/kustomization.yaml"][0]["resources"] == ["addon-identities.yaml"]
    (identity,) = [
        doc
        for doc in files["platform/addon-identities/production-use1/addon-identities.yaml"]
        if doc["metadata"]["name"] == "shipper"
    ]
    assert identity["kind"] == "AddonIdentity" and identity["metadata"]["namespace"] == "production-use1"
    spec = identity["spec"]
    assert (spec["clusterName"], spec["serviceAccountNamespace"], spec["serviceAccount"]) == (
        "production-use1",
        "shipper",
        "shipper",
    )
    assert spec["region"] == "us-east-1"
    assert spec["managedPolicyArns"] == ["arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy"]
    (inline,) = spec["inlinePolicies"]
    # The cluster's values are filled in; IAM's own variables survive Flux's substitution as $${...}
    assert '"arn:aws:logs:us-east-1:*:log-group:/aws/eks/production-use1/*"' in inline["policy"]
    assert '"$${aws:username}"' in inline["policy"]
    assert json.loads(inline["policy"].replace("$${", "${"))["Statement"][0]["Action"] == ["logs:PutLogEvents"]
    # The hub's own add-ons: the hub makes its namespace too
    hub = files["platform/addon-identities/hub/addon-identities.yaml"]
    assert hub[0] == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "hub", "annotations": {"fluxplane.io/applied-by": "flux-system/addon-identities"}},
    }
    assert "shipper" in {doc["metadata"]["name"] for doc in hub[1:] if doc["kind"] == "AddonIdentity"}


def test_each_cluster_gets_its_roles_once_it_is_ready_and_before_its_bootstrap(example_project: Path) -> None:
    _enable(example_project)
    files = _render(example_project)
    # GIVEN the hub's own roles: its Kustomization waits only for the kinds
    hub = {doc["metadata"]["name"]: doc["spec"] for doc in files["platform/clusters/hub/infrastructure.yaml"]}
    assert hub["addon-identities"]["path"] == "./dist/platform/addon-identities/hub"
    assert hub["addon-identities"]["dependsOn"] == [{"name": "app-compositions"}]
    # AND each workload cluster's, in its own chain: after its cluster is Ready and the kinds are served,
    # before its bootstrap starts
    for cluster in ("production-use1", "production-usw2", "staging-usw2"):
        chain = {
            doc["metadata"]["name"]: doc["spec"]
            for doc in files[f"platform/spokes/{cluster}/bootstrap.yaml"]
            if doc["kind"] == "Kustomization"
        }
        identities = chain["addon-identities"]
        assert identities["path"] == f"./dist/platform/addon-identities/{cluster}"
        assert identities["dependsOn"] == [
            {"name": "cluster"},
            {"name": "app-compositions", "namespace": "flux-system"},
        ]
        composites = [
            (doc["metadata"]["namespace"], doc["metadata"]["name"])
            for doc in files[f"platform/addon-identities/{cluster}/addon-identities.yaml"]
            if doc["kind"] == "AddonIdentity"
        ]
        assert sorted((check["namespace"], check["name"]) for check in identities["healthChecks"]) == sorted(composites)
        assert {"name": "addon-identities"} in chain["external-secrets"]["dependsOn"]


def test_without_app_compositions_on_the_hub_the_roles_are_refused(example_project: Path) -> None:
    _enable(example_project)
    base = example_project / "environments/base.yaml"
    base.write_text(base.read_text().replace("    app-compositions: {}\n", ""))
    for app in (example_project / "environments/apps").iterdir():
        app.unlink()
    with pytest.raises(ConfigError, match=r"^environments/base.yaml: management.packs: .*shipper \(hub\), ") as caught:
        _render(example_project)
    assert caught.value.problems[0].endswith(
        "which the hub makes with the 'app-compositions' pack; enable it (app-compositions: {})"
    )
