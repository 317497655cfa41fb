"""fluxplane init: the files of a new fleet repository, never written over anything."""

from __future__ import annotations

import builtins
import errno
import os
import re
import shutil
import tomllib
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.cli import main
from fluxplane.commands.scaffold import scaffold
from tests.support.distribution import installed_from
from tests.support.workflows import (
    assert_every_action_runs_on_node_24,
    assert_pull_requests_restore_the_main_branch_s_cache_and_never_save,
)

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


def test_init_writes_a_repository_pinning_this_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN fluxplane 1.2.3 installed from a package index
    installed_from(monkeypatch, tmp_path / "site", None)
    folder = tmp_path / "Acme Fleet"
    assert main(["init", str(folder)]) == 0
    written = sorted(
        str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file() and ".git" not in path.parts
    )
    assert written == EXPECTED
    pyproject = (folder / "pyproject.toml").read_text()
    assert 'dependencies = ["fluxplane==1.2.3"]' in pyproject
    assert 'name = "acme-fleet"' in pyproject
    assert "@@" not in "".join(folder.joinpath(path).read_text() for path in EXPECTED)
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


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda tmp: tmp / "fleet.yaml", "fleet.yaml"),
        (lambda tmp: tmp / "fleet.yaml" / "fleet", "fleet.yaml"),
        (lambda tmp: tmp / "fleet", "fleet/charts"),
    ],
    ids=["DIR is a file", "DIR is under a file", "a file where init makes a folder"],
)
def test_init_where_a_file_stands_for_a_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, named: str
) -> None:
    # GIVEN a file where init would make or write into a folder
    (tmp_path / "fleet.yaml").write_text("mine\n")
    (tmp_path / "fleet").mkdir()
    (tmp_path / "fleet" / "charts").write_text("mine\n")
    # WHEN init runs THEN one line names the file, exit 2, and nothing is written
    assert main(["init", str(make(tmp_path))]) == 2
    reason = (
        "exists; init writes a new repository and never overwrites"
        if named == "fleet/charts"
        else "not a folder; init writes a new repository into a folder (DIR)"
    )
    assert capsys.readouterr().err == f"{tmp_path / named}: {reason}\n"
    assert sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*")) == [
        "fleet",
        "fleet.yaml",
        "fleet/charts",
    ]


def _refuse_writes(monkeypatch: pytest.MonkeyPatch, under: Path, after: int, error: int) -> None:
    """Make creating a folder or a file under ``under`` fail with ``error`` once ``after`` files are written: a
    folder this user cannot write (simulated: the tests run as root, who writes anywhere), or a full disk."""
    real_open, real_mkdir = builtins.open, os.mkdir
    written = {"files": 0}

    def refuse(path: Any) -> None:
        if Path(path).is_relative_to(under) and written["files"] >= after:
            raise OSError(error, os.strerror(error), str(path))

    def fake_open(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "x" in mode or "w" in mode:
            refuse(path)
            written["files"] += 1
        return real_open(path, mode, *args, **kwargs)

    def fake_mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        refuse(path)
        real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)


@pytest.mark.parametrize(
    ("after", "error"), [(0, errno.EACCES), (4, errno.ENOSPC)], ids=["not writable", "full after some files"]
)
def test_init_into_a_folder_it_cannot_write_is_one_line_and_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, after: int, error: int
) -> None:
    # GIVEN a folder init cannot write (or whose disk fills up after a few files)
    folder = tmp_path / "fleet"
    folder.mkdir()
    _refuse_writes(monkeypatch, folder, after, error)
    # WHEN init runs into it
    code = main(["init", str(folder)])
    monkeypatch.undo()
    # THEN one line names what could not be written and why, exit 2, and the folder is as it was
    assert code == 2
    line = capsys.readouterr().err
    assert line.startswith(f"{folder}/") and line.endswith(
        f": cannot write ({os.strerror(error)}); nothing was written\n"
    )
    assert line.count("\n") == 1, line
    assert list(folder.iterdir()) == []


