"""Crossplane field paths over JSON data, as crossplane-runtime's ``pkg/fieldpath`` reads and writes them.

Ported from crossplane-runtime v2.3.3 (``fieldpath.go``, ``paved.go``, ``merge.go``; identical at
commit 4e7ed23), which function-patch-and-transform uses for every patch:

- ``spec.forProvider.tags[kubernetes.io/role]`` and ``metadata.labels["a.b/c"]``: a bracketed segment is
  an array index when it is a base-10 unsigned integer, otherwise a field; quotes (``'`` and ``"``) are
  trimmed from both ends of every field; ``[*]`` is a wildcard.
- Reading a missing field or element is *not found* (a patch with that source is skipped); reading
  through a value of the wrong type (an index into a map or null, a field of a string) is an error.
- Writing creates missing objects and arrays on the way (arrays are padded with nulls), refuses indexes
  above 1024 and values of the wrong type on the way, and round-trips the value through JSON
  (whole floats become integers, as Kubernetes' JSON decoder makes them int64).
- Merging (``MergeObjects``, ``ForceMergeObjects`` and the ``AppendArrays`` variants) follows
  ``dario.cat/mergo`` v1.0.2 as ``fieldpath.MergeValue`` drives it, quirks included: without override a
  target value that is empty (``""``, ``0``, ``false``, ``[]``, ``{}``, null) is still replaced, and a
  non-empty target array is kept.

:class:`Unknown` stands for a value only the running system knows (an observed status field): reading
through it gives it back, and it survives writes and merges.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from typing import Any

Segment = str | int
Segments = tuple[Segment, ...]

WILDCARD = "*"
MAX_INDEX = 1024
_INDEX = re.compile(r"[0-9]+")


class FieldPathError(Exception):
    """A path that cannot be parsed, read or written."""


class NotFound(FieldPathError):
    """The path does not exist in the object (a patch from it is skipped, or blocks a Required one)."""


class Unknown:
    """A value only the running system knows: an observed status field, a generated name."""

    __slots__ = ("source",)

    def __init__(self, source: str = "") -> None:
        self.source = source

    def __repr__(self) -> str:
        return f"Unknown({self.source!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unknown)

    def __hash__(self) -> int:
        return hash(Unknown)


def _field(text: str) -> str:
    return text.strip("'\"")


def _field_or_index(text: str) -> Segment:
    if _INDEX.fullmatch(text) and int(text) <= 0xFFFFFFFF:
        return int(text)
    return _field(text)


@functools.lru_cache(maxsize=4096)
def parse(path: str) -> Segments:
    """The segments of ``path``; a :class:`FieldPathError` names the offending position like upstream."""
    segments: list[Segment] = []
    pos = start = 0
    end = len(path)

    def error(at: int, message: str) -> FieldPathError:
        return FieldPathError(f"cannot parse path {path!r}: {message} at position {at}")

    while True:
        # lexField
        while pos < end and path[pos] not in ".[]":
            pos += 1
        if pos < end and path[pos] == "]":
            raise error(pos, "unexpected ']'")
        if pos > start:
            segments.append(_field(path[start:pos]))
        start = pos
        if pos >= end:
            return tuple(segments)
        if path[pos] == ".":
            # lexPeriod
            if pos == 0 or pos == end - 1:
                raise error(pos, "unexpected '.'")
            pos += 1
            start = pos
            if path[pos] == ".":
                raise error(pos, "unexpected '.'")
            if path[pos] == "[":
                raise error(pos, "unexpected '['")
            continue
        # lexLeftBracket
        if "]" not in path[pos:]:
            raise error(pos, "unterminated '['")
        pos += 1
        start = pos
        # lexFieldOrIndex
        close = path.index("]", pos)
        if close == pos:
            raise error(pos, "unexpected ']'")
        nested = path.find("[", pos, close)
        if nested > -1:
            raise error(nested, "unexpected '['")
        segments.append(_field_or_index(path[pos:close]))
        # lexRightBracket
        pos = close + 1
        start = pos


def format_segments(segments: Sequence[Segment]) -> str:
    """Segments as crossplane-runtime prints them: ``a.b[0][c.d]``."""
    out = ""
    for segment in segments:
        if isinstance(segment, int) or segment == WILDCARD or "." in segment:
            out += f"[{segment}]"
        else:
            out += f".{segment}"
    return out.removeprefix(".")


def get(data: Any, segments: Segments) -> Any:
    """The value at ``segments``; :class:`NotFound` when it is absent, :class:`FieldPathError` on a type clash.

    An empty path reads as null, as upstream's loop over no segments returns nil.
    """
    if not segments:
        return None
    current = data
    for i, segment in enumerate(segments):
        if isinstance(current, Unknown):
            return current
        if isinstance(segment, int):
            if not isinstance(current, list):
                raise FieldPathError(f"{format_segments(segments[:i])}: not an array")
            if segment >= len(current):
                raise NotFound(f"{format_segments(segments[: i + 1])}: no such element")
            current = current[segment]
        elif isinstance(current, dict):
            if segment not in current:
                raise NotFound(f"{format_segments(segments[: i + 1])}: no such field")
            current = current[segment]
        elif current is None:
            raise NotFound(f"{format_segments(segments[:i])}: expected map, got nil")
        else:
            raise FieldPathError(f"{format_segments(segments[:i])}: not an object")
    return current


def to_json(value: Any) -> Any:
    """``value`` after a JSON round trip through Kubernetes' decoder: whole floats below 1e21 become integers."""
    if isinstance(value, bool) or value is None or isinstance(value, str | int | Unknown):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise FieldPathError(f"cannot marshal value to JSON: json: unsupported value: {go_float_name(value)}")
        if value.is_integer() and abs(value) < 1e21 and -(2**63) <= value < 2**63:
            return int(value)
        return value
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    raise FieldPathError(f"cannot marshal value to JSON: json: unsupported type: {type(value).__name__}")


