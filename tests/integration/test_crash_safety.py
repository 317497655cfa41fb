"""dist/ survives a killed synth and a failing disk: always the old tree or the new one, never a mix.

The kill test runs ``fluxplane synth`` as a child process on a fleet of 120 clusters (over a thousand
files), kills it with SIGKILL at delays spread over the write stage, a few before it and a few after
the swap, and compares the whole tree byte for byte after each kill and after the run that follows.
The fleet lives in /dev/shm where there is one: a memory file system writes it in a few hundredths
of a second where a throttled disk takes seconds, so the test stays well under a minute; the swap is
the same renameat2 call on both. The disk-error tests inject the OS error in-process and go through the
CLI's ``main``.
"""

from __future__ import annotations

import builtins
import errno
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.cli import EXIT_BAD_INPUT, main
from fluxplane.synth import writer
from tests.conftest import HUB_PACKS, FleetWriter
from tests.support.files import read_tree

CLUSTERS_PER_ENVIRONMENT = 60
ENVIRONMENTS = ("dev", "staging")
KILLS_BEFORE_WRITE = (0.0, 0.15, 0.3)  # seconds after the load stage ends: while the tree renders
KILLS_WHILE_WRITING = 14  # spread over 80% of the time the last run took to write its tree
#: Seconds after dist/ became the new folder: synth keeps the old tree as its spare and ends within about 50 ms
KILLS_AFTER_SWAP = (0.0, 0.0, 0.005, 0.015, 0.03)
STAGE_DONE = re.compile(r"^synth: (\w+) done in ([0-9.]+)s")


def _write_definition(project: Path, variant: int) -> None:
    """Two versions of one fleet whose trees differ in content (replicas) and in files (one cluster more)."""
    env_dir = project / "environments"
    env_dir.mkdir(parents=True, exist_ok=True)
    base = {
        "repositories": {"platform": {"url": "ssh://git@example.com/org/fleet.git", "secretRef": None}},
        "management": {"name": "hub", "region": "us-west-2", "packs": HUB_PACKS},
        "clusterNetwork": {"pool": "10.0.0.0/8", "prefixLength": 20},
        "clusterDefaults": {"region": "eu-west-1"},
        "packs": {"metrics-server": {}, "kyverno": {}, "podinfo": {"replicas": 1 + variant}},
    }
    (env_dir / "base.yaml").write_text(yaml.safe_dump(base, sort_keys=False))
    for env in ENVIRONMENTS:
        clusters = [
            {"name": f"{env}-{number:03d}", "packs": {"podinfo": {"replicas": 1 + number % 3}}}
            for number in range(CLUSTERS_PER_ENVIRONMENT + variant)
        ]
        (env_dir / f"{env}.yaml").write_text(yaml.safe_dump({"clusters": clusters}, sort_keys=False))


def _command(project: Path) -> list[str]:
    # the two versions add and remove clusters: their removal is allowed, it is not what is tested here
    return [sys.executable, "-m", "fluxplane", "--root", str(project), "synth", "--delete", "*"]


def _environment() -> dict[str, str]:
    return {**os.environ, "FLUXPLANE_PROGRESS": "lines"}


def _staging_folders(project: Path) -> list[str]:
    """What the writer builds or moves aside beside dist/ (.dist.new, .dist.old); not the spare it keeps."""
    return sorted(p.name for p in project.iterdir() if p.name.startswith(".dist.") and p.name != ".dist.spare")


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None


