"""fluxplane's pytest plugin: fixtures for testing a fleet repository (see :mod:`fluxplane.testing`).

* ``fleet`` (session): the project's :class:`~fluxplane.testing.FleetUnderTest`, synthesized once;
* ``fleet_cluster``: a test that takes it runs once per cluster of the fleet, its name as the test id;
* ``yaml_snapshot``: syrupy's ``snapshot``, kept as one YAML file per test (``__snapshots__/<module>/<test>.yaml``),
  for ``fleet.summary(fleet_cluster)``; it needs syrupy;
* ``dist_file``: a test that takes it runs once per file the fleet synthesizes, its path as the test id;
* ``crd_dirs``: the CRD folders validate reads (``$FLUXPLANE_CRDS``, else the cache ``fluxplane schemas
  pull`` filled, else the CRDs fluxplane ships: there are always some).

The project folder is pytest's rootdir, or the ``fluxplane_root`` ini option (relative to it). The plugin
does nothing in a test session that uses none of these.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fluxplane.testing import FleetUnderTest, synthesize_fleet

_FLEET = pytest.StashKey[FleetUnderTest]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("fluxplane_root", "the fleet project folder, relative to the rootdir (default: the rootdir)")


def _fleet(config: pytest.Config) -> FleetUnderTest:
    found = config.stash.get(_FLEET, None)
    if found is None:
        root = config.rootpath / str(config.getini("fluxplane_root") or ".")
        found = config.stash[_FLEET] = synthesize_fleet(root)
    return found


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "fleet_cluster" in metafunc.fixturenames:
        clusters = _fleet(metafunc.config).clusters
        metafunc.parametrize("fleet_cluster", clusters, ids=clusters)
    if "dist_file" in metafunc.fixturenames:
        paths = sorted(_fleet(metafunc.config).files)
        metafunc.parametrize("dist_file", paths, ids=paths)


@pytest.fixture(scope="session")
def fleet(pytestconfig: pytest.Config) -> FleetUnderTest:
    """The project's fleet, synthesized in memory once per session."""
    return _fleet(pytestconfig)


@pytest.fixture
def yaml_snapshot(snapshot: Any) -> Any:
    """syrupy's ``snapshot``, kept as one YAML file per test: a mapping compares as the YAML it is written as."""
    # Imported here: syrupy is a fleet repository's test dependency, not fluxplane's.
    from fluxplane.testing.snapshot import YamlSnapshot

    return snapshot.use_extension(YamlSnapshot)


@pytest.fixture(scope="session")
def crd_dirs() -> list[Path]:
    """The CRD folders validate reads (see fluxplane.validate.schemas.default_crd_dirs)."""
    from fluxplane.validate.schemas import default_crd_dirs

    return default_crd_dirs()
