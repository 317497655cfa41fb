"""validate.yaml12: plain scalars that YAML 1.2 readers (go-yaml) type otherwise than PyYAML wrote them."""

from __future__ import annotations

import pytest

from fluxplane.validate.tree import load_documents
from fluxplane.validate.yaml12 import tag_in_yaml_1_2

INT, FLOAT, BOOL, NULL, STR = (f"tag:yaml.org,2002:{t}" for t in ("int", "float", "bool", "null", "str"))


@pytest.mark.parametrize(
    ("value", "tag"),
    [
        ("012345678912", INT),
        ("0o17", INT),
        ("0x1F", INT),
        ("-42", INT),
        ("1e3", FLOAT),
        ("6E10", FLOAT),
        (".5", FLOAT),
        ("-.inf", FLOAT),
        (".NaN", FLOAT),
        ("true", BOOL),
        ("n", BOOL),
        ("yes", STR),
        ("on", STR),
        ("1_000", INT),  # go-yaml drops the underscores, as fluxplane's writer knows
        ("0b101", INT),
        ("2024-01-01", STR),
        ("~", NULL),
        ("", NULL),
        ("v1.2.3", STR),
    ],
)
def test_plain_scalars_are_typed_as_yaml_1_2_and_go_yaml_type_them(value: str, tag: str) -> None:
    assert tag_in_yaml_1_2(value) == tag


def test_each_plain_scalar_that_changes_type_is_a_finding_and_quoted_ones_are_not() -> None:
    text = (
        "kind: ConfigMap\nmetadata:\n  name: m\ndata:\n"
        "  account: 012345678912\n  size: 1e3\n  answer: yes\n  short: n\n"
        "  quoted: \"012345678912\"\n  single: '1e3'\n  count: 3\n  ratio: 0.5\n  flag: true\n  text: hello\n"
        "  literal: |\n    1e3\n"
    )
    documents, findings = load_documents(text, "f.yaml")
    assert len(documents) == 1
    assert [(f.path, f.message.split(" here")[0]) for f in findings] == [
        ("data.account", '"012345678912" is a string'),
        ("data.size", '"1e3" is a string'),
        ("data.answer", '"yes" is a boolean'),
        ("data.short", '"n" is a string'),
    ]
    assert findings[0].line() == (
        'f.yaml:1 ConfigMap/m: data.account: "012345678912" is a string here, but kustomize, Flux and the API '
        "server (YAML 1.2) read it as an integer: quote it"
    )