def _synth(project: Path) -> dict[str, float]:
    """Run synth to the end; the seconds each stage took."""
    done = subprocess.run(_command(project), env=_environment(), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return {m[1]: float(m[2]) for m in (STAGE_DONE.match(line) for line in done.stderr.splitlines()) if m}


def _synth_killed(project: Path, stage: str, delay: float) -> bool:
    """Start synth, SIGKILL it ``delay`` seconds after ``stage`` ends; whether the kill came before it exited.

    ``stage`` "swap" is the moment dist/ becomes another folder (its inode changes): the old tree is
    then being removed.
    """
    dist_inode = (project / "dist").stat().st_ino
    process = subprocess.Popen(
        _command(project), env=_environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith(f"synth: {'render' if stage == 'swap' else stage} done"):
            break
    else:
        process.wait()
        raise AssertionError(f"synth ended (exit {process.returncode}) before its {stage} stage: {''.join(seen)}")
    while stage == "swap" and process.poll() is None and _inode(project / "dist") == dist_inode:
        time.sleep(0.0005)
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait()
    process.stderr.close()
    return process.returncode == -signal.SIGKILL


@pytest.fixture
def fast_folder(tmp_path: Path) -> Iterator[Path]:
    """A fresh folder in /dev/shm (memory) when the system has one, else tmp_path."""
    if not Path("/dev/shm").is_dir():
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="fluxplane-crash-") as folder:
        yield Path(folder)


@pytest.mark.slow
def test_synth_killed_at_any_point_leaves_the_old_tree_or_the_new_and_the_next_run_recovers(
    fast_folder: Path,
) -> None:
    # GIVEN a fleet of 120 clusters in two versions, A and B, and the complete tree of each
    project = fast_folder / "project"
    trees: dict[int, dict[str, bytes]] = {}
    for variant in (0, 1):
        _write_definition(project, variant)
        write_seconds = _synth(project)["write"]  # B's run replaces A's tree, as every run below does
        trees[variant] = read_tree(project / "dist")
    assert trees[0] != trees[1] and set(trees[0]) != set(trees[1])
    # kills while rendering, while writing (a fraction of the last run's write time: disks vary), after the swap
    kills = [("load", d) for d in KILLS_BEFORE_WRITE]
    kills += [("render", 0.8 * step / (KILLS_WHILE_WRITING - 1)) for step in range(KILLS_WHILE_WRITING)]
    kills += [("swap", d) for d in KILLS_AFTER_SWAP]
    outcomes = {"old": 0, "new": 0}
    current = 1
    for stage, amount in kills:
        target = 1 - current
        _write_definition(project, target)
        # WHEN synth of the other version is killed some time after `stage` ends
        delay = amount * write_seconds if stage == "render" else amount
        killed = _synth_killed(project, stage, delay)
        # THEN dist/ is exactly the old tree or exactly the new one
        after_kill = read_tree(project / "dist")
        if after_kill == trees[current]:
            outcome = "old"
        elif after_kill == trees[target]:
            outcome = "new"
        else:
            mixed = sorted(set(after_kill) ^ set(trees[target]))[:5]
            raise AssertionError(f"kill {delay:.3f}s after {stage}: dist/ is neither tree (e.g. {mixed})")
        if killed:
            outcomes[outcome] += 1
        # THEN the next run recovers: dist/ is the new tree and no staging folder is left
        write_seconds = _synth(project)["write"]
        assert read_tree(project / "dist") == trees[target], f"kill {delay:.3f}s after {stage}: not recovered"
        assert _staging_folders(project) == []
        current = target
    # THEN kills landed on both sides of the swap, so the test could see a mix if there were one
    assert outcomes["old"] >= 1 and outcomes["new"] >= 1, outcomes
    assert sum(outcomes.values()) >= 20, outcomes


def _fail_writes(monkeypatch: pytest.MonkeyPatch, after: int, error: int, under: Path) -> None:
    """Make opening a file for writing under ``under`` raise OSError ``error`` after ``after`` such files.

    The definition's own files (allocations.yaml, staged in .fluxplane-edit/) are written as before: the
    failure is dist/'s.
    """
    real_open, real_os_open = builtins.open, os.open
    opened = {"count": 0}
    spared = (under / "environments", under / ".fluxplane-edit")

    def count(path: Any) -> None:
        if Path(path).is_relative_to(under) and not any(Path(path).is_relative_to(p) for p in spared):
            opened["count"] += 1
            if opened["count"] > after:
                raise OSError(error, os.strerror(error), str(path))

    def fake(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "w" in mode:
            count(path)
        return real_open(path, mode, *args, **kwargs)

    def fake_os(path: Any, flags: int, *args: Any, **kwargs: Any) -> Any:
        if flags & (os.O_WRONLY | os.O_RDWR):
            count(path)
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake)
    monkeypatch.setattr(os, "open", fake_os)


def _changed_fleet(write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict[str, bytes]]:
    """A project with a synthesized dist/ and then a changed definition, so the next synth writes a new tree."""
    project = write_fleet()
    assert main(["--root", str(project), "synth"]) == 0
    old = read_tree(project / "dist")
    clusters = [{"name": "staging-1", "region": "us-west-2"}, {"name": "staging-2", "region": "eu-west-1"}]
    write_fleet(envs={"staging": {"clusters": clusters}})
    capsys.readouterr()
    return project, old


@pytest.mark.parametrize(
    ("error", "after", "advice"),
    [
        (errno.ENOSPC, 5, "free space on its file system, then run synth again"),
        (errno.EACCES, 0, "make {parent} writable for this user, then run synth again"),
        (errno.EROFS, 0, "the file system is read-only: remount it read-write or pass --outdir"),
    ],
    ids=["ENOSPC", "EACCES", "EROFS"],
)
def test_a_disk_error_while_writing_is_one_line_exit_2_and_the_old_tree_stays(
    write_fleet: FleetWriter,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    error: int,
    after: int,
    advice: str,
) -> None:
    # GIVEN a project whose dist/ is from an earlier definition, and a disk that fails after `after` files
    project, old = _changed_fleet(write_fleet, capsys)
    _fail_writes(monkeypatch, after, error, project)
    # WHEN synth writes dist/
    code = main(["--root", str(project), "synth"])
    monkeypatch.undo()
    # THEN one line names the file in dist/, what to do and the OS error; exit 2
    assert code == EXIT_BAD_INPUT
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    expected = (
        f"{re.escape(str(project / 'dist'))}/\\S+: cannot write dist/ "
        f"\\({re.escape(advice.format(parent=project))}\\): {re.escape(os.strerror(error))}; dist/ was left as it was"
    )
    assert re.fullmatch(expected, lines[0]), lines[0]
    # THEN the old tree is intact and the staging folder is gone
    assert read_tree(project / "dist") == old
    assert _staging_folders(project) == []


def test_a_swap_that_fails_halfway_puts_the_old_tree_back(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a kernel without renameat2 and a rename of the new tree into place that fails, after the
    # old tree was moved aside
    project, old = _changed_fleet(write_fleet, capsys)
    real_rename = Path.rename

    def rename(self: Path, target: Any) -> Any:
        if self.name == ".dist.new":
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return real_rename(self, target)

    monkeypatch.setattr(writer, "_exchange", lambda a, b: False)
    monkeypatch.setattr(Path, "rename", rename)
    # WHEN synth writes dist/
    code = main(["--root", str(project), "synth"])
    monkeypatch.undo()
    # THEN exit 2 with one line naming dist/, and the old tree is back in place with nothing left over
    assert code == EXIT_BAD_INPUT
    assert capsys.readouterr().err.splitlines() == [
        f"{project / 'dist'}: cannot write dist/ (the file system is read-only: remount it read-write or pass "
        "--outdir): Read-only file system; dist/ was left as it was"
    ]
    assert read_tree(project / "dist") == old
    assert _staging_folders(project) == []


def test_dist_that_is_a_file_is_one_line_and_left_alone(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a file where dist/ should be
    project = write_fleet()
    (project / "dist").write_text("not a folder\n")
    # WHEN synth runs THEN exit 2, one line, the file untouched and no staging folder
    assert main(["--root", str(project), "synth"]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.splitlines() == [
        f"{project / 'dist'}: cannot write dist/ (a file stands where a folder should be: move it away): "
        "Not a directory; dist/ was left as it was"
    ]
    assert (project / "dist").read_text() == "not a folder\n"
    assert _staging_folders(project) == []
