"""The hub's chain for each workload cluster (fluxplane.charts.spokes)."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.charts.spokes import kube_config


@pytest.mark.parametrize(
    ("access", "reference"),
    [
        ("kubeconfig", {"secretRef": {"name": "a-kubeconfig", "key": "value"}}),
        ("keyless", {"configMapRef": {"name": "a-hub-access"}}),
    ],
)
def test_flux_reaches_a_cluster_by_its_secret_or_its_config_map(access: str, reference: dict[str, Any]) -> None:
    assert kube_config("a", access).dump() == reference
