"""Incremental synth: with the synth cache, dist/ is byte for byte what a full synth writes.

Each test synthesizes a copy of the example fleet once to fill the cache, changes the definition
(one cluster, a shared base value, a pack value of one environment, a cluster added or removed) or
damages the cache, then compares ``fluxplane synth`` (cache) with ``fluxplane synth --no-cache``
into another folder, file by file. The cache entries' modification times tell which clusters were
rendered anew and which were reused. The definition's files parsed before are read from the cache
too (fluxplane.config.parsed).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.cli import EXIT_BAD_INPUT, main
from fluxplane.config import yamlfile
from fluxplane.synth import scan, writer
from fluxplane.synth.cache import ENTRY_SUFFIX
from fluxplane.system.keys import CACHE_DIR
from tests.support.files import read_tree

WORKLOAD_CLUSTERS = (
    "production-euc1",
    "production-euw1",
    "production-use1",
    "production-usw2",
    "staging-euw1",
    "staging-usw2",
)


def _entries(project: Path) -> dict[str, int]:
    """Per cluster with a cache entry: the entry's modification time (ns)."""
    folder = project / CACHE_DIR / "synth"
    return {path.stem: path.stat().st_mtime_ns for path in sorted(folder.glob(f"*{ENTRY_SUFFIX}"))}


def _synth(project: Path, *extra: str) -> None:
    assert main(["--root", str(project), "synth", *extra]) == 0


def _assert_same_as_full(project: Path, *extra: str) -> None:
    """dist/ (written with the cache) equals a full synth of the same definition."""
    _synth(project, *extra)
    _synth(project, "--no-cache", "--outdir", str(project / "full"))
    incremental, full = read_tree(project / "dist"), read_tree(project / "full")
    assert sorted(incremental) == sorted(full)
    assert [path for path in full if incremental[path] != full[path]] == []
    shutil.rmtree(project / "full")


def _edit(path: Path, change: Any) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture
def primed(example_project: Path) -> tuple[Path, dict[str, int]]:
    """The example fleet synthesized once with the cache; its cache entries' times."""
    _synth(example_project)
    entries = _entries(example_project)
    assert sorted(entries) == list(WORKLOAD_CLUSTERS)
    return example_project, entries


