"""Generated HTML read back as a small tree, to ask pages what they show rather than how they spell it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

#: Elements HTML closes by itself.
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    """One element: its tag, attributes and children (elements and strings)."""

    tag: str
    attributes: dict[str, str] = field(default_factory=dict)
    children: list[Element | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attributes.get("class", "").split())

    @property
    def text(self) -> str:
        """The text inside, as a reader sees it (whitespace collapsed)."""
        parts: list[str] = []
        for child in self.children:
            # a line break reads as a space
            parts.append(child if isinstance(child, str) else " " if child.tag == "br" else child.text)
        return " ".join("".join(parts).split())

    def iter(self, tag: str | None = None, css: str | None = None) -> Iterator[Element]:
        """Every element below this one (depth first), with ``tag`` and the class ``css`` when given."""
        for child in self.children:
            if isinstance(child, Element):
                if (tag is None or child.tag == tag) and (css is None or css in child.classes):
                    yield child
                yield from child.iter(tag, css)

    def find(self, tag: str | None = None, css: str | None = None) -> Element:
        found = next(self.iter(tag, css), None)
        assert found is not None, f"no <{tag} class={css}>"
        return found


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("document")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        open_tags = [element.tag for element in self.stack]
        assert tag in open_tags, f"</{tag}> closes nothing open ({open_tags})"
        while self.stack[-1].tag != tag:
            self.stack.pop()
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(text: str) -> Element:
    """``text`` as a tree; every element must be closed where it should be."""
    builder = _Builder()
    builder.feed(text)
    builder.close()
    assert [element.tag for element in builder.stack] == ["document"], "unclosed elements"
    return builder.root
