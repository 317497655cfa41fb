"""What a user writes reaches the cluster as written, through Flux's post-build substitution.

The Kustomizations that apply the catalogue, a cluster's chain on the hub, its add-ons' roles and its
apps' AWS resources substitute the cluster's variables in everything they apply. The definition's text
in those objects is escaped, so Flux gives it back as written; fluxplane's own ``${cluster_name}``, and
the pack fields meant to be substituted, still take the cluster's values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import yaml

from fluxplane.constructs.config_map import ConfigMap
from fluxplane.constructs.namespace import Namespace
from fluxplane.core.tree import substitute_text
from fluxplane.packs.api import SUBSTITUTED, Pack, PackConfig, PackContext
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import load_plan, render_plan

#: What Flux on the hub substitutes for staging-usw2 (its chain's postBuild.substitute), and what the
#: cluster's own Flux does (its cluster-vars).
VARIABLES = {
    "cluster_name": "staging-usw2",
    "cluster_region": "us-west-2",
    "environment": "staging",
    "kubernetes_version": "1.33",
}
#: A user's text that Flux would change: a variable, and a $$.
TEXT = "${cluster_name} pays $$5"


class NoteConfig(PackConfig):
    note: str = ""
    greeting: Annotated[str, SUBSTITUTED] = "hello from ${cluster_name}"


def _bind(ctx: PackContext, config: NoteConfig) -> None:
    Namespace(ctx.scope, "namespace", {"name": "note"})
    data = {"note": config.note, "greeting": config.greeting, "region": "${cluster_region}"}
    ConfigMap(ctx.scope, "note", {"name": "note", "namespace": "note", "data": data})
    statement = {"Resource": f"arn:aws:s3:::{config.note}", "Sid": "${cluster_name}", "Owner": "${aws:username}"}
    ctx.add_pod_identity("reader", namespace="note", service_account="note", policy={"Statement": [statement]})


NOTE = Pack("note", "1.0.0", "a note", NoteConfig, "controllers", _bind, namespaces=("note",))
METRICS = {"metrics-server": {"values": {"x": TEXT}}}


def _change(path: Path, change: Any) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _render(project: Path) -> dict[str, str]:
    environments = project / "environments"
    _change(environments / "base.yaml", lambda base: base["packs"].update(note={"note": TEXT}, **METRICS))

    _change(
        environments / "apps" / "notifications.yaml", lambda app: app["repository"]["ref"].update({"branch": "r-${x}"})
    )
    return render_plan(load_plan(project, PackRegistry([*PackRegistry.from_entry_points(), NOTE])))


def _applied(text: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The objects of a file as Flux applies them for staging-usw2, by (kind, name)."""
    documents = yaml.safe_load_all(substitute_text(text, VARIABLES))
    return {(doc["kind"], doc["metadata"]["name"]): doc for doc in documents if doc}


def test_the_users_text_reaches_the_cluster_as_written_and_fluxplanes_variables_are_substituted(
    example_project: Path,
) -> None:
    # GIVEN a definition whose pack values, a pack's free text and an app's branch hold "${cluster_name}" and
    # "$$" (AWS tags and node labels cannot hold "$", "{" or "}": the loader refuses them)
    files = _render(example_project)

    # WHEN Flux applies what synth wrote, substituting staging-usw2's variables
    assert (
        "x: $${cluster_name} pays $$$5\n"
        in files["platform/infrastructure/controllers/metrics-server/base/metrics-server.yaml"]
    )
    roles = _applied(files["platform/addon-identities/staging-usw2/addon-identities.yaml"])
    cloud = _applied(files["platform/cloud/staging-usw2/notifications.yaml"])
    note = _applied(files["platform/infrastructure/controllers/note/base/note.yaml"])
    metrics = _applied(files["platform/infrastructure/controllers/metrics-server/base/metrics-server.yaml"])
    dns = _applied(files["platform/infrastructure/controllers/external-dns/base/external-dns.yaml"])

    # THEN the user's text arrives as written: the app's branch for its requests, and the add-ons' objects
    # and values
    assert cloud[("GitRepository", "notifications")]["spec"]["ref"] == {"branch": "r-${x}"}
    assert metrics[("HelmRelease", "metrics-server")]["spec"]["values"]["x"] == TEXT
    # AND fluxplane's own variables and the fields meant to be substituted take the cluster's values
    data = note[("ConfigMap", "note")]["data"]
    assert data == {"note": TEXT, "greeting": "hello from staging-usw2", "region": "us-west-2"}
    assert dns[("HelmRelease", "external-dns")]["spec"]["values"]["txtOwnerId"] == "staging-usw2"
    # AND in the role's policy, which fluxplane fills in itself, IAM's own variables are kept
    (policy,) = roles[("AddonIdentity", "note-reader")]["spec"]["inlinePolicies"]
    (statement,) = yaml.safe_load(policy["policy"])["Statement"]
    assert statement == {"Resource": f"arn:aws:s3:::{TEXT}", "Sid": "staging-usw2", "Owner": "${aws:username}"}


def test_what_no_kustomization_substitutes_is_written_unescaped(example_project: Path) -> None:
    # GIVEN an app whose branch holds "${x}"
    files = _render(example_project)
    # WHEN its tenant's source is written (the cluster's tenants Kustomization substitutes nothing)
    sync = {
        doc["kind"]: doc for doc in yaml.safe_load_all(files["workloads/clusters/staging-usw2/notifications/sync.yaml"])
    }
    # THEN the branch is as written
    assert "postBuild" not in yaml.safe_load(files["platform/clusters/staging-usw2/tenants.yaml"])["spec"]
    assert sync["GitRepository"]["spec"]["ref"] == {"branch": "r-${x}"}
