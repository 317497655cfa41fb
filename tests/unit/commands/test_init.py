"""fluxplane.commands.init: the lines it prints for the scaffold it writes, the Git repository it makes, and
the commands that install the new repository's fluxplane from where this one came (PEP 610, faked)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

from fluxplane.commands import init
from tests.support.commands import parse
from tests.support.distribution import installed_from
from tests.support.git import git

SHA = "4f8b7c2e9a1d3b5c7e9f0a2b4c6d8e0f1a3b5c7d"


def _files(folder: Path) -> list[str]:
    return sorted(
        path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file() and ".git" not in path.parts
    )


def test_init_needs_no_lock_and_defaults_to_the_current_folder() -> None:
    args = parse(init, "init")
    assert (init.NAMES, init.LOCKS_PROJECT, init.stopped(args), args.dir) == (("init",), False, None, Path("."))


def test_run_prints_a_line_per_file_then_the_repository_then_what_to_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    installed_from(monkeypatch, tmp_path / "site", None)
    folder = tmp_path / "fleet"
    assert init.run(parse(init, "init", str(folder))) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert sorted(lines[:-2]) == [f"wrote {folder}/{path}" for path in _files(folder)]
    assert lines[-2] == f"git: initialized an empty repository in {folder}, branch main; nothing committed"
    assert lines[-1] == (
        f"next: cd {folder} && python -m venv .venv && .venv/bin/pip install -e '.[test]' && "
        ".venv/bin/fluxplane synth && .venv/bin/pytest, then commit (see README.md)"
    )
    assert err == ""


def test_init_makes_a_git_repository_on_main_and_commits_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN init writes a repository where there is none
    folder = tmp_path / "fleet"
    assert init.run(parse(init, "init", str(folder))) == 0
    # THEN it is a Git repository on the branch base.yaml and the CI workflow name, with nothing committed,
    # and every file it wrote is there to add
    assert git(folder, "rev-parse", "--show-toplevel") == str(folder)
    assert git(folder, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git(folder, "rev-list", "--all") == ""
    untracked = git(folder, "ls-files", "--others", "--exclude-standard").splitlines()
    assert sorted(untracked) == _files(folder)


def test_init_inside_a_repository_makes_no_other(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a Git repository, with a commit of its own
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "first")
    head = git(tmp_path, "rev-parse", "HEAD")
    # WHEN init writes a fleet repository into a folder of it
    folder = tmp_path / "fleet"
    assert init.run(parse(init, "init", str(folder))) == 0
    # THEN no repository is nested in it, and its history is as it was
    assert not (folder / ".git").exists()
    assert git(tmp_path, "rev-parse", "HEAD") == head
    assert f"git: {folder} is in the repository {tmp_path} already; nothing committed" in capsys.readouterr().out


def test_without_git_the_files_are_written_and_a_line_says_how_to_make_the_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN fluxplane installed from an index, and no git on PATH
    installed_from(monkeypatch, tmp_path / "site", None)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    folder = tmp_path / "fleet"
    # WHEN init runs THEN it writes the repository, warns in one line, and succeeds
    assert init.run(parse(init, "init", str(folder))) == 0
    assert "pyproject.toml" in _files(folder) and not (folder / ".git").exists()
    assert capsys.readouterr().err == (
        "git is not installed: diff, validate --changed and the CI workflow need a Git repository; "
        f"`git init --initial-branch=main` in {folder} makes it one\n"
    )


WHEEL = "fluxplane-1.2.3-py3-none-any.whl"


@pytest.mark.parametrize(
    ("origin", "requirement", "find_links"),
    [
        (None, "fluxplane==1.2.3", None),
        (
            {"url": "https://github.com/example-org/fluxplane.git", "vcs_info": {"vcs": "git", "commit_id": SHA}},
            f"fluxplane @ git+https://github.com/example-org/fluxplane.git@{SHA}",
            None,
        ),
        (
            {"url": f"https://example.com/download/v1.2.3/{WHEEL}", "archive_info": {"hashes": {"sha256": "ab12"}}},
            f"fluxplane @ https://example.com/download/v1.2.3/{WHEEL}#sha256=ab12",
            None,
        ),
        ({"url": f"file:///srv/wheels/{WHEEL}", "archive_info": {}}, "fluxplane==1.2.3", "/srv/wheels"),
        (
            {"url": "file:///home/me/fluxplane", "dir_info": {"editable": True}},
            "fluxplane @ file:///home/me/fluxplane",
            None,
        ),
    ],
    ids=["index", "git", "wheel at a URL", "wheel on this machine", "checkout"],
)
def test_the_pin_and_the_next_commands_install_this_fluxplane_from_where_it_came(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    origin: dict[str, Any] | None,
    requirement: str,
    find_links: str | None,
) -> None:
    # GIVEN fluxplane 1.2.3 installed as pip records it for this origin
    installed_from(monkeypatch, tmp_path / "site", origin)
    # WHEN init writes a repository
    folder = tmp_path / "fleet"
    assert init.run(parse(init, "init", str(folder))) == 0
    # THEN its pyproject.toml depends on that fluxplane
    pyproject = tomllib.loads((folder / "pyproject.toml").read_text())
    assert pyproject["project"]["dependencies"] == [requirement]
    # AND the install command it prints finds it
    out, err = capsys.readouterr()
    install = f".venv/bin/pip install -e '.[test]'{f' --find-links {find_links}' if find_links else ''} && "
    assert install in out.splitlines()[-1]
    # AND where the pin holds on this machine only, a note says so
    assert err.startswith("note: fluxplane was installed from ") == (origin is not None and "file:" in origin["url"])


def test_a_folder_with_spaces_is_quoted_in_the_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    installed_from(monkeypatch, tmp_path / "site", {"url": f"file:///my%20wheels/{WHEEL}", "archive_info": {}})
    folder = tmp_path / "Acme Fleet"
    assert init.run(parse(init, "init", str(folder))) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith(f"next: cd '{folder}' && ") and "--find-links '/my wheels' && " in line
    assert os.path.isdir(folder)
