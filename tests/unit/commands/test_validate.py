"""fluxplane.commands.validate: the lines and exit code of validate, and schemas pull's lines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fluxplane.commands import validate
from tests.support.commands import parse
from tests.support.widgets import CRD, hub_tree


def test_validate_writes_nothing_and_schemas_pull_does() -> None:
    assert (validate.NAMES, validate.LOCKS_PROJECT) == (("validate", "schemas"), False)
    assert validate.stopped(parse(validate, "validate")) == "nothing written"
    assert validate.stopped(parse(validate, "schemas", "pull")) is None


def test_a_finding_prints_its_line_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a tree whose ConfigMap holds an integer, and no CRDs
    (tmp_path / "crds").mkdir()
    dist = hub_tree(tmp_path / "dist", "3")
    args = parse(validate, "validate", str(dist), "--crds", str(tmp_path / "crds"), "--no-kustomize")

    # WHEN validated THEN the finding, what was checked and the summary print, with the warning on stderr
    assert validate.run(args) == validate.EXIT_FINDINGS
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "platform/clusters/hub/a.yaml:1 ConfigMap/a: data.size: expected string or null, got integer 3",
        "checked: 0 CEL rules evaluated (0 not evaluated, 0 transition rules skipped), 0 health expressions, "
        "0 composite resources, 0 compositions rendered (0 not rendered), 0 composed resources",
        f"{dist}: 3 documents in 2 files, 1 kustomizations: 1 finding",
    ]
    assert "no schema for example.io/v1 Widget (1 document)" in captured.err


def test_a_clean_tree_is_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "crds").mkdir()
    dist = hub_tree(tmp_path / "dist", '"3"')
    args = parse(validate, "validate", str(dist), "--crds", str(tmp_path / "crds"), "--no-kustomize")
    assert validate.run(args) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{dist}: 3 documents in 2 files, 1 kustomizations: valid"


def test_schemas_pull_prints_each_file_then_the_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a kubectl that prints one CRD
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "crd.yaml").write_text(CRD)
    (bin_dir / "kubectl").write_text(f"#!/bin/sh\ncat {tmp_path / 'crd.yaml'}\n")
    (bin_dir / "kubectl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    dest = tmp_path / "dest"
    # WHEN pulled from the cluster THEN the file, then the count
    assert validate.run(parse(validate, "schemas", "pull", "--from-cluster", "--dest", str(dest))) == 0
    assert capsys.readouterr().out == f"{dest / 'example.io' / 'widgets.yaml'}\n{dest}: 1 CRDs\n"
