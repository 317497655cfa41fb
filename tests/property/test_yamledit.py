"""Properties of the definition's text edits over generated environment files: adding a cluster changes
only the list, and removing it again gives back the file byte for byte."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from fluxplane.config.yamledit import YamlText

labels = st.from_regex(r"[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,4})?", fullmatch=True)
comments = st.sampled_from(["", "# a note\n", "# two\n# lines\n"])


@st.composite
def cluster_item(draw: st.DrawFn, dash: int, content: int) -> str:
    """One block list item: a cluster with optional fields, inner comments and a nested mapping."""
    name = draw(labels)
    pad = " " * content
    lines = [" " * dash + "-" + " " * (content - dash - 1) + f"name: {name}\n"]
    if draw(st.booleans()):
        lines.append(f"{pad}region: us-east-1  # inline\n")
    if draw(st.booleans()):
        lines.append(draw(comments).replace("#", pad + "#"))
        lines.append(f"{pad}packs:\n{pad}  podinfo:\n{pad}    replicas: {draw(st.integers(1, 9))}\n")
    if draw(st.booleans()):
        lines.append(f"{pad}  # trailing, inside the item\n")
    return "".join(lines)


@st.composite
def environment_file(draw: st.DrawFn) -> str:
    dash = draw(st.sampled_from([0, 2, 4]))
    content = dash + draw(st.sampled_from([2, 4]))
    parts = [draw(comments), "packs:\n  podinfo:\n    replicas: 1\n", draw(st.sampled_from(["", "\n"]))]
    parts.append("clusters:\n")
    separator = draw(st.sampled_from(["", "\n"]))
    items = draw(st.lists(cluster_item(dash, content), min_size=1, max_size=4))
    parts.append(separator.join(draw(comments).replace("#", " " * dash + "#") + item for item in items))
    if draw(st.booleans()):
        parts.append("\n# what every cluster of the environment gets\nclusterDefaults:\n  region: us-west-2\n")
    return "".join(parts)


NEW: list[tuple[str, Any]] = [("name", "fresh-1"), ("region", "eu-west-1"), ("network", [("availabilityZones", 3)])]


@given(environment_file())
def test_adding_a_cluster_then_removing_it_gives_back_the_file(text: str) -> None:
    before = yaml.safe_load(text)
    document = YamlText(text, "environments/generated.yaml")
    document.append_mapping_item("clusters", NEW)
    after = yaml.safe_load(document.text)
    assert after["clusters"] == [
        *before["clusters"],
        {"name": "fresh-1", "region": "eu-west-1", "network": {"availabilityZones": 3}},
    ]
    assert {key: value for key, value in after.items() if key != "clusters"} == {
        key: value for key, value in before.items() if key != "clusters"
    }
    again = YamlText(document.text, "environments/generated.yaml")
    again.remove_item("clusters", len(after["clusters"]) - 1)
    assert again.text == text


@given(environment_file(), st.data())
def test_removing_any_cluster_leaves_the_others_and_every_other_line(text: str, data: st.DataObject) -> None:
    before = yaml.safe_load(text)
    index = data.draw(st.integers(0, len(before["clusters"]) - 1))
    document = YamlText(text, "environments/generated.yaml")
    document.remove_item("clusters", index)
    after = yaml.safe_load(document.text)
    remaining = [item for position, item in enumerate(before["clusters"]) if position != index]
    assert (after["clusters"] or []) == remaining
    assert after.get("clusterDefaults") == before.get("clusterDefaults")
    assert after["packs"] == before["packs"]
