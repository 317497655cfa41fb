"""The synth cache: entries stored and verified, damaged entries ignored, keys that change with their inputs."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import hmac
import importlib
import marshal
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from fluxplane.charts.addon_identities import AddonRole
from fluxplane.core.codec import dump_documents
from fluxplane.errors import OutputError
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import Pipeline, load_plan, render, synthesize, writer
from fluxplane.synth.cache import (
    _PACKAGE,
    DUMPS,
    CachedCluster,
    FolderIndex,
    SynthCache,
    _package_files,
    code_key,
    input_keys,
)
from fluxplane.synth.render import Dumps
from fluxplane.system.keys import CACHE_DIR, Signer, user_key
from tests.conftest import MINIMAL_BASE, FleetWriter
from tests.support.sealing import put, sealed

#: A user's key (see fluxplane.system.keys.user_key).
KEY = b"k" * 32

ROLE = AddonRole(
    pack="external-dns",
    name="external-dns",
    namespace="external-dns",
    service_account="external-dns",
    managed_policies=("arn:aws:iam::aws:policy/ReadOnlyAccess",),
    # key order is part of the output: not sorted
    policy={"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "route53:*", "Resource": "*"}]},
)
ENTRY = CachedCluster(
    input_key="in",
    shared_key="shared",
    files={"platform/clusters/a/kustomization.yaml": "resources: []\n", "platform/clusters/a/README.md": "# a\n"},
    roles=(ROLE,),
)


def test_stored_entry_loads_back_equal_with_policy_key_order(tmp_path: Path) -> None:
    # GIVEN a stored entry WHEN loaded THEN it equals what was stored, policy keys in their order
    cache = SynthCache(tmp_path, KEY)
    cache.store("a", ENTRY)
    loaded = cache.load("a")
    assert loaded == ENTRY
    assert loaded is not None and loaded.roles[0].policy is not None
    assert list(loaded.roles[0].policy) == ["Version", "Statement"]
    # with each file's digest, as the write of dist/ takes it (the SHA-1 of its UTF-8)
    assert isinstance(loaded.files, writer.TreeFiles)
    assert {path: loaded.files.digest(path) for path in loaded.files} == {
        path: hashlib.sha1(text.encode()).hexdigest() for path, text in ENTRY.files.items()
    }


def test_entry_whose_digest_changed_is_ignored(tmp_path: Path) -> None:
    # GIVEN an entry one of whose files' digests was edited WHEN loaded THEN there is none
    cache = SynthCache(tmp_path, KEY)
    cache.store("a", ENTRY)
    path = tmp_path / "a.entry"
    digest = hashlib.sha1(b"# a\n").hexdigest().encode("ascii")
    raw = path.read_bytes()
    assert digest in raw
    path.write_bytes(raw.replace(digest, b"0" * len(digest)))
    assert cache.load("a") is None


def test_missing_entry_is_none(tmp_path: Path) -> None:
    assert SynthCache(tmp_path, KEY).load("a") is None


def test_truncated_entry_is_ignored(tmp_path: Path) -> None:
    # GIVEN an entry cut in half WHEN loaded THEN there is none
    cache = SynthCache(tmp_path, KEY)
    cache.store("a", ENTRY)
    path = tmp_path / "a.entry"
    path.write_bytes(path.read_bytes()[:-40])
    assert cache.load("a") is None


def test_entry_whose_text_changed_is_ignored(tmp_path: Path) -> None:
    # GIVEN an entry whose texts were edited to another length WHEN loaded THEN there is none
    cache = SynthCache(tmp_path, KEY)
    cache.store("a", ENTRY)
    path = tmp_path / "a.entry"
    path.write_bytes(path.read_bytes().replace(b"resources: []", b"resources: [x]"))
    assert cache.load("a") is None


def test_texts_with_any_characters_load_back_as_stored(tmp_path: Path) -> None:
    # GIVEN texts with newlines, non-ASCII characters, an empty one and JSON-like content
    files = {"x/a.yaml": "é\n\u2028\n", "x/empty.yaml": "", "x/b.yaml": '{"files": [["x", 1]]}\n\n'}
    cache = SynthCache(tmp_path, KEY)
    cache.store("a", dataclasses.replace(ENTRY, files=files))
    # WHEN loaded THEN each text is back, whole
    loaded = cache.load("a")
    assert loaded is not None and loaded.files == files


def _entry(cache_dir: Path) -> tuple[tuple[Any, ...], Any]:
    """The head and the texts of a's entry."""
    _, line, rest = (cache_dir / "a.entry").read_bytes().split(b"\n", 2)
    size = int(line.split(b" ")[0])
    return tuple(marshal.loads(rest[:size])), marshal.loads(rest[size:])


