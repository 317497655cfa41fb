"""Tests for fluxplane.cli: bad input prints one line per problem, exits 2 and leaves dist/ alone.

Every case here fails in the config or planning step, so the JavaScript runtime is never started; a
guard makes sure of that.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import fluxplane.synth
from fluxplane.cli import COMMANDS, EXIT_BAD_INPUT, build_parser, main
from fluxplane.packs.registry import PackRegistry
from tests.conftest import MINIMAL_BASE, ROOT, FleetWriter

#: The installed packs, as messages list them.
INSTALLED = ", ".join(PackRegistry.from_entry_points().names)

DNS_HELP = "expected a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit)"


@pytest.fixture(autouse=True)
def _no_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad input must be refused before rendering (which starts the JavaScript runtime)."""

    def refuse(*args: Any, **kwargs: Any) -> dict[str, str]:
        raise AssertionError("render_plan was called: bad input reached the JavaScript runtime")

    monkeypatch.setattr(fluxplane.synth.pipeline, "render_plan", refuse)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()
    }


def _existing_dist(root: Path) -> dict[str, bytes]:
    """A dist/ that a bad run must not touch; returns its files and bytes."""
    (root / "dist" / "platform" / "clusters" / "hub").mkdir(parents=True)
    (root / "dist" / "platform" / "clusters" / "hub" / "kustomization.yaml").write_bytes(
        b"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"
    )
    (root / "dist" / "README.md").write_bytes(b"generated\n")
    return _snapshot(root / "dist")


@pytest.fixture
def bad_fleet(write_fleet: FleetWriter) -> Path:
    """Two problems in two environment files."""
    return write_fleet(
        envs={
            "production": {"clusters": [{"name": "prod/1", "region": "us-west-2"}]},
            "staging": {
                "clusters": [{"name": "s", "region": "us-west-2", "nodeGroups": [{"name": "g", "desiredSize": 0}]}]
            },
        },
    )


BAD_FLEET_LINES = [
    f'environments/production.yaml: clusters[0].name: {DNS_HELP}, got "prod/1"',
    "environments/staging.yaml: clusters[0].nodeGroups[0].desiredSize: expected an integer >= 1, got 0",
]


