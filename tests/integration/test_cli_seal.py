"""``fluxplane seal`` through the CLI: writing environments/secrets/, re-sealing, bad input, then synth."""

from __future__ import annotations

import base64
import datetime
import errno
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from fluxplane.cli import EXIT_BAD_INPUT, main
from fluxplane.errors import FluxplaneError
from fluxplane.synth import load_plan, render_plan
from fluxplane.system import transaction
from tests.conftest import FleetWriter
from tests.support.sealing import (
    EXPIRED_ON,
    hybrid_decrypt,
    make_certificate,
    make_rsa_key,
    project_with_certificate,
    tiny_public_key,
)

TARGET = "environments/secrets/staging-1/apps/db.yaml"


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return make_rsa_key()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This machine's seal cache, in a fresh folder for each test."""
    folder = tmp_path / "seal-cache"
    monkeypatch.setenv("FLUXPLANE_SEAL_CACHE", str(folder))
    return folder


@pytest.fixture
def root(write_fleet: FleetWriter, key: rsa.RSAPrivateKey) -> Path:
    """The default fleet (hub and staging-1) with the sealing certificate at its default place."""
    return project_with_certificate(write_fleet(), key)


def _seal_for(namespace: str, name: str, *args: str) -> list[str]:
    """The seal command's arguments for a secret of staging-1."""
    return ["seal", "--cluster", "staging-1", "--namespace", namespace, "--name", name, *args]


def _db(*args: str) -> list[str]:
    return _seal_for("apps", "db", *args)


def run(root: Path, *args: str) -> int:
    return main(["--root", str(root), *_db(*args)])


def read(root: Path, path: str = TARGET) -> dict[str, Any]:
    return yaml.safe_load((root / path).read_text())  # type: ignore[no-any-return]


def unseal(key: rsa.RSAPrivateKey, document: dict[str, Any], label: bytes = b"apps/db") -> dict[str, bytes]:
    return {
        name: hybrid_decrypt(key, base64.b64decode(value), label)
        for name, value in document["spec"]["encryptedData"].items()
    }


