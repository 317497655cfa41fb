"""Hostile state in synth's own trees: nothing outside them changes, and dist/ is the clean tree or the old one.

``fluxplane synth`` keeps state beside the definition: dist/, the staging folders ``.dist.new`` and
``.dist.old``, the spare ``.dist.spare`` with its manifest ``.fluxplane-tree``, and the caches
``.fluxplane-cache/synth`` and ``.fluxplane-cache/parsed``. Any of it can come from elsewhere (a pull
request brings dist/, a copy of the project brings the rest, a killed run leaves its staging folders),
so none of it is trusted. Each example copies a synthesized example fleet, plants hostile state in
those trees (symlinks to a victim folder outside the project and to environments/ and its files,
dangling links, files for folders and folders for files, hard links and FIFOs, manifests naming paths
outside the spare, damaged and forged cache entries and temporary files) and runs
``fluxplane.cli.main`` in-process. Then:

* synth exits 0, or 2 when dist/ itself was replaced (a symlink, a file, someone's folder), never
  with a traceback, and never hangs;
* the victim folder and environments/ are byte for byte as they were, symlink targets included;
* after exit 0, dist/ is a real folder holding exactly what a clean synth writes, no staging folder is
  left, and the next synth does the same;
* ``synth --check`` changes nothing in the project, dot folders included, and says "up to date"
  whenever dist/ was left alone (a forged cache entry never changes what synth computes).

Concurrent runs start two to four ``fluxplane synth`` processes (some with ``--check``) on one project
at once: the project lock makes them take turns, every synth succeeds, and dist/ is the clean tree.

Examples come from the Hypothesis profile: "quick" (20 each; 2 for the concurrent runs, which start
processes) in ``make test``, more with
``pytest -m fuzz --hypothesis-profile=long tests/property/test_hostile_trees.py``.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

from fluxplane.cli import EXIT_BAD_INPUT, EXIT_STALE, main
from fluxplane.synth.cache import DUMPS

pytestmark = pytest.mark.fuzz

#: Synth's own trees, below the project folder.
TREES = (
    "dist",
    ".dist.spare",
    ".dist.new",
    ".dist.old",
    ".fluxplane-cache",
    ".fluxplane-cache/synth",
    ".fluxplane-cache/parsed",
)
#: What a planted path becomes (see _plant).
KINDS = (
    "victim-folder",
    "victim-file",
    "definition-file",
    "definition-file-relative",
    "definition-folder",
    "dangling",
    "file",
    "empty-folder",
    "folder",
    "absent",
    "moved-dist",
    "hard-link",
    "fifo",
)
#: Names of new entries planted in a folder of the trees.
NAMES = ("planted.yaml", ".fluxplane-tree", "kustomization.yaml", "CODEOWNERS", "platform", "zz")
#: Paths a manifest line can name: outside the spare, through ``..``, absolute, folders, empty.
MANIFEST_PATHS = (
    "../x",
    "/etc/hostname",
    "a/../../b",
    "../../victim/keep.txt",
    "{victim}/keep.txt",
    "../environments/base.yaml",
    "platform",
    "platform/clusters",
    "",
    ".",
    "..",
    "./CODEOWNERS",
    "platform//x",
    "CODEOWNERS",
    ".fluxplane-tree",
    "platform/clusters/staging-usw2/",
    "platform/clusters/",
    "platform/clusters/staging-usw2/flux-system/",
)
MANIFEST_TEXTS = (
    b"",
    b"tree\n",
    b"tree unknown\ndist\n",
    b"\xff\xfe\x00",
    b"dist\ntree\n",
    b"tree\nx\ty\n",
    b"garbage",
)
#: A key that is not this user's, to sign forged cache entries with.
FORGER = b"f" * 32
CLUSTERS = ("production-euc1", "production-euw1", "production-use1", "production-usw2", "staging-euw1", "staging-usw2")

Snapshot = dict[str, tuple[str, str]]


def snapshot(root: Path) -> Snapshot:
    """Every entry below ``root`` ("" is root itself; empty when it is absent) by path, never following a
    link: ("folder", ""), ("file", digest), ("link", target) or ("other", mode). FIFOs are not opened."""
    found: Snapshot = {}

    def visit(path: str, relative: str) -> None:
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISLNK(mode):
            found[relative] = ("link", os.readlink(path))
        elif stat.S_ISDIR(mode):
            found[relative] = ("folder", "")
            for name in sorted(os.listdir(path)):
                visit(os.path.join(path, name), f"{relative}/{name}" if relative else name)
        elif stat.S_ISREG(mode):
            with open(path, "rb") as handle:
                found[relative] = ("file", hashlib.sha256(handle.read()).hexdigest())
        else:
            found[relative] = ("other", stat.filemode(mode))

    visit(str(root), "")
    return found


class _Hung(Exception):
    """A command still ran after its time (blocked on a FIFO, say)."""


@contextlib.contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise _Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run(project: Path, *args: str) -> tuple[int, str]:
    """``fluxplane synth`` in-process: (exit code, standard error)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with _time_limit(30), redirect_stdout(stdout), redirect_stderr(stderr):
        code = main(["--root", str(project), "synth", *args])
    return code, stderr.getvalue()


