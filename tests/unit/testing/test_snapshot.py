"""YamlSnapshot (fluxplane.testing.snapshot): what the pytest plugin's yaml_snapshot writes, one YAML file per test."""

from __future__ import annotations

from fluxplane.testing.snapshot import YamlSnapshot


def test_a_text_is_kept_as_it_is() -> None:
    assert YamlSnapshot().serialize("kind: ConfigMap\n# a comment stays\n") == "kind: ConfigMap\n# a comment stays\n"


def test_anything_else_is_fluxplane_s_yaml_with_its_keys_in_their_order() -> None:
    # GIVEN a mapping whose keys are not sorted WHEN serialized THEN block style, keys as given
    assert YamlSnapshot().serialize({"kind": "ConfigMap", "data": {"b": "1", "a": ["x"]}}) == (
        "kind: ConfigMap\ndata:\n  b: '1'\n  a:\n  - x\n"
    )


def test_a_snapshot_is_a_yaml_file() -> None:
    assert YamlSnapshot.file_extension == "yaml"