@pytest.fixture(params=["listed by synth", "listed beside it"])
def listing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How synth lists dist/ and its spare: as it writes, or ("listed beside it") in a process of its own while it
    loads and renders, as for a large tree on a machine of more than one core. The processes started."""
    started: list[int] = []
    if request.param == "listed beside it":

        def some_started() -> None:
            if not started:
                pytest.fail("no write listed its trees in a process of its own")

        request.addfinalizer(some_started)
        monkeypatch.setattr(writer, "_LARGE_MANIFEST", 0)
        monkeypatch.setattr(scan, "cores", lambda: 2)
        start = scan.TreeScan.start

        def recorded(self: scan.TreeScan) -> None:
            start(self)
            started.append(self._pid)

        monkeypatch.setattr(scan.TreeScan, "start", recorded)
    return started


def _rewritten(project: Path, before: dict[str, int]) -> list[str]:
    after = _entries(project)
    return sorted(name for name in after if after[name] != before.get(name))


def test_unchanged_definition_reuses_every_cluster_and_matches_a_full_synth(
    primed: tuple[Path, dict[str, int]],
) -> None:
    # GIVEN a primed cache WHEN nothing changes THEN no cluster is rendered anew and dist/ is the full synth's
    project, before = primed
    _assert_same_as_full(project)
    assert _rewritten(project, before) == []


def test_one_cluster_changed_renders_only_that_cluster(primed: tuple[Path, dict[str, int]], listing: list[int]) -> None:
    # GIVEN a primed cache WHEN one cluster's pack value changes
    project, before = primed

    def change(data: dict[str, Any]) -> None:
        data["clusters"][1]["packs"]["podinfo"]["replicas"] = 7

    _edit(project / "environments" / "production.yaml", change)
    # THEN dist/ equals a full synth and only that cluster's entry was written again
    _assert_same_as_full(project)
    assert _rewritten(project, before) == ["production-use1"]
    assert all(pid > 0 for pid in listing)
    assert (
        "value: 7"
        in (
            project
            / "dist"
            / "platform"
            / "clusters"
            / "production-use1"
            / "overlays"
            / "podinfo"
            / "kustomization.yaml"
        ).read_text()
    )


def test_shared_base_value_changed_renders_every_cluster_that_uses_it(primed: tuple[Path, dict[str, int]]) -> None:
    # GIVEN a primed cache WHEN a pack value in base.yaml changes (every cluster runs kyverno)
    project, before = primed

    def change(data: dict[str, Any]) -> None:
        data["packs"]["kyverno"]["failureAction"] = "Enforce"

    _edit(project / "environments" / "base.yaml", change)
    # THEN every workload cluster is rendered anew and dist/ equals a full synth
    _assert_same_as_full(project)
    assert _rewritten(project, before) == list(WORKLOAD_CLUSTERS)


def test_pack_value_of_one_environment_changed_renders_that_environment(primed: tuple[Path, dict[str, int]]) -> None:
    # GIVEN a primed cache WHEN staging's podinfo value changes
    project, before = primed

    def change(data: dict[str, Any]) -> None:
        data["packs"]["podinfo"]["replicas"] = 5

    _edit(project / "environments" / "staging.yaml", change)
    # THEN only staging's clusters are rendered anew and dist/ equals a full synth
    _assert_same_as_full(project)
    assert _rewritten(project, before) == ["staging-euw1", "staging-usw2"]


def test_cluster_added_then_removed_matches_a_full_synth(
    primed: tuple[Path, dict[str, int]], listing: list[int]
) -> None:
    # GIVEN a primed cache WHEN a cluster is added to staging (with its sealed Git credentials)
    project, before = primed
    secrets = project / "environments" / "secrets"
    shutil.copytree(secrets / "staging-usw2", secrets / "staging-use2")

    def add(data: dict[str, Any]) -> None:
        data["clusters"].append({"name": "staging-use2", "region": "us-east-2"})

    _edit(project / "environments" / "staging.yaml", add)
    # THEN dist/ equals a full synth, the new cluster has an entry, and the others were reused
    _assert_same_as_full(project)
    assert (project / "dist" / "platform" / "clusters" / "staging-use2" / "kustomization.yaml").is_file()
    assert _rewritten(project, before) == ["staging-use2"]

    # WHEN it is removed again
    def remove(data: dict[str, Any]) -> None:
        data["clusters"] = [cluster for cluster in data["clusters"] if cluster["name"] != "staging-use2"]

    _edit(project / "environments" / "staging.yaml", remove)
    shutil.rmtree(secrets / "staging-use2")
    # THEN its removal is refused unless allowed, dist/ as it was
    written = read_tree(project / "dist")
    assert main(["--root", str(project), "synth"]) == EXIT_BAD_INPUT
    assert read_tree(project / "dist") == written
    # and once allowed, dist/ equals a full synth and its entry is gone
    _assert_same_as_full(project, "--delete", "EKSCluster/staging-use2/staging-use2")
    assert not (project / "dist" / "platform" / "clusters" / "staging-use2").exists()
    assert sorted(_entries(project)) == list(WORKLOAD_CLUSTERS)
    # the listings were taken beside the load and the render, when asked to
    assert all(pid > 0 for pid in listing)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda raw: raw[: len(raw) // 2], id="truncated"),
        pytest.param(lambda raw: b"", id="empty"),
        pytest.param(lambda raw: raw.replace(b"value: 4", b"value: 9"), id="text-changed"),
        pytest.param(
            lambda raw: raw[:10] + b"0" + raw[11:] if raw[10:11] != b"0" else raw[:10] + b"1" + raw[11:],
            id="digest-changed",
        ),
    ],
)
def test_damaged_cache_entry_is_rendered_anew(primed: tuple[Path, dict[str, int]], damage: Any) -> None:
    # GIVEN a primed cache whose entry for production-use1 is damaged, and that cluster's folder gone from dist/ (so
    # that synth needs its texts: a synth reads a cluster's texts only where dist/ differs)
    project, before = primed
    entry = project / CACHE_DIR / "synth" / "production-use1.entry"
    raw = entry.read_bytes()
    assert b"value: 4" in raw
    entry.write_bytes(damage(raw))
    shutil.rmtree(project / "dist" / "platform" / "clusters" / "production-use1")
    before = _entries(project)
    # WHEN synth runs THEN that cluster is rendered anew (its entry rewritten) and dist/ equals a full synth
    _assert_same_as_full(project)
    assert _rewritten(project, before) == ["production-use1"]
    assert b"value: 4" in entry.read_bytes()


def test_a_damaged_text_synth_does_not_need_leaves_dist_as_a_full_synth_writes_it(
    primed: tuple[Path, dict[str, int]],
) -> None:
    # GIVEN a primed cache whose entry for production-use1 has a text changed, dist/ as the last synth wrote it
    project, _ = primed
    entry = project / CACHE_DIR / "synth" / "production-use1.entry"
    entry.write_bytes(entry.read_bytes().replace(b"value: 4", b"value: 9"))
    # WHEN synth runs THEN dist/ equals a full synth: the texts of a cluster whose folders dist/ holds as recorded are
    # not read, and the damaged ones never reach it
    _assert_same_as_full(project)


def test_files_parsed_before_are_read_from_the_cache_and_dist_matches_a_full_synth(
    primed: tuple[Path, dict[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a primed cache, which holds the definition's files parsed
    project, _ = primed
    parsed = project / CACHE_DIR / "parsed" / "files.entry"
    assert parsed.is_file()
    load = yamlfile._load

    def refuse(text: str) -> list[Any]:
        raise AssertionError(f"parsed again: {text[:40]!r}")

    # WHEN synth runs with parsing refused THEN no file is parsed, and dist/ equals a full synth's
    monkeypatch.setattr(yamlfile, "_load", refuse)
    _synth(project)
    monkeypatch.setattr(yamlfile, "_load", load)
    _assert_same_as_full(project)
    # AND synth --no-cache did not parse through it: parsing refused, it fails
    monkeypatch.setattr(yamlfile, "_load", refuse)
    with pytest.raises(AssertionError, match="parsed again"):
        main(["--root", str(project), "synth", "--no-cache", "--outdir", str(project / "full")])


def test_a_yaml_error_reads_the_same_with_the_cache(
    primed: tuple[Path, dict[str, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a primed cache and a definition file with a YAML error
    project, _ = primed
    path = project / "environments" / "staging.yaml"
    path.write_text(path.read_text() + "broken: [\n")
    # WHEN synth runs with the cache and without THEN the error is the same
    errors = []
    for extra in ((), ("--no-cache",), ()):
        assert main(["--root", str(project), "synth", *extra]) == 2
        errors.append(capsys.readouterr().err)
    assert errors[0] == errors[1] == errors[2]
    assert "environments/staging.yaml:" in errors[0] and "invalid YAML" in errors[0]


def test_no_cache_flag_neither_reads_nor_writes_the_cache(example_project: Path) -> None:
    # GIVEN no cache WHEN synth runs with --no-cache THEN no cache folder is made
    _synth(example_project, "--no-cache")
    assert not (example_project / CACHE_DIR).exists()


def test_check_uses_the_cache_and_reports_a_fresh_tree_up_to_date(primed: tuple[Path, dict[str, int]]) -> None:
    # GIVEN a primed cache and the dist/ it wrote WHEN synth --check runs
    # THEN dist/ is up to date and no cluster is rendered anew
    project, before = primed
    assert main(["--root", str(project), "synth", "--check"]) == 0
    assert _rewritten(project, before) == []
    # AND it keeps no files it parsed: with none kept before, it parses them all and writes none
    parsed = project / CACHE_DIR / "parsed" / "files.entry"
    parsed.unlink()
    assert main(["--root", str(project), "synth", "--check"]) == 0
    assert not parsed.exists()
