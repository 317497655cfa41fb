"""Change a definition file's text in place, keeping its comments, blank lines and key order.

A YAML library that loads and dumps would lose the comments people write in ``environments/``, so
edits splice lines instead: the file is composed (not constructed) to learn where each node starts
and ends, and only the lines of the list item or key being changed are touched. Every edit returns
new text; nothing here writes files.

The edits cover the shapes the definition uses: a top-level key holding a block list of mappings
(``clusters:``) or a list of names, block or flow (``clusters: [a, b]``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import yaml

from fluxplane.errors import ConfigError

#: Plain scalars that need no quotes in block and flow context.
_PLAIN = re.compile(r"^[A-Za-z0-9_./][A-Za-z0-9_./:@+=-]*$")
#: How far nested keys are indented in text fluxplane writes.
INDENT = 2


def scalar(value: str | int | bool) -> str:
    """``value`` as a YAML scalar: plain when that reads back as the same string, else double-quoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if _PLAIN.fullmatch(value) and yaml.safe_load(value) == value:
        return value
    quoted: str = yaml.safe_dump(value, default_style='"', width=float("inf"), allow_unicode=True)
    return quoted.removesuffix("\n")


def render_mapping(entries: Sequence[tuple[str, Any]], indent: int) -> list[str]:
    """Block YAML lines for ``entries`` (values: scalars, lists of scalars as flow lists, nested entries)."""
    pad = " " * indent
    lines: list[str] = []
    for key, value in entries:
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            lines.append(f"{pad}{key}:\n")
            lines.extend(render_mapping(value, indent + INDENT))
        elif isinstance(value, list):
            lines.append(f"{pad}{key}: [{', '.join(scalar(item) for item in value)}]\n")
        else:
            lines.append(f"{pad}{key}: {scalar(value)}\n")
    return lines


