"""Tests for fluxplane.config.parsed: the definition's files parsed before, read back instead of parsed again."""

from __future__ import annotations

import hashlib
import hmac
import marshal
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.config import parsed, yamlfile
from fluxplane.config.parsed import ENTRY, FOLDER, ParsedFiles, parsed_files
from fluxplane.config.yamlfile import read_yaml_documents
from fluxplane.errors import ConfigError
from fluxplane.system.keys import CACHE_DIR

KEY = b"k" * 32

TEXTS = {
    "a.yaml": "name: a\nreplicas: 2\nratio: 1.5\nenabled: true\nnone: null\nlist: [1, '2', -0.0, .inf]\n",
    "b.yaml": "---\nkind: One\n---\n---\nkind: Three\nnested: {deep: [{x: 'y'}]}\n",
    "c.yaml": "",
}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    folder = tmp_path / "environments"
    folder.mkdir()
    for name, text in TEXTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _store(tmp_path: Path, read_only: bool = False, key: bytes | None = KEY) -> ParsedFiles:
    return ParsedFiles(tmp_path / CACHE_DIR / FOLDER, key, read_only=read_only)


def _read_all(folder: Path, store: ParsedFiles | None) -> dict[str, list[Any]]:
    with yamlfile.parsed_from(store):
        found = {path.name: read_yaml_documents(path, path.name) for path in sorted(folder.iterdir())}
    if store is not None:
        store.write()
    return found