def _signed(cache_dir: Path, head: Any, texts: Any) -> None:
    """a's entry made of ``head`` and ``texts``, signed with this user's key."""
    Signer(cache_dir, KEY).write_headed("a.entry", marshal.dumps(head), marshal.dumps(texts))


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda head: head[:-1], id="a field short"),
        pytest.param(lambda head: (*head[:4], head[4][:1], *head[5:]), id="fewer paths than digests"),
        pytest.param(lambda head: (*head[:5], [*head[5], "0" * 40], head[6]), id="more digests than paths"),
        pytest.param(lambda head: (*head[:4], ["../../outside", head[4][1]], *head[5:]), id="a path out of dist"),
        pytest.param(lambda head: (*head[:4], [head[4][0], "/etc/passwd"], *head[5:]), id="an absolute path"),
        pytest.param(lambda head: (*head[:4], [b"bytes", head[4][1]], *head[5:]), id="a path not a string"),
        pytest.param(lambda head: (*head[:5], [head[5][0], 1], head[6]), id="a digest not a string"),
        pytest.param(lambda head: (*head[:2], 1, *head[3:]), id="a key not a string"),
        pytest.param(lambda head: (head[0] - 1, *head[1:]), id="another format"),
        pytest.param(lambda head: {"files": head}, id="not a tuple"),
    ],
)
def test_a_signed_entry_of_another_shape_is_ignored(tmp_path: Path, forge: Any) -> None:
    # GIVEN an entry whose head was changed to another shape, signed again with this user's key
    cache = SynthCache(tmp_path, KEY)
    cache.store("a", ENTRY)
    head, texts = _entry(tmp_path)
    _signed(tmp_path, forge(head), texts)
    # WHEN loaded THEN there is none
    assert cache.load("a") is None


@pytest.mark.parametrize(
    "texts",
    [
        pytest.param(["resources: []\n"], id="fewer texts than paths"),
        pytest.param(["resources: []\n", "# a\n", "x\n"], id="more texts than paths"),
        pytest.param([b"resources: []\n", "# a\n"], id="a text not a string"),
        pytest.param({"texts": ["resources: []\n", "# a\n"]}, id="not a list"),
    ],
)
def test_signed_texts_of_another_shape_are_not_used_and_the_entry_is_removed(tmp_path: Path, texts: Any) -> None:
    # GIVEN an entry whose texts are of another shape, signed with this user's key
    cache = SynthCache(tmp_path, KEY)
    cache.store("a", ENTRY)
    _signed(tmp_path, _entry(tmp_path)[0], texts)
    loaded = cache.load("a")
    assert loaded is not None
    # WHEN a text is asked for THEN it is an error that names the entry, and the entry is gone
    with pytest.raises(OutputError, match=r"a\.entry: changed while synth ran"):
        loaded.files["platform/clusters/a/README.md"]
    assert not (tmp_path / "a.entry").exists()


