"""Tests for fluxplane.config.merge: the deep-merge rule and where a merged value came from."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fluxplane.config.merge import Layer, Origins, deep_merge, format_loc, quoted

# -- deep_merge -----------------------------------------------------------------------------------


def test_deep_merge_merges_mappings_key_by_key_recursively() -> None:
    # GIVEN a base and an override that both set parts of a nested mapping
    base = {"flux": {"interval": "10m", "timeout": "5m"}, "region": "us-west-2"}
    override = {"flux": {"timeout": "9m", "retryInterval": "1m"}}

    # WHEN they are merged
    merged = deep_merge(base, override)

    # THEN keys from both survive, the override winning where both set a key
    assert merged == {
        "flux": {"interval": "10m", "timeout": "9m", "retryInterval": "1m"},
        "region": "us-west-2",
    }


def test_deep_merge_keeps_base_key_order_and_appends_new_keys() -> None:
    # GIVEN an override that sets an existing key and a new one
    base = {"a": 1, "b": 2}
    override = {"c": 3, "a": 10}

    # WHEN merged
    merged = deep_merge(base, override)

    # THEN the base's order is kept and the new key comes last
    assert list(merged) == ["a", "b", "c"]
    assert merged == {"a": 10, "b": 2, "c": 3}


def test_deep_merge_replaces_lists_whole() -> None:
    # GIVEN node groups in the base and a shorter list in the override
    base = {"nodeGroups": [{"name": "system", "minSize": 2}, {"name": "gpu"}]}
    override = {"nodeGroups": [{"name": "system", "maxSize": 9}]}

    # WHEN merged
    merged = deep_merge(base, override)

    # THEN the override's list is the result: no item-by-item merge, no concatenation
    assert merged == {"nodeGroups": [{"name": "system", "maxSize": 9}]}


def test_deep_merge_null_replaces_the_value_and_keeps_the_key() -> None:
    # GIVEN an override that sets a nested mapping to null
    base = {"packs": {"podinfo": {"replicas": 3}, "metrics-server": {}}}
    override = {"packs": {"podinfo": None}}

    # WHEN merged
    merged = deep_merge(base, override)

    # THEN the key stays with the value null (null does not delete)
    assert merged == {"packs": {"podinfo": None, "metrics-server": {}}}


@pytest.mark.parametrize(
    ("base", "override", "expected"),
    [
        ({"a": 1}, "scalar", "scalar"),
        ("scalar", {"a": 1}, {"a": 1}),
        ([1, 2], {"a": 1}, {"a": 1}),
        ({"a": {"b": 1}}, {"a": [1]}, {"a": [1]}),
        ({"a": [1]}, {"a": {"b": 1}}, {"a": {"b": 1}}),
        ({"a": 1}, None, None),
        (None, {"a": 1}, {"a": 1}),
        ({}, {}, {}),
    ],
)
def test_deep_merge_replaces_anything_that_is_not_two_mappings(base: Any, override: Any, expected: Any) -> None:
    # GIVEN values of different kinds WHEN merged THEN the override wins whole
    assert deep_merge(base, override) == expected


def test_deep_merge_does_not_change_its_inputs() -> None:
    # GIVEN nested inputs and copies of them
    base = {"a": {"b": {"c": 1}}, "l": [1]}
    override = {"a": {"b": {"d": 2}}, "l": [2]}
    base_before, override_before = copy.deepcopy(base), copy.deepcopy(override)

    # WHEN merged
    merged = deep_merge(base, override)

    # THEN the result is new and the inputs are as they were
    assert merged == {"a": {"b": {"c": 1, "d": 2}}, "l": [2]}
    assert base == base_before
    assert override == override_before


# -- format_loc -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        ((), "(top level)"),
        (("clusters",), "clusters"),
        (("clusters", 1, "nodeGroups", 0, "minSize"), "clusters[1].nodeGroups[0].minSize"),
        (("packs", "metrics-server", "replicas"), "packs.metrics-server.replicas"),
        ((0, "name"), "[0].name"),
        (("matrix", 0, 1), "matrix[0][1]"),
    ],
)
def test_format_loc_renders_the_field_path_users_read(loc: tuple[str | int, ...], expected: str) -> None:
    # GIVEN a location WHEN formatted THEN it reads like the YAML path
    assert format_loc(loc) == expected


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        (("nodeGroups", 0, "labels", "bad key!"), 'nodeGroups[0].labels["bad key!"]'),
        (("tags", "team\nowner"), 'tags["team\\nowner"]'),
        (("tags", "a\u2028b"), 'tags["a\\u2028b"]'),
        (("tags", ""), 'tags[""]'),
        (("tags", 'say "hi"'), 'tags["say \\"hi\\""]'),
        (("labels", "example.com/team"), "labels.example.com/team"),
        (("tags", "Équipe"), "tags.Équipe"),
    ],
)
def test_format_loc_quotes_keys_that_would_break_or_blur_the_path(loc: tuple[str | int, ...], expected: str) -> None:
    # GIVEN a mapping key with spaces, quotes or characters that do not print WHEN formatted
    # THEN it is quoted in brackets, so the path stays one unambiguous line
    assert format_loc(loc) == expected
    assert "\n" not in format_loc(loc) and "\u2028" not in format_loc(loc)


def test_format_loc_quotes_a_key_with_any_character_that_does_not_read_plainly() -> None:
    # GIVEN a key with each character of the Basic Multilingual Plane WHEN formatted
    # THEN it is quoted exactly when that character does not print, is a space, a quote, a bracket or a backslash
    for code in range(0x10000):
        char = chr(code)
        plain = char.isprintable() and not char.isspace() and char not in '"[]\\'
        assert (format_loc(("tags", f"a{char}")) == f"tags.a{char}") is plain, hex(code)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("plain", '"plain"'), ("a\nb", '"a\\nb"'), ("a\u2028b\u200bc", '"a\\u2028b\\u200bc"'), ("é", '"é"')],
)
def test_quoted_escapes_what_does_not_print(text: str, expected: str) -> None:
    assert quoted(text) == expected


def test_quoted_cuts_to_its_limit_inside_the_quotes() -> None:
    assert quoted("x" * 100, 80) == '"' + "x" * 76 + '..."'


# -- Origins --------------------------------------------------------------------------------------

BASE = "environments/base.yaml"
ENV = "environments/staging.yaml"


def _cluster_origins(entry: dict[str, Any], env_defaults: dict[str, Any], base_defaults: dict[str, Any]) -> Origins:
    """The layers the loader stacks for clusters[1] of staging.yaml: entry, env defaults, base defaults."""
    return Origins(
        [
            Layer(ENV, entry, prefix=("clusters", 1)),
            Layer(ENV, env_defaults, prefix=("clusterDefaults",)),
            Layer(BASE, base_defaults, prefix=("clusterDefaults",)),
        ]
    )


def test_origins_reports_a_value_from_the_cluster_entry_against_the_entry() -> None:
    # GIVEN a region set in the entry and in both defaults
    origins = _cluster_origins({"region": "x"}, {"region": "y"}, {"region": "z"})

    # WHEN asked where the region came from
    # THEN the cluster's own entry wins (it is the most specific layer)
    assert origins.where(("region",)) == (ENV, "clusters[1].region")
    assert origins.describe(("region",)) == "environments/staging.yaml: clusters[1].region"


def test_origins_reports_a_value_from_environment_defaults_against_them() -> None:
    # GIVEN a region only in the environment's and the base's clusterDefaults
    origins = _cluster_origins({"name": "a"}, {"region": "y"}, {"region": "z"})

    # WHEN / THEN the environment's clusterDefaults wrote it
    assert origins.describe(("region",)) == "environments/staging.yaml: clusterDefaults.region"


def test_origins_reports_a_value_from_base_defaults_against_base_yaml() -> None:
    # GIVEN a region only in the base's clusterDefaults
    origins = _cluster_origins({"name": "a"}, {}, {"region": "z"})

    # WHEN / THEN base.yaml wrote it
    assert origins.describe(("region",)) == "environments/base.yaml: clusterDefaults.region"


def test_origins_prefers_the_layer_holding_the_longest_part_of_the_location() -> None:
    # GIVEN node groups from the base's defaults and only a name in the entry
    origins = _cluster_origins({"name": "a"}, {}, {"nodeGroups": [{"name": "system", "minSize": 9}]})

    # WHEN asked about a field deep inside the base's node group
    # THEN base.yaml is reported, with the path inside base.yaml
    assert origins.describe(("nodeGroups", 0, "minSize")) == (
        "environments/base.yaml: clusterDefaults.nodeGroups[0].minSize"
    )


def test_origins_on_a_tie_reports_the_more_specific_layer() -> None:
    # GIVEN both the entry and the base defaults have node groups, the entry's replacing the base's
    origins = _cluster_origins({"nodeGroups": [{"name": "B"}]}, {}, {"nodeGroups": [{"name": "system"}]})

    # WHEN / THEN the entry, which overrides, is reported
    assert origins.describe(("nodeGroups", 0, "name")) == "environments/staging.yaml: clusters[1].nodeGroups[0].name"


def test_origins_reports_a_missing_field_against_the_most_specific_layer() -> None:
    # GIVEN no layer sets the region
    origins = _cluster_origins({"name": "a"}, {}, {})

    # WHEN / THEN the cluster's own entry is where the field belongs
    assert origins.describe(("region",)) == "environments/staging.yaml: clusters[1].region"


def test_origins_follows_list_indexes_only_when_the_item_exists() -> None:
    # GIVEN the entry has one node group and the base defaults two
    origins = _cluster_origins(
        {"nodeGroups": [{"name": "a"}]}, {}, {"nodeGroups": [{"name": "x"}, {"name": "y", "minSize": 1}]}
    )

    # WHEN asked about the second node group's minSize
    # THEN the base holds more of the location (nodeGroups, 1, minSize) than the entry (nodeGroups)
    assert origins.where(("nodeGroups", 1, "minSize")) == (BASE, "clusterDefaults.nodeGroups[1].minSize")


def test_origins_maps_a_mounted_layer_into_its_file_prefix() -> None:
    # GIVEN a packs section mounted at ("packs",) in the merged document
    origins = Origins([Layer(ENV, {"podinfo": {"replicas": 0}}, mount=("packs",), prefix=("clusters", 0, "packs"))])

    # WHEN / THEN locations under the mount map into the file's own path
    assert origins.where(("packs", "podinfo", "replicas")) == (ENV, "clusters[0].packs.podinfo.replicas")


def test_origins_ignores_layers_mounted_elsewhere_and_falls_back_to_the_bare_path() -> None:
    # GIVEN a single layer mounted at ("packs",)
    origins = Origins([Layer(ENV, {"podinfo": {}}, mount=("packs",))])

    # WHEN asked about a location outside the mount
    # THEN no file is known and only the field path is given
    assert origins.where(("clusters", 0)) == ("", "clusters[0]")
    assert origins.describe(("clusters", 0)) == "clusters[0]"


def test_origins_with_no_layers_describes_the_bare_path() -> None:
    # GIVEN no layers WHEN / THEN only the path is described
    assert Origins([]).describe(("a", 1)) == "a[1]"


def test_origins_added_together_keep_the_left_layers_more_specific() -> None:
    # GIVEN a cluster's packs and the base's packs as two Origins
    cluster = Origins([Layer(ENV, {"podinfo": {"replicas": 2}}, prefix=("clusters", 0, "packs"))])
    base = Origins([Layer(BASE, {"podinfo": {"replicas": 3}, "metrics-server": {}}, prefix=("packs",))])

    # WHEN added
    both = cluster + base

    # THEN the left side wins ties and the right side still answers for what only it holds
    assert both.describe(("podinfo", "replicas")) == "environments/staging.yaml: clusters[0].packs.podinfo.replicas"
    assert both.describe(("metrics-server",)) == "environments/base.yaml: packs.metrics-server"


def test_origins_describes_the_top_level_of_a_file() -> None:
    # GIVEN a whole-file layer WHEN asked about the empty location THEN the file's top level is named
    origins = Origins([Layer(ENV, {"clusters": []})])
    assert origins.describe(()) == "environments/staging.yaml: (top level)"
