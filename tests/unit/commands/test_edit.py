"""fluxplane.commands.edit: four subcommands, the request each builds, and the lines they print."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.commands import edit
from tests.support.commands import parse


def test_four_commands_under_the_project_lock_each_with_dry_run() -> None:
    assert edit.NAMES == ("new-cluster", "remove-cluster", "onboard-app", "offboard-app")
    assert edit.LOCKS_PROJECT is True
    for argv in (
        ["new-cluster", "x", "--env", "e"],
        ["remove-cluster", "x"],
        ["onboard-app", "x"],
        ["offboard-app", "x"],
    ):
        args = parse(edit, *argv, "--dry-run")
        assert (args.command, args.dry_run, edit.stopped(args)) == (argv[0], True, None)


def test_onboard_app_dry_run_prints_the_diff_and_writes_nothing(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN onboard-app with its options, as a dry run
    args = parse(
        edit,
        "onboard-app",
        "shop",
        "--cluster",
        "staging-usw2",
        "--repo",
        "https://github.com/example-org/shop",
        "--path",
        "deploy",
        "--ref",
        "1.2.3",
        "--dry-run",
        root=example_project,
    )
    # WHEN run THEN the new file's diff, the note and the dry-run line print, and nothing is written
    assert edit.run(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["--- /dev/null", "+++ b/environments/apps/shop.yaml"]
    assert "+    tag: 1.2.3" in out
    assert out[-2:] == [
        "environments/apps/shop.yaml: onboarded app 'shop' (tag 1.2.3)",
        "dry run: nothing written",
    ]
    assert not (example_project / "environments" / "apps" / "shop.yaml").exists()
