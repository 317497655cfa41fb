"""The CI example for fleet repositories and the pre-commit hooks run real fluxplane commands."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.cli import build_parser
from tests.conftest import ROOT
from tests.support.workflows import (
    assert_every_action_runs_on_node_24,
    assert_pull_requests_restore_the_main_branch_s_cache_and_never_save,
)

WORKFLOW = ROOT / "examples" / "ci" / ".github" / "workflows" / "fluxplane.yaml"
PRE_COMMIT_EXAMPLE = ROOT / "examples" / "ci" / ".pre-commit-config.yaml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"

#: Values GitHub fills in for a pull request, enough to read the commands.
EXPRESSIONS = {
    "github.base_ref": "main",
    "github.event.pull_request.number": "42",
}


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _expand(command: str) -> str:
    return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", lambda match: EXPRESSIONS[match.group(1)], command)


def _fluxplane_args(command: str) -> list[str]:
    words = shlex.split(_expand(command))
    assert Path(words[0]).name == "fluxplane", command
    return words[1 : words.index(">")] if ">" in words else words[1:]


def _steps() -> list[dict[str, Any]]:
    return list(_load(WORKFLOW)["jobs"]["check"]["steps"])


def _run_lines() -> list[str]:
    return [line.strip() for step in _steps() for line in str(step.get("run", "")).splitlines() if line.strip()]


def test_workflow_runs_on_pull_requests_with_the_history_diff_needs() -> None:
    # GIVEN the example workflow
    workflow = _load(WORKFLOW)
    # THEN it runs on pull requests, reads the repository, and may write only pull-request comments
    assert "pull_request" in workflow[True]  # PyYAML reads the key `on` as True
    assert workflow["permissions"] == {"contents": "read"}
    assert workflow["jobs"]["check"]["permissions"] == {"contents": "read", "pull-requests": "write"}
    # AND the checkout has the whole history, so the base commit can be synthesized
    checkout = next(step for step in _steps() if str(step.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0


def test_workflow_checks_stale_then_validates_then_diffs_then_plans_in_that_order() -> None:
    # GIVEN the fluxplane commands of the workflow's steps
    commands = [_fluxplane_args(line) for line in _run_lines() if line.startswith(".venv/bin/fluxplane")]
    # THEN setup comes first, and the commands are the stale check, validate (against the CRDs fluxplane ships),
    # the diff (which ends with the plan) and the plan's gate on data-bearing resources
    assert _run_lines()[0] == "make setup"
    assert [args[0] for args in commands] == ["synth", "validate", "diff", "site", "site", "plan"]
    assert commands[0] == ["synth", "--check"]
    assert commands[2] == ["diff", "--base", "origin/main", "--format", "markdown"]
    # AND the fleet pages, a pull request's with its change, before the gate can stop the job
    assert commands[3] == ["site", "site/fleet", "--base", "origin/main"]
    assert commands[4] == ["site", "site/fleet"]
    assert commands[5] == ["plan", "--base", "origin/main", "--fail-on", "data"]


@pytest.mark.parametrize(
    "line", [line for line in _run_lines() if line.startswith(".venv/bin/fluxplane")], ids=lambda line: line[:40]
)
def test_each_fluxplane_command_of_the_workflow_is_accepted_by_the_cli(line: str) -> None:
    # GIVEN a command the workflow runs WHEN the CLI parses it THEN it is a valid invocation
    args = build_parser().parse_args(_fluxplane_args(line))
    assert args.command in {"synth", "validate", "diff", "site", "plan"}


def test_the_diff_is_posted_as_one_comment_edited_on_every_push() -> None:
    # GIVEN the comment step
    comment = next(step for step in _steps() if "gh pr comment" in str(step.get("run", "")))
    link, post = _expand(comment["run"]).strip().splitlines()
    words = shlex.split(post)
    # THEN it edits the job's last comment (creating it the first time) from the Markdown diff
    assert words[:4] == ["gh", "pr", "comment", "42"]
    assert {"--edit-last", "--create-if-none"} <= set(words)
    assert words[words.index("--body-file") + 1] == "diff.md"
    assert comment["env"] == {"GH_TOKEN": "${{ github.token }}", "PAGES": "${{ steps.pages.outputs.artifact-url }}"}
    # AND the comment ends with the link to this run's fleet pages, which the upload step before it gives
    assert link.endswith('"$PAGES" >> diff.md')
    steps = _steps()
    upload = next(index for index, step in enumerate(steps) if step.get("id") == "pages")
    assert steps[upload]["uses"] == "actions/upload-artifact@v6"
    assert upload < steps.index(comment)
    # AND the diff step wrote that file
    assert any("--format markdown > diff.md" in line for line in _run_lines())


def _hook_args(entry: str, args: list[str]) -> list[str]:
    words = shlex.split(entry)
    assert Path(words[0]).name == "fluxplane", entry
    return words[1:] + args


@pytest.mark.parametrize("path", [HOOKS, PRE_COMMIT_EXAMPLE], ids=lambda path: path.name)
def test_pre_commit_hooks_run_valid_commands_on_the_whole_tree(path: Path) -> None:
    # GIVEN the hook definitions (the published ones, and the example's local ones)
    data = _load(path)
    hooks = data if isinstance(data, list) else [hook for repo in data["repos"] for hook in repo["hooks"]]
    ids = [hook["id"] for hook in hooks]
    assert len(ids) == len(set(ids))
    for hook in hooks:
        # THEN each runs a command the CLI accepts, once for the whole tree, when its files change
        parsed = build_parser().parse_args(_hook_args(hook["entry"], hook.get("args", [])))
        assert parsed.command in {"synth", "validate"}
        assert hook["pass_filenames"] is False
        assert re.match(hook["files"], "dist/platform/clusters/hub/kustomization.yaml") or re.match(
            hook["files"], "environments/base.yaml"
        )


def test_published_hooks_include_the_stale_check_and_validate() -> None:
    ids = {hook["id"] for hook in _load(HOOKS)}
    assert ids == {"fluxplane-synth", "fluxplane-synth-check", "fluxplane-validate"}


def test_pull_requests_restore_the_main_branch_s_cache_and_never_save() -> None:
    # GIVEN the example workflow
    assert_pull_requests_restore_the_main_branch_s_cache_and_never_save(_steps())


def test_every_action_of_the_workflow_runs_on_node_24() -> None:
    # THEN no step of the example's workflow runs an action on the deprecated Node.js 20
    assert_every_action_runs_on_node_24(yaml.safe_load(WORKFLOW.read_text()))
