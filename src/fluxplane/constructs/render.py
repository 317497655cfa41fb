"""YAML rendering of manifests: one deterministic style for every file fluxplane writes.

libyaml (CSafeDumper) does the work. Keys keep the order the constructs built them in (upstream
order), there are no anchors or aliases, no line folding, two-space indentation, ``---`` between
documents, and multi-line strings (patches, scripts, config files) as ``|`` blocks so diffs stay
readable.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

_Base: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ManifestDumper(_Base):  # type: ignore[misc,valid-type]
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Replaces SafeRepresenter.represent_str (same cost but for the newline test).
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


ManifestDumper.add_representer(str, _represent_str)

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


def parse_documents(text: str) -> list[dict[str, Any]]:
    """The mapping documents of a YAML stream such as dump_documents writes (libyaml; empty ones skipped)."""
    return [document for document in yaml.load_all(text, Loader=_Loader) if isinstance(document, dict)]
