"""fluxplane's version is its Git tag's: the sdist and the wheel built from a tag vX.Y.Z are X.Y.Z, and a wheel
built from the sdist, outside Git, is too. The release workflow (.github/workflows/release.yml) builds them so.

The builds call setuptools' PEP 517 hooks in this venv (what ``python -m build --no-isolation`` does), with no
network.
"""

from __future__ import annotations

import email
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.git import git

pytestmark = pytest.mark.slow


def _build(source: Path, out: Path) -> list[str]:
    """The sdist and the wheel of ``source``, built into ``out``: their file names."""
    # The hooks print the build's log on standard output, so the names go to a file; and they set sys.argv.
    code = (
        "import sys, pathlib; from setuptools import build_meta as hooks; out, names = sys.argv[1:]; "
        "pathlib.Path(names).write_text(' '.join([hooks.build_sdist(out), hooks.build_wheel(out)]))"
    )
    built = source.parent / f"{out.name}.names"
    done = subprocess.run(
        [sys.executable, "-c", code, str(out), str(built)], cwd=source, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return built.read_text().split()


def _version(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        return str(email.message_from_bytes(archive.read(metadata))["Version"])


@pytest.fixture
def tagged(tmp_path: Path) -> Path:
    """fluxplane's source in a Git repository of its own, its one commit tagged v1.2.3."""
    source = tmp_path / "fluxplane"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    git(source, "init", "--quiet")
    git(source, "add", ".")
    git(source, "commit", "--quiet", "-m", "release")
    git(source, "tag", "v1.2.3")
    return source


def test_the_sdist_and_the_wheel_built_from_a_tag_are_its_version(tagged: Path, tmp_path: Path) -> None:
    # WHEN the sdist and the wheel are built at the tag
    out = tmp_path / "release"
    names = _build(tagged, out)
    # THEN both are version 1.2.3, named as the release workflow looks for them
    assert names == ["fluxplane-1.2.3.tar.gz", "fluxplane-1.2.3-py3-none-any.whl"]
    assert _version(out / names[1]) == "1.2.3"
    # AND a wheel built from the sdist, where there is no Git, is 1.2.3 too (the sdist's PKG-INFO)
    with tarfile.open(out / names[0]) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    [wheel] = _build(tmp_path / "unpacked" / "fluxplane-1.2.3", tmp_path / "again")[1:]
    assert wheel == "fluxplane-1.2.3-py3-none-any.whl"


def test_a_commit_after_the_tag_is_a_development_version_of_the_next(tagged: Path, tmp_path: Path) -> None:
    # GIVEN a commit after the tag
    (tagged / "README.md").write_text((tagged / "README.md").read_text() + "\nmore\n")
    git(tagged, "commit", "--quiet", "-am", "after")
    commit = git(tagged, "rev-parse", "--short=7", "HEAD")
    # WHEN the wheel is built THEN it is a development version of 1.2.4, naming the commit
    wheel = _build(tagged, tmp_path / "out")[1]
    version = _version(tmp_path / "out" / wheel)
    assert version.startswith("1.2.4.dev1+g") and commit in version, version
