"""What validate reports: one finding per problem, located by file, document and field path.

A finding prints as ``FILE:DOC KIND/NAME: PATH: MESSAGE``: FILE relative to the tree, DOC the 1-based
index of the YAML document in the file, PATH a field path such as ``spec.dependsOn[0].name``. Findings
sort by file, then document, so the report reads top to bottom like the tree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_PLAIN_KEY = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")


def format_path(parts: Sequence[str | int]) -> str:
    """``["spec", "dependsOn", 0, "name"]`` as ``spec.dependsOn[0].name``; keys with dots are quoted."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            out += ("." if out else "") + part
        else:
            out += f'["{part}"]'
    return out or "(root)"


@dataclass(frozen=True, order=True)
class Finding:
    """One problem in one document."""

    file: str
    doc: int
    kind: str
    name: str
    path: str
    message: str

    def line(self) -> str:
        return f"{self.file}:{self.doc} {self.kind}/{self.name}: {self.path}: {self.message}"


def short(value: object, limit: int = 60) -> str:
    """A value as a message shows it: strings quoted, containers abbreviated, long text cut."""
    if isinstance(value, str):
        text = f'"{value}"'
    elif value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, dict):
        text = "{...}"
    elif isinstance(value, list):
        text = "[...]"
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
