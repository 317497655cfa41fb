"""Tests for fluxplane.config.secrets: environments/secrets/<cluster>/<namespace>/<name>.yaml, ciphertext only."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from fluxplane.config.links import check_links
from fluxplane.config.loader import load_fleet
from fluxplane.config.secrets import SealedFile, load_sealed_secrets, secret_path
from fluxplane.errors import ConfigError
from tests.conftest import FleetWriter
from tests.support.sealing import CIPHERTEXT, put, sealed

CLUSTERS = {"hub", "staging-1"}
#: Shaped like a sealed value: a 2-byte RSA length (256), that many bytes, then AES-GCM output.


def problems_of(root: Path) -> list[str]:
    found, problems = load_sealed_secrets(root, CLUSTERS)
    assert found == {}
    return problems


def test_no_secrets_folder_is_no_secrets(tmp_path: Path) -> None:
    assert load_sealed_secrets(tmp_path, CLUSTERS) == ({}, [])


def test_the_folders_check_links_listed_are_not_listed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN secrets of two clusters, and the definition's folders as check_links listed them
    put(tmp_path, "staging-1/web/tls.yaml", sealed("tls", "web"))
    put(tmp_path, "hub/flux-system/git.example.com.yaml", sealed("git.example.com", "flux-system"))
    listed = check_links(tmp_path)
    expected = load_sealed_secrets(tmp_path, CLUSTERS)
    listings: list[Any] = []
    scandir = os.scandir

    def listing(path: Any) -> Any:
        listings.append(path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", listing)

    # WHEN loaded with that listing THEN no folder is listed again, and the secrets are those found without it
    assert load_sealed_secrets(tmp_path, CLUSTERS, listed) == expected
    assert listings == []


def test_valid_files_load_per_cluster_in_path_order(tmp_path: Path) -> None:
    # GIVEN two secrets of staging-1 and one of the hub
    put(tmp_path, "staging-1/web/tls.yaml", sealed("tls", "web"))
    put(tmp_path, "staging-1/apps/db.yaml", sealed())
    put(tmp_path, "hub/flux-system/git.example.com.yaml", sealed("git.example.com", "flux-system"))

    # WHEN loaded
    found, problems = load_sealed_secrets(tmp_path, CLUSTERS)

    # THEN each is a SealedFile of its cluster, namespace and name, holding the document as written
    assert problems == []
    assert found == {
        "hub": (SealedFile("hub", "flux-system", "git.example.com", sealed("git.example.com", "flux-system")),),
        "staging-1": (
            SealedFile("staging-1", "apps", "db", sealed()),
            SealedFile("staging-1", "web", "tls", sealed("tls", "web")),
        ),
    }
    assert [item.relative_path for item in found["staging-1"]] == ["apps/db.yaml", "web/tls.yaml"]
    assert found["hub"][0].relative_path == "flux-system/git.example.com.yaml"
    assert secret_path(tmp_path, "staging-1", "apps", "db") == (
        tmp_path / "environments" / "secrets" / "staging-1" / "apps" / "db.yaml"
    )


def test_an_unknown_cluster_folder_lists_the_clusters(tmp_path: Path) -> None:
    put(tmp_path, "prod-1/apps/db.yaml", sealed())
    assert problems_of(tmp_path) == ["environments/secrets/prod-1: unknown cluster 'prod-1' (clusters: hub, staging-1)"]


def test_a_file_beside_the_cluster_folders(tmp_path: Path) -> None:
    put(tmp_path, "README.md", "notes\n")
    assert problems_of(tmp_path) == ["environments/secrets/README.md: expected a folder per cluster, found a file"]


@pytest.mark.parametrize(
    "relative",
    ["staging-1/db.yaml", "staging-1/apps/team/db.yaml", "staging-1/apps/db.yml", "staging-1/apps/db.json"],
    ids=["no-namespace", "too-deep", "yml", "json"],
)
def test_a_file_not_at_namespace_name_yaml(tmp_path: Path, relative: str) -> None:
    put(tmp_path, relative, sealed())
    assert problems_of(tmp_path) == [
        f"environments/secrets/{relative}: expected <namespace>/<name>.yaml (written by 'fluxplane seal')"
    ]


@pytest.mark.parametrize("relative", ["staging-1/Apps/db.yaml", "staging-1/apps/DB.yaml", "staging-1/apps/-db.yaml"])
def test_a_path_that_is_no_namespace_and_name(tmp_path: Path, relative: str) -> None:
    namespace, name = relative.split("/")[1], relative.split("/")[2].removesuffix(".yaml")
    put(tmp_path, relative, sealed(name, namespace))
    assert problems_of(tmp_path) == [
        f"environments/secrets/{relative}: the folder must be a namespace and the file a Secret name (DNS-1123)"
    ]


def test_a_plaintext_secret_is_refused(tmp_path: Path) -> None:
    # GIVEN a plaintext Secret committed where a sealed one belongs
    put(
        tmp_path,
        "staging-1/apps/db.yaml",
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "apps"}, "data": {"a": "MQ=="}},
    )
    # THEN it is refused with a pointer to 'fluxplane seal'
    assert problems_of(tmp_path) == [
        "environments/secrets/staging-1/apps/db.yaml: a plaintext Secret must not be committed; seal it with "
        "'fluxplane seal' and delete this file"
    ]


@pytest.mark.parametrize(
    ("change", "got"),
    [
        ({"apiVersion": "bitnami.com/v1"}, '"bitnami.com/v1" "SealedSecret"'),
        ({"kind": "ConfigMap"}, '"bitnami.com/v1alpha1" "ConfigMap"'),
        ({"kind": None}, '"bitnami.com/v1alpha1" null'),
        ({"apiVersion": 1}, '1 "SealedSecret"'),
    ],
)
def test_wrong_api_version_or_kind(tmp_path: Path, change: dict[str, Any], got: str) -> None:
    put(tmp_path, "staging-1/apps/db.yaml", {**sealed(), **change})
    assert problems_of(tmp_path) == [
        f"environments/secrets/staging-1/apps/db.yaml: expected apiVersion bitnami.com/v1alpha1 and kind "
        f"SealedSecret, got {got}"
    ]


@pytest.mark.parametrize(("text", "got"), [("- a\n", "a list"), ("", "null"), ("just text\n", '"just text"')])
def test_a_document_that_is_no_mapping(tmp_path: Path, text: str, got: str) -> None:
    put(tmp_path, "staging-1/apps/db.yaml", text)
    assert problems_of(tmp_path) == [f"environments/secrets/staging-1/apps/db.yaml: expected a SealedSecret, got {got}"]


def test_invalid_yaml_names_the_file_and_line(tmp_path: Path) -> None:
    put(tmp_path, "staging-1/apps/db.yaml", "kind: SealedSecret\nkind: Secret\n")
    assert problems_of(tmp_path) == [
        "environments/secrets/staging-1/apps/db.yaml:2:1: invalid YAML: duplicate key 'kind'"
    ]


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        ({"name": "other", "namespace": "apps"}, "apps/other"),
        ({"name": "db", "namespace": "web"}, "web/db"),
        ({"name": "db"}, "None/db"),
        (["db", "apps"], "None/None"),
        ("apps/db", "None/None"),
    ],
)
def test_metadata_must_match_the_path(tmp_path: Path, metadata: dict[str, str], says: str) -> None:
    put(tmp_path, "staging-1/apps/db.yaml", {**sealed(), "metadata": metadata})
    assert problems_of(tmp_path) == [
        f"environments/secrets/staging-1/apps/db.yaml: metadata says {says}, the path says apps/db; "
        "the path must match the object"
    ]


@pytest.mark.parametrize("encrypted", [{}, None, ["a"], "text"], ids=["empty", "null", "list", "str"])
def test_encrypted_data_must_be_a_non_empty_mapping(tmp_path: Path, encrypted: Any) -> None:
    put(tmp_path, "staging-1/apps/db.yaml", sealed(encryptedData=encrypted))
    assert problems_of(tmp_path) == [
        "environments/secrets/staging-1/apps/db.yaml: spec.encryptedData must map keys to sealed values"
    ]


@pytest.mark.parametrize("spec", [["encryptedData"], 1.5, "text"], ids=["list", "float", "str"])
def test_a_spec_that_is_no_mapping_is_no_encrypted_data(tmp_path: Path, spec: Any) -> None:
    # GIVEN a spec that is not a mapping WHEN loaded THEN the same line as for missing encryptedData
    put(tmp_path, "staging-1/apps/db.yaml", {**sealed(), "spec": spec})
    assert problems_of(tmp_path) == [
        "environments/secrets/staging-1/apps/db.yaml: spec.encryptedData must map keys to sealed values"
    ]


def test_missing_spec_is_no_encrypted_data(tmp_path: Path) -> None:
    document = sealed()
    del document["spec"]
    put(tmp_path, "staging-1/apps/db.yaml", document)
    assert problems_of(tmp_path) == [
        "environments/secrets/staging-1/apps/db.yaml: spec.encryptedData must map keys to sealed values"
    ]


@pytest.mark.parametrize("value", ["not base64!", "AQB", "plain text", "é∆", 12345, None])
def test_a_value_that_is_not_base64(tmp_path: Path, value: Any) -> None:
    put(tmp_path, "staging-1/apps/db.yaml", sealed(encryptedData={"user": CIPHERTEXT, "password": value}))
    assert problems_of(tmp_path) == [
        "environments/secrets/staging-1/apps/db.yaml: spec.encryptedData.password: not base64 ciphertext"
    ]


@pytest.mark.parametrize("value", [None, "", 1234], ids=["null", "empty", "int"])
def test_a_null_empty_or_number_value_is_no_ciphertext(tmp_path: Path, value: Any) -> None:
    put(tmp_path, "staging-1/apps/db.yaml", sealed(encryptedData={"password": value}))
    assert problems_of(tmp_path) == [
        "environments/secrets/staging-1/apps/db.yaml: spec.encryptedData.password: not base64 ciphertext"
    ]


def test_every_file_is_checked_and_good_files_still_load(tmp_path: Path) -> None:
    # GIVEN one good file and problems in three others, across two clusters and an unknown one
    put(tmp_path, "hub/flux-system/git.yaml", {"kind": "Secret"})
    put(tmp_path, "nope/apps/db.yaml", sealed())
    put(tmp_path, "staging-1/apps/db.yaml", sealed())
    put(tmp_path, "staging-1/apps/web.yaml", sealed())
    # WHEN loaded THEN every problem is reported, in path order, and the good file is still found
    found, problems = load_sealed_secrets(tmp_path, CLUSTERS)
    assert problems == [
        "environments/secrets/hub/flux-system/git.yaml: a plaintext Secret must not be committed; seal it with "
        "'fluxplane seal' and delete this file",
        "environments/secrets/nope: unknown cluster 'nope' (clusters: hub, staging-1)",
        "environments/secrets/staging-1/apps/web.yaml: metadata says apps/db, the path says apps/web; "
        "the path must match the object",
    ]
    assert found == {"staging-1": (SealedFile("staging-1", "apps", "db", sealed()),)}


# -- through load_fleet --------------------------------------------------------------------------------


def test_load_fleet_carries_the_sealed_secrets(write_fleet: FleetWriter) -> None:
    root = write_fleet()
    put(root, "staging-1/apps/db.yaml", sealed())
    put(root, "hub/flux-system/git.yaml", sealed("git", "flux-system"))
    loaded = load_fleet(root)
    assert loaded.sealed_secrets == {
        "hub": (SealedFile("hub", "flux-system", "git", sealed("git", "flux-system")),),
        "staging-1": (SealedFile("staging-1", "apps", "db", sealed()),),
    }


def test_load_fleet_without_secrets_has_none(write_fleet: FleetWriter) -> None:
    assert load_fleet(write_fleet()).sealed_secrets == {}


def test_load_fleet_reports_secret_problems_with_the_others(write_fleet: FleetWriter) -> None:
    # GIVEN a bad environment file and bad secret files
    root = write_fleet(
        envs={
            "production": {"clusters": [{"name": "prod-1", "region": "us-east-1"}]},
            "staging": {"clusters": [{"name": "staging-1", "region": "us-west-2", "extra": 1}]},
        }
    )
    put(root, "prod-1/apps/db.yaml", {"apiVersion": "v1", "kind": "Secret", "stringData": {"a": "b"}})
    put(root, "staging-1/apps/db.yaml", sealed(encryptedData={}))
    put(root, "staging-2/apps/db.yaml", sealed())
    put(root, "hub/apps/db.yaml", sealed("other"))

    # WHEN loaded THEN one ConfigError holds every line: the environment file's, then each secret file's
    with pytest.raises(ConfigError) as caught:
        load_fleet(root)
    assert list(caught.value.problems) == [
        "environments/staging.yaml: clusters[0].extra: unknown field; allowed: name, region, kubernetesVersion, "
        "packs, network, endpoint, logging, tags, hubAccess, nodeGroups, autoMode, fluxInstaller, account, "
        "appResources, existing, bootstrap, cdk8sCharts",
        "environments/secrets/hub/apps/db.yaml: metadata says apps/other, the path says apps/db; "
        "the path must match the object",
        "environments/secrets/prod-1/apps/db.yaml: a plaintext Secret must not be committed; seal it with "
        "'fluxplane seal' and delete this file",
        "environments/secrets/staging-1/apps/db.yaml: spec.encryptedData must map keys to sealed values",
        "environments/secrets/staging-2: unknown cluster 'staging-2' (clusters: hub, prod-1, staging-1)",
    ]


def test_load_fleet_reports_a_secret_problem_alone(write_fleet: FleetWriter) -> None:
    # GIVEN a valid definition and one secret for a cluster it does not define
    root = write_fleet()
    put(root, "staging-2/apps/db.yaml", sealed())
    # THEN loading fails with that line only
    with pytest.raises(ConfigError, match=r"^environments/secrets/staging-2: unknown cluster 'staging-2' "):
        load_fleet(root)


def test_base64_too_short_for_its_rsa_part_is_no_ciphertext(tmp_path: Path) -> None:
    # GIVEN base64 whose first two bytes announce a 256-byte RSA part that is not there
    short = base64.b64encode(b"\x01\x00" + bytes(40)).decode()
    put(tmp_path, "staging-1/apps/db.yaml", sealed(encryptedData={"password": short}))
    assert problems_of(tmp_path) == [
        "environments/secrets/staging-1/apps/db.yaml: spec.encryptedData.password: not base64 ciphertext"
    ]


def test_hidden_files_are_not_secrets(tmp_path: Path) -> None:
    # GIVEN a sealed secret next to an editor's leftover and a Finder file
    put(tmp_path, "staging-1/apps/db.yaml", sealed())
    put(tmp_path, "staging-1/apps/.db.yaml.tmp", "garbage")
    put(tmp_path, "staging-1/.DS_Store", "garbage")
    found, problems = load_sealed_secrets(tmp_path, CLUSTERS)
    assert problems == []
    assert [item.relative_path for item in found["staging-1"]] == ["apps/db.yaml"]


# -- plaintext and fields the SealedSecret schema does not have ----------------------------------------

PLAINTEXT = "hunter2-plaintext"
PLAINTEXT_HELP = "holds plaintext, which must not be committed; delete it and seal the values with 'fluxplane seal'"


def with_fields(document: dict[str, Any], where: str, **fields: Any) -> dict[str, Any]:
    """``document`` with ``fields`` added at the top (``where=""``), in ``spec`` or in ``spec.template``."""
    target = document
    for part in filter(None, where.split(".")):
        target = target[part]
    target.update(fields)
    return document


@pytest.mark.parametrize(
    ("where", "field", "value"),
    [
        ("spec.template", "data", {"password": PLAINTEXT}),
        ("spec.template", "stringData", {"password": PLAINTEXT}),
        ("spec", "stringData", {"password": PLAINTEXT}),
        ("", "stringData", {"password": PLAINTEXT}),
        ("", "data", {"password": base64.b64encode(PLAINTEXT.encode()).decode()}),
        ("spec.template", "data", PLAINTEXT),
    ],
    ids=["template-data", "template-stringData", "spec-stringData", "stringData", "data", "template-data-string"],
)
def test_plaintext_in_a_sealed_secret_is_refused_without_showing_it(
    tmp_path: Path, where: str, field: str, value: Any
) -> None:
    # GIVEN a SealedSecret whose ciphertext is fine but which also carries a value in clear
    put(tmp_path, "staging-1/apps/db.yaml", with_fields(sealed(), where, **{field: value}))
    # WHEN loaded THEN the file is refused with one line naming the field, and the value is nowhere in it
    path = f"{where}.{field}" if where else field
    problems = problems_of(tmp_path)
    assert problems == [f"environments/secrets/staging-1/apps/db.yaml: {path}: {PLAINTEXT_HELP}"]
    assert not [line for line in problems if PLAINTEXT in line or "aHVudGVy" in line]


def test_every_plaintext_field_is_its_own_line(tmp_path: Path) -> None:
    # GIVEN plaintext at the top, in the spec and in the template of one file
    document = sealed()
    with_fields(document, "", stringData={"a": PLAINTEXT})
    with_fields(document, "spec", stringData={"b": PLAINTEXT})
    with_fields(document, "spec.template", data={"c": PLAINTEXT}, stringData={"d": PLAINTEXT})
    put(tmp_path, "staging-1/apps/db.yaml", document)
    # THEN each field is reported, in the order the file has them
    assert problems_of(tmp_path) == [
        f"environments/secrets/staging-1/apps/db.yaml: {path}: {PLAINTEXT_HELP}"
        for path in ("stringData", "spec.stringData", "spec.template.data", "spec.template.stringData")
    ]


def test_plaintext_is_reported_with_the_files_other_problems(tmp_path: Path) -> None:
    # GIVEN plaintext in a file whose metadata also disagrees with its path
    put(tmp_path, "staging-1/apps/db.yaml", with_fields(sealed("other"), "spec.template", data={"a": PLAINTEXT}))
    assert problems_of(tmp_path) == [
        f"environments/secrets/staging-1/apps/db.yaml: spec.template.data: {PLAINTEXT_HELP}",
        "environments/secrets/staging-1/apps/db.yaml: metadata says apps/other, the path says apps/db; "
        "the path must match the object",
    ]


@pytest.mark.parametrize("empty", [None, {}], ids=["null", "empty"])
def test_an_empty_plaintext_field_holds_nothing(tmp_path: Path, empty: Any) -> None:
    # GIVEN a template's data left null or empty (the CRD allows null), and an empty stringData
    document = with_fields(sealed(), "spec.template", data=empty, stringData=None if empty is None else {})
    put(tmp_path, "staging-1/apps/db.yaml", document)
    # THEN the file loads as it is
    found, problems = load_sealed_secrets(tmp_path, CLUSTERS)
    assert problems == []
    assert found == {"staging-1": (SealedFile("staging-1", "apps", "db", document),)}


def test_the_schemas_other_fields_load(tmp_path: Path) -> None:
    # GIVEN every other field the bitnami.com/v1alpha1 schema has: the template's labels, immutable and type,
    # the deprecated spec.data (ciphertext of a whole Secret) and a status
    document = sealed()
    document["metadata"]["labels"] = {"team": "orders"}
    with_fields(document, "spec", data=CIPHERTEXT)
    with_fields(document, "spec.template", immutable=True)
    document["spec"]["template"]["metadata"]["labels"] = {"team": "orders"}
    document["status"] = {"conditions": [{"type": "Synced", "status": "True"}]}
    put(tmp_path, "staging-1/apps/db.yaml", document)
    # THEN it loads as it is
    found, problems = load_sealed_secrets(tmp_path, CLUSTERS)
    assert problems == []
    assert found == {"staging-1": (SealedFile("staging-1", "apps", "db", document),)}


def test_spec_data_must_be_ciphertext(tmp_path: Path) -> None:
    put(tmp_path, "staging-1/apps/db.yaml", with_fields(sealed(), "spec", data=PLAINTEXT))
    assert problems_of(tmp_path) == ["environments/secrets/staging-1/apps/db.yaml: spec.data: not base64 ciphertext"]


@pytest.mark.parametrize(
    ("where", "allowed"),
    [
        ("", "apiVersion, kind, metadata, spec, status"),
        ("spec", "data, encryptedData, template"),
        ("spec.template", "immutable, metadata, type"),
    ],
)
def test_a_field_the_schema_does_not_have_is_refused(tmp_path: Path, where: str, allowed: str) -> None:
    # GIVEN a field the SealedSecret schema does not have, which may hold anything
    put(tmp_path, "staging-1/apps/db.yaml", with_fields(sealed(), where, password=PLAINTEXT))
    # THEN it is refused, naming what is allowed there and not what it holds
    path = f"{where}.password" if where else "password"
    assert problems_of(tmp_path) == [
        f"environments/secrets/staging-1/apps/db.yaml: {path}: unknown field; allowed: {allowed}"
    ]


@pytest.mark.parametrize(
    ("template", "got"),
    [(PLAINTEXT, "a string"), ([PLAINTEXT], "a list"), (1234, "a number"), (True, "a boolean")],
    ids=["string", "list", "number", "boolean"],
)
def test_a_template_that_is_no_mapping_is_refused_without_showing_it(tmp_path: Path, template: Any, got: str) -> None:
    put(tmp_path, "staging-1/apps/db.yaml", with_fields(sealed(), "spec", template=template))
    assert problems_of(tmp_path) == [
        f"environments/secrets/staging-1/apps/db.yaml: spec.template: expected a mapping (metadata, type, "
        f"immutable), got {got}"
    ]


def test_load_fleet_refuses_plaintext_in_a_sealed_file(write_fleet: FleetWriter) -> None:
    # GIVEN a valid definition with a sealed file that carries its password in the template too
    root = write_fleet()
    put(root, "staging-1/apps/db.yaml", with_fields(sealed(), "spec.template", data={"password": PLAINTEXT}))
    # THEN loading fails with that line, so nothing of it reaches dist/
    with pytest.raises(ConfigError) as caught:
        load_fleet(root)
    assert list(caught.value.problems) == [
        f"environments/secrets/staging-1/apps/db.yaml: spec.template.data: {PLAINTEXT_HELP}"
    ]


def test_each_sealed_file_is_looked_up_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN three sealed files of two clusters (a fleet of a thousand clusters holds a thousand)
    put(tmp_path, "staging-1/apps/db.yaml", sealed())
    put(tmp_path, "staging-1/web/tls.yaml", sealed("tls", "web"))
    put(tmp_path, "hub/flux-system/git.yaml", sealed("git", "flux-system"))
    files = sorted((tmp_path / "environments" / "secrets").rglob("*.yaml"))
    stats: list[Path] = []
    original = os.stat

    def counting(path: Any, *args: Any, **kwargs: Any) -> Any:
        stats.append(Path(path))
        return original(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counting)  # pathlib's stat too
    made: list[str] = []
    read_text = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda path, *args, **kwargs: made.append(str(path)) or read_text(path))
    # WHEN loaded
    found, problems = load_sealed_secrets(tmp_path, CLUSTERS)
    # THEN each file is looked up once, by the read that checks it is a regular file, and the folders are only listed
    assert problems == [] and sum(len(files) for files in found.values()) == 3
    assert sorted(path for path in stats if path.suffix == ".yaml") == files
    assert len(stats) <= 3 + 1  # the files, and the secrets folder itself
    assert made == []  # read by their paths as listed, without a pathlib object of each


def test_files_at_any_depth_are_named_in_path_order_and_links_to_folders_are_not_followed(tmp_path: Path) -> None:
    # GIVEN a good file, a file a level too deep, one a level too high, and a link to the namespace folder
    put(tmp_path, "staging-1/apps/db.yaml", sealed())
    put(tmp_path, "staging-1/apps/old/db.yaml", sealed())
    put(tmp_path, "staging-1/apps.yaml", sealed())
    (tmp_path / "environments" / "secrets" / "staging-1" / "linked").symlink_to("apps", target_is_directory=True)
    # WHEN loaded THEN the misplaced files are named once each, in path order, and the good one loads
    found, problems = load_sealed_secrets(tmp_path, CLUSTERS)
    assert problems == [
        f"environments/secrets/staging-1/{relative}: expected <namespace>/<name>.yaml (written by 'fluxplane seal')"
        for relative in ("apps/old/db.yaml", "apps.yaml")
    ]
    assert found == {"staging-1": (SealedFile("staging-1", "apps", "db", sealed()),)}
