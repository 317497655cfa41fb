"""Strict YAML reading for the fleet definition.

The definition is data written by people, so the loader is stricter than ``yaml.safe_load``:
duplicate keys are errors (PyYAML silently keeps the last one), and anchors, aliases and custom tags
are refused because they hide what a reviewer sees in a diff. Dates stay strings only when
quoted, so ``2024-01-01`` unquoted is refused rather than silently turned into a date.

A run can keep what it parses (fluxplane.config.parsed, kept beside the synth cache): while one is
open (:func:`parsed_from`), a file whose text was parsed before is not parsed again.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

import yaml

from fluxplane.errors import ConfigError

#: Whether libyaml parses (PyYAML built with it), else PyYAML's own Python parser.
LIBYAML = hasattr(yaml, "CSafeLoader")
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"

#: Deeper than any definition needs. libyaml composes nodes recursively in C, so a document nested a
#: hundred thousand levels deep would crash the interpreter there; documents are built from parser
#: events instead (libyaml's parser keeps its own stack), and refused past this depth.
MAX_DEPTH = 100


#: The tag of each plain scalar read, and the value of each one not a string (a number, a boolean, null), by its
#: text: the same keys and values recur throughout a definition and across its files (a thousand sealed secrets
#: are the same few keys). Neither depends on the file; texts longer than _PLAIN_LONGEST (ciphertext, which never
#: recurs) are not kept, and both are emptied past _PLAIN_MAX texts.
_PLAIN_TAGS: dict[str, str] = {}
_PLAIN_VALUES: dict[str, Any] = {}
_PLAIN_LONGEST = 200
_PLAIN_MAX = 100_000


class ParseCache(Protocol):
    """Documents parsed before, by the text they were parsed from (fluxplane.config.parsed.ParsedFiles)."""

    def get(self, text: str) -> list[Any] | None:
        """The documents of ``text`` (objects of their own, which the caller may change), None when unknown."""

    def keep(self, text: str, documents: list[Any]) -> None:
        """Keep the documents just parsed from ``text`` (before the caller changes them)."""


_PARSED: ContextVar[ParseCache | None] = ContextVar("fluxplane_parsed", default=None)


@contextlib.contextmanager
def parsed_from(parsed: ParseCache | None) -> Iterator[None]:
    """Read YAML files through ``parsed`` (None: parse every file) inside the ``with`` block."""
    token = _PARSED.set(parsed)
    try:
        yield
    finally:
        _PARSED.reset(token)


class _StrictLoader(_Loader):  # type: ignore[misc,valid-type]
    """A safe loader (libyaml when available) that rejects duplicate keys, aliases and custom tags.

    Scalars get the values PyYAML's safe constructor gives them (its resolver and scalar constructors
    are used), but documents are built straight from the parser's events, in one pass that also
    checks the rules above and the nesting depth: no node tree, at a fraction of its cost for the
    large definitions of big fleets.
    """

    def _scalar(self, tag: str, node: yaml.Node) -> Any:
        constructor = self.yaml_constructors.get(tag)
        if constructor is not None:
            return constructor(self, node)
        for prefix, multi in self.yaml_multi_constructors.items():
            if prefix is not None and tag.startswith(prefix):
                return multi(self, tag[len(prefix) :], node)
        return self.construct_undefined(node)

    def _collection(self, event: yaml.CollectionStartEvent, kind: type[yaml.Node], default: str) -> None:
        """Refuse a tag other than the default one on a mapping or a list (as its constructor would)."""
        tag = event.tag
        if tag is None or tag == "!" or tag == default:
            return
        if tag in (_MAP, _SEQ):  # `!!seq {k: v}`: the tag names another kind of node than the one written
            wanted = "a mapping" if tag == _MAP else "a list"
            raise _error(f"tag {tag!r} needs {wanted} here", event)
        self._scalar(tag, _node(kind, tag, [], event))
        raise _error(f"tag {tag!r} is not allowed", event)

    def documents(self) -> list[Any]:
        """Every document of the stream, built from its events."""
        documents: list[Any] = []
        # One frame per open collection: [the list, or the mapping and its pending key (None: none yet)]
        stack: list[list[Any]] = []
        get_event = self.get_event
        plain, built = _PLAIN_TAGS, _PLAIN_VALUES
        if len(plain) > _PLAIN_MAX:
            plain.clear()
            built.clear()
        value: Any = None
        while True:
            event = get_event()
            kind = type(event)
            key_wanted = bool(stack) and type(stack[-1][0]) is dict and stack[-1][1] is None
            if kind is yaml.ScalarEvent:
                tag = event.tag
                implicit = (tag is None or tag == "!") and event.implicit[0]
                if implicit:
                    tag = plain.get(event.value)
                    if tag is None:
                        tag = self.resolve(yaml.ScalarNode, event.value, event.implicit)
                        if len(event.value) <= _PLAIN_LONGEST:
                            plain[event.value] = tag
                elif tag is None or tag == "!":
                    tag = self.resolve(yaml.ScalarNode, event.value, event.implicit)
                if key_wanted:
                    _check_key(stack[-1][0], tag, event)
                    stack[-1][1] = event.value
                    continue
                if tag == _STR:
                    value = event.value
                elif tag in (_MAP, _SEQ):
                    raise _error(f"tag {tag!r} needs {'a mapping' if tag == _MAP else 'a list'} here", event)
                elif implicit and event.value in built:
                    value = built[event.value]
                else:
                    value = self._scalar(tag, _node(yaml.ScalarNode, tag, event.value, event))
                    # A number, a boolean or null: immutable, and the same wherever it is written
                    if implicit and len(event.value) <= _PLAIN_LONGEST:
                        built[event.value] = value
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if key_wanted:
                    raise _error(
                        f"keys must be strings, got {'a mapping' if kind is yaml.MappingStartEvent else 'a list'}",
                        event,
                    )
                if kind is yaml.MappingStartEvent:
                    self._collection(event, yaml.MappingNode, _MAP)
                    stack.append([{}, None])
                else:
                    self._collection(event, yaml.SequenceNode, _SEQ)
                    stack.append([[]])
                if len(stack) > MAX_DEPTH:
                    raise _error(f"nested deeper than {MAX_DEPTH} levels", event)
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                value = stack.pop()[0]
            elif kind is yaml.AliasEvent:
                raise _error("aliases (*name) are not allowed; write the value out", event)
            elif kind is yaml.DocumentEndEvent:
                documents.append(value)
                value = None
                continue
            elif kind is yaml.StreamEndEvent:
                return documents
            else:  # stream and document starts
                continue
            if stack:
                frame = stack[-1]
                if type(frame[0]) is list:
                    frame[0].append(value)
                else:
                    frame[0][frame[1]] = value
                    frame[1] = None


# The events of libyaml carry its own Mark type, which the node and error types accept at run time.
def _error(problem: str, event: Any) -> yaml.MarkedYAMLError:
    return yaml.MarkedYAMLError(None, None, problem, event.start_mark)


def _node(kind: type[yaml.Node], tag: str, value: Any, event: Any) -> yaml.Node:
    """A node for a constructor to read (and to locate its error at)."""
    return kind(tag, value, event.start_mark, event.end_mark)


def _check_key(mapping: dict[str, Any], tag: str, event: yaml.ScalarEvent) -> None:
    if tag == _MERGE:
        raise _error("merge keys (<<) are not allowed", event)
    if tag != _STR:
        raise _error(f"keys must be strings, got {event.value!r}", event)
    if event.value in mapping:
        raise _error(f"duplicate key {event.value!r}", event)


def _reject_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    raise yaml.MarkedYAMLError(None, None, f"tag {node.tag!r} is not allowed", node.start_mark)


def _reject_timestamp(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    raise yaml.MarkedYAMLError(None, None, f"unquoted date {node.value!r} is not allowed; quote it", node.start_mark)


_StrictLoader.add_multi_constructor("!", _reject_tag)
_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _reject_timestamp)
for _tag in ("binary", "set", "omap", "pairs"):
    _StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", lambda loader, node: _reject_tag(loader, "", node))


def _load(text: str) -> list[Any]:
    loader = _StrictLoader(text)
    try:
        return loader.documents()
    finally:
        loader.dispose()


def read_yaml(path: Path | str, display: str) -> Any:
    """Parse one YAML document from ``path``; errors name ``display`` (the path the user knows)."""
    documents = read_yaml_documents(path, display)
    if len(documents) > 1:
        raise ConfigError(f"{display}: expected one YAML document, found {len(documents)}")
    return documents[0] if documents else None


def read_yaml_documents(path: Path | str, display: str) -> list[Any]:
    """Parse every YAML document of ``path`` (empty ones are None); errors name ``display``.

    Only a regular file is read: a FIFO or a device (which a pull request can bring) would block or never end.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ConfigError(f"{display}: not a regular file; the definition is made of YAML files")
        with open(path, encoding="utf-8") as reader:
            text = reader.read()
    except FileNotFoundError:
        raise ConfigError(f"{display}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{display}: cannot read: {exc}") from None
    parsed = _PARSED.get()
    if parsed is not None:
        known = parsed.get(text)
        if known is not None:
            return known
    try:
        documents = _load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "invalid YAML"
        if "maximum nesting depth" in problem:
            # libyaml's own limit (PyYAML 6.0.4 on), which its scanner can meet before the parser hands over the
            # event past MAX_DEPTH: the same fault, said the same way
            problem = f"nested deeper than {MAX_DEPTH} levels"
        raise ConfigError(f"{display}{where}: invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:  # a character YAML does not allow: its message spans lines
        raise ConfigError(f"{display}: invalid YAML: {' '.join(str(exc).split())}") from None
    if parsed is not None:
        parsed.keep(text, documents)
    return documents
