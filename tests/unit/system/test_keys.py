"""Tests for fluxplane.system.keys: the signed files of the caches."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("head", [b"head\nwith lines\n", b"", b"h" * (200 << 10)], ids=["short", "empty", "long"])
def test_a_headed_file_gives_its_head_alone_and_its_body_when_asked(tmp_path: Path, head: bytes) -> None:
    # GIVEN a headed file, its head short, empty or longer than the first read
    signer = Signer(tmp_path / "cache", b"k" * 32)
    signer.write_headed("entry", head, b"body\n" * 3)
    # WHEN its head is read THEN it is the head, and the body is where the head says
    found = signer.head("entry")
    assert found is not None and found.head == head
    assert signer.body(found) == b"body\n" * 3
    # AND under another key there is no head
    assert Signer(tmp_path / "cache", b"o" * 32).head("entry") is None


def test_a_headed_file_that_changed_gives_no_head_or_no_body(tmp_path: Path) -> None:
    signer = Signer(tmp_path / "cache", b"k" * 32)
    path = tmp_path / "cache" / "entry"
    signer.write_headed("entry", b"head", b"body")
    signed = path.read_bytes()
    # GIVEN the signed line or the head edited, or the file cut short THEN there is no head
    for edited in (signed.replace(b" 4 ", b" 5 "), signed.replace(b"head", b"HEAD"), signed[:-1], b"no lines"):
        path.write_bytes(edited)
        assert signer.head("entry") is None
    # AND a head read before the body was edited (to the same length) or the file rewritten gives no body
    path.write_bytes(signed)
    head = signer.head("entry")
    assert head is not None
    path.write_bytes(signed.replace(b"body", b"BODY"))
    assert signer.body(head) is None
    signer.write_headed("entry", b"head", b"other")
    assert signer.body(head) is None
    path.unlink()
    assert signer.body(head) is None


def test_a_headed_file_that_is_a_symlink_or_a_fifo_is_not_read(tmp_path: Path) -> None:
    signer = Signer(tmp_path / "cache", b"k" * 32)
    signer.write_headed("real", b"head", b"body")
    (tmp_path / "cache" / "linked").symlink_to(tmp_path / "cache" / "real")
    os.mkfifo(tmp_path / "cache" / "fifo")
    assert signer.head("linked") is None and signer.head("fifo") is None
