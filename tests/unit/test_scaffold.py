"""fluxplane init: the files of a new fleet repository, never written over anything."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fluxplane.cli import main
from fluxplane.scaffold import scaffold

EXPECTED = [
    ".github/workflows/fluxplane.yaml",
    ".gitignore",
    "README.md",
    "cdk8s.yaml",
    "charts/fleet_info.py",
    "environments/base.yaml",
    "environments/staging.yaml",
    "pyproject.toml",
    "tests/test_fleet.py",
]


def test_init_writes_a_repository_pinning_this_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    folder = tmp_path / "Acme Fleet"
    assert main(["init", str(folder)]) == 0
    written = sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())
    assert written == EXPECTED
    pyproject = (folder / "pyproject.toml").read_text()
    assert f'dependencies = ["fluxplane=={metadata.version("fluxplane")}"]' in pyproject
    assert 'name = "acme-fleet"' in pyproject
    assert "@@" not in "".join(path.read_text() for path in folder.rglob("*") if path.is_file())
    # the ignored working state is fluxplane's own
    ignored = (folder / ".gitignore").read_text().splitlines()
    assert {"/.fluxplane-cache/", "/.dist.spare/", "/.fluxplane-edit/", ".venv/"} <= set(ignored)
    workflow = yaml.safe_load((folder / ".github/workflows/fluxplane.yaml").read_text())
    runs = [step.get("run", "") for step in workflow["jobs"]["check"]["steps"]]
    commands = ("fluxplane synth --check", "fluxplane validate", ".venv/bin/pytest", "fluxplane diff --base")
    for command in (*commands, "fluxplane plan --base"):
        assert any(command in run for run in runs), command
    out = capsys.readouterr().out.splitlines()
    assert out[: len(EXPECTED)] == [f"wrote {folder / path}" for path in EXPECTED]


def test_init_writes_nothing_over_an_existing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "environments").mkdir()
    (tmp_path / "environments" / "base.yaml").write_text("mine\n")
    (tmp_path / "README.md").write_text("mine\n")
    assert main(["init", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{tmp_path / path}: exists; init writes a new repository and never overwrites"
        for path in ("README.md", "environments/base.yaml")
    ]
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["README.md", "base.yaml", "environments"]
    assert (tmp_path / "README.md").read_text() == "mine\n"


def test_init_does_not_write_through_a_symbolic_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "fleet").mkdir()
    (tmp_path / "fleet" / "tests").symlink_to(elsewhere)
    assert main(["init", str(tmp_path / "fleet")]) == 2
    assert capsys.readouterr().err == (
        f"{tmp_path / 'fleet' / 'tests'}: a symbolic link; init writes only into folders of its own\n"
    )
    assert list(elsewhere.iterdir()) == []
    assert [path.name for path in (tmp_path / "fleet").iterdir()] == ["tests"]


def test_the_definition_it_writes_is_valid_as_written(tmp_path: Path) -> None:
    from fluxplane.synth import load_plan

    files = scaffold(tmp_path / "fleet", "1.2.3").files
    for path in ("environments/base.yaml", "environments/staging.yaml", "charts/fleet_info.py"):
        target = tmp_path / "fleet" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(files[path])
    plan = load_plan(tmp_path / "fleet")
    assert sorted(cluster.name for cluster in plan.clusters) == ["hub", "staging-usw2"]
