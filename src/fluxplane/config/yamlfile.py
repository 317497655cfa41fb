"""Strict YAML reading for the fleet definition.

The definition is data written by people, so the loader is stricter than ``yaml.safe_load``:
duplicate keys are errors (PyYAML silently keeps the last one), and anchors, aliases and custom tags
are refused because they hide what a reviewer sees in a diff. Dates stay strings only when
quoted, so ``2024-01-01`` unquoted is refused rather than silently turned into a date.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fluxplane.errors import ConfigError

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_Loader):  # type: ignore[misc,valid-type]
    """A safe loader (libyaml when available) that rejects duplicate keys, aliases and custom tags."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        # An alias is the same node reached a second time: the constructor has seen it already.
        if node in self.constructed_objects:
            raise yaml.MarkedYAMLError(
                None, None, "aliases (*name) are not allowed; write the value out", node.start_mark
            )
        return super().construct_object(node, deep=deep)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise yaml.MarkedYAMLError(None, None, "merge keys (<<) are not allowed", key_node.start_mark)
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str) or key_node.tag != "tag:yaml.org,2002:str":
                found = {yaml.SequenceNode: "a list", yaml.MappingNode: "a mapping"}.get(type(key_node), repr(key))
                raise yaml.MarkedYAMLError(None, None, f"keys must be strings, got {found}", key_node.start_mark)
            if key in seen:
                raise yaml.MarkedYAMLError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]


def _reject_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    raise yaml.MarkedYAMLError(None, None, f"tag {node.tag!r} is not allowed", node.start_mark)


def _reject_timestamp(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    raise yaml.MarkedYAMLError(None, None, f"unquoted date {node.value!r} is not allowed; quote it", node.start_mark)


_StrictLoader.add_multi_constructor("!", _reject_tag)
_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _reject_timestamp)
for _tag in ("binary", "set", "omap", "pairs"):
    _StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", lambda loader, node: _reject_tag(loader, "", node))


def _first_alias(text: str) -> Any:
    """Where the first alias is; libyaml's nodes keep only the anchor's position."""
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                return event.start_mark
    except yaml.YAMLError:
        return None
    return None


#: Deeper than any definition needs. libyaml builds nodes recursively in C, so a document nested a
#: hundred thousand levels deep would crash the interpreter instead of raising an error.
MAX_DEPTH = 100


def _too_deep(text: str) -> Any:
    """Where nesting first goes deeper than MAX_DEPTH, if it does; reading events does not recurse."""
    # Each level of nesting needs a ':' or '?' (a mapping), a '-' or '[' (a sequence) or a '{': a text
    # with fewer of them cannot nest that deep, and is spared reading its events twice.
    if sum(text.count(mark) for mark in ":?-[{") <= MAX_DEPTH:
        return None
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    return event.start_mark
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return None  # loading reports it, with its position
    return None


def read_yaml(path: Path, display: str) -> Any:
    """Parse one YAML document from ``path``; errors name ``display`` (the path the user knows)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{display}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{display}: cannot read: {exc}") from None
    deep = _too_deep(text)
    if deep is not None:
        raise ConfigError(
            f"{display}:{deep.line + 1}:{deep.column + 1}: invalid YAML: nested deeper than {MAX_DEPTH} levels"
        )
    try:
        documents = list(yaml.load_all(text, Loader=_StrictLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if exc.problem and exc.problem.startswith("aliases"):
            mark = _first_alias(text) or mark
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(f"{display}{where}: invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:  # a character YAML does not allow: its message spans lines
        raise ConfigError(f"{display}: invalid YAML: {' '.join(str(exc).split())}") from None
    if len(documents) > 1:
        raise ConfigError(f"{display}: expected one YAML document, found {len(documents)}")
    return documents[0] if documents else None
