"""fluxplane.system.processes: a signal during the kustomize builds of diff, plan and validate stops the command
at once, its builds ended and its temporary tree removed, with one line and exit 143 (SIGTERM) or 130 (SIGINT).

Each command runs as a child process (a signal handler belongs to a process) with a kubectl of the test's first
on PATH: it records its process id and its child's in a folder of the test, then sleeps for 30 seconds, so the
builds are running when the signal comes. The child's temporary folder is one of the test's, to see that it is
left empty.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fluxplane
from fluxplane.system import processes
from fluxplane.system.processes import Processes
from tests.conftest import FleetWriter
from tests.support.git import git

#: What a build left running would hold the command for: far longer than STOPS_WITHIN.
BUILD_SECONDS = 30
#: How long the command may take to exit after the signal, in seconds. Ending the builds and removing the
#: temporary tree take a few tenths of a second; the rest is the interpreter's own exit (the JavaScript runtime,
#: the CEL library), as long as after any run, and longer on a loaded machine.
STOPS_WITHIN = 5.0
#: The kubectl the commands find: its process id and its child's in a file named after it, then a long sleep.
KUBECTL = """#!/bin/sh
sleep {seconds} &
echo "$$ $!" > "{started}/$$"
wait
"""
CLUSTER = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [settings.yaml]\n"
SETTINGS = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: flux-system\n"


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs: it exists and is not a zombie (one ended that its new parent has not reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return not Path("/proc/self").exists()


def _to_a_thread(pid: int, signum: int) -> None:
    """Send ``signum`` to process ``pid`` through one of its threads other than the main one (tgkill): where the
    kernel may deliver a signal sent to the process."""
    tgkill = getattr(ctypes.CDLL(None, use_errno=True), "tgkill", None)
    if tgkill is None or not Path(f"/proc/{pid}/task").is_dir():
        pytest.skip("sending a signal to one thread needs Linux's tgkill and /proc")
    threads = sorted(int(task.name) for task in Path(f"/proc/{pid}/task").iterdir() if int(task.name) != pid)
    assert threads, "the command runs its builds on threads of its own"
    assert tgkill(pid, threads[0], signum) == 0, os.strerror(ctypes.get_errno())


def stop_during_builds(
    tmp_path: Path, root: Path, argv: list[str], signum: int, *, through_a_thread: bool = False
) -> tuple[float, int, str]:
    """Run ``fluxplane --root ROOT ARGV``, send ``signum`` once its first kubectl runs (``through_a_thread``: to a
    thread other than the main one); how long it took to exit then, its exit code and its standard error. Asserts
    that no kubectl is left running and TMPDIR is empty."""
    tools, started, temporary = tmp_path / "bin", tmp_path / "started", tmp_path / "tmp"
    for folder in (tools, started, temporary):
        folder.mkdir()
    (tools / "kubectl").write_text(KUBECTL.format(seconds=BUILD_SECONDS, started=started))
    (tools / "kubectl").chmod(0o755)
    source = str(Path(fluxplane.__file__).parents[1])  # this checkout's fluxplane, not an installed one
    env = {
        **os.environ,
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")])),
        "TMPDIR": str(temporary),
        "FLUXPLANE_PROGRESS": "off",
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "fluxplane", "--root", str(root), *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while not any(started.iterdir()) and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert any(started.iterdir()), f"no build started: {child.poll()}"
        if through_a_thread:
            _to_a_thread(child.pid, signum)
        else:
            child.send_signal(signum)
        sent = time.monotonic()
        _, stderr = child.communicate(timeout=BUILD_SECONDS + 30)
        took = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    pids = [int(pid) for record in started.iterdir() for pid in record.read_text().split()]
    try:
        assert [pid for pid in pids if _running(pid)] == []
        assert list(temporary.iterdir()) == []
    finally:
        for pid in pids:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
    return took, child.returncode, stderr


@pytest.fixture
def changed_project(write_fleet: FleetWriter) -> Path:
    """A fleet not committed yet: diff and plan compare it with an empty base (no definition to synthesize)."""
    root = write_fleet()
    git(root, "init", "-q")
    git(root, "commit", "-q", "--allow-empty", "-m", "first")
    return root


@pytest.mark.slow
def test_sigterm_during_diff_builds_ends_them_and_removes_the_tree(tmp_path: Path, changed_project: Path) -> None:
    # GIVEN diff building the head's folders, each build taking far longer than the test waits
    # WHEN SIGTERM comes
    took, returncode, stderr = stop_during_builds(tmp_path, changed_project, ["diff"], signal.SIGTERM)
    # THEN diff exits 143 at once, with one line (no kubectl left running, TMPDIR empty: above)
    assert (returncode, stderr) == (143, "terminated; nothing written\n")
    assert took < STOPS_WITHIN


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code", "word"), [("SIGTERM", 143, "terminated"), ("SIGINT", 130, "interrupted")])
def test_a_signal_during_plan_builds_ends_them_and_removes_the_tree(
    tmp_path: Path, changed_project: Path, name: str, code: int, word: str
) -> None:
    # GIVEN plan building the folders the change reaches WHEN the signal comes
    took, returncode, stderr = stop_during_builds(tmp_path, changed_project, ["plan"], getattr(signal, name))
    # THEN plan exits 128 + the signal's number at once, with one line (no kubectl left, TMPDIR empty: above)
    assert (returncode, stderr) == (code, f"{word}; nothing written\n")
    assert took < STOPS_WITHIN


@pytest.mark.slow
@pytest.mark.parametrize("command", ["diff", "plan"])
def test_a_signal_a_build_thread_takes_stops_the_command_as_soon(
    tmp_path: Path, changed_project: Path, command: str
) -> None:
    # GIVEN a command whose main thread waits for the builds its threads run
    # WHEN SIGTERM reaches the process through one of those threads (the kernel hands a process's signal to any
    # thread; Python runs the handler in the main thread only)
    took, returncode, stderr = stop_during_builds(
        tmp_path, changed_project, [command], signal.SIGTERM, through_a_thread=True
    )
    # THEN it stops as soon as when the main thread takes it, not when the builds end
    assert (returncode, stderr) == (143, "terminated; nothing written\n")
    assert took < STOPS_WITHIN


def test_a_signal_during_validate_builds_ends_them(tmp_path: Path) -> None:
    # GIVEN a tree whose clusters' folders validate builds
    dist = tmp_path / "dist"
    for cluster in ("one", "two"):
        (dist / "platform" / "clusters" / cluster).mkdir(parents=True)
        (dist / "platform" / "clusters" / cluster / "kustomization.yaml").write_text(CLUSTER)
        (dist / "platform" / "clusters" / cluster / "settings.yaml").write_text(SETTINGS)
    # WHEN SIGTERM comes while they build
    took, returncode, stderr = stop_during_builds(tmp_path, tmp_path, ["validate", str(dist)], signal.SIGTERM)
    # THEN validate exits 143 at once, with one line (no kubectl left running: above)
    assert (returncode, stderr) == (143, "terminated; nothing written\n")
    assert took < STOPS_WITHIN


def test_leaving_map_by_an_error_ends_the_processes_running() -> None:
    # GIVEN four threads, each job running a long process, and a first job that fails once the others run
    processes = Processes(workers=4)
    started: list[str] = []

    def job(name: str) -> int:
        if name == "fails":
            time.sleep(0.3)
            raise RuntimeError("a build failed")
        started.append(name)
        return processes.run(["sh", "-c", f"sleep {BUILD_SECONDS} & wait"]).returncode

    # WHEN the failure leaves map
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="a build failed"):
        processes.map(job, ["fails", *["long"] * 8])
    # THEN it leaves at once: the processes running are ended, and the jobs still queued never start (the thread
    # of the failed job may take one before the failure reaches map)
    assert time.monotonic() - start < 3
    assert 3 <= len(started) <= 4
    # AND a process started once stopped is ended at once
    assert processes.run(["sleep", str(BUILD_SECONDS)]).returncode == -signal.SIGKILL


def test_cores_are_those_this_process_may_run_on() -> None:
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert processes.cores() == expected
