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
    assert files["platform/addon-identities/kustomization.yaml"][0]["resources"] == [
        "hub.yaml",
        "production-use1.yaml",
        "production-usw2.yaml",
        "staging-usw2.yaml",
    ]
    (identity,) = [
        doc for doc in files["platform/addon-identities/production-use1.yaml"] if doc["metadata"]["name"] == "shipper"
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
    hub = files["platform/addon-identities/hub.yaml"]
    assert hub[0] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "hub"}}
    assert "shipper" in {doc["metadata"]["name"] for doc in hub[1:] if doc["kind"] == "AddonIdentity"}


def test_the_hub_makes_roles_after_the_clusters_and_before_it_bootstraps_them(example_project: Path) -> None:
    _enable(example_project)
    files = _render(example_project)
    hub = {doc["metadata"]["name"]: doc["spec"] for doc in files["platform/clusters/hub/infrastructure.yaml"]}
    identities = hub["addon-identities"]
    assert identities["path"] == "./dist/platform/addon-identities"
    assert {"name": "app-compositions"} in identities["dependsOn"]
    assert {"name": "workload-clusters"} in identities["dependsOn"]
    composites = [
        (doc["metadata"]["namespace"], doc["metadata"]["name"])
        for path, docs in files.items()
        if path.startswith("platform/addon-identities/")
        for doc in docs
        if doc["kind"] == "AddonIdentity"
    ]
    assert sorted((check["namespace"], check["name"]) for check in identities["healthChecks"]) == sorted(composites)
    assert {"name": "addon-identities"} in hub["spoke-bootstrap"]["dependsOn"]


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
