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


def test_a_payload_is_read_back_as_written_only_when_it_verifies(tmp_path: Path) -> None:
    # GIVEN a signed file, a payload that holds the separator itself, and a file with no signature line
    signer = Signer(tmp_path / "cache", b"k" * 32)
    signer.write("entry", b"head\nbody\n")
    (tmp_path / "cache" / "bare").write_bytes(b"no signature line")
    # THEN the payload comes back whole, as a view and as bytes
    view = signer.payload("entry")
    assert view is not None and bytes(view) == b"head\nbody\n"
    assert signer.read("entry") == b"head\nbody\n"
    # AND not under another key, not once a byte of it changed, and not without a signature line
    assert Signer(tmp_path / "cache", b"o" * 32).payload("entry") is None
    signed = (tmp_path / "cache" / "entry").read_bytes()
    (tmp_path / "cache" / "entry").write_bytes(signed[:-2] + b"X\n")
    assert signer.payload("entry") is None and signer.read("entry") is None
    assert signer.payload("bare") is None
