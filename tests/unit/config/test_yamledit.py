"""Text edits of definition files: comments, blank lines and key order survive; only the item changes."""

from __future__ import annotations

import textwrap

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from fluxplane.config.yamledit import YamlText, render_mapping, scalar
from fluxplane.errors import ConfigError

ENVIRONMENT = textwrap.dedent(
    """\
    # Production: two regions.
    packs:
      podinfo:
        replicas: 3 # scaled out

    clusters:
      # The first region.
      - name: production-usw2
      - name: production-use1
        region: us-east-1
        # Reached keyless.
        hubAccess: keyless
        packs:
          podinfo:
            replicas: 4
          # more packs later
    """
)

NEW = [("name", "production-euw1"), ("region", "eu-west-1"), ("network", [("availabilityZones", 3)])]


def edited(text: str, change: str, *args: object) -> str:
    document = YamlText(text, "environments/production.yaml")
    getattr(document, change)(*args)
    return document.text


def test_append_goes_after_the_last_item_and_its_inner_comments() -> None:
    text = edited(ENVIRONMENT, "append_mapping_item", "clusters", NEW)
    assert text == ENVIRONMENT + (
        "  - name: production-euw1\n    region: eu-west-1\n    network:\n      availabilityZones: 3\n"
    )
    assert yaml.safe_load(text)["clusters"][2] == {
        "name": "production-euw1",
        "region": "eu-west-1",
        "network": {"availabilityZones": 3},
    }


@pytest.mark.parametrize("index", [0, 1, 2])
def test_append_then_remove_gives_back_the_text(index: int) -> None:
    base = ENVIRONMENT.replace("clusters:\n", "clusters:\n" + "  - name: extra\n" * index) if index else ENVIRONMENT
    added = edited(base, "append_mapping_item", "clusters", NEW)
    count = len(yaml.safe_load(added)["clusters"])
    assert edited(added, "remove_item", "clusters", count - 1) == base


def test_remove_takes_the_comment_above_the_item_and_keeps_the_rest() -> None:
    text = edited(ENVIRONMENT, "remove_item", "clusters", 0)
    assert "# The first region." not in text
    assert "production-usw2" not in text
    assert "# Production: two regions." in text and "replicas: 3 # scaled out" in text
    assert yaml.safe_load(text)["clusters"] == yaml.safe_load(ENVIRONMENT)["clusters"][1:]


def test_remove_a_middle_item_with_blank_lines_leaves_one_blank_line() -> None:
    text = "clusters:\n  - name: a\n\n  - name: b\n\n  - name: c\n"
    assert edited(text, "remove_item", "clusters", 1) == "clusters:\n  - name: a\n\n  - name: c\n"


def test_removing_the_only_item_leaves_an_empty_list_that_append_fills_again() -> None:
    text = "packs: {}\nclusters:  # one for now\n  - name: a\n    region: us-east-1\n"
    emptied = edited(text, "remove_item", "clusters", 0)
    assert emptied == "packs: {}\nclusters: []\n"
    again = edited(emptied, "append_mapping_item", "clusters", [("name", "b")])
    assert again == "packs: {}\nclusters:\n  - name: b\n"
    assert edited(again, "remove_item", "clusters", 0) == emptied


def test_append_creates_the_key_when_missing_and_keeps_an_inline_comment() -> None:
    assert edited("packs: {}\n", "append_mapping_item", "clusters", [("name", "a")]) == (
        "packs: {}\n\nclusters:\n  - name: a\n"
    )
    assert edited("clusters: [] # soon\n", "append_mapping_item", "clusters", [("name", "a")]) == (
        "clusters:  # soon\n  - name: a\n"
    )


def test_append_follows_the_file_indentation() -> None:
    text = "clusters:\n- name: a\n  region: us-east-1\n"
    assert edited(text, "append_mapping_item", "clusters", [("name", "b"), ("region", "eu-west-1")]) == (
        text + "- name: b\n  region: eu-west-1\n"
    )
    wide = "clusters:\n    -   name: a\n"
    assert edited(wide, "append_mapping_item", "clusters", [("name", "b")]) == wide + "    -   name: b\n"


def test_a_flow_list_of_mappings_is_refused_with_the_key() -> None:
    with pytest.raises(ConfigError, match=r"^environments/production.yaml: clusters: written as a flow list"):
        edited("clusters: [{name: a}]\n", "append_mapping_item", "clusters", [("name", "b")])


def test_a_list_key_that_is_not_a_list_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"clusters: expected a list, found mapping"):
        edited("clusters: {a: 1}\n", "append_mapping_item", "clusters", [("name", "b")])


@pytest.mark.parametrize(
    ("text", "names", "expected"),
    [
        ("path: deploy\nclusters: [a]  # c\n", ["a", "b"], "path: deploy\nclusters: [a, b]  # c\n"),
        ("path: deploy\nclusters: [a, b]\n", ["b"], "path: deploy\nclusters: [b]\n"),
        ("path: deploy\n# where\nclusters: [a]\naws: {}\n", [], "path: deploy\naws: {}\n"),
        ("clusters:\n  - a\n  # b next\n  - b\npath: x\n", ["a"], "clusters:\n  - a\npath: x\n"),
        ("clusters:\n  - a\npath: x\n", ["a", "c"], "clusters:\n  - a\n  - c\npath: x\n"),
        ("clusters:\n  - a\npath: x\n", ["c"], "clusters:\n  - c\npath: x\n"),
        ("environments: [prod]\naws: {}\n", ["s1"], "environments: [prod]\nclusters: [s1]\naws: {}\n"),
    ],
)
def test_set_names_keeps_the_list_style(text: str, names: list[str], expected: str) -> None:
    document = YamlText(text, "environments/apps/x.yaml")
    document.set_names("clusters", names, after="environments")
    assert document.text == expected
    assert document.text == expected and (yaml.safe_load(expected).get("clusters") or []) == names


@given(
    st.one_of(
        st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20),
        st.integers(min_value=-(10**6), max_value=10**6),
        st.booleans(),
    )
)
def test_a_scalar_reads_back_as_itself(value: str | int | bool) -> None:
    assert yaml.safe_load(f"key: {scalar(value)}\n") == {"key": value}
    assert yaml.safe_load(f"key: [{scalar(value)}]\n") == {"key": [value]}


def test_versions_and_owners_are_quoted() -> None:
    assert scalar("1.33") == '"1.33"'
    assert scalar("@example-org/payments") == '"@example-org/payments"'
    assert scalar("ssh://git@github.com/org/app.git") == "ssh://git@github.com/org/app.git"
    assert render_mapping([("a", [("b", ["x", "y"])])], 0) == ["a:\n", "  b: [x, y]\n"]
