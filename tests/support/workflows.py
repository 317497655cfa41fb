"""What the CI workflows (the example's, and the one ``fluxplane init`` writes) must do with fluxplane's caches."""

from __future__ import annotations

from typing import Any


def cache_steps(steps: list[dict[str, Any]]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The workflow's cache steps: the command dropping a committed cache, the pull request's restore, the main
    branch's restore-and-save; each once, in that order, before the first fluxplane command."""
    runs = [str(step.get("run", "")).strip() for step in steps]
    first = next(index for index, run in enumerate(runs) if run.startswith(".venv/bin/fluxplane"))
    drop = runs.index("rm -rf .fluxplane-cache")
    uses = [str(step.get("uses", "")) for step in steps]
    restore, save = uses.index("actions/cache/restore@v5"), uses.index("actions/cache@v5")
    assert drop < restore < first and drop < save < first
    return runs[drop], steps[restore], steps[save]


def assert_pull_requests_restore_the_main_branch_s_cache_and_never_save(steps: list[dict[str, Any]]) -> None:
    _, restore, save = cache_steps(steps)
    # THEN a pull request's run restores (never saves) the caches and the key that signs them
    assert restore["if"] == "github.event_name == 'pull_request'"
    assert save["if"] == "github.event_name != 'pull_request'"
    for step in (restore, save):
        assert step["with"]["path"].split() == [".fluxplane-cache", "~/.cache/fluxplane"]
        assert step["with"]["restore-keys"] == "fluxplane-"
    assert restore["with"]["key"] == "fluxplane-${{ github.event.pull_request.base.sha }}"
    assert save["with"]["key"] == "fluxplane-${{ github.sha }}"


#: The first major version of each action the workflows use that runs on Node.js 24 (``runs.using: node24``):
#: GitHub runs Node.js 20 actions on Node.js 24 by force since June 2026, with a deprecation warning on each run.
NODE_24 = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/cache": 5,
    "actions/cache/restore": 5,
    "actions/upload-artifact": 6,
    "actions/download-artifact": 7,
}


def assert_every_action_runs_on_node_24(workflow: dict[Any, Any]) -> None:
    """Each ``uses:`` of ``workflow``'s jobs is a GitHub action at a major that runs on Node.js 24, or an action of
    another owner pinned to a named ref."""
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            if "uses" not in step:
                continue
            action, _, ref = str(step["uses"]).partition("@")
            if not action.startswith("actions/"):
                assert ref, f"{action} is not pinned"
                continue
            assert action in NODE_24, f"{action}: which major runs on Node.js 24 is not known here"
            assert ref.startswith("v") and int(ref[1:].split(".")[0]) >= NODE_24[action], (
                f"{action}@{ref} runs on Node.js 20 (Node.js 24 from v{NODE_24[action]})"
            )
