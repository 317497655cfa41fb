"""Atomic writes of dist/ and the staleness check."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import pytest

from fluxplane.errors import OutputError
from fluxplane.synth import writer
from fluxplane.synth.writer import compare_tree, recover, write_tree


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_write_creates_then_replaces_and_drops_files_that_no_longer_belong(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    write_tree({"a/x.yaml": "one\n", "b.yaml": "two\n"}, dist)
    assert _tree(dist) == {"a/x.yaml": "one\n", "b.yaml": "two\n"}
    write_tree({"a/y.yaml": "three\n"}, dist)
    assert _tree(dist) == {"a/y.yaml": "three\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist"]


def test_write_without_exchange_falls_back_to_renames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "_exchange", lambda a, b: False)
    dist = tmp_path / "dist"
    write_tree({"a.yaml": "1\n"}, dist)
    write_tree({"b.yaml": "2\n"}, dist)
    assert _tree(dist) == {"b.yaml": "2\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist"]


def test_failed_write_leaves_the_old_tree_and_no_leftovers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN an existing dist/ and a disk that fills up on the second file
    dist = tmp_path / "dist"
    write_tree({"old.yaml": "old\n"}, dist)
    real_open = builtins.open
    calls = {"n": 0}

    def full_disk(path: Any, *args: Any, **kwargs: Any) -> Any:
        if str(path).startswith(str(tmp_path / ".dist.new")):
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError(28, "No space left on device", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", full_disk)
    # WHEN synth writes a new tree
    with pytest.raises(OutputError, match=r"No space left on device; dist/ was left as it was$"):
        write_tree({"a.yaml": "a\n", "b.yaml": "b\n"}, dist)
    monkeypatch.undo()
    # THEN dist/ is the old tree and the staging folder is gone
    assert _tree(dist) == {"old.yaml": "old\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist"]


def test_recover_restores_a_tree_moved_aside_by_an_interrupted_swap(tmp_path: Path) -> None:
    # GIVEN a crash between the two renames of the fallback swap
    (tmp_path / ".dist.old").mkdir()
    (tmp_path / ".dist.old" / "a.yaml").write_text("old\n")
    (tmp_path / ".dist.new").mkdir()
    recover(tmp_path / "dist")
    assert _tree(tmp_path / "dist") == {"a.yaml": "old\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist"]


def test_compare_tree_lists_added_changed_removed(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    write_tree({"same.yaml": "s\n", "changed.yaml": "old\n", "removed.yaml": "r\n"}, dist)
    result = compare_tree({"same.yaml": "s\n", "changed.yaml": "new\n", "added.yaml": "a\n"}, dist)
    assert (result.added, result.changed, result.removed, result.stale) == (
        ["added.yaml"],
        ["changed.yaml"],
        ["removed.yaml"],
        True,
    )
    assert not compare_tree({"same.yaml": "s\n", "changed.yaml": "old\n", "removed.yaml": "r\n"}, dist).stale
