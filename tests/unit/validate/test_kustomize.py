"""Tests for fluxplane.validate.kustomize: every folder with a kustomization.yaml must build."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fluxplane.validate.findings import Finding
from fluxplane.validate.kustomize import _message, check_builds, find_kubectl
from fluxplane.validate.tree import ValidateError

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
KUSTOMIZATION = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"


@needs_kubectl
def test_failing_build_is_a_finding_on_its_kustomization(tmp_path: Path) -> None:
    # GIVEN one folder that builds and one that lists a file that does not exist
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "kustomization.yaml").write_text(KUSTOMIZATION + "- cm.yaml\n")
    (tmp_path / "good" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    (tmp_path / "bad" / "apps").mkdir(parents=True)
    (tmp_path / "bad" / "apps" / "kustomization.yaml").write_text(KUSTOMIZATION + "- missing.yaml\n")
    advanced: list[int] = []
    # WHEN both are built
    findings = check_builds(tmp_path, ["bad/apps", "good"], str(KUBECTL), lambda: advanced.append(1))
    # THEN one finding names the bad folder's kustomization.yaml; both builds counted
    assert len(findings) == 1
    assert findings[0] == Finding(
        "bad/apps/kustomization.yaml", 1, "Kustomization", "apps", "(root)", findings[0].message
    )
    assert findings[0].message.startswith("kubectl kustomize failed: ")
    assert "missing.yaml" in findings[0].message
    assert len(advanced) == 2
    # AND the message is the same on every run: no klog time or process id, no absolute path
    assert str(tmp_path) not in findings[0].message
    assert "run.go" not in findings[0].message
    assert findings == check_builds(tmp_path, ["bad/apps", "good"], str(KUBECTL))


def test_klog_lines_give_their_error_text() -> None:
    # GIVEN the line newer kubectl logs for a failed build WHEN it is read THEN only its error remains
    line = 'E1123 10:50:52.039405    9804 run.go:72] "command failed" err="accumulating resources: \\"a\\" missing"'
    assert _message(line) == 'accumulating resources: "a" missing'
    assert _message("error: plain") == "error: plain"


def test_missing_kubectl_names_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ValidateError, match=r"^kubectl not found on PATH: install it, or pass --no-kustomize"):
        find_kubectl()