def test_the_definition_it_writes_is_valid_as_written(tmp_path: Path) -> None:
    from fluxplane.synth import load_plan

    files = scaffold(tmp_path / "fleet", "fluxplane==1.2.3").files
    for path in ("environments/base.yaml", "environments/staging.yaml", "charts/fleet_info.py"):
        target = tmp_path / "fleet" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(files[path])
    plan = load_plan(tmp_path / "fleet")
    assert sorted(cluster.name for cluster in plan.clusters) == ["hub", "staging-usw2"]


def test_a_new_fleet_starts_on_kyvernos_validating_policy(tmp_path: Path) -> None:
    # GIVEN the definition init writes WHEN it is planned
    _, packs = _definition(tmp_path / "fleet", scaffold(tmp_path / "fleet", "fluxplane==1.2.3").files)
    # THEN every workload cluster writes the Pod Security Standards as a policies.kyverno.io ValidatingPolicy, not
    # the ClusterPolicy form Kyverno deprecates (the pack's default, kept for fleets that run it already)
    kyverno = [configs["kyverno"] for name, configs in packs.items() if name != "hub"]
    assert kyverno and all(config["policy_kind"] == "ValidatingPolicy" for config in kyverno)


#: A setting the scaffold's definition leaves out, commented: `# field: value   # what it does`.
SETTING = re.compile(r"^(?P<indent>\s*)# (?P<field>[a-z][A-Za-z0-9-]*): (?P<value>[^#]+?)\s+# (?P<says>.+)$")


def _definition(root: Path, files: dict[str, str]) -> Any:
    """The definition of ``files`` as synth plans it, without running the charts: the fleet, and each cluster's
    pack configs."""
    from fluxplane.config.loader import load_fleet
    from fluxplane.synth.pipeline import project_registry
    from fluxplane.synth.plan import plan_fleet

    shutil.rmtree(root, ignore_errors=True)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    plan = plan_fleet(load_fleet(root), project_registry(root))

    def typed(value: Any) -> Any:
        # the packs sections as written; their typed configs, defaults filled in, are compared below
        if isinstance(value, dict):
            return {key: typed(item) for key, item in value.items() if key != "packs"}
        return [typed(item) for item in value] if isinstance(value, list) else value

    packs = {
        cluster.name: {name: pack.model_dump() for name, pack in cluster.packs.items()} for cluster in plan.clusters
    }
    return typed(plan.fleet.model_dump()), packs


def _settings(files: dict[str, str]) -> list[tuple[str, int, re.Match[str]]]:
    return [
        (path, number, found)
        for path, text in files.items()
        if path.startswith("environments/")
        for number, line in enumerate(text.splitlines())
        if (found := SETTING.match(line))
    ]


def test_each_setting_left_out_in_a_comment_does_what_the_comment_says(tmp_path: Path) -> None:
    # GIVEN the scaffold's definition, and each setting its comments leave out ("# field: value   # ...")
    files = scaffold(tmp_path / "fleet", "fluxplane==1.2.3").files
    settings = _settings(files)
    assert {found["field"] for _, _, found in settings} >= {"identity", "bootstrap"}
    written = _definition(tmp_path / "fleet", files)
    for path, number, found in settings:
        # WHEN the setting is uncommented
        lines = files[path].splitlines()
        lines[number] = f"{found['indent']}{found['field']}: {found['value']}"
        changed = _definition(tmp_path / "fleet", {**files, path: "\n".join(lines) + "\n"})
        # THEN the definition is valid; and one the comment calls the default changes nothing
        if found["says"].startswith("the default"):
            assert changed == written, f"{path}:{number + 1}: {found['field']} is not the default"
        else:
            assert changed != written, f"{path}:{number + 1}: {found['field']}: {found['value']} changes nothing"