def go_float_name(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "+Inf" if value > 0 else "-Inf"


def copy_json(value: Any) -> Any:
    """A deep copy of JSON data (much faster than ``copy.deepcopy``)."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value


def _prepare(container: Any, key: Segment, following: Segment) -> None:
    """prepareField / prepareElement: create or pad what the next segment walks into."""
    present = (key in container) if isinstance(container, dict) else container[key] is not None
    if not present or isinstance(container[key], Unknown):
        container[key] = [None] * (following + 1) if isinstance(following, int) else {}
        return
    if not isinstance(following, int):
        return
    existing = container[key]
    if isinstance(existing, list) and following >= len(existing):
        existing.extend([None] * (following - len(existing) + 1))


def set_value(data: dict[str, Any], segments: Segments, value: Any) -> None:
    """Write ``value`` (after a JSON round trip) at ``segments``, creating what is missing on the way."""
    value = to_json(value)
    for segment in segments:
        if isinstance(segment, int) and segment > MAX_INDEX:
            raise FieldPathError(f"index {segment} is greater than max allowed index {MAX_INDEX}")
    current: Any = data
    last = len(segments) - 1
    for i, segment in enumerate(segments):
        if isinstance(segment, int):
            if not isinstance(current, list):
                raise FieldPathError(f"{format_segments(segments[:i])} is not an array")
        elif not isinstance(current, dict):
            raise FieldPathError(f"{format_segments(segments[:i])} is not an object")
        if i == last:
            current[segment] = value
            return
        _prepare(current, segment, segments[i + 1])
        current = current[segment]


def expand_wildcards(data: Any, segments: Segments) -> list[Segments]:
    """The concrete paths a ``[*]`` path stands for in ``data`` (``Paved.ExpandWildcards``)."""
    for i, segment in enumerate(segments):
        if segment == WILDCARD:
            current = get(data, segments[:i]) if i else data
            out: list[Segments] = []
            if isinstance(current, list):
                for index in range(len(current)):
                    out.extend(expand_wildcards(data, (*segments[:i], index, *segments[i + 1 :])))
            elif isinstance(current, dict):
                for key in sorted(current):
                    out.extend(expand_wildcards(data, (*segments[:i], key, *segments[i + 1 :])))
            elif current is None:
                raise NotFound(f"wildcard field {format_segments(segments[:i])!r} is not found in the path")
            else:
                raise FieldPathError(f"{format_segments(segments[:i])!r}: unexpected wildcard usage")
            return out
        try:
            get(data, segments[: i + 1])
        except NotFound:
            return []
    return [segments]


# -- merging (fieldpath.MergeValue over dario.cat/mergo v1.0.2) --------------------------------------


def _is_empty(value: Any) -> bool:
    """mergo's isEmptyValue, dereferencing interfaces."""
    if value is None:
        return True
    if isinstance(value, Unknown):
        return False
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value == 0
    if isinstance(value, str | list | dict):
        return len(value) == 0
    return False


def _merge_map(dst: dict[str, Any], src: dict[str, Any], overwrite: bool, append: bool) -> None:
    """mergo's deepMerge for two map[string]any values, in place on ``dst``."""
    for key, source in src.items():
        present = key in dst
        target = dst.get(key)
        if source is None:
            if overwrite:
                dst[key] = None
            continue
        if isinstance(source, dict):
            if present and isinstance(target, dict):
                _merge_map(target, source, overwrite, append)
        elif isinstance(source, list):
            merged: Any = [] if not present or target is None else target
            if not append and (overwrite or _is_empty(dst)):
                merged = source
            elif append:
                if not isinstance(merged, list):
                    raise FieldPathError(
                        "failed to merge values: cannot append two slices with different type "
                        f"([]interface {{}}, {go_type(merged)})"
                    )
                merged = merged + source
            dst[key] = merged
        if present and not _is_empty(target):
            if isinstance(source, list):
                continue
            if isinstance(source, dict) and isinstance(target, dict):
                continue
        if overwrite or not present or _is_empty(target):
            dst[key] = source


def deep_equal(left: Any, right: Any) -> bool:
    """Go's reflect.DeepEqual over decoded JSON: 1, 1.0 and true differ."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(deep_equal(left[key], right[key]) for key in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(deep_equal(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right)


def _remove_source_duplicates(dst: Any, src: Any) -> Any:
    if not isinstance(dst, list) or not isinstance(src, list):
        return src
    return [item for item in src if not any(deep_equal(item, existing) for existing in dst)]


def merge(dst: Any, src: Any, keep_map_values: bool, append_slice: bool) -> Any:
    """``fieldpath.merge``: ``src`` merged into ``dst`` (neither is changed)."""
    if dst is None or src is None:
        return src
    if isinstance(dst, Unknown) or isinstance(src, Unknown):
        return Unknown("merged with an observed value")
    if append_slice:
        src = _remove_source_duplicates(dst, src)
    wrapped = {"arg": copy_json(dst)}
    _merge_map(wrapped, {"arg": copy_json(src)}, overwrite=not keep_map_values, append=append_slice)
    return wrapped["arg"]


def merge_value(data: dict[str, Any], segments: Segments, value: Any, options: tuple[bool, bool] | None) -> None:
    """``Paved.MergeValue``: ``options`` is (keepMapValues, appendSlice), None to replace."""
    target: Any = None
    if options is not None:
        try:
            target = get(data, segments)
        except NotFound:
            target = None
    merged = value if options is None else merge(target, value, *options)
    set_value(data, segments, merged)


def go_type(value: Any) -> str:
    """The Go type name ``%T`` prints for a JSON value decoded into ``any``."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return type(value).__name__
