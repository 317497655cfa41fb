"""Tests for fluxplane.validate's run: a tree in, its findings, counts and warnings out, nothing printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane import validate
from fluxplane.validate import Finding, ValidateError
from tests.support.widgets import hub_tree


def test_run_returns_findings_counts_and_warnings_and_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a tree whose ConfigMap holds an integer, and no CRDs
    (tmp_path / "crds").mkdir()
    dist = hub_tree(tmp_path / "dist", "3")

    # WHEN validated without kustomize
    result = validate.run(dist, [tmp_path / "crds"], kustomize=False)

    # THEN the finding, the counts and the Widget's missing schema are in the result, and nothing was printed
    assert result.findings == [
        Finding(
            file="platform/clusters/hub/a.yaml",
            doc=1,
            kind="ConfigMap",
            name="a",
            path="data.size",
            message="expected string or null, got integer 3",
        )
    ]
    assert (result.dist, result.documents, result.files, result.kustomizations) == (dist, 3, 2, 1)
    assert result.warnings == [
        "no schema for example.io/v1 Widget (1 document): run 'fluxplane schemas pull' or pass --crds"
    ]
    assert result.coverage.narrowed == ""
    assert capsys.readouterr() == ("", "")


def test_run_on_a_clean_tree_has_no_findings(tmp_path: Path) -> None:
    (tmp_path / "crds").mkdir()
    result = validate.run(hub_tree(tmp_path / "dist", '"3"'), [tmp_path / "crds"], kustomize=False)
    assert result.findings == []


def test_run_without_crds_reads_fluxplane_crds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN $FLUXPLANE_CRDS naming a folder that describes the Widget
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "widgets.yaml").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.io\n"
        "spec:\n  group: example.io\n  names: {kind: Widget, plural: widgets}\n  scope: Cluster\n  versions:\n"
        "  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n"
    )
    monkeypatch.setenv("FLUXPLANE_CRDS", str(crds))
    # WHEN validated with no CRD folder given THEN the Widget has a schema
    assert validate.run(hub_tree(tmp_path / "dist", '"3"'), kustomize=False).warnings == []


def test_no_tree_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValidateError, match="nothere: no such folder"):
        validate.run(tmp_path / "nothere", [tmp_path], kustomize=False)
