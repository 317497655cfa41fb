"""Scalars that a YAML 1.2 reader types differently from what the file means.

fluxplane writes with PyYAML, a YAML 1.1 reader and writer; kustomize, Flux and the API server read
with go-yaml, whose plain scalars follow YAML 1.2's core schema (``1e3`` and ``0o17`` are numbers there,
``yes`` and ``on`` strings) plus go-yaml's own readings (``y``/``n`` booleans, ``1_000`` a number).
A plain scalar that the two read as different types reaches the controllers as something else than
was written: an AWS account id ``012345678912`` as the number 12345678912. This check runs on the
composed YAML nodes, so it sees each scalar as written: quoted scalars are strings for both, and only
plain ones are compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

from fluxplane.core.codec import GO_YAML_FLOAT, GO_YAML_INT, GO_YAML_Y_N
from fluxplane.validate.findings import Finding, format_path, short

_BOOL = re.compile(r"true|True|TRUE|false|False|FALSE")
_NULL = re.compile(r"~|null|Null|NULL|")
_TYPES = {
    "tag:yaml.org,2002:str": "a string",
    "tag:yaml.org,2002:int": "an integer",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:null": "null",
}


def tag_in_yaml_1_2(value: str) -> str:
    """The tag go-yaml gives a plain scalar ``value``: YAML 1.2's core schema as go-yaml reads it (``_`` among
    the digits, ``0b`` ints, ``y``/``n`` booleans), the same rules fluxplane's writer quotes by."""
    if _NULL.fullmatch(value):
        return "tag:yaml.org,2002:null"
    if _BOOL.fullmatch(value) or GO_YAML_Y_N.match(value):
        return "tag:yaml.org,2002:bool"
    if GO_YAML_INT.match(value):
        return "tag:yaml.org,2002:int"
    if GO_YAML_FLOAT.match(value):
        return "tag:yaml.org,2002:float"
    return "tag:yaml.org,2002:str"


def _scalars(node: yaml.Node, path: list[str | int]) -> Iterator[tuple[list[str | int], yaml.ScalarNode]]:
    if isinstance(node, yaml.ScalarNode):
        yield path, node
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _scalars(item, [*path, index])
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name: str | int = key.value if isinstance(key, yaml.ScalarNode) else "?"
            yield from _scalars(key, [*path, name])
            yield from _scalars(value, [*path, name])


def check_node(node: yaml.Node, file: str, index: int, kind: str, name: str) -> list[Finding]:
    """A finding for each plain scalar of ``node`` (one document) that YAML 1.2 types otherwise."""
    findings: list[Finding] = []
    for path, scalar in _scalars(node, []):
        if scalar.style or scalar.tag not in _TYPES:  # plain: None (PyYAML) or "" (its C composer)
            continue
        meant = scalar.tag
        read = tag_in_yaml_1_2(scalar.value)
        if read == meant or {read, meant} <= {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}:
            continue
        findings.append(
            Finding(
                file,
                index,
                kind,
                name,
                format_path(path),
                f"{short(scalar.value)} is {_TYPES[meant]} here, but kustomize, Flux and the API server (YAML 1.2) "
                f"read it as {_TYPES[read]}: quote it",
            )
        )
    return findings
