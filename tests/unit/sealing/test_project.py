"""fluxplane.sealing.project: sealing into a project (for one cluster or several) returns what it did, and says nothing
itself; the fleet's sealing key is made with its certificate in the project and its private key never there."""

from __future__ import annotations

import base64
import errno
import json
import os
import stat
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from fluxplane.sealing import kubeseal
from fluxplane.sealing.kubeseal import SealError
from fluxplane.sealing.project import Sealed, SealRequest, make_sealing_key, seal_secrets
from fluxplane.system import transaction
from tests.conftest import MINIMAL_BASE, FleetWriter
from tests.support.sealing import EXPIRED_ON, hybrid_decrypt, make_certificate, make_rsa_key, project_with_certificate

TARGET = "environments/secrets/staging-1/apps/db.yaml"


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return make_rsa_key()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine's seal cache, in a fresh folder for each test."""
    monkeypatch.setenv("FLUXPLANE_SEAL_CACHE", str(tmp_path / "seal-cache"))


@pytest.fixture
def root(write_fleet: FleetWriter, key: rsa.RSAPrivateKey) -> Path:
    """The default fleet (hub and staging-1) with the sealing certificate at its default place."""
    return project_with_certificate(write_fleet(), key)


def db(*literals: str, cluster: str = "staging-1", cert: Path | None = None) -> SealRequest:
    return SealRequest(name="db", namespace="apps", clusters=(cluster,), cert=cert, literals=literals)


