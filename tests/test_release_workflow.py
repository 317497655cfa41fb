"""The release workflow (.github/workflows/release.yml): a tag vX.Y.Z builds, checks and publishes that version.

It cannot run here; these tests read it and hold what a release depends on. tests/integration/test_release.py
builds the sdist and the wheel from a tag the way it does.
"""

from __future__ import annotations

from typing import Any

import yaml

from tests.conftest import ROOT
from tests.support.workflows import assert_every_action_runs_on_node_24

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
#: Where the workflow builds the files and every later job reads them.
OUT = "build/release"


def _workflow() -> dict[Any, Any]:
    loaded = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(loaded, dict)
    return loaded


def _steps(job: str) -> list[dict[str, Any]]:
    return list(_workflow()["jobs"][job]["steps"])


def _uses(job: str, action: str) -> dict[str, Any]:
    [step] = [step for step in _steps(job) if str(step.get("uses", "")).split("@")[0] == action]
    return step


def _runs(job: str) -> str:
    return "\n".join(str(step.get("run", "")) for step in _steps(job))


def test_a_version_tag_and_nothing_else_starts_a_release() -> None:
    workflow = _workflow()
    assert workflow[True] == {"push": {"tags": ["v*"]}}  # PyYAML reads the key `on` as True
    assert workflow["permissions"] == {"contents": "read"}


def test_the_build_reads_the_version_from_the_tag_and_checks_the_files_are_that_version() -> None:
    # GIVEN the build job
    # THEN the checkout has the tags (setuptools-scm reads the version from them)
    assert _uses("build", "actions/checkout")["with"]["fetch-depth"] == 0
    runs = _runs("build")
    # AND it builds the sdist and the wheel, never into dist/ (the example fleet's Flux repository)
    assert f"python -m build --outdir {OUT}" in runs
    assert not OUT.startswith("dist")
    # AND checks their metadata, and that both are named after the tag's version
    assert f"twine check --strict {OUT}/*" in runs
    assert 'version="${GITHUB_REF_NAME#v}"' in runs
    assert f'"{OUT}/fluxplane-${{version}}.tar.gz" "{OUT}/fluxplane-${{version}}-py3-none-any.whl"' in runs
    assert _uses("build", "actions/upload-artifact")["with"]["path"] == f"{OUT}/"


def test_pypi_trusted_publishing_gets_the_built_files_and_the_only_id_token() -> None:
    jobs = _workflow()["jobs"]
    publish = jobs["publish"]
    assert publish["needs"] == "build"
    assert publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    assert _uses("publish", "actions/download-artifact")["with"] == {"name": "distributions", "path": f"{OUT}/"}
    step = _uses("publish", "pypa/gh-action-pypi-publish")
    assert step["uses"] == "pypa/gh-action-pypi-publish@release/v1"
    assert step["with"] == {"packages-dir": f"{OUT}/"}
    # no password, no token: PyPI trusts the workflow; and no other job may ask for an id token
    assert "password" not in step["with"]
    assert [name for name, job in jobs.items() if "id-token" in job.get("permissions", {})] == ["publish"]


def test_the_github_release_of_the_tag_gets_the_same_files_once_pypi_has_them() -> None:
    release = _workflow()["jobs"]["github-release"]
    assert release["needs"] == "publish"
    assert release["permissions"] == {"contents": "write"}
    assert _uses("github-release", "actions/download-artifact")["with"]["path"] == f"{OUT}/"
    run = " ".join(_runs("github-release").split())
    assert run.startswith(f'gh release create "$GITHUB_REF_NAME" {OUT}/* ')
    assert "--verify-tag" in run


def test_every_action_of_the_release_runs_on_node_24() -> None:
    # THEN no step of the release runs an action on the deprecated Node.js 20
    assert_every_action_runs_on_node_24(_workflow())
