"""fluxplane.commands.synth: its options, where it writes, and what a signal leaves."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.commands import synth
from tests.support.commands import parse


def test_synth_takes_the_project_lock() -> None:
    assert (synth.NAMES, synth.LOCKS_PROJECT) == (("synth",), True)


def test_defaults() -> None:
    args = parse(synth, "synth")
    assert (args.check, args.outdir, args.cdk8s, args.no_cache, args.replace, args.delete, args.move) == (
        False,
        None,
        False,
        False,
        [],
        [],
        [],
    )


def test_outdir_is_dist_unless_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CDK8S_OUTDIR", raising=False)
    assert synth.outdir(parse(synth, "synth", root=tmp_path)) == tmp_path / "dist"
    assert synth.outdir(parse(synth, "synth", "--outdir", str(tmp_path / "out"), root=tmp_path)) == tmp_path / "out"


def test_with_cdk8s_an_outdir_outside_the_project_is_the_only_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN cdk8s synth --stdout's temporary folder, outside the project
    monkeypatch.setenv("CDK8S_OUTDIR", str(tmp_path / "scratch"))
    args = parse(synth, "synth", "--cdk8s", root=tmp_path / "project")
    # THEN synth writes only there
    assert synth.cdk8s_folder(args) == (tmp_path / "scratch", True)
    assert synth.outdir(args) == tmp_path / "scratch"


def test_with_cdk8s_an_outdir_inside_the_project_is_a_copy_of_dist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN cdk8s-cli's scratch folder inside the project
    monkeypatch.setenv("CDK8S_OUTDIR", str(tmp_path / "cdk8s.out"))
    args = parse(synth, "synth", "--cdk8s", root=tmp_path)
    # THEN dist/ is written, and the folder gets a copy
    assert synth.cdk8s_folder(args) == (tmp_path / "cdk8s.out", False)
    assert synth.outdir(args) == tmp_path / "dist"


def test_stopped_says_what_the_output_folder_holds(tmp_path: Path) -> None:
    assert synth.stopped(parse(synth, "synth", "--check", root=tmp_path)) == "nothing written"
    assert synth.stopped(parse(synth, "synth", root=tmp_path)) == (
        f"{tmp_path / 'dist'} holds a whole tree: the one it held, or the new one if writing had finished"
    )