def test_the_providers_role_is_documented_for_the_identity_the_pack_defaults_to(tmp_path: Path) -> None:
    from fluxplane.packs.crossplane_providers import CrossplaneProvidersConfig

    # GIVEN how each identity of the AWS providers is called, and the one the pack defaults to
    ways = {"irsa": "IRSA", "pod-identity": "Pod Identity"}
    identity = CrossplaneProvidersConfig.model_fields["identity"]
    assert set(ways) == set(typing.get_args(identity.annotation))
    default = identity.default
    # WHEN the comments of the scaffold's crossplane-providers section are read
    base = scaffold(tmp_path / "fleet", "fluxplane==1.2.3").files["environments/base.yaml"].splitlines()
    start = next(number for number, line in enumerate(base) if line.strip() == "crossplane-providers:")
    indent = len(base[start]) - len(base[start].lstrip())
    section = []
    for line in base[start + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        section.append(line)
    comments = " ".join(line.split("#", 1)[1] for line in section if "#" in line)
    # THEN they name the default's way, and another way only by its value
    assert ways[default] in comments
    assert [way for value, way in ways.items() if value != default and way in comments] == []


def test_the_new_repository_s_first_test_run_records_its_snapshots_and_ci_refuses_to(tmp_path: Path) -> None:
    files = scaffold(tmp_path / "fleet", "fluxplane==1.2.3").files
    # GIVEN the new repository's test settings
    pyproject = tomllib.loads(files["pyproject.toml"])
    # THEN pytest records a snapshot that does not exist yet (syrupy 5.3 has the option), and compares the rest
    assert pyproject["tool"]["pytest"]["ini_options"]["addopts"].split() == ["-ra", "--snapshot-update-new-only"]
    assert "syrupy>=5.3" in pyproject["project"]["optional-dependencies"]["test"]
    # AND its tests snapshot what each cluster runs, not the files of dist/
    assert "fleet.summary(fleet_cluster) == yaml_snapshot" in files["tests/test_fleet.py"]
    assert "dist_file" not in files["tests/test_fleet.py"]
    # AND CI fails, after the tests, when they recorded a snapshot that was not committed
    steps = yaml.safe_load(files[".github/workflows/fluxplane.yaml"])["jobs"]["check"]["steps"]
    runs = [str(step.get("run", "")) for step in steps]
    tests = next(index for index, run in enumerate(runs) if run.strip() == ".venv/bin/pytest")
    assert 'if [ -n "$(git status --porcelain -- tests/__snapshots__)" ]; then' in runs[tests + 1]
    assert "exit 1" in runs[tests + 1]


def test_ci_builds_the_fleet_pages_on_main_and_on_pull_requests_and_uploads_them(tmp_path: Path) -> None:
    files = scaffold(tmp_path / "fleet", "fluxplane==1.2.3").files
    # GIVEN the new repository's workflow, which runs on pushes to main and on pull requests
    workflow = yaml.safe_load(files[".github/workflows/fluxplane.yaml"])
    assert workflow[True] == {"pull_request": None, "push": {"branches": ["main"]}}  # PyYAML reads `on` as True
    steps = workflow["jobs"]["check"]["steps"]
    # THEN one step builds the pages, a pull request's with its change against the base branch
    pages = next(index for index, step in enumerate(steps) if "fluxplane site" in str(step.get("run", "")))
    run = steps[pages]["run"]
    assert '.venv/bin/fluxplane site site/fleet --base "origin/${{ github.base_ref }}"' in run
    assert "\n  .venv/bin/fluxplane site site/fleet\n" in run
    # AND the next uploads them, with a pinned action, before the plan's gate can stop the job
    upload = steps[pages + 1]
    assert upload["uses"] == "actions/upload-artifact@v6"
    assert upload["with"] == {"name": "fleet-pages", "path": "site/fleet", "if-no-files-found": "error"}
    gate = next(index for index, step in enumerate(steps) if "--fail-on" in str(step.get("run", "")))
    assert pages < gate
    # AND the folder is not committed
    assert "/site/" in files[".gitignore"].splitlines()


def test_ci_restores_the_main_branch_s_caches_and_a_pull_request_never_saves_them(tmp_path: Path) -> None:
    files = scaffold(tmp_path / "fleet", "fluxplane==1.2.3").files
    steps = yaml.safe_load(files[".github/workflows/fluxplane.yaml"])["jobs"]["check"]["steps"]
    assert_pull_requests_restore_the_main_branch_s_cache_and_never_save(steps)


def test_every_action_of_the_workflow_runs_on_node_24(tmp_path: Path) -> None:
    # GIVEN the new repository's workflow
    files = scaffold(tmp_path / "fleet", "fluxplane==1.2.3").files
    workflow = yaml.safe_load(files[".github/workflows/fluxplane.yaml"])
    # THEN no step runs an action on the deprecated Node.js 20
    assert_every_action_runs_on_node_24(workflow)