@pytest.mark.parametrize("extra", [[], ["--check"]], ids=["synth", "synth-check"])
def test_bad_input_prints_each_problem_and_exits_2(
    bad_fleet: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    # GIVEN problems in two environment files
    # WHEN synth runs
    code = main(["--root", str(bad_fleet), "synth", *extra])

    # THEN it exits 2 and prints one line per problem on stderr, nothing on stdout, no traceback
    captured = capsys.readouterr()
    assert code == EXIT_BAD_INPUT == 2
    assert captured.err.splitlines() == BAD_FLEET_LINES
    assert captured.out == ""
    assert "Traceback" not in captured.err


def test_bad_input_leaves_an_existing_dist_byte_for_byte_untouched(
    bad_fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an existing dist/ and a bad definition
    before = _existing_dist(bad_fleet)

    # WHEN synth runs
    code = main(["--root", str(bad_fleet), "synth"])

    # THEN it exits 2, dist/ holds exactly the same files with the same bytes, and nothing was added beside it
    assert code == 2
    assert _snapshot(bad_fleet / "dist") == before
    assert sorted(path.name for path in bad_fleet.iterdir()) == ["dist", "environments"]
    assert capsys.readouterr().err.splitlines() == BAD_FLEET_LINES


def test_bad_input_leaves_an_explicit_outdir_untouched(
    bad_fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an existing output folder given with --outdir
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.yaml").write_bytes(b"a: 1\n")

    # WHEN synth runs on a bad definition
    code = main(["--root", str(bad_fleet), "synth", "--outdir", str(out)])

    # THEN the folder is as it was and no dist/ was created under the project
    assert code == 2
    assert _snapshot(out) == {"keep.yaml": b"a: 1\n"}
    assert not (bad_fleet / "dist").exists()
    assert capsys.readouterr().err.splitlines() == BAD_FLEET_LINES


def test_bad_input_leaves_cdk8s_outdir_untouched(
    bad_fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN cdk8s running fluxplane with CDK8S_OUTDIR set to a folder with content
    out = tmp_path / "cdk8s-out"
    out.mkdir()
    (out / "keep.yaml").write_bytes(b"b: 2\n")
    monkeypatch.setenv("CDK8S_OUTDIR", str(out))

    # WHEN synth runs on a bad definition THEN it exits 2 and the folder is unchanged
    assert main(["--root", str(bad_fleet), "synth"]) == 2
    assert _snapshot(out) == {"keep.yaml": b"b: 2\n"}
    assert capsys.readouterr().err.splitlines() == BAD_FLEET_LINES


def _no_environments_folder(write_fleet: FleetWriter, tmp_path: Path) -> Path:
    root = tmp_path / "empty"
    root.mkdir()
    return root


def _no_base_file(write_fleet: FleetWriter, tmp_path: Path) -> Path:
    root = write_fleet()
    (root / "environments" / "base.yaml").unlink()
    return root


def _no_environment_files(write_fleet: FleetWriter, tmp_path: Path) -> Path:
    return write_fleet(envs={})


def _invalid_yaml(write_fleet: FleetWriter, tmp_path: Path) -> Path:
    return write_fleet(envs={"staging": "clusters: []\nclusters: []\n"})


def _top_level_list(write_fleet: FleetWriter, tmp_path: Path) -> Path:
    return write_fleet(envs={"staging": "- a\n"})


def _unknown_pack(write_fleet: FleetWriter, tmp_path: Path) -> Path:
    return write_fleet(base={**MINIMAL_BASE, "packs": {"istio": {}}})


@pytest.mark.parametrize(
    ("make_project", "expected"),
    [
        (
            _no_environments_folder,
            [
                "{root}/environments: folder not found; create it with base.yaml and one file per environment "
                "(see 'The fleet definition' in fluxplane's documentation)"
            ],
        ),
        (_no_base_file, ["environments/base.yaml: file not found"]),
        (
            _no_environment_files,
            ["environments: no environment files; add one per environment, e.g. staging.yaml"],
        ),
        (_invalid_yaml, ["environments/staging.yaml:2:1: invalid YAML: duplicate key 'clusters'"]),
        (_top_level_list, ["environments/staging.yaml: expected a mapping at the top level, got a list"]),
        (
            _unknown_pack,
            [f"environments/base.yaml: packs.istio: unknown pack 'istio' (installed: {INSTALLED})"],
        ),
    ],
    ids=["no-environments", "no-base", "no-env-files", "invalid-yaml", "top-level-list", "unknown-pack"],
)
def test_each_kind_of_bad_input_exits_2_with_its_lines(
    write_fleet: FleetWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make_project: Callable[[FleetWriter, Path], Path],
    expected: list[str],
) -> None:
    # GIVEN a project with one kind of bad input, and an existing dist/
    root = make_project(write_fleet, tmp_path)
    before = _existing_dist(root)

    # WHEN synth runs
    code = main(["--root", str(root), "synth"])

    # THEN exit 2, exactly the expected lines, dist/ untouched
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.splitlines() == [line.format(root=root) for line in expected]
    assert captured.out == ""
    assert _snapshot(root / "dist") == before


def test_a_bug_is_not_reported_as_bad_input(write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN loading that fails with an unexpected exception (a bug, not bad input)
    def broken(root: Path, registry: Any = None) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(fluxplane.synth.pipeline, "load_plan", broken)

    # WHEN synth runs THEN the exception escapes with its traceback instead of exit 2
    with pytest.raises(RuntimeError, match=r"^boom$"):
        main(["--root", str(write_fleet()), "synth"])


def test_bad_input_in_a_real_process_exits_2_without_traceback(bad_fleet: Path) -> None:
    # GIVEN a bad definition and an existing dist/
    before = _existing_dist(bad_fleet)

    # WHEN "python -m fluxplane synth" runs as a process
    result = subprocess.run(
        [sys.executable, "-m", "fluxplane", "--root", str(bad_fleet), "synth"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    # THEN it exits 2, prints the problems only, and leaves dist/ as it was
    assert result.returncode == 2
    assert result.stderr.splitlines() == BAD_FLEET_LINES
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert _snapshot(bad_fleet / "dist") == before


#: Every command that reads or changes the project in --root, with arguments it would otherwise accept.
PROJECT_COMMANDS = [
    ["synth"],
    ["synth", "--check"],
    ["cdk8s", "synth"],
    ["seal", "--cluster", "staging-1", "--name", "db", "--namespace", "app", "--from-literal", "k=v"],
    ["new-cluster", "staging-2", "--env", "staging"],
    ["remove-cluster", "staging-1"],
    ["onboard-app", "shop", "--env", "staging", "--repo", "https://example.com/shop.git", "--path", "deploy"],
    ["offboard-app", "shop"],
    ["graph", "--cluster", "staging-1"],
    ["versions"],
    ["diff"],
    ["site"],
]


def _root_a_file(tmp_path: Path) -> Path:
    (tmp_path / "fleet.yaml").write_text("mine\n")
    return tmp_path / "fleet.yaml"


def _root_under_a_file(tmp_path: Path) -> Path:
    return _root_a_file(tmp_path) / "project"


def _root_missing(tmp_path: Path) -> Path:
    return tmp_path / "missing"


@pytest.mark.parametrize(
    "root", [_root_a_file, _root_under_a_file, _root_missing], ids=["file", "under-a-file", "missing"]
)
@pytest.mark.parametrize("command", PROJECT_COMMANDS, ids=[" ".join(command[:2]) for command in PROJECT_COMMANDS])
def test_a_root_that_is_no_project_folder_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], root: Callable[[Path], Path], command: list[str]
) -> None:
    # GIVEN --root naming a file, a path under a file, or nothing
    project = root(tmp_path)
    before = _snapshot(tmp_path)
    # WHEN a command that works on the project runs THEN one line names --root's path, exit 2, no traceback
    assert main(["--root", str(project), *command]) == EXIT_BAD_INPUT
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{project}"), lines
    # AND nothing was written
    assert _snapshot(tmp_path) == before


def test_pack_problems_are_reported_with_the_other_problems(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a bad cluster field and, in another file, a misspelled pack
    root = write_fleet(
        base={**MINIMAL_BASE, "packs": {"metrics-servr": {}}},
        envs={"staging": {"clusters": [{"name": "s1", "region": "nowhere"}]}},
    )
    # WHEN synth runs THEN both are reported in the one run
    assert main(["--root", str(root), "synth"]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.splitlines() == [
        'environments/staging.yaml: clusters[0].region: expected an AWS region such as us-west-2, got "nowhere"',
        "environments/base.yaml: packs.metrics-servr: unknown pack 'metrics-servr'; did you mean 'metrics-server'? "
        f"(installed: {INSTALLED})",
    ]


def test_version_names_the_installed_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == f"fluxplane {metadata.version('fluxplane')}\n"


def test_the_parser_is_built_from_the_command_modules_and_only_writers_lock_the_project() -> None:
    # GIVEN the CLI's parser
    subcommands = next(action for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction))
    # THEN its commands are the modules' names, in order, each once
    names = [name for command in COMMANDS for name in command.NAMES]
    assert list(subcommands.choices) == names
    assert len(set(names)) == len(names)
    # AND the commands that write the project's definition or dist/ run under its lock
    locked = [name for command in COMMANDS if command.LOCKS_PROJECT for name in command.NAMES]
    assert locked == ["synth", "seal", "sealing-key", "new-cluster", "remove-cluster", "onboard-app", "offboard-app"]


def _loaded_with_the_cli(packages: tuple[str, ...], modules: tuple[str, ...] = ()) -> list[str]:
    """The modules of ``packages``, and the ``modules``, that a fresh interpreter has loaded once it imports the CLI
    (every command module with it)."""
    code = (
        "import sys, fluxplane.cli; "
        f"print('\\n'.join(sorted(name for name in sys.modules if name.split('.')[0] in {packages!r} "
        f"or name in {modules!r})))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return result.stdout.split()


def test_importing_the_cli_loads_no_model_and_no_yaml_reader() -> None:
    # GIVEN a fresh interpreter WHEN it imports the CLI, every command module with it
    loaded = _loaded_with_the_cli(
        ("pydantic", "yaml"), ("fluxplane.config", "fluxplane.constructs", "fluxplane.synth", "fluxplane.validate")
    )
    # THEN nothing a command needs only when it runs is loaded: `fluxplane --help`, and a command's own --help,
    # answer at once; each command imports the definition's models, the synth and the validator when it runs
    assert loaded == []


def test_importing_the_cli_starts_no_javascript_runtime() -> None:
    # GIVEN a fresh interpreter WHEN it imports the CLI, every command module with it
    loaded = _loaded_with_the_cli(("jsii", "cdk8s", "constructs"))
    # THEN neither cdk8s nor jsii is loaded: `fluxplane --help` and validate never wait for Node.js
    assert loaded == []


def test_importing_the_cli_loads_neither_cryptography_nor_an_http_client() -> None:
    # GIVEN a fresh interpreter WHEN it imports the CLI, every command module with it
    loaded = _loaded_with_the_cli(("cryptography", "ssl", "http"), ("urllib.request",))
    # THEN what only seal, sealing-key and init's pin use is loaded when they run: synth, validate, diff and plan start
    # without it
    assert loaded == []


def test_the_program_spares_the_collector_s_final_pass_and_main_in_process_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tomllib

    from fluxplane import cli

    # GIVEN the program's entry, as the console script and `python -m fluxplane` run it
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["fluxplane"] == "fluxplane.cli:entry"
    assert "sys.exit(entry())" in (ROOT / "src/fluxplane/__main__.py").read_text()
    frozen: list[bool] = []
    monkeypatch.setattr(cli.gc, "freeze", lambda: frozen.append(True))
    # WHEN main runs in a process that goes on (a test, a library user) THEN nothing is frozen
    assert main(["packs", "list"]) == 0
    assert frozen == []
    # AND WHEN the program runs a command THEN its code is the program's, with what it built frozen for the exit
    monkeypatch.setattr(cli, "main", lambda argv=None: 3)
    assert cli.entry() == 3
    assert frozen == [True]