def _refuse_parsing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every parse fail; the texts that were parsed anyway."""
    parsed_texts: list[str] = []

    def refuse(text: str) -> list[Any]:
        parsed_texts.append(text)
        raise AssertionError("parsed again")

    monkeypatch.setattr(yamlfile, "_load", refuse)
    return parsed_texts


def test_documents_read_back_equal_a_fresh_parse_and_nothing_is_parsed_again(
    tmp_path: Path, files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the files read once through the store
    fresh = _read_all(files, None)
    assert _read_all(files, _store(tmp_path)) == fresh
    # WHEN read again through a new store, parsing refused THEN the same documents come back, types and order kept
    _refuse_parsing(monkeypatch)
    again = _read_all(files, _store(tmp_path))
    assert again == fresh
    assert [list(document) for document in again["a.yaml"]] == [list(document) for document in fresh["a.yaml"]]
    assert [type(value) for value in again["a.yaml"][0]["list"]] == [int, str, float, float]
    assert str(again["a.yaml"][0]["list"][2]) == "-0.0"


def test_the_store_is_keyed_by_text_not_path(tmp_path: Path, files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the files read through the store, then renamed
    fresh = _read_all(files, _store(tmp_path))
    for path in list(files.iterdir()):
        path.rename(path.with_name(f"moved-{path.name}"))
    # WHEN read again THEN nothing is parsed
    _refuse_parsing(monkeypatch)
    assert _read_all(files, _store(tmp_path)) == {f"moved-{name}": documents for name, documents in fresh.items()}


def _resign(path: Path, key: bytes, change: Callable[[bytes], bytes] = lambda payload: payload) -> None:
    payload = change(path.read_bytes().partition(b"\n")[2])
    path.write_bytes(hmac.new(key, payload, hashlib.sha256).hexdigest().encode("ascii") + b"\n" + payload)


def _tamper(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[-3] ^= 1
    path.write_bytes(bytes(raw))


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _symlink(path: Path) -> None:
    copy = path.with_name("elsewhere")
    path.rename(copy)
    path.symlink_to(copy)


def _other_parser(path: Path) -> None:
    data = marshal.loads(path.read_bytes().partition(b"\n")[2])
    data["code"] = "another parser"
    _resign(path, KEY, lambda payload: marshal.dumps(data))


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda path: _resign(path, b"x" * 32), id="other-key"),
        pytest.param(_tamper, id="tampered"),
        pytest.param(lambda path: _resign(path, KEY, lambda payload: payload[: len(payload) // 2]), id="unparsable"),
        pytest.param(lambda path: _resign(path, KEY, lambda payload: marshal.dumps([1, 2])), id="not-a-mapping"),
        pytest.param(_other_parser, id="other-parser"),
        pytest.param(_fifo, id="fifo"),
        pytest.param(_symlink, id="symlink"),
    ],
)
def test_a_store_not_written_here_by_this_parser_is_ignored(
    tmp_path: Path, files: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[Path], None]
) -> None:
    # GIVEN a store whose documents were changed, then the store damaged, re-signed or replaced
    _read_all(files, _store(tmp_path))
    path = tmp_path / CACHE_DIR / FOLDER / ENTRY
    data = marshal.loads(path.read_bytes().partition(b"\n")[2])
    data["files"] = {key: marshal.dumps([{"planted": True}]) for key in data["files"]}
    _resign(path, KEY, lambda payload: marshal.dumps(data))
    damage(path)
    # WHEN read THEN every file is parsed again: nothing the store holds is trusted
    load = yamlfile._load
    parsed_texts: list[str] = []

    def counting(text: str) -> list[Any]:
        parsed_texts.append(text)
        return load(text)

    monkeypatch.setattr(yamlfile, "_load", counting)
    assert _read_all(files, _store(tmp_path)) == _read_all(files, None)
    assert sorted(parsed_texts) == sorted([*TEXTS.values()] * 2)


def test_the_planted_store_of_the_damage_test_would_be_read_if_it_verified(tmp_path: Path, files: Path) -> None:
    # GIVEN the same planted documents, signed with this user's key THEN they are read: the test above damages
    # a store that would otherwise be trusted
    _read_all(files, _store(tmp_path))
    path = tmp_path / CACHE_DIR / FOLDER / ENTRY
    data = marshal.loads(path.read_bytes().partition(b"\n")[2])
    data["files"] = {key: marshal.dumps([{"planted": True}]) for key in data["files"]}
    _resign(path, KEY, lambda payload: marshal.dumps(data))
    assert _read_all(files, _store(tmp_path))["a.yaml"] == [{"planted": True}]


def test_a_yaml_error_is_the_same_with_the_other_files_stored_and_is_never_stored(tmp_path: Path, files: Path) -> None:
    # GIVEN a store of the other files, and a file with a YAML error
    _read_all(files, _store(tmp_path))
    broken = files / "broken.yaml"
    broken.write_text("a: 1\nb: [\n", encoding="utf-8")
    with pytest.raises(ConfigError) as without:
        read_yaml_documents(broken, "environments/broken.yaml")
    # WHEN read through the store, twice THEN the error is today's, each time
    for _ in range(2):
        store = _store(tmp_path)
        with pytest.raises(ConfigError) as found, yamlfile.parsed_from(store):
            read_yaml_documents(broken, "environments/broken.yaml")
        assert found.value.problems == without.value.problems
        assert found.value.problems[0].startswith("environments/broken.yaml:3:1: invalid YAML: ")
        store.write()
    # AND the store holds no entry for it
    assert _store(tmp_path).get(broken.read_text()) is None


def test_a_changed_document_does_not_leak_into_another_lookup(tmp_path: Path, files: Path) -> None:
    # GIVEN two files of the same text, read through the store when it does not hold them yet
    (files / "twin.yaml").write_text(TEXTS["a.yaml"], encoding="utf-8")
    store = _store(tmp_path)
    with yamlfile.parsed_from(store):
        first = read_yaml_documents(files / "a.yaml", "a.yaml")
        first[0]["name"] = "changed"
        first[0]["list"].append("more")
        # WHEN the other is read THEN it is not changed
        twin = read_yaml_documents(files / "twin.yaml", "twin.yaml")
        assert twin == _read_all(files, None)["a.yaml"]
        twin[0]["replicas"] = 3
        assert read_yaml_documents(files / "a.yaml", "a.yaml") == _read_all(files, None)["a.yaml"]
    store.write()
    # AND a later run reads what was parsed, not what the callers made of it
    assert _read_all(files, _store(tmp_path))["twin.yaml"] == _read_all(files, None)["a.yaml"]


def test_the_store_holds_only_the_files_of_the_last_run_that_parsed(tmp_path: Path, files: Path) -> None:
    # GIVEN a store of three files
    _read_all(files, _store(tmp_path))
    path = tmp_path / CACHE_DIR / FOLDER / ENTRY
    assert len(marshal.loads(path.read_bytes().partition(b"\n")[2])["files"]) == 3
    # WHEN a run parses nothing new THEN the store is not written
    (files / "c.yaml").unlink()
    written = path.stat().st_mtime_ns
    os.utime(path, ns=(written - 10**9, written - 10**9))
    _read_all(files, _store(tmp_path))
    assert path.stat().st_mtime_ns == written - 10**9
    # WHEN a run parses a new file THEN the store holds that run's files only
    (files / "a.yaml").write_text("name: new\n", encoding="utf-8")
    _read_all(files, _store(tmp_path))
    stored = marshal.loads(path.read_bytes().partition(b"\n")[2])["files"]
    assert sorted(repr(marshal.loads(entry)) for entry in stored.values()) == sorted(
        [repr([{"name": "new"}]), repr(_read_all(files, None)["b.yaml"])]
    )


def test_a_read_only_store_is_read_but_never_written(
    tmp_path: Path, files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN no store WHEN files are read through a read-only one THEN none is written
    _read_all(files, _store(tmp_path, read_only=True))
    assert not (tmp_path / CACHE_DIR).exists()
    # AND a store written before is read
    fresh = _read_all(files, _store(tmp_path))
    _refuse_parsing(monkeypatch)
    assert _read_all(files, _store(tmp_path, read_only=True)) == fresh


def test_without_a_key_nothing_is_read_or_written(tmp_path: Path, files: Path) -> None:
    _read_all(files, _store(tmp_path, key=None))
    assert not (tmp_path / CACHE_DIR).exists()


def test_parsed_files_is_the_projects_store_and_is_written_only_when_the_block_succeeds(
    tmp_path: Path, files: Path
) -> None:
    # GIVEN a block that stops with an error WHEN it ends THEN nothing is written
    with pytest.raises(ConfigError), parsed_files(tmp_path) as store:
        read_yaml_documents(files / "a.yaml", "a.yaml")
        raise ConfigError("stopped")
    assert not (tmp_path / CACHE_DIR).exists()
    # GIVEN a block that ends WHEN it does THEN the store below the project folder is written
    with parsed_files(tmp_path) as store:
        read_yaml_documents(files / "a.yaml", "a.yaml")
    assert store.signer.folder == tmp_path / CACHE_DIR / FOLDER
    assert (tmp_path / CACHE_DIR / FOLDER / ENTRY).is_file()
    # AND outside the block files are parsed
    assert yamlfile._PARSED.get() is None


def test_the_parser_key_covers_the_parsers_source_pyyaml_and_libyaml() -> None:
    parsed.parser_key.cache_clear()
    try:
        key = parsed.parser_key()
        assert key is not None
        for name, value in (("LIBYAML", not yamlfile.LIBYAML), ("__file__", parsed.__file__)):
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(yamlfile, name, value)
                parsed.parser_key.cache_clear()
                assert parsed.parser_key() not in (key, None)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(yaml, "__version__", "0.0")
            parsed.parser_key.cache_clear()
            assert parsed.parser_key() not in (key, None)
    finally:
        parsed.parser_key.cache_clear()
