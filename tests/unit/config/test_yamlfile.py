"""Tests for fluxplane.config.yamlfile: the strict YAML reader of the fleet definition."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fluxplane.config import yamlfile
from fluxplane.config.yamlfile import MAX_DEPTH, read_yaml
from fluxplane.errors import ConfigError

DISPLAY = "environments/staging.yaml"


Writer = Callable[[str], Path]


@pytest.fixture
def write(tmp_path: Path) -> Writer:
    def write_text(text: str) -> Path:
        path = tmp_path / "staging.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    return write_text


def _problems(path: Path) -> tuple[str, ...]:
    with pytest.raises(ConfigError) as exc:
        read_yaml(path, DISPLAY)
    return exc.value.problems


# -- what is accepted ----------------------------------------------------------------------------


def test_reads_one_mapping_document(write: Writer) -> None:
    # GIVEN a plain YAML mapping with nested lists and scalars
    path = write("clusters:\n  - name: a\n    replicas: 2\n    enabled: true\n    ratio: 1.5\n    none: null\n")

    # WHEN read
    data = read_yaml(path, DISPLAY)

    # THEN the usual safe types come back
    assert data == {"clusters": [{"name": "a", "replicas": 2, "enabled": True, "ratio": 1.5, "none": None}]}


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n", "\n\n"])
def test_an_empty_file_reads_as_none(write: Writer, text: str) -> None:
    # GIVEN a file with no content WHEN read THEN there is no document
    assert read_yaml(write(text), DISPLAY) is None


def test_a_leading_document_marker_is_one_document(write: Writer) -> None:
    # GIVEN a single document that starts with '---' WHEN read THEN it is that document
    assert read_yaml(write("---\na: 1\n"), DISPLAY) == {"a": 1}


def test_quoted_dates_stay_strings(write: Writer) -> None:
    # GIVEN a quoted date WHEN read THEN it is the string written
    assert read_yaml(write("since: '2024-01-01'\n"), DISPLAY) == {"since": "2024-01-01"}


def test_quoted_numeric_keys_are_strings(write: Writer) -> None:
    # GIVEN a quoted key that looks like a number WHEN read THEN it is a string key
    assert read_yaml(write("'1': a\n"), DISPLAY) == {"1": "a"}


def test_the_standard_str_tag_is_allowed(write: Writer) -> None:
    # GIVEN an explicit !!str tag WHEN read THEN the value is a string
    assert read_yaml(write("version: !!str 1.30\n"), DISPLAY) == {"version": "1.30"}


def test_a_top_level_list_is_returned_for_the_loader_to_reject(write: Writer) -> None:
    # GIVEN a list at the top level WHEN read THEN the reader returns it (the loader checks the shape)
    assert read_yaml(write("- a\n- b\n"), DISPLAY) == ["a", "b"]


def test_a_plain_value_is_built_once_across_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN two files writing the same number, boolean and null (a fleet's thousand files repeat a few)
    monkeypatch.setattr(yamlfile, "_PLAIN_TAGS", {}, raising=False)
    monkeypatch.setattr(yamlfile, "_PLAIN_VALUES", {}, raising=False)
    built: list[str] = []
    for tag in ("int", "bool", "null"):
        constructor = yamlfile._StrictLoader.yaml_constructors[f"tag:yaml.org,2002:{tag}"]

        def counting(loader: Any, node: Any, constructor: Any = constructor) -> Any:
            built.append(node.value)
            return constructor(loader, node)

        monkeypatch.setitem(yamlfile._StrictLoader.yaml_constructors, f"tag:yaml.org,2002:{tag}", counting)
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("replicas: 3\nenabled: true\nnote: null\n", encoding="utf-8")
    second.write_text("- {replicas: 3, enabled: true, note: null, quoted: '3', more: [3, 4]}\n", encoding="utf-8")
    # WHEN both are read THEN each value is what YAML says, and each text is built into its value once
    assert read_yaml(first, DISPLAY) == {"replicas": 3, "enabled": True, "note": None}
    assert read_yaml(second, DISPLAY) == [{"replicas": 3, "enabled": True, "note": None, "quoted": "3", "more": [3, 4]}]
    assert sorted(built) == ["3", "4", "null", "true"]


def test_a_refused_value_is_refused_in_every_file(write: Writer) -> None:
    # GIVEN an unquoted date WHEN read twice THEN it is refused both times (a refused value is never kept)
    for _ in range(2):
        assert _problems(write("since: 2024-01-01\n")) == (
            "environments/staging.yaml:1:8: invalid YAML: unquoted date '2024-01-01' is not allowed; quote it",
        )
    # AND a text read as a value and then as a key is refused as a key
    assert read_yaml(write("a: 1\n"), DISPLAY) == {"a": 1}
    assert _problems(write("1: a\n")) == ("environments/staging.yaml:1:1: invalid YAML: keys must be strings, got '1'",)


# -- what is refused -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 1\nb: 2\na: 3\n", "environments/staging.yaml:3:1: invalid YAML: duplicate key 'a'"),
        ("a:\n  x: 1\n  x: 2\n", "environments/staging.yaml:3:3: invalid YAML: duplicate key 'x'"),
        ("- a: 1\n  a: 2\n", "environments/staging.yaml:2:3: invalid YAML: duplicate key 'a'"),
        ("a: 1\n'a': 2\n", "environments/staging.yaml:2:1: invalid YAML: duplicate key 'a'"),
    ],
    ids=["top-level", "nested", "in-list-item", "quoted-and-plain"],
)
def test_duplicate_keys_are_refused_with_their_position(write: Writer, text: str, expected: str) -> None:
    # GIVEN a mapping that repeats a key (PyYAML would silently keep the last)
    # WHEN read THEN the repeated key is named with its line:column
    assert _problems(write(text)) == (expected,)


@pytest.mark.parametrize(
    "text",
    ["a: &x 1\nb: *x\n", "a: &x {k: 1}\nb: *x\n", "a: &x [1]\nb: *x\n"],
    ids=["scalar", "mapping", "list"],
)
def test_aliases_are_refused(write: Writer, text: str) -> None:
    # GIVEN an anchor used again through an alias
    # WHEN read THEN aliases are refused with a line:column
    with pytest.raises(
        ConfigError,
        match=r"^environments/staging\.yaml:\d+:\d+: invalid YAML: aliases \(\*name\) are not allowed; "
        r"write the value out$",
    ):
        read_yaml(write(text), DISPLAY)


def test_an_alias_error_points_at_the_alias(write: Writer) -> None:
    # GIVEN an anchor on line 1 and its alias on line 2
    path = write("a: &x 1\nb: *x\n")

    # WHEN read
    # THEN the reported position is the alias itself, where the user has to write the value out
    assert _problems(path) == (
        "environments/staging.yaml:2:4: invalid YAML: aliases (*name) are not allowed; write the value out",
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "a: &x {k: 1}\nb:\n  <<: *x\n",
            "environments/staging.yaml:3:3: invalid YAML: merge keys (<<) are not allowed",
        ),
        (
            "b:\n  <<: {k: 1}\n",
            "environments/staging.yaml:2:3: invalid YAML: merge keys (<<) are not allowed",
        ),
    ],
    ids=["with-alias", "inline"],
)
def test_merge_keys_are_refused(write: Writer, text: str, expected: str) -> None:
    # GIVEN a merge key WHEN read THEN it is refused with its position
    assert _problems(write(text)) == (expected,)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: !Ref x\n", "environments/staging.yaml:1:4: invalid YAML: tag '!Ref' is not allowed"),
        ("a: !Thing {k: 1}\n", "environments/staging.yaml:1:4: invalid YAML: tag '!Thing' is not allowed"),
        (
            "a: !!binary aGVsbG8=\n",
            "environments/staging.yaml:1:4: invalid YAML: tag 'tag:yaml.org,2002:binary' is not allowed",
        ),
        (
            "a: !!set {x, y}\n",
            "environments/staging.yaml:1:4: invalid YAML: tag 'tag:yaml.org,2002:set' is not allowed",
        ),
        (
            "a: !!omap [x: 1]\n",
            "environments/staging.yaml:1:4: invalid YAML: tag 'tag:yaml.org,2002:omap' is not allowed",
        ),
        (
            "a: !!pairs [x: 1]\n",
            "environments/staging.yaml:1:4: invalid YAML: tag 'tag:yaml.org,2002:pairs' is not allowed",
        ),
        (
            "a: !!python/object:os.system x\n",
            "environments/staging.yaml:1:4: invalid YAML: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object:os.system'",
        ),
        (
            "a: !!map x\n",
            "environments/staging.yaml:1:4: invalid YAML: tag 'tag:yaml.org,2002:map' needs a mapping here",
        ),
        (
            "a: !!seq {k: 1}\n",
            "environments/staging.yaml:1:4: invalid YAML: tag 'tag:yaml.org,2002:seq' needs a list here",
        ),
        (
            "a: !!str {k: 1}\n",
            "environments/staging.yaml:1:4: invalid YAML: expected a scalar node, but found mapping",
        ),
    ],
    ids=[
        "local-tag",
        "local-tag-on-mapping",
        "binary",
        "set",
        "omap",
        "pairs",
        "python-object",
        "map-on-scalar",
        "seq-on-mapping",
        "str-on-mapping",
    ],
)
def test_custom_and_non_json_tags_are_refused(write: Writer, text: str, expected: str) -> None:
    # GIVEN a tag other than the JSON-like core ones WHEN read THEN it is refused with its position
    assert _problems(write(text)) == (expected,)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "since: 2024-01-01\n",
            "environments/staging.yaml:1:8: invalid YAML: unquoted date '2024-01-01' is not allowed; quote it",
        ),
        (
            "at: 2024-01-01T10:00:00Z\n",
            "environments/staging.yaml:1:5: invalid YAML: "
            "unquoted date '2024-01-01T10:00:00Z' is not allowed; quote it",
        ),
    ],
    ids=["date", "datetime"],
)
def test_unquoted_dates_are_refused(write: Writer, text: str, expected: str) -> None:
    # GIVEN an unquoted date (YAML would turn it into a date object) WHEN read THEN quoting is asked for
    assert _problems(write(text)) == (expected,)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1: a\n", "environments/staging.yaml:1:1: invalid YAML: keys must be strings, got '1'"),
        ("true: a\n", "environments/staging.yaml:1:1: invalid YAML: keys must be strings, got 'true'"),
        ("null: a\n", "environments/staging.yaml:1:1: invalid YAML: keys must be strings, got 'null'"),
        ("1.5: a\n", "environments/staging.yaml:1:1: invalid YAML: keys must be strings, got '1.5'"),
        (
            "2024-01-01: a\n",
            "environments/staging.yaml:1:1: invalid YAML: keys must be strings, got '2024-01-01'",
        ),
        ("a:\n  2: b\n", "environments/staging.yaml:2:3: invalid YAML: keys must be strings, got '2'"),
    ],
    ids=["int", "bool", "null", "float", "date", "nested-int"],
)
def test_non_string_keys_are_refused(write: Writer, text: str, expected: str) -> None:
    # GIVEN a key YAML resolves to something other than a string WHEN read THEN it is refused
    assert _problems(write(text)) == (expected,)


@pytest.mark.parametrize("text", ["? [a, b]\n: c\n", "? {a: 1}\n: c\n"], ids=["sequence-key", "mapping-key"])
def test_complex_keys_are_refused_without_parser_internals(write: Writer, text: str) -> None:
    # GIVEN a key that is a sequence or a mapping
    # WHEN read
    problems = _problems(write(text))

    # THEN the line names the position and says keys must be strings, without PyYAML node reprs
    assert len(problems) == 1
    assert problems[0].startswith("environments/staging.yaml:1:3: invalid YAML: keys must be strings, got ")
    assert "Node(" not in problems[0]


@pytest.mark.parametrize(
    ("text", "count"),
    [("a: 1\n---\nb: 2\n", 2), ("a: 1\n---\nb: 2\n---\nc: 3\n", 3), ("---\n---\n", 2)],
    ids=["two", "three", "two-empty"],
)
def test_more_than_one_document_is_refused(write: Writer, text: str, count: int) -> None:
    # GIVEN a file with several YAML documents WHEN read THEN the count is reported
    assert _problems(write(text)) == (f"environments/staging.yaml: expected one YAML document, found {count}",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: [1, 2\n", "environments/staging.yaml:2:1: invalid YAML: did not find expected ',' or ']'"),
        (
            "a: 1\n b: 2\n",
            "environments/staging.yaml:2:3: invalid YAML: mapping values are not allowed in this context",
        ),
        (
            "a:\n  - 1\n  b: 2\n",
            "environments/staging.yaml:3:3: invalid YAML: did not find expected '-' indicator",
        ),
        (
            "a:\n\tb: 1\n",
            "environments/staging.yaml:2:1: invalid YAML: found character that cannot start any token",
        ),
        ('a: "abc\n', "environments/staging.yaml:2:1: invalid YAML: found unexpected end of stream"),
        (
            "a: b: c\n",
            "environments/staging.yaml:1:5: invalid YAML: mapping values are not allowed in this context",
        ),
    ],
    ids=["unclosed-flow", "bad-indent", "list-then-key", "tab", "unclosed-quote", "two-colons"],
)
def test_syntax_errors_name_line_and_column(write: Writer, text: str, expected: str) -> None:
    # GIVEN broken YAML WHEN read THEN one line names the file, line:column and the parser's problem
    assert _problems(write(text)) == (expected,)


def test_a_missing_file_is_reported_by_its_display_name(tmp_path: Path) -> None:
    # GIVEN a path that does not exist WHEN read THEN the display name (not the absolute path) is used
    with pytest.raises(ConfigError, match=r"^environments/staging\.yaml: file not found$"):
        read_yaml(tmp_path / "nope.yaml", DISPLAY)


def test_a_file_that_is_not_utf8_is_reported(tmp_path: Path) -> None:
    # GIVEN bytes that are not UTF-8
    path = tmp_path / "staging.yaml"
    path.write_bytes(b"a: \xff\xfe\n")

    # WHEN read THEN it is a ConfigError naming the file and the decoding problem
    with pytest.raises(
        ConfigError,
        match=r"^environments/staging\.yaml: cannot read: 'utf-8' codec can't decode byte 0xff in position 3",
    ):
        read_yaml(path, DISPLAY)


def test_nesting_as_deep_as_the_limit_is_read(write: Writer) -> None:
    # GIVEN lists nested exactly MAX_DEPTH deep (the top-level mapping is the first level)
    depth = MAX_DEPTH - 1
    path = write("x: " + "[" * depth + "1" + "]" * depth + "\n")
    # WHEN read THEN the value comes back whole
    value = read_yaml(path, DISPLAY)["x"]
    for _ in range(depth):
        value = value[0]
    assert value == 1


@pytest.mark.parametrize(
    ("opening", "closing", "column"),
    [("[", "]", 103), ("{a: ", "}", 400)],
    ids=["flow-lists", "flow-mappings"],
)
def test_nesting_deeper_than_the_limit_is_refused_at_its_position(
    write: Writer, opening: str, closing: str, column: int
) -> None:
    # GIVEN a value nested one level deeper than MAX_DEPTH
    path = write("x: " + opening * MAX_DEPTH + "1" + closing * MAX_DEPTH + "\n")
    # WHEN read THEN one line points at the level past the limit
    assert _problems(path) == (f"{DISPLAY}:1:{column}: invalid YAML: nested deeper than 100 levels",)


def test_nesting_a_million_levels_deep_is_an_error_not_a_crash(tmp_path: Path) -> None:
    # GIVEN a file nested a million levels deep, which libyaml's recursive composer cannot survive
    path = tmp_path / "staging.yaml"
    path.write_text("x: " + "[" * 1_000_000 + "]" * 1_000_000 + "\n")
    # WHEN read in a child process (a crash must not take the test run with it)
    code = (
        "import sys; from pathlib import Path; from fluxplane.config.yamlfile import read_yaml\n"
        "from fluxplane.errors import ConfigError\n"
        f"try: read_yaml(Path({str(path)!r}), {DISPLAY!r})\n"
        "except ConfigError as exc: print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    # THEN it ends normally with the error line, at the level past the limit or where libyaml's own limit (PyYAML
    # 6.0.4 on) stopped its scanner ahead of it
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(rf"{DISPLAY}:1:(103|1003): invalid YAML: nested deeper than 100 levels\n", done.stdout)


def test_a_character_yaml_does_not_allow_is_one_line(write: Writer) -> None:
    # GIVEN a NUL character in a value WHEN read THEN one line names the character and where it is
    assert _problems(write("clusters: []\nx: \x00\n")) == (
        f"{DISPLAY}: invalid YAML: unacceptable character #x0000: control characters are not allowed in "
        '"<unicode string>", position 16',
    )


def test_a_fifo_in_the_definition_is_one_line_not_a_hang(tmp_path: Path) -> None:
    # GIVEN a FIFO where a YAML file of the definition goes (a pull request can bring one)
    fifo = tmp_path / "staging.yaml"
    os.mkfifo(fifo)
    # WHEN read THEN it is refused at once, named, rather than waited on forever
    with pytest.raises(ConfigError, match=r"^environments/staging.yaml: not a regular file"):
        read_yaml(fifo, "environments/staging.yaml")
