"""The same definition gives the same dist/ bytes whatever the environment synth runs in.

Each case runs ``fluxplane synth`` as a child process on a fresh copy of the example fleet (so no
cache or earlier output carries over) and compares the complete {path: bytes} map of dist/ with a
reference run: string hashing (PYTHONHASHSEED), the working directory, the locale and time zone,
the order the definition's files were created in, and the folder the project lives in.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.files import read_tree


def _locales() -> set[str]:
    try:
        listed = subprocess.run(["locale", "-a"], capture_output=True, text=True, check=False).stdout
    except FileNotFoundError:
        return set()
    return {name.lower().replace("utf-8", "utf8") for name in listed.split()}


HAS_EN_US = "en_us.utf8" in _locales()
#: What the reference run uses; each case changes one part of it.
PLAIN = {"PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8", "TZ": "UTC"}


def _copy_definition(project: Path, reverse: bool = False) -> Path:
    """environments/ of the example fleet into ``project``, files created in path order or its reverse."""
    source = ROOT / "environments"
    files = sorted(p for p in source.rglob("*") if p.is_file())
    for path in reversed(files) if reverse else files:
        target = project / "environments" / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return project


def _synth(project: Path, cwd: Path, env: dict[str, str], use_root: bool = True) -> dict[str, bytes]:
    command = [sys.executable, "-m", "fluxplane", *(["--root", str(project)] if use_root else []), "synth"]
    done = subprocess.run(command, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return read_tree(project / "dist")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """dist/ from a plain run: hash seed 0, from the project folder, C.UTF-8, UTC."""
    project = _copy_definition(tmp_path_factory.mktemp("reference") / "fleet")
    tree = _synth(project, project, PLAIN)
    assert len(tree) > 100  # the whole example fleet, not an empty tree
    return tree


CASES = {
    "hash-seed-1": ({"PYTHONHASHSEED": "1"}, "project"),
    "hash-seed-random": ({"PYTHONHASHSEED": "random"}, "project"),
    "from-slash-with-root": ({}, "/"),
    "from-the-project-without-root": ({}, "project-no-root"),
    "locale-C": ({"LC_ALL": "C", "LANG": "C"}, "project"),
    "locale-C.UTF-8": ({"LC_ALL": "C.UTF-8"}, "project"),
    "time-zone": ({"TZ": "Pacific/Kiritimati"}, "project"),
}


@pytest.mark.slow
@pytest.mark.parametrize(("env", "where"), list(CASES.values()), ids=list(CASES))
def test_dist_is_the_same_bytes_in_any_environment(
    tmp_path: Path, reference: dict[str, bytes], env: dict[str, str], where: str
) -> None:
    # GIVEN a fresh copy of the example fleet
    project = _copy_definition(tmp_path / "fleet")
    # WHEN synth runs with another hash seed, working directory, locale or time zone
    cwd = Path("/") if where == "/" else project
    tree = _synth(project, cwd, {**PLAIN, **env}, where != "project-no-root")
    # THEN dist/ is the reference, byte for byte
    assert tree == reference


@pytest.mark.slow
@pytest.mark.skipif(not HAS_EN_US, reason="the en_US.UTF-8 locale is not installed (locale -a)")
def test_dist_is_the_same_bytes_under_en_us(tmp_path: Path, reference: dict[str, bytes]) -> None:
    # GIVEN a fresh copy WHEN synth runs under en_US.UTF-8 THEN dist/ is the reference
    project = _copy_definition(tmp_path / "fleet")
    assert _synth(project, project, {**PLAIN, "LC_ALL": "en_US.UTF-8", "LANG": "en_US.UTF-8"}) == reference


@pytest.mark.slow
def test_dist_does_not_depend_on_file_creation_order_or_the_project_path(
    tmp_path: Path, reference: dict[str, bytes]
) -> None:
    # GIVEN the definition's files (environments, apps, sealed secrets) created in reverse order, in a
    # fresh folder at a deeper path with a space and non-ASCII characters in it
    project = _copy_definition(tmp_path / "another place" / "flotte-é" / "fleet", reverse=True)
    # WHEN synth runs THEN dist/ is the reference, byte for byte
    assert _synth(project, project, PLAIN) == reference
