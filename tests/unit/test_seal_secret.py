"""fluxplane.seal_secret: sealing into a project returns what it did, and says nothing itself."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric import rsa

from fluxplane.seal_secret import Sealed, SealRequest, seal_secret
from fluxplane.sealing import SealError
from tests.conftest import FleetWriter
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
    return SealRequest(cluster=cluster, name="db", namespace="apps", cert=cert, literals=literals)


def test_seal_secret_writes_the_file_and_returns_the_keys_it_sealed(
    root: Path, key: rsa.RSAPrivateKey, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN two values are sealed for staging-1
    sealed = seal_secret(root, db("user=admin", "password=hunter2"))

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
    first = seal_secret(root, db("user=admin", "password=hunter2"))

    # WHEN it is sealed again with the same user, and a token instead of the password
    second = seal_secret(root, db("user=admin", "token=t0k3n"))

    # THEN the unchanged value keeps its ciphertext, the new one is sealed, the dropped one is reported
    assert (second.sealed, second.unchanged, second.removed) == (["token"], ["user"], ["password"])
    before = yaml.safe_load(first.text)["spec"]["encryptedData"]
    after = yaml.safe_load(second.text)["spec"]["encryptedData"]
    assert after["user"] == before["user"]


def test_without_write_the_document_is_returned_and_nothing_is_written(root: Path) -> None:
    # WHEN sealed with write=False
    sealed = seal_secret(root, db("k=v"), write=False)

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
    seal_secret(root, db("k=v", cert=cert), warnings=warnings)

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
        seal_secret(root, db("k=v", "k=w", cert=cert), warnings=warnings)
    assert len(warnings) == 1
    assert not (root / "environments" / "secrets").exists()


def test_an_unknown_cluster_is_refused_with_the_clusters_there_are(root: Path) -> None:
    with pytest.raises(SealError, match=r"^--cluster: unknown cluster 'prod-9' \(clusters: hub, staging-1\)$"):
        seal_secret(root, db("k=v", cluster="prod-9"))
