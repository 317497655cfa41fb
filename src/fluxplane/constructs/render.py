"""YAML rendering of manifests: one deterministic style for every file fluxplane writes.

libyaml (CSafeDumper) does the work. Keys keep the order the constructs built them in (upstream
order), there are no anchors or aliases, no line folding, two-space indentation, ``---`` between
documents, and :class:`BlockStr` strings (patches, scripts) as ``|`` blocks so diffs stay readable.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

_Base: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class ManifestDumper(_Base):  # type: ignore[misc,valid-type]
    def ignore_aliases(self, data: Any) -> bool:
        return True


class BlockStr(str):
    """A string written as a ``|`` block (patches, scripts): multi-line text stays readable in diffs.

    A subclass rather than a check on every string, because the representer runs once per scalar
    and dumping is most of what synth does.
    """

    __slots__ = ()


def _represent_block(dumper: yaml.SafeDumper, value: BlockStr) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style="|")


ManifestDumper.add_representer(BlockStr, _represent_block)

_OPTIONS: dict[str, Any] = {
    "Dumper": ManifestDumper,
    "sort_keys": False,
    "default_flow_style": False,
    "allow_unicode": True,
    "width": 1 << 30,
    "indent": 2,
}


def dump_documents(documents: Iterable[dict[str, Any]]) -> str:
    """A multi-document YAML file: ``---`` between documents, a final newline."""
    return yaml.dump_all(documents, **_OPTIONS)  # type: ignore[no-any-return]


def dump_value(value: Any) -> str:
    """A single YAML value (used for inline kustomize patches)."""
    return yaml.dump(value, **_OPTIONS)  # type: ignore[no-any-return]
