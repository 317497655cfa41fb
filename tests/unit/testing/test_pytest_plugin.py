"""fluxplane.testing.pytest_plugin: a test per cluster of the fleet, and its snapshot kept as a YAML file that the
first run records (with the new repository's --snapshot-update-new-only) and later runs compare."""

from __future__ import annotations

import json

import pytest

from fluxplane.core.codec import dump_value
from fluxplane.testing.summary import summarize
from tests.support.trees import tree

pytest_plugins = ["pytester"]

#: The fleet under test, as the plugin would synthesize it: the tree of test_summary, read from fleet.json.
CONFTEST = """
import json
from pathlib import Path

from fluxplane.testing import FleetUnderTest
from fluxplane.testing.pytest_plugin import _FLEET


def pytest_configure(config):
    files = json.loads(Path(config.rootpath, "fleet.json").read_text())
    config.stash[_FLEET] = FleetUnderTest(config.rootpath, files)
"""

TEST = """
def test_what_each_cluster_runs(fleet, fleet_cluster, yaml_snapshot):
    assert fleet.summary(fleet_cluster) == yaml_snapshot
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_fleet=TEST)
    (pytester.path / "fleet.json").write_text(json.dumps(tree()))
    return pytester


def test_the_first_run_records_a_yaml_snapshot_per_cluster_and_the_next_compares(project: pytest.Pytester) -> None:
    # WHEN the tests run the first time, as a new fleet repository runs them
    first = project.runpytest("-p", "no:cacheprovider", "--snapshot-update-new-only")
    # THEN there is one test per cluster, and each passes, its snapshot recorded and said to be
    first.assert_outcomes(passed=3)
    assert "3 snapshots generated" in first.stdout.str()
    folder = project.path / "__snapshots__" / "test_fleet"
    summaries = summarize(tree())
    assert sorted(path.name for path in folder.iterdir()) == [
        f"test_what_each_cluster_runs[{cluster}].yaml" for cluster in ("a", "b", "hub")
    ]
    assert (folder / "test_what_each_cluster_runs[hub].yaml").read_text() == dump_value(summaries["hub"])
    # AND the next run compares with them
    second = project.runpytest("-p", "no:cacheprovider", "--snapshot-update-new-only")
    second.assert_outcomes(passed=3)
    assert "3 snapshots passed" in second.stdout.str()


def test_a_cluster_that_runs_something_else_fails_until_the_change_is_accepted(project: pytest.Pytester) -> None:
    project.runpytest("-p", "no:cacheprovider", "--snapshot-update-new-only").assert_outcomes(passed=3)
    # GIVEN a new chart version on the hub
    files = tree()
    files["platform/addons/addons.yaml"] = files["platform/addons/addons.yaml"].replace("3.13.1", "3.14.0")
    (project.path / "fleet.json").write_text(json.dumps(files))
    # WHEN the tests run THEN the hub's fails, showing the line that changed, and the others pass
    changed = project.runpytest("-p", "no:cacheprovider", "--snapshot-update-new-only")
    changed.assert_outcomes(passed=2, failed=1)
    changed.stdout.fnmatch_lines(["*test_what_each_cluster_runs?hub?*", "*metrics-server 3.14.0*"])
    # AND once accepted, they pass
    project.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=3)
    project.runpytest("-p", "no:cacheprovider", "--snapshot-update-new-only").assert_outcomes(passed=3)


def test_without_the_option_a_missing_snapshot_fails(project: pytest.Pytester) -> None:
    # syrupy's own default, which the new repository's pyproject.toml (addopts) changes
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=3)


def test_dist_file_runs_a_test_per_synthesized_file(project: pytest.Pytester) -> None:
    project.makepyfile(test_files="def test_each(fleet, dist_file):\n    assert dist_file in fleet.files\n")
    result = project.runpytest("-p", "no:cacheprovider", "test_files.py", "-v")
    result.assert_outcomes(passed=len(tree()))
    result.stdout.fnmatch_lines(["*test_each?platform/clusters/hub/kustomization.yaml? PASSED*"])