def test_a_loaded_entry_reads_its_texts_once_and_only_when_one_is_asked_for(tmp_path: Path) -> None:
    # GIVEN a loaded entry whose file is then removed
    cache = SynthCache(tmp_path, KEY)
    cache.store("a", ENTRY)
    loaded, again = cache.load("a"), cache.load("a")
    assert loaded is not None and again is not None and isinstance(again.files, writer.TreeFiles)
    assert loaded.files["platform/clusters/a/README.md"] == "# a\n"
    (tmp_path / "a.entry").unlink()
    # WHEN its texts are asked for THEN those read before are there, all of them
    assert dict(loaded.files) == ENTRY.files
    # AND an entry loaded as well, whose texts were not read, has its paths and digests, but no texts
    assert list(again.files) == list(ENTRY.files)
    assert again.files.digest("platform/clusters/a/README.md") == hashlib.sha1(b"# a\n").hexdigest()
    with pytest.raises(OutputError, match="changed while synth ran"):
        again.files["platform/clusters/a/README.md"]


def test_texts_that_changed_after_the_head_was_read_are_not_used(tmp_path: Path) -> None:
    # GIVEN a loaded entry, then its file rewritten by another synth with texts of the same length
    cache = SynthCache(tmp_path, KEY)
    cache.store("a", ENTRY)
    loaded = cache.load("a")
    assert loaded is not None
    files = {**ENTRY.files, "platform/clusters/a/README.md": "# b\n"}
    cache.store("a", dataclasses.replace(ENTRY, files=files))
    # WHEN a text is asked for THEN it is an error: the texts are not the ones the head it was loaded from signs
    with pytest.raises(OutputError, match="changed while synth ran"):
        loaded.files["platform/clusters/a/README.md"]
    # AND the entry is removed, so the next synth renders the cluster again
    assert cache.load("a") is None


def test_texts_edited_to_the_same_length_are_not_used(tmp_path: Path) -> None:
    # GIVEN an entry whose texts were edited without changing their length (the head still verifies)
    cache = SynthCache(tmp_path, KEY)
    cache.store("a", ENTRY)
    path = tmp_path / "a.entry"
    path.write_bytes(path.read_bytes().replace(b"# a\n", b"# b\n"))
    loaded = cache.load("a")
    assert loaded is not None
    # WHEN a text is asked for THEN it is an error
    with pytest.raises(OutputError, match="changed while synth ran"):
        loaded.files["platform/clusters/a/README.md"]


def test_entry_of_another_cluster_is_ignored(tmp_path: Path) -> None:
    # GIVEN b's entry copied to a's place WHEN a's entry is loaded THEN there is none
    cache = SynthCache(tmp_path, KEY)
    cache.store("b", ENTRY)
    (tmp_path / "b.entry").rename(tmp_path / "a.entry")
    assert cache.load("a") is None


def test_prune_keeps_only_listed_clusters_and_what_is_not_an_entry(tmp_path: Path) -> None:
    cache = SynthCache(tmp_path, KEY)
    for name in ("a", "b", "c"):
        cache.store(name, ENTRY)
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / ".b.entry.123.tmp").write_text("left over\n")
    cache.prune(["a", "c"])
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.entry", "c.entry", "notes.txt"]


@pytest.mark.parametrize("forged_with", [hashlib.sha256, "other key"], ids=["plain-digest", "other-key"])
def test_an_entry_not_signed_with_this_users_key_is_ignored(tmp_path: Path, forged_with: Any) -> None:
    # GIVEN an entry whose text was changed and signed again by someone without this user's key
    # (as a pull request could bring it)
    cache = SynthCache(tmp_path, KEY)
    cache.store("a", ENTRY)
    path = tmp_path / "a.entry"
    payload = path.read_bytes().partition(b"\n")[2].replace(b"resources: []", b"resources: [ev]")
    if forged_with == "other key":
        signature = hmac.new(b"x" * 32, payload, hashlib.sha256).hexdigest()
    else:
        signature = forged_with(payload).hexdigest()
    path.write_bytes(signature.encode("ascii") + b"\n" + payload)
    # WHEN loaded THEN there is none
    assert cache.load("a") is None


