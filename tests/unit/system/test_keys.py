"""Tests for fluxplane.system.keys: the signed files of the caches."""

from __future__ import annotations

import marshal
from pathlib import Path

from fluxplane.system.keys import Signer


def test_a_marshalled_mapping_is_read_back_only_when_it_verifies_and_is_a_mapping(tmp_path: Path) -> None:
    signer = Signer(tmp_path / "cache", b"k" * 32)
    # GIVEN a mapping written signed THEN it reads back
    signer.write("map.entry", marshal.dumps({"a": [1, "b"]}))
    assert signer.read_marshalled("map.entry") == {"a": [1, "b"]}
    # AND signed with another key, not marshalled, or not a mapping, it reads as nothing
    assert Signer(tmp_path / "cache", b"o" * 32).read_marshalled("map.entry") is None
    signer.write("text.entry", b"not marshal")
    assert signer.read_marshalled("text.entry") is None
    signer.write("list.entry", marshal.dumps([1, 2]))
    assert signer.read_marshalled("list.entry") is None
    assert signer.read_marshalled("missing.entry") is None
