"""YAML rendering: one deterministic style for every file fluxplane writes."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from ruamel.yaml import YAML

from fluxplane.core.codec import dump_documents, dump_value, load_documents, parse_documents

#: A YAML 1.2 reader, as the controllers, kustomize and Flux read dist/ (go-yaml).
YAML_1_2 = YAML(typ="safe", pure=True)


def test_documents_are_separated_by_dashes_and_end_with_a_newline() -> None:
    # GIVEN two small documents
    documents = [{"a": 1}, {"b": 2}]

    # WHEN they are rendered
    text = dump_documents(documents)

    # THEN there is "---" between them (not before the first) and one final newline
    assert text == "a: 1\n---\nb: 2\n"


def test_single_document_has_no_separator() -> None:
    # GIVEN / WHEN / THEN a single document is written without any document marker
    assert dump_documents([{"kind": "Namespace"}]) == "kind: Namespace\n"


def test_key_order_is_preserved_not_sorted() -> None:
    # GIVEN a document whose keys are not in alphabetical order, at two levels
    document = {"kind": "X", "apiVersion": "v1", "metadata": {"namespace": "b", "name": "a"}}

    # WHEN / THEN the keys keep insertion order
    assert dump_documents([document]) == "kind: X\napiVersion: v1\nmetadata:\n  namespace: b\n  name: a\n"


def test_nested_blocks_use_two_space_indentation_and_block_style() -> None:
    # GIVEN nested mappings and lists
    document: dict[str, Any] = {"spec": {"list": [{"a": 1, "b": [1, 2]}], "empty": {}, "none": None}}

    # WHEN / THEN nesting is two spaces, lists sit at their key's indentation, nothing is in flow style
    # except empty collections, and None is written as null
    assert dump_documents([document]) == (
        "spec:\n  list:\n  - a: 1\n    b:\n    - 1\n    - 2\n  empty: {}\n  none: null\n"
    )


def test_same_object_twice_is_written_twice_without_anchors_or_aliases() -> None:
    # GIVEN one dict object referenced from two places, across two documents
    shared: dict[str, Any] = {"app": "web"}
    documents = [{"labels": shared, "selector": shared}, {"labels": shared}]

    # WHEN they are rendered
    text = dump_documents(documents)

    # THEN the content is repeated in full, with no "&" anchor and no "*" alias
    assert text == "labels:\n  app: web\nselector:\n  app: web\n---\nlabels:\n  app: web\n"
    assert "&" not in text
    assert "*" not in text


def test_long_strings_are_not_folded() -> None:
    # GIVEN a 1,000-character string with spaces, where a default emitter would wrap at 80 columns
    long = " ".join(["word"] * 200)

    # WHEN it is rendered
    text = dump_documents([{"description": long}])

    # THEN it stays on one line
    assert text == f"description: {long}\n"


def test_multi_line_strings_are_written_as_literal_blocks() -> None:
    # GIVEN a multi-line patch
    patch = "- op: remove\n  path: /spec/replicas\n"

    # WHEN it is rendered inside a list
    text = dump_documents([{"patches": [{"patch": patch}]}])

    # THEN it is a "|" block, indented under its key
    assert text == "patches:\n- patch: |\n    - op: remove\n      path: /spec/replicas\n"


def test_block_without_final_newline_uses_strip_chomping() -> None:
    # GIVEN a multi-line string that does not end with a newline
    # WHEN / THEN it is written as "|-" so the value reads back unchanged
    text = dump_documents([{"script": "echo a\necho b"}])

    assert text == "script: |-\n  echo a\n  echo b\n"
    assert yaml.safe_load(text) == {"script": "echo a\necho b"}


def test_multi_line_plain_strings_read_back_unchanged() -> None:
    # GIVEN plain multi-line strings, with leading spaces, blank lines and no final newline
    values = ["x\ny\n", "x\ny", "  indented\nx\n", "a\n\n\nb\n", "tab\there\n"]

    # WHEN they are rendered
    text = dump_documents([{"v": value} for value in values])

    # THEN every one reads back exactly
    assert [doc["v"] for doc in yaml.safe_load_all(text)] == values


def test_strings_that_look_like_other_types_are_quoted() -> None:
    # GIVEN strings that YAML 1.1 would read as booleans, numbers or null
    document = {"a": "on", "b": "yes", "c": "123", "d": "1.5", "e": "null", "f": "", "g": "0x1F"}

    # WHEN they are rendered
    text = dump_documents([document])

    # THEN they read back as the same strings
    assert yaml.safe_load(text) == document


@pytest.mark.parametrize(
    "value",
    ["1e3", "6E10", "0o17", "0x1F", "08540", "012345678912", "+12", ".5", "1_000", "-1e-3", "0B101", "y", "N"],
)
def test_strings_that_yaml_1_2_reads_as_numbers_or_booleans_are_quoted(value: str) -> None:
    # GIVEN a string that YAML 1.1 reads as a string but YAML 1.2 (or go-yaml) as a number or a boolean,
    # as a value and as a key
    document = {"value": value, "keys": {value: "x"}}

    # WHEN it is rendered
    text = dump_documents([document])

    # THEN it is single-quoted, and a YAML 1.2 reader gets the same strings back
    assert text == f"value: '{value}'\nkeys:\n  '{value}': x\n"
    assert YAML_1_2.load(text) == document


def test_strings_that_read_as_strings_in_both_yaml_versions_stay_plain() -> None:
    # GIVEN strings that look a little like numbers but are strings in YAML 1.1 and 1.2 alike, and real numbers
    document = {"interval": "10m", "version": "v1.4.2", "zone": "us-west-2a", "arn": "arn:aws:iam::012345678912:root"}
    numbers = {"replicas": 3, "ratio": 0.5, "enabled": True}

    # WHEN they are rendered
    text = dump_documents([{**document, **numbers}])

    # THEN nothing is quoted, and a YAML 1.2 reader reads the same values
    assert text == (
        "interval: 10m\nversion: v1.4.2\nzone: us-west-2a\narn: arn:aws:iam::012345678912:root\n"
        "replicas: 3\nratio: 0.5\nenabled: true\n"
    )
    assert YAML_1_2.load(text) == {**document, **numbers}


def test_unicode_is_written_as_is_not_escaped() -> None:
    # GIVEN non-ASCII text
    document = {"description": "Café für Zürich ✓ 日本"}

    # WHEN / THEN it appears verbatim, without \\u escapes
    assert dump_documents([document]) == "description: Café für Zürich ✓ 日本\n"


def test_output_is_byte_identical_for_the_same_input() -> None:
    # GIVEN the same documents built twice
    def build() -> list[dict[str, Any]]:
        return [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "a"},
                "data": {"z": "1", "a": "2"},
            },
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b", "labels": {"k": "v"}}},
        ]

    # WHEN each is rendered
    # THEN the bytes are equal
    assert dump_documents(build()) == dump_documents(build())


def test_documents_can_be_any_iterable() -> None:
    # GIVEN a generator of documents
    # WHEN / THEN it is rendered like a list
    assert dump_documents(doc for doc in [{"a": 1}, {"b": 2}]) == "a: 1\n---\nb: 2\n"


def test_no_documents_render_as_empty_text() -> None:
    # GIVEN / WHEN / THEN nothing to write gives an empty string
    assert dump_documents([]) == ""


def test_dump_value_writes_a_single_value_without_document_markers() -> None:
    # GIVEN a JSON 6902 patch as data
    ops = [{"op": "replace", "path": "/spec/replicas", "value": 3}]

    # WHEN / THEN it renders in the same style, without "---" or "..."
    assert dump_value(ops) == "- op: replace\n  path: /spec/replicas\n  value: 3\n"


def test_dump_value_of_a_scalar_has_no_document_end_marker() -> None:
    # GIVEN / WHEN / THEN a plain scalar renders as itself and a newline
    assert dump_value("abc") == "abc\n"


def test_parse_documents_reads_back_what_dump_writes_and_skips_the_rest() -> None:
    # GIVEN a stream as synth writes it, plus an empty document and a scalar one
    documents = [{"kind": "A", "data": {"text": "one\ntwo\n"}}, {"kind": "B"}]
    text = dump_documents(documents) + "---\n---\njust text\n"
    # WHEN it is parsed THEN the mappings come back, in order, and nothing else
    assert parse_documents(text) == documents


def test_load_documents_keeps_every_document_in_its_place() -> None:
    # GIVEN a stream with an empty document and a scalar one among the mappings
    text = "# a comment\n---\n---\nkind: A\n---\njust text\n"
    # WHEN it is loaded THEN each document is at its number in the file, an empty one None
    assert load_documents(text) == [None, {"kind": "A"}, "just text"]
