"""Deep merge of definition files, remembering where every value came from.

Merge rule (docs/explanation/fleet-definition.md): mappings merge key by key, recursively; every other value,
lists included, is replaced whole by the overriding file. ``null`` in an overriding file sets the
value to null (which the model may reject); it does not delete the key.

Errors are reported against the merged document, so :class:`Origins` maps a location in the merged
document back to the file and field path the user wrote.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Loc = tuple[str | int, ...]


def deep_merge(base: Any, override: Any) -> Any:
    """Return ``override`` merged over ``base`` (mappings recursively, anything else replaced)."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            # only two mappings merge: any other value replaces (a definition's sections are mostly values)
            if isinstance(value, dict) and key in base and isinstance(base[key], dict):
                value = deep_merge(base[key], value)
            merged[key] = value
        return merged
    return override


def quoted(text: str, limit: int | None = None) -> str:
    """``text`` in double quotes, JSON-escaped, every character that does not print shown as its escape;
    cut to ``limit`` characters (ending in ``..."``) when longer.

    A problem line is one line and shows what was found: a newline, a line or paragraph separator or a
    zero-width character in the input must neither break the line nor hide in it.
    """
    body = json.dumps(text, ensure_ascii=False)
    shown = "".join(char if char.isprintable() else json.dumps(char)[1:-1] for char in body)
    return shown if limit is None or len(shown) <= limit else shown[: limit - 3] + '..."'


def _plain_key(key: str) -> bool:
    """True for a mapping key that reads unambiguously after a '.' in a field path: every character prints and is
    no space, quote, bracket or backslash (the one space that prints is " ": str.isprintable refuses the others)."""
    return (
        key != ""
        and key.isprintable()
        and " " not in key
        and '"' not in key
        and "[" not in key
        and "]" not in key
        and "\\" not in key
    )


def format_loc(loc: Sequence[str | int]) -> str:
    """Render a location as the field path users read: ``clusters[1].nodeGroups[0].minSize``.

    A key with spaces, quotes, brackets or characters that do not print (a label key ``bad key!``, a tag key
    with a newline) is shown quoted in brackets: ``labels["bad key!"]``.
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _plain_key(str(part)):
            out += f"[{quoted(str(part))}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


@dataclass(frozen=True)
class Layer:
    """One file's contribution to a merged document.

    ``doc`` is the part of the file mounted at ``mount`` in the merged document; ``prefix`` is where
    that part sits in the file itself.
    """

    file: str
    doc: Any
    mount: Loc = ()
    prefix: Loc = ()


def _depth(doc: Any, rest: Loc) -> int:
    depth = 0
    node = doc
    for part in rest:
        in_list = isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node)
        in_mapping = isinstance(part, str) and isinstance(node, dict) and part in node
        if in_list or in_mapping:
            node = node[part]
        else:
            return depth
        depth += 1
    return depth


class Origins:
    """Answers "which file and field wrote this location?" for a merged document.

    Layers are given most specific first. The answer is the layer holding the longest part of the
    location; on a tie, the more specific layer (it is the one that overrides).
    """

    def __init__(self, layers: Sequence[Layer]) -> None:
        self._layers = tuple(layers)

    def __add__(self, other: Origins) -> Origins:
        return Origins(self._layers + other._layers)

    def where(self, loc: Loc) -> tuple[str, str]:
        best: tuple[int, Layer] | None = None
        for layer in self._layers:
            n = len(layer.mount)
            if tuple(loc[:n]) != layer.mount:
                continue
            score = n + _depth(layer.doc, tuple(loc[n:]))
            if best is None or score > best[0]:
                best = (score, layer)
        if best is None:
            return ("", format_loc(loc))
        layer = best[1]
        return (layer.file, format_loc(layer.prefix + tuple(loc[len(layer.mount) :])))

    def describe(self, loc: Loc) -> str:
        """``file: field.path`` for a location in the merged document."""
        file, path = self.where(loc)
        return f"{file}: {path}" if file else path
