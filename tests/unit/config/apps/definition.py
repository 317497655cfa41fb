"""What the app tests share: a fleet of three workload clusters, one app's definition, and loading
them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError
from tests.conftest import FleetWriter

ENVS: dict[str, Any] = {
    "staging": {"clusters": [{"name": "staging-1", "region": "us-west-2"}]},
    "production": {"clusters": [{"name": "prod-1", "region": "us-west-2"}, {"name": "prod-2", "region": "us-east-1"}]},
}


APP: dict[str, Any] = {
    "team": "@example-org/shop",
    "repository": {"url": "https://github.com/example-org/shop.git", "ref": {"tag": "v1.2.0"}},
    "clusters": ["staging-1"],
}


def write_apps(project: Path, apps: dict[str, Any]) -> None:
    folder = project / "environments" / "apps"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in apps.items():
        text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
        (folder / f"{name}.yaml").write_text(text)


def load(write_fleet: FleetWriter, apps: dict[str, Any]) -> Any:
    project = write_fleet(envs=ENVS)
    write_apps(project, apps)
    return load_fleet(project)


def problems(write_fleet: FleetWriter, apps: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(write_fleet, apps)
    return list(caught.value.problems)
