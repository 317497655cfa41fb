"""SIGINT and SIGTERM through the CLI: one line, exit 130 or 143 (128 + the signal, as a shell reports
it), no traceback, and the cleanup on the way out runs.

Each case runs ``fluxplane synth`` in a child process (a signal handler belongs to a process) through a
small driver that renders a fixed tree instead of starting the JavaScript runtime, and sends the signal
to itself at a chosen point: after the new tree is built beside dist/ and before the swap. The first
run writes the old tree the same way, without a signal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fluxplane.cli import main
from tests.conftest import FleetWriter

#: argv: root, tree version ("old" or "new"), the signal to send or "none", where: "fill" (after the new
#: tree is built, before the swap), "twice" (also again during the cleanup), "noisy exit" (as "fill", with
#: an exit handler that fails as jsii's does) or "import" (from a frame of the import machinery, which the
#: signal must wait for).
DRIVER = r"""
import os, signal, sys, time
from pathlib import Path

import fluxplane.synth.pipeline as pipeline
from fluxplane.synth import writer
from fluxplane.cli import main

root, version, name, where = sys.argv[1:5]
files = {
    "platform/kustomization.yaml": "resources: [" + version + ".yaml]\n",
    "platform/" + version + ".yaml": "version: " + version + "\n",
}
pipeline.render_files = lambda plan, cache=None, deferred=False: writer.TreeFiles(dict(files))

def send():
    os.kill(os.getpid(), getattr(signal, name))

fill, abandon = writer._fill, writer._abandon

def fill_then_signal(*args, **kwargs):
    written = fill(*args, **kwargs)
    if where in ("fill", "twice", "noisy exit"):
        send()
    elif where == "import":
        # The frame of this function is named like the import machinery's: the signal waits until it returns.
        code = (
            "def importing():\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
            "    time.sleep(0.2)\n"
            "    Path(root, 'imported').touch()\n"
        )
        namespace = {"os": os, "signal": signal, "time": time, "Path": Path, "root": root}
        exec(compile(code, "<frozen importlib._bootstrap>", "exec"), namespace)
        namespace["importing"]()
    return written

def abandon_after_a_second_signal(*args, **kwargs):
    if where == "twice":
        send()  # a second Ctrl-C while the staging folder is removed: it must not cut that short
    return abandon(*args, **kwargs)

def stop_node():  # what jsii's exit handler does when the Ctrl-C also stopped its Node process
    raise BrokenPipeError(32, "Broken pipe")

if where == "noisy exit":
    import atexit
    atexit.register(stop_node)
if name != "none":
    writer._fill, writer._abandon = fill_then_signal, abandon_after_a_second_signal
sys.exit(main(["--root", root, "synth", "--no-cache"]))
"""


def synth(root: Path, version: str, name: str = "none", where: str = "fill") -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "JSII_NODE"}  # no Node: nothing renders
    return subprocess.run(
        [sys.executable, "-c", DRIVER, str(root), version, name, where],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def tree(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): path.read_text() for path in folder.rglob("*") if path.is_file()}


@pytest.fixture
def project(write_fleet: FleetWriter) -> Path:
    """A project whose dist/ holds the old tree."""
    root = write_fleet()
    done = synth(root, "old")
    assert done.returncode == 0, done.stderr
    assert tree(root / "dist") == {
        "platform/kustomization.yaml": "resources: [old.yaml]\n",
        "platform/old.yaml": "version: old\n",
    }
    return root


@pytest.mark.parametrize(
    ("name", "code", "word"),
    [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")],
)
@pytest.mark.parametrize("where", ["fill", "twice", "noisy exit"])
def test_a_signal_while_writing_prints_one_line_and_leaves_the_old_tree(
    project: Path, name: str, code: int, word: str, where: str
) -> None:
    # GIVEN dist/ with the old tree
    old = tree(project / "dist")
    # WHEN synth gets the signal with the new tree built beside dist/ (and, "twice", again while cleaning up;
    # "noisy exit": with an exit handler that fails, as jsii's does when the Ctrl-C also stopped Node)
    done = synth(project, "new", name, where)
    # THEN it exits 128 + the signal's number with one line and no traceback
    assert (done.returncode, done.stderr) == (
        code,
        f"{word}; {project / 'dist'} holds a whole tree: the one it held, or the new one if writing had finished\n",
    )
    # AND dist/ is the old tree, and the staging folder is gone
    assert tree(project / "dist") == old
    assert not (project / ".dist.new").exists() and not (project / ".dist.old").exists()


def test_a_signal_during_an_import_is_raised_once_the_import_is_done(project: Path) -> None:
    # GIVEN a SIGTERM that arrives while the main thread runs the import machinery (an exception raised
    # there can leave the import locks held and the thread importing cdk8s waiting on them forever)
    done = synth(project, "new", "SIGTERM", "import")
    # THEN it waits until the import is done, then stops synth as any SIGTERM does
    assert (project / "imported").exists()
    assert done.returncode == 143, done.stderr
    assert done.stderr.startswith("terminated; ") and done.stderr.count("\n") == 1
    # AND dist/ is whole: the old tree, or the new one when the signal came once the swap was done
    assert tree(project / "dist") in (
        {"platform/kustomization.yaml": "resources: [old.yaml]\n", "platform/old.yaml": "version: old\n"},
        {"platform/kustomization.yaml": "resources: [new.yaml]\n", "platform/new.yaml": "version: new\n"},
    )


def test_signals_are_left_as_they_were_after_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the handlers of this process (pytest's)
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    # WHEN a command runs in this process and ends without a signal
    assert main(["reference"]) == 0
    # THEN they are the same handlers again
    assert {signum: signal.getsignal(signum) for signum in before} == before
