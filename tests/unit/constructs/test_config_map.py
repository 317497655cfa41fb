"""ConfigMap (v1)."""

from __future__ import annotations

import pytest

from fluxplane.constructs import ConfigMap, Root
from fluxplane.errors import ConstructError


def test_config_map_data_is_written_sorted_by_key() -> None:
    # GIVEN data given out of order
    config_map = ConfigMap(
        Root(), "cm", {"name": "vars", "namespace": "flux-system", "data": {"region": "eu", "cluster": "hub"}}
    )

    # WHEN it is rendered
    doc = config_map.to_dict()

    # THEN data sits at the top level, after metadata, keys sorted
    assert doc == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "vars", "namespace": "flux-system"},
        "data": {"cluster": "hub", "region": "eu"},
    }
    assert list(doc) == ["apiVersion", "kind", "metadata", "data"]
    assert list(doc["data"]) == ["cluster", "region"]


@pytest.mark.parametrize("data", [None, {}])
def test_config_map_without_data_has_no_data_key(data: dict[str, str] | None) -> None:
    # GIVEN / WHEN a ConfigMap with no data
    doc = ConfigMap(Root(), "cm", {"name": "vars", "namespace": "apps", "data": data}).to_dict()

    # THEN no data key is written
    assert doc == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "vars", "namespace": "apps"}}


def test_multi_line_values_are_kept() -> None:
    # GIVEN a value with several lines
    doc = ConfigMap(Root(), "cm", {"name": "vars", "namespace": "apps", "data": {"app.yaml": "a: 1\nb: 2\n"}}).to_dict()

    # WHEN / THEN it is kept unchanged
    assert doc["data"] == {"app.yaml": "a: 1\nb: 2\n"}


def test_data_values_must_be_strings() -> None:
    # GIVEN / WHEN / THEN a number is refused (Kubernetes ConfigMap data is string to string), naming the key
    with pytest.raises(
        ConstructError, match=r"^root/cm: ConfigMapProps\.data\.replicas: input should be a valid string$"
    ):
        ConfigMap(Root(), "cm", {"name": "vars", "namespace": "apps", "data": {"replicas": 3}})


def test_config_map_needs_a_namespace() -> None:
    # GIVEN / WHEN / THEN a ConfigMap without namespace is refused
    with pytest.raises(ConstructError, match=r"^root/cm: ConfigMapProps\.namespace: field required$"):
        ConfigMap(Root(), "cm", {"name": "vars"})