def test_seal_writes_the_secret_file(
    root: Path, key: rsa.RSAPrivateKey, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN two literals are sealed for staging-1
    code = run(root, "--from-literal", "user=admin", "--from-literal", "password=hunter2-secret")

    # THEN the file is written where synth looks for it, and the sealed keys are listed
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out == f"{TARGET}: sealed password, user\n"
    assert captured.err == ""
    document = read(root)
    assert document["metadata"] == {"name": "db", "namespace": "apps"}
    assert document["spec"]["template"] == {"metadata": {"name": "db", "namespace": "apps"}, "type": "Opaque"}
    # AND the controller's key unseals the values; the file holds no plaintext
    assert unseal(key, document) == {"password": b"hunter2-secret", "user": b"admin"}
    assert "hunter2-secret" not in (root / TARGET).read_text()
    assert sorted(path.name for path in (root / TARGET).parent.iterdir()) == ["db.yaml"]
    # AND this machine's cache now exists
    assert sorted(path.name for path in cache.iterdir()) == ["digests.json", "key"]


def test_resealing_keeps_unchanged_values_and_reports_every_key(
    root: Path, key: rsa.RSAPrivateKey, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a sealed file
    assert run(root, "--from-literal", "user=admin", "--from-literal", "password=old") == 0
    first_bytes = (root / TARGET).read_bytes()
    first = read(root)["spec"]["encryptedData"]
    capsys.readouterr()

    # WHEN the same command runs again THEN the file is byte for byte the same and nothing is re-sealed
    assert run(root, "--from-literal", "user=admin", "--from-literal", "password=old") == 0
    assert capsys.readouterr().out == f"{TARGET}: unchanged password, user\n"
    assert (root / TARGET).read_bytes() == first_bytes

    # WHEN one literal changes THEN only its ciphertext changes
    assert run(root, "--from-literal", "user=admin", "--from-literal", "password=new") == 0
    assert capsys.readouterr().out == f"{TARGET}: sealed password, unchanged user\n"
    second = read(root)["spec"]["encryptedData"]
    assert second["user"] == first["user"]
    assert second["password"] != first["password"]
    assert unseal(key, read(root)) == {"password": b"new", "user": b"admin"}

    # WHEN a key is left out THEN it is dropped from the file and reported as removed
    assert run(root, "--from-literal", "user=admin") == 0
    assert capsys.readouterr().out == f"{TARGET}: unchanged user, removed password\n"
    assert read(root)["spec"]["encryptedData"] == {"user": first["user"]}


def test_another_machine_reseals_everything(
    root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a file sealed on this machine
    assert run(root, "--from-literal", "user=admin") == 0
    before = read(root)["spec"]["encryptedData"]["user"]
    capsys.readouterr()
    # WHEN another machine (another cache) seals the same value
    monkeypatch.setenv("FLUXPLANE_SEAL_CACHE", str(tmp_path / "elsewhere"))
    assert run(root, "--from-literal", "user=admin") == 0
    # THEN it cannot tell the value is unchanged, and seals it anew
    assert capsys.readouterr().out == f"{TARGET}: sealed user\n"
    assert read(root)["spec"]["encryptedData"]["user"] != before


def test_values_from_files_and_env_files(
    root: Path, key: rsa.RSAPrivateKey, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a key file and an env file
    identity = tmp_path / "identity"
    identity.write_bytes(b"-----BEGIN KEY-----\n\x00\x01\n")
    env = tmp_path / "db.env"
    env.write_text("# comment\nHOST=db.internal\n\nPORT=5432\n")
    # WHEN sealed namespace-wide with a type
    code = run(
        root,
        "--scope",
        "namespace-wide",
        "--type",
        "kubernetes.io/ssh-auth",
        "--from-file",
        str(identity),
        "--from-file",
        f"ssh-privatekey={identity}",
        "--from-env-file",
        str(env),
    )
    # THEN each value unseals with the namespace label, and the annotations and type are set
    assert code == 0
    assert capsys.readouterr().out == f"{TARGET}: sealed HOST, PORT, identity, ssh-privatekey\n"
    document = read(root)
    assert unseal(key, document, b"apps") == {
        "HOST": b"db.internal",
        "PORT": b"5432",
        "identity": b"-----BEGIN KEY-----\n\x00\x01\n",
        "ssh-privatekey": b"-----BEGIN KEY-----\n\x00\x01\n",
    }
    annotations = {"sealedsecrets.bitnami.com/namespace-wide": "true"}
    assert document["metadata"]["annotations"] == annotations
    assert document["spec"]["template"]["metadata"]["annotations"] == annotations
    assert document["spec"]["template"]["type"] == "kubernetes.io/ssh-auth"


def test_stdout_prints_the_document_and_writes_nothing(
    root: Path, key: rsa.RSAPrivateKey, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN sealed cluster-wide with --stdout
    code = run(root, "--scope", "cluster-wide", "--from-literal", "token=abc", "--stdout")
    # THEN the SealedSecret is printed and no file is written
    captured = capsys.readouterr()
    assert code == 0
    assert captured.err == ""
    (document,) = list(yaml.safe_load_all(captured.out))
    assert document["kind"] == "SealedSecret"
    assert document["metadata"] == {
        "name": "db",
        "namespace": "apps",
        "annotations": {"sealedsecrets.bitnami.com/cluster-wide": "true"},
    }
    assert unseal(key, document, b"") == {"token": b"abc"}
    assert not (root / "environments" / "secrets").exists()


def test_cert_defaults_to_the_project_and_can_be_given(
    root: Path, key: rsa.RSAPrivateKey, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN another certificate outside the project
    other_key = make_rsa_key()
    other = tmp_path / "other.pem"
    other.write_bytes(make_certificate(other_key))
    # WHEN sealed with --cert THEN only that certificate's key unseals
    assert run(root, "--from-literal", "a=1", "--cert", str(other)) == 0
    assert unseal(other_key, read(root)) == {"a": b"1"}
    with pytest.raises(ValueError, match="Decryption failed"):
        unseal(key, read(root))
    # WHEN sealed without --cert THEN environments/sealing-cert.pem is used (and every value re-sealed)
    capsys.readouterr()
    assert run(root, "--from-literal", "a=1") == 0
    assert capsys.readouterr().out == f"{TARGET}: sealed a\n"
    assert unseal(key, read(root)) == {"a": b"1"}


def test_a_missing_default_certificate_is_bad_input(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cert = root / "environments" / "sealing-cert.pem"
    cert.unlink()
    assert run(root, "--from-literal", "a=1") == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    # THEN it says where it looked, and which command makes the key pair
    assert captured.err == (
        f"{cert}: no sealing certificate here, where seal looks unless --cert names one; make the fleet's key pair "
        "with 'fluxplane sealing-key' (or fetch a running controller's with 'kubeseal --fetch-cert')\n"
    )
    assert captured.out == ""


# -- bad input: exit 2, one line per problem, nothing written ------------------------------------------


def bad(root: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    """Run with ``argv`` (after --root), expect exit 2; returns stderr's lines."""
    code = main(["--root", str(root), *argv])
    captured = capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    assert captured.out == ""
    assert "Traceback" not in captured.err
    return captured.err.splitlines()


def test_unknown_cluster_lists_the_clusters(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = bad(root, capsys, "seal", "--cluster", "prod", "--namespace", "a", "--name", "b", "--from-literal", "k=v")
    assert lines == ["--cluster: unknown cluster 'prod' (clusters: hub, staging-1)"]
    assert not (root / "environments" / "secrets").exists()


def test_an_ec_certificate_is_bad_input(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cert = tmp_path / "ec.pem"
    cert.write_bytes(make_certificate(ec.generate_private_key(ec.SECP256R1())))
    lines = bad(root, capsys, *_db("--cert", str(cert), "--from-literal", "k=v"))
    assert lines == [f"{cert}: the certificate's key is EC, not RSA; Sealed Secrets needs RSA"]
    assert not (root / "environments" / "secrets").exists()


def test_an_expired_certificate_seals_with_a_warning(
    root: Path, key: rsa.RSAPrivateKey, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the sealing key's certificate, expired
    cert = tmp_path / "expired.pem"
    cert.write_bytes(make_certificate(key, not_before=EXPIRED_ON.replace(year=2019), not_after=EXPIRED_ON))
    # WHEN sealed THEN it succeeds, warns on stderr, and the value unseals
    assert run(root, "--cert", str(cert), "--from-literal", "k=v") == 0
    captured = capsys.readouterr()
    assert captured.err == (
        f"{cert}: warning: the certificate expired on 2020-01-02; the controller still unseals with its key, "
        "but rotate the sealing key\n"
    )
    assert captured.out == f"{TARGET}: sealed k\n"
    assert unseal(key, read(root)) == {"k": b"v"}


@pytest.mark.parametrize(
    ("subject", "bits"),
    [(None, 512), (1024, 1024)],
    ids=["too-small-for-oaep", "rsa-1024"],
)
def test_a_weak_rsa_key_is_bad_input(
    root: Path, key: rsa.RSAPrivateKey, tmp_path: Path, capsys: pytest.CaptureFixture[str], subject: Any, bits: int
) -> None:
    # GIVEN a certificate of an RSA key under 2048 bits (under 784, OAEP SHA-256 cannot wrap a session key)
    weak = tiny_public_key() if subject is None else rsa.generate_private_key(65537, subject).public_key()
    cert = tmp_path / "weak.pem"
    cert.write_bytes(make_certificate(key, subject_key=weak))
    # WHEN sealed with it THEN one line names the certificate and what is allowed, and nothing is written
    lines = bad(root, capsys, *_db("--cert", str(cert), "--from-literal", "k=v"))
    assert lines == [
        f"{cert}: the certificate's key is RSA-{bits}, too weak to seal with; expected RSA-2048 or stronger "
        "(the controller makes RSA-4096)"
    ]
    assert not (root / "environments" / "secrets").exists()


def test_a_certificate_not_valid_yet_is_bad_input(
    root: Path, key: rsa.RSAPrivateKey, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    start = datetime.datetime(2099, 1, 2, 12, 30, tzinfo=datetime.UTC)
    cert = tmp_path / "future.pem"
    cert.write_bytes(make_certificate(key, not_before=start, not_after=start.replace(year=2100)))
    lines = bad(root, capsys, *_db("--cert", str(cert), "--from-literal", "k=v"))
    assert lines == [
        f"{cert}: the certificate is not valid before 2099-01-02 12:30 UTC; check this machine's clock, or fetch "
        "the sealing key's current certificate"
    ]
    assert not (root / "environments" / "secrets").exists()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS], ids=["full", "read-only"])
def test_a_file_that_cannot_be_written_is_one_line_and_leaves_no_temporary_file(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], code: int
) -> None:
    # GIVEN a sealed file, and then a file system that fills up (or turns read-only) halfway through a write
    assert run(root, "--from-literal", "k=v") == 0
    before = (root / TARGET).read_bytes()
    capsys.readouterr()

    def write_half(path: Path, data: bytes) -> None:
        with open(path, "wb") as out:
            out.write(data[: len(data) // 2])
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(transaction, "_write_new", write_half)
    # WHEN re-sealed THEN one line names the file, and the folder holds the old file only
    lines = bad(root, capsys, *_db("--from-literal", "k=new"))
    assert lines == [f"{TARGET}: cannot write ({os.strerror(code)}); nothing was written"]
    assert (root / TARGET).read_bytes() == before
    assert sorted(path.name for path in (root / TARGET).parent.iterdir()) == ["db.yaml"]
    assert not (root / transaction.FOLDER).exists()


def test_a_file_that_cannot_be_put_in_place_is_one_line_and_finished_by_the_next_seal(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a file system that refuses the rename of the written file into place
    replace = os.replace

    def refuse_target(source: Any, target: Any) -> None:
        if Path(target) == root / TARGET:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(source), None, str(target))
        replace(source, target)

    monkeypatch.setattr(os, "replace", refuse_target)
    # WHEN sealed THEN one line names the file and says the change is kept; no temporary file in environments/
    lines = bad(root, capsys, *_db("--from-literal", "k=v"))
    assert lines == [
        f"{transaction.FOLDER}/0: cannot write ({os.strerror(errno.EROFS)}); the change is kept in "
        f"{transaction.FOLDER}/ and the next 'fluxplane synth', 'seal' or edit command finishes it once the file "
        "system can be written"
    ]
    assert [path for path in (root / "environments" / "secrets").rglob("*") if path.is_file()] == []
    # WHEN the file system can be written again THEN the next seal finishes the first one before its own
    monkeypatch.setattr(os, "replace", replace)
    assert run(root, "--from-literal", "other=w") == 0
    assert "note: finished an edit that was stopped halfway: environments/secrets/" in capsys.readouterr().err
    assert set(yaml.safe_load((root / TARGET).read_text())["spec"]["encryptedData"]) == {"other"}
    assert not (root / transaction.FOLDER).exists()


def test_a_seal_cache_that_cannot_be_made_is_one_line(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a seal cache configured below a file
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("FLUXPLANE_SEAL_CACHE", str(tmp_path / "file" / "cache"))
    lines = bad(root, capsys, *_db("--from-literal", "k=v"))
    assert lines == [
        f"{tmp_path / 'file' / 'cache'}: cannot use the seal cache (Not a directory); set FLUXPLANE_SEAL_CACHE "
        "to a folder this user can write"
    ]
    assert not (root / "environments" / "secrets").exists()


def test_plaintext_beside_the_ciphertext_is_refused_without_showing_it(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a sealed file into which someone pasted the value in clear, in the template
    assert run(root, "--from-literal", "password=hunter2-secret") == 0
    capsys.readouterr()
    document = read(root)
    document["spec"]["template"]["stringData"] = {"password": "hunter2-secret"}
    (root / TARGET).write_text(yaml.safe_dump(document))
    # WHEN re-sealed THEN the definition refuses the file, naming the field, never the value
    lines = bad(root, capsys, *_db("--from-literal", "password=hunter2-secret"))
    assert lines == [
        f"{TARGET}: spec.template.stringData: holds plaintext, which must not be committed; delete it and seal "
        "the values with 'fluxplane seal'"
    ]
    # AND synth refuses it too, so it never reaches dist/
    with pytest.raises(FluxplaneError) as caught:
        load_plan(root)
    assert list(caught.value.problems) == lines


def test_a_scope_change_is_refused_and_the_file_kept(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a strictly sealed file
    assert run(root, "--from-literal", "k=v") == 0
    before = (root / TARGET).read_bytes()
    capsys.readouterr()
    # WHEN re-sealed cluster-wide THEN it is refused and the file is unchanged
    lines = bad(root, capsys, *_db("--scope", "cluster-wide", "--from-literal", "k=v"))
    assert lines == [
        f"{TARGET}: is sealed with scope 'strict', not 'cluster-wide'; a scope change re-seals every key, "
        "so delete the file first if that is what you want"
    ]
    assert (root / TARGET).read_bytes() == before


def test_an_existing_file_that_is_not_sealed_is_refused(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a plaintext Secret where the sealed file would go (which the definition also refuses)
    target = root / TARGET
    target.parent.mkdir(parents=True)
    target.write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: apps}\nstringData: {k: v}\n")
    # WHEN sealed THEN the definition's problem is reported and the file is left alone
    lines = bad(root, capsys, *_db("--from-literal", "k=v"))
    assert lines == [
        f"{TARGET}: a plaintext Secret must not be committed; seal it with 'fluxplane seal' and delete this file"
    ]
    assert "stringData: {k: v}" in target.read_text()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--from-literal", "k=1", "--from-literal", "k=2"], "key 'k' is given twice"),
        (["--from-literal", "identity=1", "--from-file", "identity={file}"], "key 'identity' is given twice"),
        ([], "nothing to seal; give --from-literal, --from-file or --from-env-file"),
        (
            ["--from-literal", "k=v", "--from-literal", "hunter2-secret"],
            "--from-literal #2: expected KEY=VALUE, got an argument without '='",
        ),
        (["--from-literal", "=hunter2-secret"], "--from-literal #1: expected KEY=VALUE, got an empty KEY"),
        (["--from-env-file", "{env}"], "{env}:2: expected KEY=VALUE, got a line without '='"),
        (["--from-file", "{file}.missing"], "--from-file: cannot read '{file}.missing' (No such file or directory)"),
    ],
    ids=[
        "literal-twice",
        "literal-and-file",
        "nothing",
        "literal-without-equals",
        "literal-without-key",
        "env-line-without-equals",
        "missing-file",
    ],
)
def test_bad_values_are_bad_input(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], line: str
) -> None:
    file = tmp_path / "identity"
    file.write_text("x")
    env = tmp_path / "db.env"
    env.write_text("USER=admin\nhunter2-secret\n")
    lines = bad(root, capsys, *_db(*[arg.format(file=file, env=env) for arg in args]))
    assert lines == [line.format(file=file, env=env)]
    # AND a value is never shown, not even one given without its key
    assert not [found for found in lines if "hunter2" in found]
    assert not (root / "environments" / "secrets").exists()


def test_bad_names_are_bad_input(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = bad(
        root,
        capsys,
        "seal",
        "--cluster",
        "staging-1",
        "--namespace",
        "Apps",
        "--name",
        "../db",
        "--from-literal",
        "k=v",
    )
    assert lines == [
        "--name: expected a DNS-1123 subdomain, got '../db'",
        "--namespace: expected a DNS-1123 label, got 'Apps'",
    ]
    assert not (root / "environments" / "secrets").exists()
    assert not (root / "environments" / "db.yaml").exists()


def test_a_bad_definition_is_reported_before_sealing(
    write_fleet: FleetWriter, key: rsa.RSAPrivateKey, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_fleet(envs={"staging": {"clusters": [{"name": "staging-1", "region": "nowhere"}]}})
    (root / "environments" / "sealing-cert.pem").write_bytes(make_certificate(key))
    lines = bad(root, capsys, *_db("--from-literal", "k=v"))
    assert lines == [
        'environments/staging.yaml: clusters[0].region: expected an AWS region such as us-west-2, got "nowhere"'
    ]


# -- the sealed file in dist/ --------------------------------------------------------------------------


def test_a_sealed_file_is_synthesized_into_its_cluster(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a sealed secret for staging-1
    assert run(root, "--from-literal", "user=admin") == 0
    sealed_text = (root / TARGET).read_text()

    # WHEN the fleet is synthesized
    files = render_plan(load_plan(root))

    # THEN staging-1's entry point carries the SealedSecret unchanged, listed by a secrets kustomization
    assert files["platform/clusters/staging-1/secrets/apps/db.yaml"] == sealed_text
    assert yaml.safe_load(files["platform/clusters/staging-1/secrets/kustomization.yaml"]) == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["apps/db.yaml"],
    }
    entry = yaml.safe_load(files["platform/clusters/staging-1/kustomization.yaml"])
    assert "secrets" in entry["resources"]
    # AND the hub, which has no sealed secrets, has no secrets folder
    assert "secrets" not in yaml.safe_load(files["platform/clusters/hub/kustomization.yaml"])["resources"]
    assert not [path for path in files if path.startswith("platform/clusters/hub/secrets/")]


def test_several_sealed_files_are_listed_in_order(root: Path) -> None:
    # GIVEN three sealed secrets in two namespaces of staging-1
    for namespace, name in (("web", "tls"), ("apps", "db"), ("apps", "cache")):
        code = main(["--root", str(root), *_seal_for(namespace, name, "--from-literal", "k=v")])
        assert code == 0
    # WHEN synthesized THEN each is its own file, listed by path
    files = render_plan(load_plan(root))
    listing = yaml.safe_load(files["platform/clusters/staging-1/secrets/kustomization.yaml"])
    assert listing["resources"] == ["apps/cache.yaml", "apps/db.yaml", "web/tls.yaml"]
    for path in listing["resources"]:
        namespace, name = path.removesuffix(".yaml").split("/")
        assert yaml.safe_load(files[f"platform/clusters/staging-1/secrets/{path}"]) == read(
            root, f"environments/secrets/staging-1/{path}"
        )
        assert read(root, f"environments/secrets/staging-1/{path}")["metadata"] == {
            "name": name,
            "namespace": namespace,
        }


def test_secrets_whose_namespace_and_name_join_alike_both_synthesize(root: Path) -> None:
    # GIVEN a-b/c.yaml and a/b-c.yaml: two distinct, valid secrets of one cluster
    for namespace, name in (("a-b", "c"), ("a", "b-c")):
        code = main(["--root", str(root), *_seal_for(namespace, name, "--from-literal", "k=v")])
        assert code == 0
    # WHEN synthesized THEN both are carried into dist/
    files = render_plan(load_plan(root))
    listing = yaml.safe_load(files["platform/clusters/staging-1/secrets/kustomization.yaml"])
    assert listing["resources"] == ["a-b/c.yaml", "a/b-c.yaml"]