def test_without_a_key_there_is_no_cache(tmp_path: Path) -> None:
    cache = SynthCache(tmp_path, None)
    cache.store("a", ENTRY)
    assert list(tmp_path.iterdir()) == [] and cache.load("a") is None


def test_a_read_only_cache_stores_and_prunes_nothing(tmp_path: Path) -> None:
    SynthCache(tmp_path, KEY).store("a", ENTRY)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    cache = SynthCache(tmp_path, KEY, read_only=True)
    assert cache.load("a") == ENTRY
    cache.store("b", ENTRY)
    cache.prune([])
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


@pytest.mark.parametrize("linked", ["synth", ".fluxplane-cache"])
def test_a_symlinked_cache_folder_is_neither_read_nor_written(tmp_path: Path, linked: str) -> None:
    # GIVEN a project whose cache folder is a symlink to a folder outside it, holding files
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious\n")
    SynthCache(outside, KEY).store("a", ENTRY)
    project = tmp_path / "project"
    if linked == "synth":
        (project / CACHE_DIR).mkdir(parents=True)
        (project / CACHE_DIR / "synth").symlink_to(outside, target_is_directory=True)
    else:
        project.mkdir()
        (project / CACHE_DIR).symlink_to(outside, target_is_directory=True)
    before = {path.name: path.read_bytes() for path in outside.iterdir()}
    cache = SynthCache(project / CACHE_DIR / "synth", KEY)
    # WHEN synth loads, stores and prunes
    assert cache.load("a") is None
    cache.store("b", ENTRY)
    cache.prune([])
    # THEN the folder it points to is as it was
    assert {path.name: path.read_bytes() for path in outside.iterdir()} == before


def test_an_entry_that_is_a_symlink_is_not_read(tmp_path: Path) -> None:
    SynthCache(tmp_path / "elsewhere", KEY).store("a", ENTRY)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "a.entry").symlink_to(tmp_path / "elsewhere" / "a.entry")
    assert SynthCache(tmp_path / "cache", KEY).load("a") is None


def test_an_entry_that_is_a_fifo_is_not_read_and_blocks_nothing(tmp_path: Path) -> None:
    # GIVEN an entry that is a FIFO (reading one waits for a writer)
    os.mkfifo(tmp_path / "a.entry")
    loaded: list[Any] = []
    # WHEN it is loaded THEN there is none, at once
    reader = threading.Thread(target=lambda: loaded.append(SynthCache(tmp_path, KEY).load("a")), daemon=True)
    reader.start()
    reader.join(20)
    assert not reader.is_alive() and loaded == [None]


def test_a_leftover_temporary_file_hard_linked_elsewhere_is_not_written_through(tmp_path: Path) -> None:
    # GIVEN a leftover temporary file of this process's name, hard-linked to a file outside the cache
    outside = tmp_path / "keep.txt"
    outside.write_text("precious\n")
    cache = SynthCache(tmp_path / "cache", KEY)
    (tmp_path / "cache").mkdir()
    os.link(outside, tmp_path / "cache" / f".a.entry.{os.getpid()}.tmp")
    # WHEN an entry is stored THEN it is, and the file outside keeps its content
    cache.store("a", ENTRY)
    assert cache.load("a") == ENTRY
    assert outside.read_text() == "precious\n"


def test_the_users_key_is_made_once_outside_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    key = user_key()
    assert key is not None and len(key) == 32
    path = tmp_path / "xdg" / "fluxplane" / "synth.key"
    assert path.stat().st_mode & 0o777 == 0o600
    assert user_key() == key


def test_for_root_is_below_the_project_folder(tmp_path: Path) -> None:
    assert SynthCache.for_root(tmp_path).folder == tmp_path / CACHE_DIR / "synth"


