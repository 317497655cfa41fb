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
    restore, save = uses.index("actions/cache/restore@v4"), uses.index("actions/cache@v4")
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