def test_seal_secret_writes_the_file_and_returns_the_keys_it_sealed(
    root: Path, key: rsa.RSAPrivateKey, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN two values are sealed for staging-1
    [sealed] = seal_secrets(root, db("user=admin", "password=hunter2"))

    # THEN the result names the file and the keys, the file holds the document, and nothing was printed
    assert sealed == Sealed(
        path=TARGET,
        text=(root / TARGET).read_text(),
        sealed=["password", "user"],
        unchanged=[],
        removed=[],
        written=True,
    )
    document = yaml.safe_load(sealed.text)
    assert {
        name: hybrid_decrypt(key, base64.b64decode(value), b"apps/db")
        for name, value in document["spec"]["encryptedData"].items()
    } == {"password": b"hunter2", "user": b"admin"}
    assert capsys.readouterr() == ("", "")


def test_reseal_reports_kept_and_removed_keys(root: Path) -> None:
    # GIVEN a secret sealed with two keys
    [first] = seal_secrets(root, db("user=admin", "password=hunter2"))

    # WHEN it is sealed again with the same user, and a token instead of the password
    [second] = seal_secrets(root, db("user=admin", "token=t0k3n"))

    # THEN the unchanged value keeps its ciphertext, the new one is sealed, the dropped one is reported
    assert (second.sealed, second.unchanged, second.removed) == (["token"], ["user"], ["password"])
    before = yaml.safe_load(first.text)["spec"]["encryptedData"]
    after = yaml.safe_load(second.text)["spec"]["encryptedData"]
    assert after["user"] == before["user"]


def test_without_write_the_document_is_returned_and_nothing_is_written(root: Path) -> None:
    # WHEN sealed with write=False
    [sealed] = seal_secrets(root, db("k=v"), write=False)

    # THEN the text is the document, and the project has no secrets folder
    assert sealed.written is False
    assert sealed.path == TARGET
    assert yaml.safe_load(sealed.text)["kind"] == "SealedSecret"
    assert not (root / "environments" / "secrets").exists()


def test_certificate_warnings_are_collected_not_printed(
    root: Path, key: rsa.RSAPrivateKey, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an expired certificate
    cert = tmp_path / "expired.pem"
    cert.write_bytes(make_certificate(key, not_before=EXPIRED_ON.replace(year=2019), not_after=EXPIRED_ON))
    warnings: list[str] = []

    # WHEN a value is sealed with it
    seal_secrets(root, db("k=v", cert=cert), warnings=warnings)

    # THEN the warning is in the caller's list, and standard error is silent
    assert warnings == [
        f"{cert}: warning: the certificate expired on 2020-01-02; the controller still unseals with its key, "
        "but rotate the sealing key"
    ]
    assert capsys.readouterr().err == ""


def test_certificate_warnings_are_collected_before_a_later_refusal(
    root: Path, key: rsa.RSAPrivateKey, tmp_path: Path
) -> None:
    # GIVEN an expired certificate, and a key given twice
    cert = tmp_path / "expired.pem"
    cert.write_bytes(make_certificate(key, not_before=EXPIRED_ON.replace(year=2019), not_after=EXPIRED_ON))
    warnings: list[str] = []

    # WHEN sealed THEN the key is refused, and the warning was collected all the same
    with pytest.raises(SealError, match=r"^key 'k' is given twice$"):
        seal_secrets(root, db("k=v", "k=w", cert=cert), warnings=warnings)
    assert len(warnings) == 1
    assert not (root / "environments" / "secrets").exists()


def test_an_unknown_cluster_is_refused_with_the_clusters_there_are(root: Path) -> None:
    with pytest.raises(SealError, match=r"^--cluster: unknown cluster 'prod-9' \(clusters: hub, staging-1\)$"):
        seal_secrets(root, db("k=v", cluster="prod-9"))


# -- several clusters at once -------------------------------------------------------------------------

ENVS = {
    "staging": {
        "clusters": [{"name": "staging-1", "region": "us-west-2"}, {"name": "staging-2", "region": "us-east-1"}]
    },
    "production": {"clusters": [{"name": "prod-1", "region": "us-west-2"}]},
}


@pytest.fixture
def fleet(write_fleet: FleetWriter, key: rsa.RSAPrivateKey) -> Path:
    """Three workload clusters in two environments; app shop (namespace store) on staging-2 and prod-1."""
    root = project_with_certificate(write_fleet(envs=ENVS), key)
    apps = root / "environments" / "apps"
    apps.mkdir()
    (apps / "shop.yaml").write_text(
        yaml.safe_dump(
            {
                "team": "@example-org/shop",
                "namespace": "store",
                "repository": {"url": "https://github.com/example-org/shop.git", "ref": {"tag": "v1.0.0"}},
                "clusters": ["staging-2", "prod-1"],
            }
        )
    )
    return root


def test_one_request_seals_for_every_cluster_it_names_each_once(fleet: Path, key: rsa.RSAPrivateKey) -> None:
    # WHEN one secret is sealed for a cluster, an environment holding it again, and an app
    request = SealRequest(
        name="token",
        namespace="store",
        clusters=("staging-1",),
        environments=("staging",),
        apps=("shop",),
        literals=("token=t0k3n",),
    )
    sealed = seal_secrets(fleet, request)

    # THEN there is one file per cluster, in the order named, each cluster once, each unsealing to the value
    assert [item.path for item in sealed] == [
        "environments/secrets/staging-1/store/token.yaml",
        "environments/secrets/staging-2/store/token.yaml",
        "environments/secrets/prod-1/store/token.yaml",
    ]
    for item in sealed:
        document = yaml.safe_load((fleet / item.path).read_text())
        assert hybrid_decrypt(key, base64.b64decode(document["spec"]["encryptedData"]["token"]), b"store/token") == (
            b"t0k3n"
        )


def test_an_apps_clusters_take_its_namespace_unless_one_is_given(fleet: Path) -> None:
    # WHEN sealed for the app alone THEN its files are in the app's namespace on each of its clusters
    sealed = seal_secrets(fleet, SealRequest(name="git", apps=("shop",), literals=("k=v",)), write=False)
    assert [item.path for item in sealed] == [
        "environments/secrets/staging-2/store/git.yaml",
        "environments/secrets/prod-1/store/git.yaml",
    ]
    # AND a namespace given is used instead
    sealed = seal_secrets(
        fleet, SealRequest(name="git", namespace="other", apps=("shop",), literals=("k=v",)), write=False
    )
    assert [item.path for item in sealed] == [
        "environments/secrets/staging-2/other/git.yaml",
        "environments/secrets/prod-1/other/git.yaml",
    ]


def test_unknown_names_and_a_missing_namespace_are_refused_together(fleet: Path) -> None:
    request = SealRequest(name="x", clusters=("nope",), environments=("qa",), apps=("cart",), literals=("k=v",))
    with pytest.raises(SealError) as caught:
        seal_secrets(fleet, request)
    assert caught.value.problems == (
        "--cluster: unknown cluster 'nope' (clusters: hub, prod-1, staging-1, staging-2)",
        "--env: unknown environment 'qa' (environments: production, staging)",
        "--app: unknown app 'cart', or one that runs on no cluster (apps: shop)",
        "--namespace: required with --cluster and --env (with --app alone, the app's namespace)",
    )
    with pytest.raises(SealError, match=r"^give the clusters to seal for: --cluster \(repeatable\), --env or --app$"):
        seal_secrets(fleet, SealRequest(name="x", namespace="n", literals=("k=v",)))
    assert not (fleet / "environments" / "secrets").exists()


def test_every_file_is_written_or_none(fleet: Path) -> None:
    # GIVEN prod-1 already holds the secret, sealed with another scope
    seal_secrets(
        fleet, SealRequest(name="db", namespace="apps", clusters=("prod-1",), scope="namespace-wide", literals=("k=v",))
    )
    before = (fleet / "environments/secrets/prod-1/apps/db.yaml").read_text()
    # WHEN sealed for every cluster of both environments THEN refused, and no other cluster got its file
    request = SealRequest(name="db", namespace="apps", environments=("staging", "production"), literals=("k=w",))
    with pytest.raises(SealError, match=r"^environments/secrets/prod-1/apps/db.yaml: is sealed with scope"):
        seal_secrets(fleet, request)
    assert [path.relative_to(fleet).as_posix() for path in (fleet / "environments/secrets").rglob("*.yaml")] == [
        "environments/secrets/prod-1/apps/db.yaml"
    ]
    assert (fleet / "environments/secrets/prod-1/apps/db.yaml").read_text() == before


def test_a_file_that_cannot_be_written_leaves_every_cluster_without_its_file(
    fleet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a disk that fills up while the second of three files is written
    written: list[Path] = []
    write_new = transaction._write_new

    def fill_up(path: Path, data: bytes) -> None:
        written.append(path)
        if len(written) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        write_new(path, data)

    monkeypatch.setattr(transaction, "_write_new", fill_up)
    request = SealRequest(name="db", namespace="apps", environments=("staging", "production"), literals=("k=v",))
    # WHEN sealed THEN one line says so, and no cluster has its file
    with pytest.raises(SealError) as caught:
        seal_secrets(fleet, request)
    assert caught.value.problems == (
        f"3 files of environments/secrets/: cannot write ({os.strerror(errno.ENOSPC)}); nothing was written",
    )
    assert not (fleet / "environments" / "secrets").exists()
    assert not (fleet / transaction.FOLDER).exists()


def test_without_a_certificate_it_says_where_it_looked_and_what_makes_one(fleet: Path) -> None:
    (fleet / "environments" / "sealing-cert.pem").unlink()
    with pytest.raises(SealError) as caught:
        seal_secrets(fleet, db("k=v"))
    assert caught.value.problems == (
        f"{fleet / 'environments/sealing-cert.pem'}: no sealing certificate here, where seal looks unless --cert "
        "names one; make the fleet's key pair with 'fluxplane sealing-key' (or fetch a running controller's with "
        "'kubeseal --fetch-cert')",
    )


# -- the sealing key ------------------------------------------------------------------------------------


def test_make_sealing_key_puts_the_certificate_where_seal_looks_and_the_key_outside(
    write_fleet: FleetWriter, tmp_path: Path
) -> None:
    # GIVEN a fleet without a certificate
    root = write_fleet()
    private = tmp_path / "outside" / "sealing.key"
    private.parent.mkdir()
    # WHEN a key pair is made with the private key to a file outside the project
    made = make_sealing_key(root, private_key_out=private, bits=2048)
    # THEN the certificate is in the project, the private key in the file (its owner's alone), and nowhere else
    assert (root / made.certificate).read_bytes() == made.key_pair.certificate
    assert made.certificate == "environments/sealing-cert.pem"
    assert private.read_bytes() == made.key_pair.private_key
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert private.read_bytes().startswith(b"-----BEGIN RSA PRIVATE KEY-----\n")
    assert not [path for path in root.rglob("*") if path.is_file() and b"PRIVATE KEY" in path.read_bytes()]
    # AND what seal then seals, the private key unseals
    [sealed] = seal_secrets(root, db("password=hunter2"))
    private_key = serialization.load_pem_private_key(private.read_bytes(), password=None)
    assert isinstance(private_key, rsa.RSAPrivateKey)
    value = yaml.safe_load(sealed.text)["spec"]["encryptedData"]["password"]
    assert hybrid_decrypt(private_key, base64.b64decode(value), b"apps/db") == b"hunter2"
    # AND the secret it goes to is the definition's, in the hub's region, for the hub's own account
    assert (made.secret_name, made.region, made.profiles, made.replaced) == (
        "fluxplane/sealing-key",
        "us-west-2",
        ("hub",),
        False,
    )


def test_the_key_pair_is_the_controllers_kind_and_its_secret_value_what_the_spokes_read() -> None:
    # WHEN a key pair is made with the defaults
    pair = kubeseal.make_key_pair()
    # THEN it is RSA-4096, self-signed as sealed-secret, for ten years, as the controller makes its own
    certificate = x509.load_pem_x509_certificate(pair.certificate)
    public = certificate.public_key()
    assert isinstance(public, rsa.RSAPublicKey) and public.key_size == 4096
    assert certificate.subject == certificate.issuer
    assert certificate.subject.rfc4514_string() == "CN=sealed-secret"
    assert (certificate.not_valid_after_utc - certificate.not_valid_before_utc).days == 3650
    assert certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert pair.not_after == certificate.not_valid_after_utc
    assert pair.fingerprint == kubeseal.fingerprint(public)
    # AND the secret's value holds both halves as the ExternalSecret reads them (tls.crt, tls.key)
    assert json.loads(pair.secret_value()) == {
        "tls.crt": pair.certificate.decode(),
        "tls.key": pair.private_key.decode(),
    }


def test_a_private_key_inside_the_project_is_refused_and_nothing_written(write_fleet: FleetWriter) -> None:
    root = write_fleet()
    for inside in (root / "sealing.key", root / "environments" / "sealing.key"):
        with pytest.raises(SealError, match=r"^--private-key-out: '.*sealing.key' is inside the project \(.*\), "):
            make_sealing_key(root, private_key_out=inside, bits=2048)
        assert not inside.exists()
    assert not (root / "environments" / "sealing-cert.pem").exists()


def test_a_certificate_there_is_replaced_only_with_force(root: Path, tmp_path: Path, key: rsa.RSAPrivateKey) -> None:
    # GIVEN the project's certificate
    before = (root / "environments" / "sealing-cert.pem").read_bytes()
    # WHEN a key pair is made again THEN it is refused, saying that every secret must then be sealed again
    with pytest.raises(SealError) as caught:
        make_sealing_key(root, bits=2048)
    assert caught.value.problems == (
        "environments/sealing-cert.pem: exists; a new sealing key means sealing every secret of "
        "environments/secrets/ again and giving every spoke the new key: pass --force to replace it",
    )
    assert (root / "environments" / "sealing-cert.pem").read_bytes() == before
    # WHEN forced THEN the certificate is the new one
    made = make_sealing_key(root, force=True, bits=2048)
    assert made.replaced is True
    assert (root / "environments" / "sealing-cert.pem").read_bytes() == made.key_pair.certificate != before


def test_an_existing_private_key_file_is_never_overwritten(write_fleet: FleetWriter, tmp_path: Path) -> None:
    root = write_fleet()
    kept = tmp_path / "old.key"
    kept.write_bytes(b"the old key")
    with pytest.raises(SealError, match=r"^--private-key-out: '.*old.key' exists; a key file is never overwritten$"):
        make_sealing_key(root, private_key_out=kept, force=True, bits=2048)
    assert kept.read_bytes() == b"the old key"
    assert not (root / "environments" / "sealing-cert.pem").exists()


def test_the_key_pair_goes_to_every_account_whose_clusters_read_it(write_fleet: FleetWriter) -> None:
    # GIVEN staging in the hub's account, production in its own, an unused account, and a region of the key's own
    base = {
        **MINIMAL_BASE,
        "accounts": {"production": {"id": "444455556666"}, "sandbox": {"id": "777788889999"}},
        "sealingKey": {"secretName": "fleet/sealing", "region": "eu-west-1"},
    }
    envs = {**ENVS, "production": {"clusterDefaults": {"account": "production"}, **ENVS["production"]}}
    made = make_sealing_key(write_fleet(base=base, envs=envs), bits=2048)
    assert (made.secret_name, made.region, made.profiles) == ("fleet/sealing", "eu-west-1", ("hub", "production"))
