"""A standard output that cannot be written: a closed pipe, a full device, a closed descriptor.

A reader that leaves (``fluxplane reference | head``) ends the command silently with 141, what a shell
reports for git or cat stopped by the closed pipe; a full device or a closed descriptor is one line and
exit 2, as a full disk under dist/ is. Never a traceback. The commands run in a child process: only a
real descriptor fails this way. ``reference`` prints more than Python's buffer holds (the error comes
while printing), ``packs list`` less (it comes at the final flush).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.conftest import FleetWriter
from tests.support.sealing import make_certificate

COMMANDS = [["reference"], ["packs", "list"]]
FULL = "standard output: cannot write (No space left on device); the output is incomplete\n"


def fluxplane(args: list[str], stdout: int, *, preexec_fn: Callable[[], None] | None = None) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "fluxplane", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=preexec_fn,
    )
    return done.returncode, done.stderr


def into_closed_pipe(args: list[str]) -> tuple[int, str]:
    """Run with standard output a pipe whose reader is gone before the command starts."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return fluxplane(args, writer)
    finally:
        os.close(writer)


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_closed_pipe_ends_the_command_silently_with_141(args: list[str]) -> None:
    assert into_closed_pipe(args) == (141, "")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_full_device_is_one_line_and_exit_2(args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        assert fluxplane(args, full.fileno()) == (2, FULL)


def test_a_closed_descriptor_is_one_line_and_exit_2() -> None:
    # GIVEN standard output closed (``>&-``), which Python starts with as sys.stdout None
    # WHEN a command prints THEN it says so, instead of dropping its output and exiting 0
    code, stderr = fluxplane(["reference"], subprocess.DEVNULL, preexec_fn=lambda: os.close(1))
    assert (code, stderr) == (2, "standard output: cannot write (Bad file descriptor); the output is incomplete\n")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_debug_shows_the_traceback_too() -> None:
    with open("/dev/full", "w") as full:
        code, stderr = fluxplane(["--debug", "packs", "list"], full.fileno())
    assert code == 2
    assert stderr.startswith("Traceback (most recent call last):\n")
    assert "OSError: [Errno 28] No space left on device" in stderr
    assert stderr.endswith(FULL)


def test_seal_stdout_into_a_closed_pipe(
    write_fleet: FleetWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a project with a sealing certificate
    root = write_fleet()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (root / "environments" / "sealing-cert.pem").write_bytes(make_certificate(key))
    monkeypatch.setenv("FLUXPLANE_SEAL_CACHE", str(tmp_path / "seal-cache"))
    # WHEN the sealed secret goes to a reader that is gone THEN the command ends silently with 141
    args = ["--root", str(root), "seal", "--cluster", "hub", "--namespace", "apps", "--name", "db", "--stdout"]
    assert into_closed_pipe([*args, "--from-literal", "password=s3cret"]) == (141, "")
