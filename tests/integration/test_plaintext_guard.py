"""The plaintext guard: a v1 Secret with data or stringData never reaches dist/, nor a SealedSecret with
values in clear beside its ciphertext; a SealedSecret holding ciphertext only does."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from pydantic import Field

from fluxplane.config.secrets import check_plaintext
from fluxplane.constructs.raw import RawObject
from fluxplane.errors import TreeError
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import load_plan
from fluxplane.synth.app import FleetApp
from fluxplane.synth.render import render_app
from tests.conftest import FleetWriter
from tests.support.packs import DEMO_HUB, DEMO_REPOSITORIES, demo_builder

BASE: dict[str, Any] = {
    "repositories": DEMO_REPOSITORIES,
    "management": DEMO_HUB,
    "packs": {"creds": {}},
}
#: Shaped like a sealed value: a 2-byte RSA length (4), that many bytes, then AES-GCM output (tag and more).
CIPHERTEXT = base64.b64encode(b"\x00\x04" + b"rsa!" + b"t" * 20).decode()
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
            "spec": {"encryptedData": {"a": CIPHERTEXT}, "template": {"metadata": {"name": "db"}, "data": {}}},
        },
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "db"}, "data": {"a": "1"}},
        {"apiVersion": "example.com/v1", "kind": "Secret", "metadata": {"name": "db"}, "data": {"a": "1"}},
    ],
    ids=["no-data", "typed", "empty", "sealed-secret", "config-map", "other-api-secret"],
)
def test_check_plaintext_passes_what_holds_no_plaintext_secret(document: dict[str, Any]) -> None:
    assert check_plaintext(document, "here", "f.yaml") == []


# -- SealedSecrets that synth produces (packs, cdk8s) carry ciphertext only ---------------------------

#: What a leaked value would look like in a problem line: no line may show it.
VALUE = "hunter2-in-clear"
SEALED_HELP = "holds plaintext, which must not be committed; seal the values with 'fluxplane seal' (spec.encryptedData)"


def _sealed(**fields: Any) -> dict[str, Any]:
    spec = {"encryptedData": {"token": CIPHERTEXT}, "template": {"metadata": {"name": "api-token"}}}
    document: dict[str, Any] = {
        "apiVersion": "bitnami.com/v1alpha1",
        "kind": "SealedSecret",
        "metadata": {"name": "api-token", "namespace": "creds"},
        "spec": spec,
    }
    for path, value in fields.items():
        *parents, last = path.split("__")
        target = document
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value
    return document


class SealedConfig(PackConfig):
    fields: dict[str, Any] = Field(default_factory=dict)


def _bind_sealed(ctx: PackContext, config: SealedConfig) -> None:
    RawObject(ctx.scope, "sealed", _sealed(**config.fields))


SEALED_PACK = Pack(
    name="creds",
    version="1.0.0",
    description="adds a SealedSecret",
    config=SealedConfig,
    layer="apps",
    bind=_bind_sealed,
)


def _sealed_app(write_fleet: FleetWriter, fields: dict[str, Any]) -> FleetApp:
    base = {**BASE, "packs": {"creds": {"fields": fields}}}
    project: Path = write_fleet(base, {"staging": {"clusters": [{"name": "s1", "region": "us-west-2"}]}})
    return FleetApp(load_plan(project, PackRegistry([SEALED_PACK, demo_builder()])))


def test_a_pack_adding_a_sealed_secret_with_values_in_clear_is_refused_one_line_per_field(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN a pack whose SealedSecret carries values in clear in every place a Secret's values can go
    app = _sealed_app(
        write_fleet,
        {
            "data": {"token": base64.b64encode(VALUE.encode()).decode()},
            "stringData": {"token": VALUE},
            "spec__stringData": {"token": VALUE},
            "spec__template__data": {"token": VALUE},
            "spec__template__stringData": {"token": VALUE},
        },
    )
    # WHEN rendered THEN the tree is refused: one line per field, naming the object, its file in dist/ and
    # the field, never the value
    with pytest.raises(TreeError) as caught:
        render_app(app)
    where = "catalogue-creds/base/sealed: SealedSecret 'creds/api-token' in platform/apps/creds/base/creds.yaml"
    assert caught.value.problems == (
        f"{where}: data: {SEALED_HELP}",
        f"{where}: stringData: {SEALED_HELP}",
        f"{where}: spec.stringData: {SEALED_HELP}",
        f"{where}: spec.template.data: {SEALED_HELP}",
        f"{where}: spec.template.stringData: {SEALED_HELP}",
    )
    assert not any(VALUE in line or "aHVudGVy" in line for line in caught.value.problems)


def test_a_pack_adding_a_sealed_secret_with_ciphertext_only_is_written(write_fleet: FleetWriter) -> None:
    # GIVEN a pack whose SealedSecret holds ciphertext, a template without values and empty leftovers
    files = render_app(_sealed_app(write_fleet, {"spec__template__data": {}, "stringData": None}))
    # THEN it is written as given
    (sealed,) = yaml.safe_load_all(files["platform/apps/creds/base/creds.yaml"])
    assert sealed["spec"]["encryptedData"] == {"token": CIPHERTEXT}


def test_a_sealed_secret_with_values_in_clear_from_cdk8s_is_refused(write_fleet: FleetWriter) -> None:
    import cdk8s

    # GIVEN a cdk8s SealedSecret under a cluster chart whose template carries a value in clear
    app = _app(write_fleet, "none")
    leak = cdk8s.ApiObject(
        app.clusters["s1"],
        "leak",
        api_version="bitnami.com/v1alpha1",
        kind="SealedSecret",
        metadata={"name": "leak", "namespace": "team"},
    )
    spec = {"encryptedData": {"password": CIPHERTEXT}, "template": {"stringData": {"password": VALUE}}}
    leak.add_json_patch(cdk8s.JsonPatch.add("/spec", spec))
    # WHEN rendered THEN it is refused, naming the field of the object in its file
    with pytest.raises(TreeError) as caught:
        render_app(app)
    assert caught.value.problems == (
        f"cluster-s1 (cdk8s): SealedSecret 'team/leak' in platform/clusters/s1/custom.yaml: "
        f"spec.template.stringData: {SEALED_HELP}",
    )


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"spec__encryptedData": {"token": VALUE}}, "spec.encryptedData.token: not base64 ciphertext"),
        ({"spec__data": VALUE}, "spec.data: not base64 ciphertext"),
        ({"spec__template__annotations": {"token": VALUE}}, "spec.template.annotations: unknown field"),
        ({"spec__password": VALUE}, "spec.password: unknown field"),
        ({"password": VALUE}, "password: unknown field"),
        ({"spec__template": VALUE}, "spec.template: expected a mapping (immutable, metadata, type), got a string"),
        ({"spec__encryptedData": [VALUE]}, "spec.encryptedData: expected a mapping of keys to sealed values"),
    ],
    ids=[
        "encrypted-in-clear",
        "spec-data-in-clear",
        "template-unknown",
        "spec-unknown",
        "top-unknown",
        "template",
        "encrypted-list",
    ],
)
def test_check_plaintext_flags_a_sealed_secret_that_may_hold_values_in_clear(
    fields: dict[str, Any], problem: str
) -> None:
    (line,) = check_plaintext(_sealed(**fields), "here", "f.yaml")
    assert line.startswith(f"here: SealedSecret 'creds/api-token' in f.yaml: {problem}")
    assert VALUE not in line


def test_check_plaintext_looks_into_the_items_of_a_list_and_names_their_places() -> None:
    document = {"apiVersion": "v1", "kind": "List", "items": [_secret(stringData={"a": VALUE}), _sealed(data={"a": 1})]}
    assert check_plaintext(document, "here", "f.yaml") == [
        f"here: items[0]: Secret 'apps/db' in f.yaml {GUIDANCE}",
        f"here: items[1]: SealedSecret 'creds/api-token' in f.yaml: data: {SEALED_HELP}",
    ]


def test_check_plaintext_names_an_item_of_a_list_in_a_list_by_both_places_and_leaves_out_a_path_not_given() -> None:
    inner = {"apiVersion": "v1", "kind": "SecretList", "items": ["text", _secret(data={"a": "MQ=="})]}
    document = {"apiVersion": "v1", "kind": "List", "items": [_secret(), inner, _secret(stringData={"b": VALUE})]}
    assert check_plaintext(document, "f.yaml:2") == [
        f"f.yaml:2: items[1]: items[1]: Secret 'apps/db' {GUIDANCE}",
        f"f.yaml:2: items[2]: Secret 'apps/db' {GUIDANCE}",
    ]


def test_check_plaintext_reads_a_list_that_holds_itself_once() -> None:
    # GIVEN a List among its own items, as a YAML alias can make it
    (document,) = yaml.load_all(
        "&list {apiVersion: v1, kind: List, items: [*list, {apiVersion: v1, kind: Secret, metadata: {name: db},"
        " data: {a: MQ==}}]}",
        Loader=yaml.SafeLoader,
    )
    # THEN the check ends, with the Secret's one problem
    assert check_plaintext(document, "here") == [f"here: items[1]: Secret 'db' {GUIDANCE}"]