class YamlText:
    """One definition file's text and its composed top-level mapping."""

    def __init__(self, text: str, display: str) -> None:
        self.display = display
        self.lines = text.splitlines(keepends=True)
        if self.lines and not self.lines[-1].endswith("\n"):
            self.lines[-1] += "\n"
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{display}: invalid YAML: {exc}".replace("\n", " ")) from None
        if root is not None and not isinstance(root, yaml.MappingNode):
            raise ConfigError(f"{display}: expected a mapping at the top level")
        self.root: yaml.MappingNode | None = root

    @property
    def text(self) -> str:
        return "".join(self.lines)

    # -- finding nodes --------------------------------------------------------------------------

    def value(self, key: str, mapping: yaml.MappingNode | None = None) -> yaml.Node | None:
        """The value node of ``key`` in ``mapping`` (default: the top level), or None."""
        node = self.root if mapping is None else mapping
        if node is None:
            return None
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                found: yaml.Node = value_node
                return found
        return None

    def key_node(self, key: str) -> yaml.ScalarNode | None:
        for key_node, _ in self.root.value if self.root is not None else ():
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return key_node
        return None

    def sequence(self, key: str) -> yaml.SequenceNode | None:
        """The top-level list under ``key``; None when the key is absent or empty (``key:``)."""
        node = self.value(key)
        if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"):
            return None
        if not isinstance(node, yaml.SequenceNode):
            raise ConfigError(f"{self.display}: {key}: expected a list, found {getattr(node, 'id', 'a scalar')}")
        return node

    # -- extents --------------------------------------------------------------------------------

    def _last_line(self, node: yaml.Node) -> int:
        """The last line (0-based) holding part of ``node``."""
        while isinstance(node, (yaml.SequenceNode, yaml.MappingNode)) and not node.flow_style and node.value:
            last = node.value[-1]
            node = last[1] if isinstance(last, tuple) else last
        line = node.end_mark.line
        if node.end_mark.column == 0 and line > node.start_mark.line:
            line -= 1
        while line > node.start_mark.line and not self.lines[line].strip():
            line -= 1
        return line

    @staticmethod
    def _indent(line: str) -> int:
        return len(line) - len(line.lstrip(" "))

    def _is_comment(self, index: int) -> bool:
        return 0 <= index < len(self.lines) and self.lines[index].lstrip().startswith("#")

    def item_lines(self, sequence: yaml.SequenceNode, index: int) -> tuple[int, int]:
        """Lines [start, end) of item ``index`` of a block list: its dash line through its last line.

        Comments right above the dash, at the dash's indentation, belong to the item; so do comments
        right below its last line that are indented deeper than the dash.
        """
        column = sequence.start_mark.column
        item = sequence.value[index]
        start = item.start_mark.line
        while start > 0 and not self.lines[start][column:].startswith("-"):
            start -= 1
        while self._is_comment(start - 1) and self._indent(self.lines[start - 1]) == column:
            start -= 1
        end = self._last_line(item) + 1
        while self._is_comment(end) and self._indent(self.lines[end]) > column:
            end += 1
        return start, end

    # -- edits ----------------------------------------------------------------------------------

    def append_mapping_item(self, key: str, entries: Sequence[tuple[str, Any]]) -> None:
        """Add a mapping to the end of the top-level list ``key`` (created, or turned from ``[]`` into a block)."""
        sequence = self.sequence(key)
        if sequence is not None and sequence.value and not sequence.flow_style:
            dash = sequence.start_mark.column
            content = sequence.value[0].start_mark.column
            _, end = self.item_lines(sequence, len(sequence.value) - 1)
            self.lines[end:end] = self._item(entries, dash, content)
            return
        if sequence is not None and sequence.value:
            raise ConfigError(
                f"{self.display}: {key}: written as a flow list ([...]); write it as a block list (one '- ' "
                "item per entry) to edit it from the command line"
            )
        dash = INDENT
        block = [f"{key}:\n", *self._item(entries, dash, dash + 2)]
        key_node = self.key_node(key)
        if key_node is None:
            if self.lines and self.lines[-1].strip():
                block.insert(0, "\n")
            self.lines.extend(block)
            return
        value = self.value(key)
        assert value is not None
        self._replace_key_line(key_node, value, block)

    def _replace_key_line(self, key_node: yaml.Node, value: yaml.Node, block: list[str]) -> None:
        line = key_node.start_mark.line
        if value.end_mark.line != line:
            raise ConfigError(f"{self.display}: {key_node.value}: expected its value on the same line")
        tail = self.lines[line][value.end_mark.column :].strip()
        comment = f"  {tail}" if tail.startswith("#") else ""
        block[0] = block[0].rstrip("\n") + comment + "\n"
        self.lines[line : line + 1] = block

    @staticmethod
    def _item(entries: Sequence[tuple[str, Any]], dash: int, content: int) -> list[str]:
        lines = render_mapping(entries, content)
        lines[0] = " " * dash + "-" + " " * (content - dash - 1) + lines[0][content:]
        return lines

    def remove_item(self, key: str, index: int) -> None:
        """Remove item ``index`` of the top-level block list ``key``; the last one leaves ``key: []``."""
        sequence = self.sequence(key)
        assert sequence is not None
        if sequence.flow_style:
            self.set_names(key, [item.value for i, item in enumerate(sequence.value) if i != index])
            return
        if len(sequence.value) == 1:
            key_node, value = self.key_node(key), self.value(key)
            assert key_node is not None and value is not None
            start, end = self.item_lines(sequence, 0)
            first = key_node.start_mark.line
            self.lines[first:end] = [f"{key}: []\n"]
            return
        start, end = self.item_lines(sequence, index)
        del self.lines[start:end]
        # Do not leave two blank lines where one separated the item from its neighbours.
        if 0 < start < len(self.lines) and not self.lines[start - 1].strip() and not self.lines[start].strip():
            del self.lines[start]
        elif start == len(self.lines) and start > 0 and not self.lines[start - 1].strip():
            del self.lines[start - 1]

    def names(self, key: str) -> list[str]:
        """The strings of the top-level list ``key`` (empty when absent)."""
        sequence = self.sequence(key)
        if sequence is None:
            return []
        return [item.value for item in sequence.value if isinstance(item, yaml.ScalarNode)]

    def set_names(self, key: str, names: list[str], after: str | None = None) -> None:
        """Make the top-level list ``key`` hold ``names``, in its style; remove the key when empty.

        A new key goes after the top-level key ``after`` when that exists, else at the end.
        """
        key_node, value = self.key_node(key), self.value(key)
        flow = f"[{', '.join(scalar(name) for name in names)}]"
        if key_node is None or value is None:
            if not names:
                return
            anchor = self.value(after) if after is not None else None
            line = self._last_line(anchor) + 1 if anchor is not None else len(self.lines)
            self.lines[line:line] = [f"{key}: {flow}\n"]
            return
        if not names:
            start = key_node.start_mark.line
            end = self._last_line(value) + 1
            while self._is_comment(start - 1) and self._indent(self.lines[start - 1]) == 0:
                start -= 1
            del self.lines[start:end]
            return
        if isinstance(value, yaml.SequenceNode) and not value.flow_style and value.value:
            # Add after the last item first, then remove from the bottom up: earlier lines never move.
            column = value.start_mark.column
            present = [item.value if isinstance(item, yaml.ScalarNode) else None for item in value.value]
            _, end = self.item_lines(value, len(value.value) - 1)
            self.lines[end:end] = [f"{' ' * column}- {scalar(name)}\n" for name in names if name not in present]
            for index in reversed(range(len(value.value))):
                if present[index] not in names:
                    start, stop = self.item_lines(value, index)
                    del self.lines[start:stop]
            return
        line = value.start_mark.line
        if value.end_mark.line != line:
            raise ConfigError(f"{self.display}: {key}: expected a list on one line to edit it from the command line")
        text = self.lines[line]
        self.lines[line] = text[: value.start_mark.column] + flow + text[value.end_mark.column :]
