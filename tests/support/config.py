"""What the loader refuses in a definition, for the tests of its messages; and the app definitions' fleet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError
from tests.conftest import FleetWriter


def problems_of(root: Path) -> list[str]:
    """The lines of the ConfigError loading ``root``'s environments/ raises; a definition that loads fails the test."""
    with pytest.raises(ConfigError) as caught:
        load_fleet(root)
    return list(caught.value.problems)


#: A fleet of three workload clusters in two environments, for the app definitions' tests.
ENVS: dict[str, Any] = {
    "staging": {"clusters": [{"name": "staging-1", "region": "us-west-2"}]},
    "production": {"clusters": [{"name": "prod-1", "region": "us-west-2"}, {"name": "prod-2", "region": "us-east-1"}]},
}


#: One app's definition, placed on staging-1.
APP: dict[str, Any] = {
    "team": "@example-org/shop",
    "repository": {"url": "https://github.com/example-org/shop.git", "ref": {"tag": "v1.2.0"}},
    "clusters": ["staging-1"],
}


def write_apps(project: Path, apps: dict[str, Any]) -> None:
    """Each of ``apps`` at environments/apps/<name>.yaml: a string as-is, else as YAML."""
    folder = project / "environments" / "apps"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in apps.items():
        text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
        (folder / f"{name}.yaml").write_text(text)


def load(write_fleet: FleetWriter, apps: dict[str, Any]) -> Any:
    """The fleet of ``ENVS`` with ``apps``, loaded."""
    project = write_fleet(envs=ENVS)
    write_apps(project, apps)
    return load_fleet(project)


def problems(write_fleet: FleetWriter, apps: dict[str, Any]) -> list[str]:
    """The lines of the ConfigError loading the fleet of ``ENVS`` with ``apps`` raises."""
    project = write_fleet(envs=ENVS)
    write_apps(project, apps)
    return problems_of(project)