class Seed:
    """A synthesized copy of the example fleet: dist/, a spare with its manifest, a warm cache; the clean
    tree, and the entries and folders of synth's trees in it."""

    def __init__(self, project: Path, reference: Snapshot, entries: tuple[str, ...], folders: tuple[str, ...]) -> None:
        self.project = project
        self.reference = reference
        self.entries = entries
        self.folders = folders

    def __repr__(self) -> str:  # a failing example shows its plants, not the whole tree
        return f"Seed({self.project})"


@pytest.fixture
def seed(example_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Seed:
    # the cache's key is this test's, outside the project; the committed dist/ is not the reference
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    shutil.rmtree(example_project / "dist", ignore_errors=True)
    code, err = run(example_project, "--no-cache")
    assert code == 0, err
    reference = snapshot(example_project / "dist")
    # a second synth fills the cache and keeps the first tree as the spare, with its manifest
    code, err = run(example_project)
    assert code == 0, err
    assert snapshot(example_project / "dist") == reference
    assert (example_project / ".dist.spare" / ".fluxplane-tree").is_file()
    # an entry per cluster, and the texts of the files rendered on every run
    assert sorted(p.name for p in (example_project / ".fluxplane-cache" / "synth").iterdir()) == sorted(
        [*(f"{name}.entry" for name in CLUSTERS), DUMPS]
    )
    assert (example_project / ".fluxplane-cache" / "parsed" / "files.entry").is_file()
    held = snapshot(example_project)
    entries = tuple(path for path in held if path.split("/")[0] in TREES and path not in TREES)
    folders = tuple(path for path in held if path.split("/")[0] in TREES and held[path][0] == "folder")
    return Seed(project=example_project, reference=reference, entries=entries, folders=folders)


@dataclass(frozen=True)
class Plant:
    """Hostile state at ``path`` (below the project): ``kind`` is one of KINDS, or a manifest or cache edit."""

    path: str
    kind: str
    detail: Any = None


def _plants() -> st.SearchStrategy[list[Plant]]:
    """One to four plants. A path "@entry:N" is the seed's N-th entry in its trees (modulo their number),
    "@folder:N/name" a new entry in its N-th folder (see resolve)."""
    kinds = st.sampled_from(KINDS)
    lines = st.tuples(
        st.sampled_from(["tree", "dist"]),
        st.sampled_from(MANIFEST_PATHS),
        st.sampled_from(["", "0" * 40, "x"]),
        st.sampled_from(["-1", "0", "9", "x"]),
        st.sampled_from(["0", "-1", "1"]),
    )
    index = st.integers(0, 10_000)
    one = st.one_of(
        st.builds(Plant, st.sampled_from(TREES), kinds),
        st.builds(Plant, index.map("@entry:{}".format), kinds),
        st.builds(
            Plant, st.tuples(index, st.sampled_from(NAMES)).map(lambda item: "@folder:{}/{}".format(*item)), kinds
        ),
        st.builds(
            Plant, st.just(".dist.spare/.fluxplane-tree"), st.just("manifest-lines"), st.lists(lines, max_size=4)
        ),
        st.builds(
            Plant,
            st.just(".dist.spare/.fluxplane-tree"),
            st.just("manifest-text"),
            st.one_of(st.sampled_from(MANIFEST_TEXTS), st.binary(max_size=40)),
        ),
        st.builds(
            Plant,
            st.sampled_from(CLUSTERS).map(lambda name: f".fluxplane-cache/synth/{name}.entry"),
            st.sampled_from(["entry-garbage", "entry-truncated", "entry-flipped", "entry-forged", "entry-of-another"]),
        ),
        st.builds(
            Plant,
            st.sampled_from(CLUSTERS),
            st.just("cache-temporary"),
            st.sampled_from(["hard-link", "victim-file", "fifo", "empty-folder"]),
        ),
    )
    return st.lists(one, min_size=1, max_size=4)


PLANTS = _plants()


def resolve(plant: Plant, seed: Seed) -> Plant:
    """``plant`` with an "@entry:N" or "@folder:N/name" path made a path of the seed's trees."""
    if plant.path.startswith("@entry:"):
        path = seed.entries[int(plant.path.removeprefix("@entry:")) % len(seed.entries)]
    elif plant.path.startswith("@folder:"):
        number, _, name = plant.path.removeprefix("@folder:").partition("/")
        path = f"{seed.folders[int(number) % len(seed.folders)]}/{name}"
    else:
        return plant
    return Plant(path, plant.kind, plant.detail)


#: States that broke synth before (each once a bug the random examples found, or a promise worth checking
#: every run): a manifest symlink in the tree a swap replaces, entries beside the spare's manifest, a
#: manifest that is or names a folder, a spare file that is a folder, a hard link or a FIFO, the
#: cache's temporary file hard-linked elsewhere or its entry a FIFO, the store of parsed files a FIFO or a
#: link out of the project, and entries planted in a cluster's folder (which the manifest records as one unit) of
#: the spare and of dist/, or a record of it forged.
REGRESSIONS: tuple[list[Plant], ...] = (
    [Plant("dist/.fluxplane-tree", "victim-file")],
    [Plant("dist/.fluxplane-tree", "definition-file-relative")],
    [Plant(".dist.old", "moved-dist"), Plant(".dist.old/.fluxplane-tree", "victim-file")],
    [Plant(".dist.spare/planted.yaml", "victim-folder"), Plant(".dist.spare/platform/zz", "empty-folder")],
    [Plant(".dist.spare/.fluxplane-tree", "folder")],
    [Plant(".dist.spare/.fluxplane-tree", "manifest-lines", [("tree", "platform", "x", "9", "1")])],
    [Plant(".dist.spare/.fluxplane-tree", "absent"), Plant(".dist.spare/CODEOWNERS", "empty-folder")],
    [Plant(".dist.spare/CODEOWNERS", "hard-link")],
    [Plant(".dist.spare/CODEOWNERS", "fifo")],
    [Plant("staging-usw2", "cache-temporary", "hard-link")],
    [Plant(".fluxplane-cache/synth/staging-usw2.entry", "fifo")],
    [Plant(".fluxplane-cache/parsed/files.entry", "fifo")],
    [Plant(".fluxplane-cache/parsed/files.entry", "victim-file")],
    [Plant(".fluxplane-cache/parsed", "victim-folder")],
    [Plant(".dist.spare/platform/clusters/staging-usw2/planted.yaml", "victim-file")],
    [Plant(".dist.spare/platform/clusters/staging-usw2/secrets/zz", "empty-folder")],
    [Plant(".dist.spare/platform/clusters/staging-usw2/kustomization.yaml", "fifo")],
    [Plant(".dist.spare/platform/clusters/staging-usw2/flux-system", "dangling")],
    [Plant("dist/platform/clusters/staging-usw2/kustomization.yaml", "hard-link")],
    [Plant("dist/platform/clusters/staging-usw2/planted.yaml", "file")],
    [
        Plant(
            ".dist.spare/.fluxplane-tree",
            "manifest-lines",
            [("tree", "platform/clusters/staging-usw2/", "0" * 40, "0", "0")],
        )
    ],
)


def _inside_real_folders(project: Path, relative: str) -> bool:
    """Whether every folder on the way to ``relative`` is a real folder of the project (or absent), so that
    planting there never writes outside it; the missing ones are made."""
    folder = project
    for part in Path(relative).parent.parts:
        folder = folder / part
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return False
        except FileNotFoundError:
            folder.mkdir()
    return True


def _clear(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def _make(path: Path, kind: str, project: Path, victim: Path) -> None:
    """Put ``kind`` at ``path`` (which is free)."""
    definition = project / "environments"
    if kind == "victim-folder":
        path.symlink_to(victim, target_is_directory=True)
    elif kind == "victim-file":
        path.symlink_to(victim / "keep.txt")
    elif kind == "definition-file":
        path.symlink_to(definition / "base.yaml")
    elif kind == "definition-file-relative":
        path.symlink_to(os.path.relpath(definition / "base.yaml", path.parent))
    elif kind == "definition-folder":
        path.symlink_to(definition, target_is_directory=True)
    elif kind == "dangling":
        path.symlink_to(victim / "nothing-here")
    elif kind == "file":
        path.write_bytes(b"planted: [\n\xff")
    elif kind == "empty-folder":
        path.mkdir()
    elif kind == "folder":
        path.mkdir()
        (path / "planted.yaml").write_text("kind: Secret\n")
        (path / "elsewhere").symlink_to(victim, target_is_directory=True)
    elif kind == "hard-link":
        os.link(victim / "keep.txt", path)
    elif kind == "fifo":
        os.mkfifo(path)


def _edit_entry(path: Path, kind: str) -> None:
    """Damage or forge the cache entry at ``path`` (a regular file)."""
    raw = path.read_bytes()
    signature, _, payload = raw.partition(b"\n")
    if kind == "entry-garbage":
        path.write_bytes(b"\x00garbage\n" + payload[:10])
    elif kind == "entry-truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif kind == "entry-flipped":  # the text changed, the signature kept
        path.write_bytes(signature + b"\n" + payload.replace(b"kind: ", b"kind: X", 1))
    elif kind == "entry-forged":  # the text changed and signed again, without this user's key
        forged = payload.replace(b"kind: ", b"kind: X", 1)
        path.write_bytes(hmac.new(FORGER, forged, hashlib.sha256).hexdigest().encode() + b"\n" + forged)
    else:  # another cluster's entry, correctly signed, under this cluster's name
        others = [path.with_name(f"{name}.entry") for name in CLUSTERS if path.name != f"{name}.entry"]
        for other in others:
            if other.is_file() and not other.is_symlink():
                path.write_bytes(other.read_bytes())
                return


def _manifest_line(line: tuple[str, str, str, str, str], victim: Path) -> tuple[str, str]:
    section, path, digest, size, mtime = line
    return section, "\t".join((path.format(victim=victim), digest, size, mtime)) + "\n"


def apply(plant: Plant, project: Path, victim: Path) -> bool:
    """Plant ``plant`` in ``project``; whether it touched dist/ itself (not only what it holds)."""
    path = project / plant.path
    if plant.kind == "cache-temporary":
        path = project / ".fluxplane-cache" / "synth" / f".{plant.path}.entry.{os.getpid()}.tmp"
        entry = path.with_name(f"{plant.path}.entry")
        if not _inside_real_folders(project, str(entry.relative_to(project))):
            return False
        _clear(entry)  # synth stores this cluster's entry again, through that temporary file
        _clear(path)
        _make(path, plant.detail, project, victim)
        return False
    if not _inside_real_folders(project, plant.path):
        return False
    if plant.kind.startswith("entry-"):
        if path.is_file() and not path.is_symlink():
            _edit_entry(path, plant.kind)
        return False
    if plant.kind == "manifest-text":
        _clear(path)
        path.write_bytes(plant.detail)
        return False
    if plant.kind == "manifest-lines":
        text = (
            path.read_bytes().decode("utf-8", "surrogateescape")
            if path.is_file() and not path.is_symlink()
            else "tree\ndist\n"
        )
        head, marker, tail = text.partition("\ndist\n")
        for section, line in map(lambda item: _manifest_line(item, victim), plant.detail):
            if section == "tree":
                head = head + "\n" + line.rstrip("\n")
            else:
                tail = line + tail
        _clear(path)
        path.write_bytes((head + (marker or "\ndist\n") + tail).encode("utf-8", "surrogateescape"))
        return False
    if plant.kind == "moved-dist":  # an interrupted swap leaves the old tree as .dist.old, say
        dist = project / "dist"
        if plant.path == "dist" or plant.path.startswith("dist/") or not dist.is_dir() or dist.is_symlink():
            return False
        _clear(path)
        dist.rename(path)
        return True
    _clear(path)
    _make(path, plant.kind, project, victim)
    return plant.path == "dist"


def _victim(folder: Path) -> Path:
    """A folder beside the project whose files, folders and links must survive every synth."""
    victim = folder / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "keep.txt").write_text("precious\n")
    (victim / "sub" / "kustomization.yaml").write_text("resources: []\n")
    (victim / "link").symlink_to("sub", target_is_directory=True)
    return victim


@dataclass(frozen=True)
class Hostile:
    """A hostile copy of the seed: the project, the victim folder beside it, what was planted."""

    project: Path
    victim: Path
    plants: list[Plant]
    #: Whether dist/ itself was replaced (not only what it holds): synth may then refuse it.
    replaced_dist: bool

    @property
    def touched_dist(self) -> bool:
        """Whether anything was planted in dist/ or in its place."""
        return self.replaced_dist or any(plant.path.split("/")[0] == "dist" for plant in self.plants)


@contextlib.contextmanager
def hostile_copy(seed: Seed, chosen: list[Plant]) -> Iterator[Hostile]:
    """A copy of ``seed`` with ``chosen`` planted, beside a victim folder."""
    resolved = [resolve(plant, seed) for plant in chosen]
    note(f"plants: {resolved}")
    with tempfile.TemporaryDirectory(dir=seed.project.parent) as folder:
        project = Path(folder) / "project"
        shutil.copytree(seed.project, project, symlinks=True)
        victim = _victim(Path(folder))
        replaced_dist = False
        for plant in resolved:
            replaced_dist |= apply(plant, project, victim)
        yield Hostile(project, victim, resolved, replaced_dist)


SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _with_regressions(test: Any) -> Any:
    for chosen in REGRESSIONS:
        test = example(chosen=chosen)(test)
    return test


@SETTINGS
@given(chosen=PLANTS)
@_with_regressions
def test_synth_over_hostile_trees_writes_only_its_own_and_the_clean_tree(seed: Seed, chosen: list[Plant]) -> None:
    with hostile_copy(seed, chosen) as hostile:
        # GIVEN hostile state in synth's own trees, beside a victim folder and the definition
        project = hostile.project
        victim_before = snapshot(hostile.victim)
        definition_before = snapshot(project / "environments")
        for attempt in ("hostile", "after"):
            # WHEN synth runs (and once more, on what the first run left)
            code, err = run(project)
            # THEN it never writes outside its trees
            assert snapshot(hostile.victim) == victim_before, attempt
            assert snapshot(project / "environments") == definition_before, attempt
            # THEN only a replaced dist/ is refused, in lines that name it
            assert code in (0, EXIT_BAD_INPUT), err
            if code == EXIT_BAD_INPUT:
                assert hostile.replaced_dist and attempt == "hostile", err
                # (the example's notes aside: an app left off its registered cluster)
                refused = [line for line in err.splitlines() if not line.startswith("note: ")]
                assert all(line.startswith(f"{project / 'dist'}: ") for line in refused), err
                return
            # THEN dist/ is a real folder holding exactly the clean tree, and no staging folder is left
            assert snapshot(project / "dist") == seed.reference, attempt
            assert not os.path.lexists(project / ".dist.new") and not os.path.lexists(project / ".dist.old")


@SETTINGS
@given(chosen=PLANTS)
@_with_regressions
def test_check_over_hostile_trees_changes_nothing_at_all(seed: Seed, chosen: list[Plant]) -> None:
    with hostile_copy(seed, chosen) as hostile:
        # GIVEN hostile state in synth's own trees
        before = snapshot(hostile.project.parent)
        # WHEN synth --check runs
        code, err = run(hostile.project, "--check")
        # THEN nothing changed anywhere: the project, its dot folders, the victim beside it
        assert snapshot(hostile.project.parent) == before
        assert code in (0, EXIT_STALE, EXIT_BAD_INPUT), err
        # THEN with dist/ left alone it is up to date: nothing planted elsewhere changes what synth computes
        if not hostile.touched_dist:
            assert code == 0, err


# -- concurrent runs ---------------------------------------------------------------------------------


def _start(project: Path, args: tuple[str, ...]) -> subprocess.Popen[str]:
    environment = {**os.environ, "FLUXPLANE_PROGRESS": "off"}
    return subprocess.Popen(
        [sys.executable, "-m", "fluxplane", "--root", str(project), "synth", *args],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _start_state(seed: Seed, folder: Path, state: str) -> Path:
    """A copy of the seed: "warm" as it is, "cold" only its definition, "no-cache", or "no-spare"."""
    project = folder / "project"
    if state == "cold":
        shutil.copytree(seed.project / "environments", project / "environments")
        return project
    shutil.copytree(seed.project, project, symlinks=True)
    if state == "no-cache":
        shutil.rmtree(project / ".fluxplane-cache")
    elif state == "no-spare":
        shutil.rmtree(project / ".dist.spare")
    return project


def _run_together(project: Path, commands: list[tuple[str, ...]], stagger: float = 0.0) -> list[tuple[int, str]]:
    processes = []
    for args in commands:
        processes.append(_start(project, args))
        time.sleep(stagger)
    results = []
    for process in processes:
        try:
            _, err = process.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
            raise AssertionError(f"synth still running after 180 s: {err[-2000:]}") from None
        results.append((process.returncode, err))
    return results


def _assert_clean(seed: Seed, project: Path, definition: Snapshot) -> None:
    """dist/ is the clean tree, nothing half-done beside it, the definition as it was, the cache only entries (and
    the texts of the files rendered on every run)."""
    assert snapshot(project / "dist") == seed.reference
    assert not os.path.lexists(project / ".dist.new") and not os.path.lexists(project / ".dist.old")
    assert snapshot(project / "environments") == definition
    cache = project / ".fluxplane-cache" / "synth"
    if cache.exists():
        names = sorted(p.name for p in cache.iterdir())
        assert [name for name in names if name != DUMPS] == [f"{name}.entry" for name in CLUSTERS]


COMMANDS = st.sampled_from([(), (), ("--no-cache",), ("--check",)])


@settings(SETTINGS, max_examples=max(2, settings().max_examples // 10))
@given(
    commands=st.lists(COMMANDS, min_size=2, max_size=4),
    state=st.sampled_from(["warm", "cold", "no-cache", "no-spare"]),
    stagger=st.sampled_from([0.0, 0.0, 0.02]),
)
def test_synths_started_at_once_take_turns_and_leave_the_clean_tree(
    seed: Seed, commands: list[tuple[str, ...]], state: str, stagger: float
) -> None:
    if all(args == ("--check",) for args in commands):
        commands = [(), *commands[1:]]  # at least one synth
    with tempfile.TemporaryDirectory(dir=seed.project.parent) as folder:
        # GIVEN a project in some state, and two to four synths (some --check) started at once
        project = _start_state(seed, Path(folder), state)
        definition = snapshot(project / "environments")
        results = _run_together(project, commands, stagger)
        # THEN every synth succeeds; a --check finds dist/ up to date, or stale if it ran before any synth
        for args, (code, err) in zip(commands, results, strict=True):
            if args == ("--check",):
                assert code == 0 or (code == EXIT_STALE and state == "cold"), err
            else:
                assert code == 0, err
        # THEN dist/ is the clean tree, and nothing is left half-done
        _assert_clean(seed, project, definition)


@pytest.mark.parametrize("state", ["warm", "cold"])
def test_a_synth_and_a_check_started_at_once(seed: Seed, tmp_path: Path, state: str) -> None:
    # GIVEN a synthesized project (or only its definition) WHEN synth and synth --check start together
    (tmp_path / "together").mkdir()
    project = _start_state(seed, tmp_path / "together", state)
    definition = snapshot(project / "environments")
    (synth_code, synth_err), (check_code, check_err) = _run_together(project, [(), ("--check",)])
    # THEN synth succeeds, and --check sees the old tree or the new one, never a mix
    assert synth_code == 0, synth_err
    assert check_code == 0 or (check_code == EXIT_STALE and state == "cold"), check_err
    _assert_clean(seed, project, definition)
