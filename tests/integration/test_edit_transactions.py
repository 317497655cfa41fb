"""An edit command killed at any point leaves the definition before or after the edit, never a mix.

``fluxplane offboard-app orders`` deletes the app file and its sealed secret on each production
cluster: three files. The child process is killed with SIGKILL at its n-th change to the project's
files (each rename, deletion, folder made or removed, file created), for every n until the command
runs through. After each kill environments/ must be the old definition, or the next command that
writes (``fluxplane synth``) must finish the edit, and ``synth --check`` in between must refuse with
one line rather than report on half an edit.
"""

from __future__ import annotations

import io
import signal
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from fluxplane.cli import EXIT_BAD_INPUT, main
from fluxplane.errors import ConfigError
from fluxplane.system import transaction

ROOT = Path(__file__).resolve().parents[2]

#: Runs the CLI with every change below the project counted; SIGKILL at the change numbered KILL_AT.
CHILD = r"""
import os, signal, sys
project, kill_at = os.path.realpath(sys.argv[1]), int(sys.argv[2])
count = [0]

def counted(name):
    real = getattr(os, name)
    def wrapper(path, *args, **kwargs):
        mode = args[0] if name == "open" and args else os.O_CREAT
        target = args[0] if name == "replace" else path
        if mode & os.O_CREAT and os.path.realpath(os.fspath(target)).startswith(project + os.sep):
            if count[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            count[0] += 1
        return real(path, *args, **kwargs)
    setattr(os, name, wrapper)

for name in ("replace", "rename", "unlink", "rmdir", "mkdir", "open"):
    counted(name)
from fluxplane.cli import main
sys.exit(main(["--root", project, *sys.argv[3:]]))
"""


def _definition(project: Path) -> dict[str, bytes]:
    environments = project / "environments"
    return {p.relative_to(project).as_posix(): p.read_bytes() for p in sorted(environments.rglob("*")) if p.is_file()}


def _run(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = main(list(argv))
    return code, err.getvalue()


def test_offboard_app_killed_at_any_change_is_all_or_nothing(example_project: Path) -> None:
    # GIVEN the definition before and after the edit
    old = _definition(example_project)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(example_project), "-1", "offboard-app", "orders"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    new = _definition(example_project)
    # (its file, and its sealed Git credentials on the three clusters it runs on)
    assert len(set(old) - set(new)) == 4
    stopped_after_commit = 0
    kill_at = 0
    while True:
        _restore(example_project, old)
        # WHEN the edit is killed at its kill_at-th change
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(example_project), str(kill_at), "offboard-app", "orders"],
            capture_output=True,
            text=True,
            check=False,
        )
        if child.returncode == 0:
            break
        assert child.returncode == -signal.SIGKILL, child.stderr
        after_kill = _definition(example_project)
        try:
            transaction.recover(example_project, write=False)
        except ConfigError:
            stopped_after_commit += 1
            # THEN a command that writes nothing refuses to read half an edit, in one line
            code, err = _run("--root", str(example_project), "synth", "--check")
            assert code == EXIT_BAD_INPUT and len(err.splitlines()) == 1, err
            assert "stopped while changing environments/" in err
            assert _definition(example_project) == after_kill
            # THEN the next command that writes finishes the edit before it does its own work
            code, err = _run("--root", str(example_project), "synth")
            assert "note: finished an edit that was stopped halfway" in err
            assert _definition(example_project) == new, f"kill at change {kill_at}: not finished"
        else:
            # THEN before the commit point nothing of the edit happened; after the journal is gone, all of it
            assert after_kill in (old, new), f"kill at change {kill_at}: half an edit"
        kill_at += 1
    # THEN kills landed in every phase: before the commit point and after it
    assert kill_at >= 6 and stopped_after_commit >= 2, (kill_at, stopped_after_commit)


def _restore(project: Path, files: dict[str, bytes]) -> None:
    for path in sorted((project / "environments").rglob("*"), reverse=True):
        if path.is_file():
            path.unlink()
    for relative, data in files.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_bytes(data)
    for path in sorted((project / "environments").rglob("*"), reverse=True):
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
