"""fluxplane.commands.sealing_key: what it prints, and that the commands it prints store the key pair."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from fluxplane.commands import seal, sealing_key
from fluxplane.sealing import kubeseal
from tests.conftest import MINIMAL_BASE, FleetWriter
from tests.support.commands import parse
from tests.support.sealing import hybrid_decrypt

CERT = "environments/sealing-cert.pem"
#: Records each call of the aws CLI the printed commands run: its arguments, then what it read on standard input.
FAKE_AWS = """#!/bin/sh
printf '%s\\n' "$*" >> "$AWS_CALLS"
cat >> "$AWS_CALLS"
"""


@pytest.fixture(autouse=True)
def small_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RSA-2048 keys, quick to make (the default's size has a test of its own), and a fresh seal cache."""
    monkeypatch.setattr(kubeseal, "KEY_BITS", 2048)
    monkeypatch.setenv("FLUXPLANE_SEAL_CACHE", str(tmp_path / "seal-cache"))


def _accounts(write_fleet: FleetWriter) -> Path:
    """staging-1 in the hub's account, prod-1 in account production."""
    base = {**MINIMAL_BASE, "accounts": {"production": {"id": "444455556666"}}}
    envs = {
        "staging": {"clusters": [{"name": "staging-1", "region": "us-west-2"}]},
        "production": {"clusters": [{"name": "prod-1", "region": "us-west-2", "account": "production"}]},
    }
    return write_fleet(base=base, envs=envs)


def test_sealing_key_writes_the_project_under_its_lock(write_fleet: FleetWriter) -> None:
    args = parse(sealing_key, "sealing-key")
    assert (sealing_key.NAMES, sealing_key.LOCKS_PROJECT, sealing_key.stopped(args)) == (("sealing-key",), True, None)
    assert (args.private_key_out, args.force) == (None, False)


def test_with_a_key_file_it_prints_the_files_and_a_store_command_per_account(
    write_fleet: FleetWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _accounts(write_fleet)
    private = tmp_path / "sealing.key"
    assert sealing_key.run(parse(sealing_key, "sealing-key", "--private-key-out", str(private), root=root)) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"wrote {root / CERT}: the sealing key's certificate (RSA, sha256 ")
    assert out[1] == f"wrote {private}: the private key, readable by you alone"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert out[2] == "store the key pair in the secret fluxplane/sealing-key of each account whose clusters read it:"
    value = f'"$(jq -n --rawfile crt {root / CERT} --rawfile key {private} \'{{"tls.crt": $crt, "tls.key": $key}}\')"'
    assert out[3:5] == [
        "  aws secretsmanager put-secret-value --secret-id fluxplane/sealing-key --region us-west-2 --profile hub "
        f"--secret-string {value}",
        "  aws secretsmanager put-secret-value --secret-id fluxplane/sealing-key --region us-west-2 --profile "
        f"production --secret-string {value}",
    ]
    assert out[5].startswith(f"then delete the private key (shred -u {private})")


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX shell")
def test_without_a_key_file_standard_output_is_the_script_that_stores_it_and_nothing_else(
    write_fleet: FleetWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a fleet with clusters in two accounts
    root = _accounts(write_fleet)
    # WHEN the key pair is made without a key file
    assert sealing_key.run(parse(sealing_key, "sealing-key", root=root)) == 0
    captured = capsys.readouterr()
    # THEN standard error says what was written, and the private key is nowhere but on standard output
    assert captured.err.startswith(f"wrote {root / CERT}: the sealing key's certificate")
    assert "PRIVATE KEY" not in captured.err
    assert not [path for path in root.rglob("*") if path.is_file() and b"PRIVATE KEY" in path.read_bytes()]
    # WHEN standard output is run by sh, with an aws CLI that records what it is given
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "aws").write_text(FAKE_AWS)
    (bin_dir / "aws").chmod(0o755)
    calls = tmp_path / "calls"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "AWS_CALLS": str(calls)}
    subprocess.run(["sh"], input=captured.out, text=True, env=env, check=True)
    # THEN each account's secret got the key pair, read from standard input, never from the command line
    lines = calls.read_text().splitlines()
    assert lines[0::2] == [
        "secretsmanager put-secret-value --secret-id fluxplane/sealing-key --region us-west-2 --profile hub "
        "--secret-string file:///dev/stdin",
        "secretsmanager put-secret-value --secret-id fluxplane/sealing-key --region us-west-2 --profile production "
        "--secret-string file:///dev/stdin",
    ]
    stored = json.loads(lines[1])
    assert lines[1] == lines[3]
    assert stored["tls.crt"] == (root / CERT).read_text()
    # AND the private key it stored unseals what seal then seals with the project's certificate
    assert (
        seal.run(
            parse(
                seal,
                "seal",
                "--cluster",
                "staging-1",
                "--namespace",
                "a",
                "--name",
                "b",
                "--from-literal",
                "k=v",
                root=root,
            )
        )
        == 0
    )
    document = yaml.safe_load((root / "environments/secrets/staging-1/a/b.yaml").read_text())
    private_key = serialization.load_pem_private_key(stored["tls.key"].encode(), password=None)
    assert isinstance(private_key, rsa.RSAPrivateKey)
    assert hybrid_decrypt(private_key, base64.b64decode(document["spec"]["encryptedData"]["k"]), b"a/b") == b"v"


def test_replacing_the_key_says_that_every_secret_is_to_be_sealed_again(
    write_fleet: FleetWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_fleet()
    assert sealing_key.run(parse(sealing_key, "sealing-key", "--private-key-out", str(tmp_path / "1"), root=root)) == 0
    capsys.readouterr()
    argv = ("sealing-key", "--force", "--private-key-out", str(tmp_path / "2"))
    assert sealing_key.run(parse(sealing_key, *argv, root=root)) == 0
    assert (
        "note: a new sealing key: seal every secret of environments/secrets/ again with it, and store it in Secrets "
        "Manager before they reach the spokes, whose controllers then unseal with it alone"
    ) in capsys.readouterr().out.splitlines()
