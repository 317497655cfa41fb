"""YAML rendering of manifests: one deterministic style for every file fluxplane writes.

libyaml (CSafeDumper) does the work. Keys keep the order the constructs built them in (upstream
order), there are no anchors or aliases, no line folding, two-space indentation, ``---`` between
documents, and multi-line strings (patches, scripts, config files) as ``|`` blocks so diffs stay
readable.

Every string reads back as the same string in YAML 1.2, which the controllers, kustomize and Flux read
with (go-yaml), as well as in YAML 1.1, which PyYAML writes by.
"""

from __future__ import annotations

import re
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

# What a YAML 1.2 reader takes for a number or a boolean where YAML 1.1 reads a string (``1e3``,
# ``0o17``, ``08540``, an AWS account id such as ``012345678912``): the core schema's ints and floats as
# go-yaml reads them (``_`` anywhere among the digits, upper-case ``0B``, ``0O`` and ``0X``), and go-yaml's
# ``y`` and ``n``. The emitter quotes a string that resolves to another type, as it does YAML 1.1's
# numbers, booleans and null; resolving is a step it takes for every scalar anyway, and it tries these
# only on strings that start like one.
GO_YAML_INT = re.compile(r"^[-+]?(?:0[bB][01_]+|0[oO][0-7_]+|0[xX][0-9a-fA-F_]+|[0-9_]+)\Z")
GO_YAML_FLOAT = re.compile(
    r"^(?:[-+]?(?:(?:[0-9_]+(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9_]+)?|\.(?:inf|Inf|INF))|\.(?:nan|NaN|NAN))\Z"
)
GO_YAML_Y_N = re.compile(r"^[yYnN]\Z")
ManifestDumper.add_implicit_resolver("tag:yaml.org,2002:int", GO_YAML_INT, list("-+0123456789"))
ManifestDumper.add_implicit_resolver("tag:yaml.org,2002:float", GO_YAML_FLOAT, list("-+.0123456789"))
ManifestDumper.add_implicit_resolver("tag:yaml.org,2002:bool", GO_YAML_Y_N, list("yYnN"))

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


def load_documents(text: str) -> list[Any]:
    """Every document of a YAML stream, in order, an empty one as None: a document's number is its place."""
    return list(yaml.load_all(text, Loader=_Loader))