def test_folder_index_lists_and_hashes_what_is_below_a_prefix() -> None:
    # GIVEN a tree WHEN a file below one prefix changes THEN only that prefix's digest changes
    files = {"p/a/1.yaml": "one", "p/a/2.yaml": "two", "p/ab/3.yaml": "three", "p/b/4.yaml": "four"}
    index = FolderIndex(files)
    assert index.below("p/a/") == ["p/a/1.yaml", "p/a/2.yaml"]
    changed = FolderIndex({**files, "p/a/2.yaml": "TWO"})
    assert changed.digest("p/a/") != index.digest("p/a/")
    assert changed.digest("p/b/") == index.digest("p/b/")
    assert changed.shared_key(["p/b/", "p/ab/"]) == index.shared_key(["p/ab/", "p/b/"])
    assert changed.shared_key(["p/a/"]) != index.shared_key(["p/a/"])


def test_a_reused_clusters_files_are_not_hashed_again_by_the_write(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN two clusters synthesized with the cache, then staging-2 changed
    root = write_fleet(MINIMAL_BASE, {"staging": CLUSTERS})
    synthesize(root, use_cache=True)
    changed = {"clusters": [CLUSTERS["clusters"][0], {"name": "staging-2", "region": "eu-west-1"}]}
    write_fleet(MINIMAL_BASE, {"staging": changed})
    reused = SynthCache.for_root(root).load("staging-1")
    assert reused is not None and reused.files
    # WHEN synthesized again, each text the guard or the write hashes counted
    hashed: list[bytes] = []
    digest = writer._digest
    monkeypatch.setattr(writer, "_digest", lambda data: hashed.append(data) or digest(data))
    files = synthesize(root, use_cache=True, replace=["EKSCluster/staging-2/staging-2"]).files
    # THEN staging-1's files, reused, are written as stored, with the digests their entry carries: only the files
    # rendered anew are hashed, each text at most once (files of the same documents share their text)
    assert {path: files[path] for path in reused.files} == reused.files
    assert set(hashed) == {text.encode() for path, text in files.items() if path not in reused.files}
    assert len(hashed) <= len(files) - len(reused.files)


def _dist(root: Path) -> dict[str, str]:
    dist = root / "dist"
    return {path.relative_to(dist).as_posix(): path.read_text() for path in dist.rglob("*") if path.is_file()}


def test_a_write_reads_the_texts_of_the_clusters_it_reuses_only_where_dist_differs(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN two clusters synthesized with the cache twice (dist/ and its spare hold them), then a pack value of
    # staging-2 changed
    root = write_fleet(MINIMAL_BASE, {"staging": CLUSTERS})
    for _ in range(2):
        synthesize(root, use_cache=True)
    staging_2 = {"name": "staging-2", "region": "us-west-2", "packs": {"metrics-server": {"replicas": 2}}}
    write_fleet(MINIMAL_BASE, {"staging": {"clusters": [CLUSTERS["clusters"][0], staging_2]}})
    read: list[str] = []
    texts = SynthCache._texts
    monkeypatch.setattr(
        SynthCache, "_texts", lambda cache, head, count: read.append(head.name) or texts(cache, head, count)
    )

    def synth() -> None:
        # as `fluxplane synth` writes: the texts of the clusters taken from the cache deferred
        pipeline = Pipeline(root, cache=True)
        pipeline.write(pipeline.render(deferred=True))

    # WHEN it is synthesized THEN staging-1's texts are not read, and dist/ is what a synth without the cache writes
    synth()
    assert read == []
    assert _dist(root) == Pipeline(root).build()
    # AND once staging-1's folder is removed from dist/ by hand, its texts are read, and it is written back (with
    # staging-2's, which the spare, the tree before the last write, holds as they were before the change)
    reused = SynthCache.for_root(root).load("staging-1")
    assert reused is not None
    folder = root / "dist" / next(path for path in reused.files if "/staging-1/" in path).split("staging-1/")[0]
    shutil.rmtree(folder / "staging-1")
    synth()
    assert sorted(read) == ["staging-1.entry", "staging-2.entry"]
    assert _dist(root) == Pipeline(root).build()


def test_a_write_that_needs_texts_changed_since_their_head_was_read_renders_their_cluster_again(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a fleet synthesized with the cache, then a cluster's file removed from dist/ by hand
    root = write_fleet(MINIMAL_BASE, {"staging": CLUSTERS})
    synthesize(root, use_cache=True)
    reused = SynthCache.for_root(root).load("staging-1")
    assert reused is not None
    (root / "dist" / next(path for path in reused.files if "/staging-1/" in path)).unlink()
    # WHEN its entry's texts change after synth read its head (edited to the same length), the first time only
    entry = root / CACHE_DIR / "synth" / "staging-1.entry"
    load, edited = SynthCache.load, []

    def load_then_edit(cache: SynthCache, cluster: str) -> CachedCluster | None:
        found = load(cache, cluster)
        if cluster == "staging-1" and not edited:
            entry.write_bytes(entry.read_bytes().replace(b"apiVersion", b"apiVersioN"))
            edited.append(cluster)
        return found

    monkeypatch.setattr(SynthCache, "load", load_then_edit)
    rendered: list[str] = []
    store = SynthCache.store
    monkeypatch.setattr(SynthCache, "store", lambda cache, name, e: rendered.append(name) or store(cache, name, e))
    pipeline = Pipeline(root, cache=True)
    pipeline.write(pipeline.render(deferred=True))
    # THEN the write, which needs those texts, renders the cluster again instead, and dist/ is a full synth's
    assert edited == ["staging-1"] and rendered == ["staging-1"]
    assert _dist(root) == Pipeline(root).build()
    monkeypatch.setattr(SynthCache, "load", load)
    assert SynthCache.for_root(root).load("staging-1") is not None


def test_a_synth_that_renders_what_it_rendered_before_dumps_none_of_it_again(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a fleet synthesized with the cache
    root = write_fleet(MINIMAL_BASE, {"staging": CLUSTERS})
    first = synthesize(root, use_cache=True).files
    dumped: list[int] = []
    dump = render.dump_documents
    monkeypatch.setattr(render, "dump_documents", lambda documents: dumped.append(1) or dump(documents))
    # WHEN it is synthesized again THEN no file's documents are dumped again (the hub's files, rendered on every
    # run, take the texts their documents were dumped to), and the output is the same
    assert synthesize(root, use_cache=True).files == first
    assert dumped == []
    # AND texts changed in the file without its signature are not taken: every file is dumped anew
    path = root / CACHE_DIR / "synth" / DUMPS
    signature, payload = path.read_bytes().split(b"\n", 1)
    assert b"kind: Kustomization" in payload
    path.write_bytes(signature + b"\n" + payload.replace(b"kind: Kustomization", b"kind: Kustomizatio_"))
    assert synthesize(root, use_cache=True).files == first
    assert dumped
    # AND none are taken when fluxplane's code is another's (another version may dump otherwise)
    assert SynthCache.for_root(root).load_dumps(_code(root))
    assert SynthCache.for_root(root).load_dumps("another code") == {}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({1: "a"}, {"1": "a"}),
        ({"a": True}, {"a": 1}),
        ({"a": 1}, {"a": 1.0}),
        ({"a": 0.0}, {"a": -0.0}),
        ({"a": ["x"]}, {"a": "x"}),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    ],
)
def test_documents_dumped_before_are_taken_only_for_the_same_documents(
    first: dict[Any, Any], second: dict[Any, Any]
) -> None:
    # GIVEN the text of documents dumped before WHEN documents that read alike in JSON but not in YAML are dumped
    # THEN each gets its own text
    primed = Dumps()
    primed.dump([first])
    dumps = Dumps(primed.used)
    assert dump_documents([second]) != dump_documents([first])
    assert dumps.dump([second]) == dump_documents([second])
    assert dumps.dump([first]) == dump_documents([first])
    assert len(dumps.used) == 2  # a text for each


def test_documents_marshal_does_not_take_are_dumped_every_time() -> None:
    documents = [{"day": datetime.date(2026, 1, 1)}]
    dumps = Dumps()
    assert dumps.dump(documents) == dump_documents(documents)
    assert dumps.used == {}


def _code(root: Path) -> str:
    key = code_key(load_plan(root).registry)
    assert key is not None
    return key


def _keys(write_fleet: FleetWriter, base: dict[str, Any], staging: dict[str, Any]) -> dict[str, str]:
    root = write_fleet(base, {"staging": staging})
    plan = load_plan(root)
    key = code_key(plan.registry)
    assert key is not None
    return input_keys(plan, key)


CLUSTERS = {"clusters": [{"name": "staging-1", "region": "us-west-2"}, {"name": "staging-2", "region": "us-west-2"}]}


def test_input_key_changes_only_for_the_cluster_that_changed(write_fleet: FleetWriter) -> None:
    # GIVEN two clusters WHEN one's region changes THEN only its key changes
    before = _keys(write_fleet, MINIMAL_BASE, CLUSTERS)
    changed = {"clusters": [CLUSTERS["clusters"][0], {"name": "staging-2", "region": "eu-west-1"}]}
    after = _keys(write_fleet, MINIMAL_BASE, changed)
    assert sorted(before) == ["staging-1", "staging-2"]
    assert before["staging-1"] == after["staging-1"]
    assert before["staging-2"] != after["staging-2"]


def test_input_keys_all_change_with_a_shared_value(write_fleet: FleetWriter) -> None:
    # GIVEN two clusters WHEN the Flux interval of the whole fleet changes THEN both keys change
    before = _keys(write_fleet, MINIMAL_BASE, CLUSTERS)
    after = _keys(write_fleet, {**MINIMAL_BASE, "flux": {"interval": "5m"}}, CLUSTERS)
    assert all(before[name] != after[name] for name in before)


def test_a_secret_the_hub_holds_for_a_cluster_is_in_its_key_whatever_the_clusters_order(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN a fleet, and the same fleet whose hub holds a sealed secret in staging-2's hub namespace
    root = write_fleet(MINIMAL_BASE, {"staging": CLUSTERS})
    plan = load_plan(root)
    put(root, "hub/staging-2/shop-git.yaml", sealed("shop-git", "staging-2"))
    holding = load_plan(root)
    key = code_key(plan.registry)
    assert key is not None
    # WHEN their keys are taken with the clusters listed hub last
    before = input_keys(dataclasses.replace(plan, clusters=plan.clusters[::-1]), key)
    after = input_keys(dataclasses.replace(holding, clusters=holding.clusters[::-1]), key)
    # THEN only staging-2's key changes
    assert before["staging-1"] == after["staging-1"]
    assert before["staging-2"] != after["staging-2"]


def test_code_key_changes_with_a_pack_version() -> None:
    # GIVEN the installed packs WHEN one pack's version differs THEN the code key differs
    registry = PackRegistry.from_entry_points()
    packs = list(registry)
    bumped = PackRegistry([dataclasses.replace(packs[0], version=packs[0].version + ".1"), *packs[1:]])
    assert code_key(registry) == code_key(PackRegistry(packs))
    assert code_key(bumped) != code_key(registry)


def test_code_key_changes_with_the_crds_a_pack_installs() -> None:
    # GIVEN the installed packs WHEN one pack declares other CRDs THEN the code key differs (they order a cluster)
    packs = list(PackRegistry.from_entry_points())
    declared = PackRegistry([dataclasses.replace(packs[0], crds=(*packs[0].crds, "x.example.com")), *packs[1:]])
    assert code_key(declared) != code_key(PackRegistry(packs))


def test_code_key_changes_with_a_data_file_of_a_pack_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a pack in a package of its own with an IAM policy as package data
    package = tmp_path / "cache_key_pack"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from fluxplane.sdk import Pack, PackConfig\n"
        "PACK = Pack(name='keyed', version='1.0.0', description='d', config=PackConfig, layer='controllers',"
        " bind=lambda ctx, config: None)\n"
    )
    policy = package / "policy.json"
    policy.write_text('{"Version": "2012-10-17", "Statement": []}\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    pack = importlib.import_module("cache_key_pack").PACK
    registry = PackRegistry([pack])
    before = code_key(registry)
    # WHEN only the policy file changes THEN the code key changes, so no cached cluster outlives the edit
    policy.write_text('{"Version": "2012-10-17", "Statement": [{"Effect": "Allow"}]}\n')
    assert before is not None
    assert code_key(registry) != before


def test_code_key_covers_fluxplane_package_data() -> None:
    # GIVEN fluxplane's own package WHEN its files are listed for the key THEN the policies and AWS facts are in
    names = {part for part in _package_files(_PACKAGE) if isinstance(part, str)}
    assert {"packs/karpenter/controller.json", "packs/crossplane_providers/s3.json"} <= names
    assert "config/data/aws-regions.yaml" in names
    assert not any("__pycache__" in name for name in names)


@pytest.mark.parametrize("holder", ["staging-2", "hub"])
def test_a_sealed_secrets_key_order_is_in_the_key(write_fleet: FleetWriter, holder: str) -> None:
    # GIVEN a sealed secret of staging-2, in its own folder or in its hub namespace on the hub
    root = write_fleet(MINIMAL_BASE, {"staging": CLUSTERS})
    relative = "staging-2/apps/db.yaml" if holder == "staging-2" else "hub/staging-2/db.yaml"
    document = sealed("db", "apps" if holder == "staging-2" else "staging-2")
    put(root, relative, document)
    before = load_plan(root)
    # WHEN its spec's keys are written in another order (dist/ carries the document as written)
    spec = document["spec"]
    put(root, relative, {**document, "spec": {"template": spec["template"], "encryptedData": spec["encryptedData"]}})
    after = load_plan(root)
    key = code_key(before.registry)
    assert key is not None
    # THEN staging-2's key changes, and staging-1's does not
    keys_before, keys_after = input_keys(before, key), input_keys(after, key)
    assert keys_before["staging-1"] == keys_after["staging-1"]
    assert keys_before["staging-2"] != keys_after["staging-2"]


def test_package_files_are_listed_as_a_recursive_glob_finds_them(tmp_path: Path) -> None:
    # GIVEN a package with nested folders, bytecode, a file and a folder linked from elsewhere, a dangling link
    package, elsewhere = tmp_path / "pack", tmp_path / "elsewhere"
    for relative in ("a.py", "data/b.json", "data/x-y/c.yaml", "data-z.txt", "__pycache__/a.cpython-311.pyc", "d.pyc"):
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(relative)
    (elsewhere / "inner").mkdir(parents=True)
    (elsewhere / "inner" / "e.txt").write_text("e")
    (elsewhere / "f.txt").write_text("f")
    (package / "linked-folder").symlink_to(elsewhere / "inner")
    (package / "linked-file.txt").symlink_to(elsewhere / "f.txt")
    (package / "dangling").symlink_to(tmp_path / "missing")
    # WHEN listed THEN as pathlib's rglob finds them, in its order: no folder link followed, a file link read through
    expected: list[str | bytes] = []
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            expected.extend((path.relative_to(package).as_posix(), path.read_bytes()))
    assert _package_files(package) == expected
    assert expected[::2] == ["a.py", "data/b.json", "data/x-y/c.yaml", "data-z.txt", "linked-file.txt"]
