"""fluxplane.commands.seal: the request it builds from the options, and the lines it prints."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric import rsa

from fluxplane.commands import seal
from fluxplane.sealing.kubeseal import SealError
from tests.conftest import FleetWriter
from tests.support.commands import parse
from tests.support.sealing import EXPIRED_ON, make_certificate, make_rsa_key, project_with_certificate

TARGET = "environments/secrets/staging-1/apps/db.yaml"


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return make_rsa_key()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUXPLANE_SEAL_CACHE", str(tmp_path / "seal-cache"))


@pytest.fixture
def root(write_fleet: FleetWriter, key: rsa.RSAPrivateKey) -> Path:
    return project_with_certificate(write_fleet(), key)


def _db(root: Path, *argv: str) -> int:
    return seal.run(
        parse(seal, "seal", "--cluster", "staging-1", "--namespace", "apps", "--name", "db", *argv, root=root)
    )


def test_seal_takes_the_project_lock_and_says_nothing_when_stopped(root: Path) -> None:
    args = parse(seal, "seal", "--cluster", "c", "--namespace", "n", "--name", "x")
    assert (seal.NAMES, seal.LOCKS_PROJECT, seal.stopped(args)) == (("seal",), True, None)
    assert (args.scope, args.type, args.cert, args.from_literal) == ("strict", "Opaque", None, [])
    # AND the clusters may be given several ways, each repeatable, and the namespace left to an app
    args = parse(seal, "seal", "--cluster", "a", "--cluster", "b", "--env", "e", "--app", "p", "--name", "x")
    assert (args.cluster, args.env, args.app, args.namespace) == (["a", "b"], ["e"], ["p"], None)


def test_run_prints_a_line_per_cluster(
    write_fleet: FleetWriter, key: rsa.RSAPrivateKey, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN two staging clusters
    envs = {"staging": {"clusters": [{"name": "s-1", "region": "us-west-2"}, {"name": "s-2", "region": "us-east-1"}]}}
    root = project_with_certificate(write_fleet(envs=envs), key)
    # WHEN sealed for the environment THEN a line names each file
    argv = ("seal", "--env", "staging", "--namespace", "flux-system", "--name", "git", "--from-literal", "k=v")
    assert seal.run(parse(seal, *argv, root=root)) == 0
    assert capsys.readouterr() == (
        "environments/secrets/s-1/flux-system/git.yaml: sealed k\n"
        "environments/secrets/s-2/flux-system/git.yaml: sealed k\n",
        "",
    )
    # AND --stdout, which prints one document, refuses two, writing nothing
    (root / "environments" / "secrets").rename(root / "kept")
    with pytest.raises(SealError, match=r"^--stdout: prints one SealedSecret, and this request seals 2 \("):
        seal.run(parse(seal, *argv, "--stdout", root=root))
    assert not (root / "environments" / "secrets").exists()


def test_run_prints_the_file_and_the_keys(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _db(root, "--from-literal", "user=admin") == 0
    assert capsys.readouterr() == (f"{TARGET}: sealed user\n", "")
    assert _db(root, "--from-literal", "user=admin", "--from-literal", "token=t") == 0
    assert capsys.readouterr() == (f"{TARGET}: sealed token, unchanged user\n", "")


def test_run_with_stdout_prints_the_document(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _db(root, "--stdout", "--from-literal", "k=v") == 0
    document = yaml.safe_load(capsys.readouterr().out)
    assert (document["kind"], document["metadata"]) == ("SealedSecret", {"name": "db", "namespace": "apps"})
    assert not (root / TARGET).exists()


def test_run_prints_the_certificate_warning_even_when_the_request_is_refused(
    root: Path, key: rsa.RSAPrivateKey, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an expired certificate, and a key given twice
    cert = tmp_path / "expired.pem"
    cert.write_bytes(make_certificate(key, not_before=EXPIRED_ON.replace(year=2019), not_after=EXPIRED_ON))
    # WHEN sealed THEN refused, after the certificate's warning
    with pytest.raises(SealError, match=r"^key 'k' is given twice$"):
        _db(root, "--cert", str(cert), "--from-literal", "k=v", "--from-literal", "k=w")
    assert capsys.readouterr().err == (
        f"{cert}: warning: the certificate expired on 2020-01-02; the controller still unseals with its key, "
        "but rotate the sealing key\n"
    )
