"""The plaintext guard: a v1 Secret with data or stringData never reaches dist/; a SealedSecret does."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest
import yaml

from fluxplane.constructs.raw import RawObject
from fluxplane.errors import TreeError
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import load_plan
from fluxplane.synth.app import FleetApp
from fluxplane.synth.checks import check_plaintext
from fluxplane.synth.render import render_app
from tests.conftest import FleetWriter
from tests.unit.synth.packs import DEMO_HUB, DEMO_REPOSITORIES, demo_builder

BASE: dict[str, Any] = {
    "repositories": DEMO_REPOSITORIES,
    "management": DEMO_HUB,
    "packs": {"creds": {}},
}
GUIDANCE = (
    "holds plaintext data or stringData; seal it with 'fluxplane seal' (a SealedSecret) or fetch it with an "
    "ExternalSecret"
)


class CredsConfig(PackConfig):
    content: Literal["stringData", "data", "none", "empty"] = "stringData"


def _bind(ctx: PackContext, config: CredsConfig) -> None:
    document: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "api-token", "namespace": "creds"},
        "type": "Opaque",
    }
    if config.content == "stringData":
        document["stringData"] = {"token": "hunter2"}
    elif config.content == "data":
        document["data"] = {"token": "aHVudGVyMg=="}
    elif config.content == "empty":
        document["data"] = {}
    RawObject(ctx.scope, "secret", document)


CREDS = Pack(name="creds", version="1.0.0", description="adds a Secret", config=CredsConfig, layer="apps", bind=_bind)


def _app(write_fleet: FleetWriter, content: str) -> FleetApp:
    base = {**BASE, "packs": {"creds": {"content": content}}}
    project: Path = write_fleet(base, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    return FleetApp(load_plan(project, PackRegistry([CREDS, demo_builder()])))


@pytest.mark.parametrize("content", ["stringData", "data"])
def test_a_pack_adding_a_plaintext_secret_is_refused(write_fleet: FleetWriter, content: str) -> None:
    # GIVEN a pack whose bind adds a v1 Secret holding a value
    app = _app(write_fleet, content)
    # WHEN rendered THEN the tree is refused, naming the Secret, its file and 'fluxplane seal'
    with pytest.raises(TreeError, match="fluxplane seal") as caught:
        render_app(app)
    assert caught.value.problems == (
        f"catalogue-creds/base/secret: Secret 'creds/api-token' in platform/apps/creds/base/creds.yaml {GUIDANCE}",
    )


@pytest.mark.parametrize("content", ["none", "empty"])
def test_a_secret_without_values_is_allowed(write_fleet: FleetWriter, content: str) -> None:
    # GIVEN a pack whose Secret has only metadata and type (filled in on the cluster)
    files = render_app(_app(write_fleet, content))
    # THEN it is written as given
    (secret,) = yaml.safe_load_all(files["platform/apps/creds/base/creds.yaml"])
    assert secret["kind"] == "Secret"
    assert secret["metadata"] == {"name": "api-token", "namespace": "creds"}
    assert "stringData" not in secret
    assert secret.get("data", {}) == {}


def test_a_plaintext_secret_from_cdk8s_is_refused(write_fleet: FleetWriter) -> None:
    import cdk8s

    # GIVEN a plain cdk8s Secret with stringData under a cluster chart
    app = _app(write_fleet, "none")
    leak = cdk8s.ApiObject(
        app.clusters["s1"], "leak", api_version="v1", kind="Secret", metadata={"name": "leak", "namespace": "team"}
    )
    leak.add_json_patch(cdk8s.JsonPatch.add("/stringData", {"password": "hunter2"}))
    # WHEN rendered THEN it is refused too
    with pytest.raises(TreeError, match="fluxplane seal") as caught:
        render_app(app)
    assert caught.value.problems == (
        f"cluster-s1 (cdk8s): Secret 'team/leak' in platform/clusters/s1/custom.yaml {GUIDANCE}",
    )


# -- check_plaintext on single documents ------------------------------------------------------------


def _secret(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "apps"}, **fields}


@pytest.mark.parametrize(
    "document",
    [
        _secret(data={"a": "MQ=="}),
        _secret(stringData={"a": "1"}),
        _secret(data={}, stringData={"a": "1"}),
    ],
    ids=["data", "stringData", "empty-data-and-stringData"],
)
def test_check_plaintext_flags_secrets_with_values(document: dict[str, Any]) -> None:
    assert check_plaintext(document, "here", "some/file.yaml") == [
        f"here: Secret 'apps/db' in some/file.yaml {GUIDANCE}"
    ]


def test_check_plaintext_names_a_cluster_scoped_secret_by_name() -> None:
    document = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}, "data": {"a": "MQ=="}}
    assert check_plaintext(document, "here", "f.yaml") == [f"here: Secret 'db' in f.yaml {GUIDANCE}"]


@pytest.mark.parametrize(
    "document",
    [
        _secret(),
        _secret(type="kubernetes.io/service-account-token"),
        _secret(data={}, stringData={}),
        {
            "apiVersion": "bitnami.com/v1alpha1",
            "kind": "SealedSecret",
            "metadata": {"name": "db", "namespace": "apps"},
            "spec": {"encryptedData": {"a": "AgBy3i4OJSWK"}, "template": {"data": {"plain": "x"}}},
        },
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "db"}, "data": {"a": "1"}},
        {"apiVersion": "example.com/v1", "kind": "Secret", "metadata": {"name": "db"}, "data": {"a": "1"}},
    ],
    ids=["no-data", "typed", "empty", "sealed-secret", "config-map", "other-api-secret"],
)
def test_check_plaintext_passes_what_holds_no_plaintext_secret(document: dict[str, Any]) -> None:
    assert check_plaintext(document, "here", "f.yaml") == []
