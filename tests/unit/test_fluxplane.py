"""The library facade: ``fluxplane.synthesize`` and ``fluxplane.check`` for use from Python."""

from __future__ import annotations

from pathlib import Path

import fluxplane
from tests.conftest import FleetWriter


def test_synthesize_then_check(write_fleet: FleetWriter, tmp_path: Path) -> None:
    # GIVEN a fleet WHEN synthesized from Python THEN dist/ holds what was returned
    root = write_fleet()
    result = fluxplane.synthesize(root)
    assert result.outdir == root / "dist"
    written = {p.relative_to(result.outdir).as_posix() for p in result.outdir.rglob("*") if p.is_file()}
    assert written == set(result.files)
    # THEN check finds nothing to change, until the definition changes
    assert not fluxplane.check(root).stale
    (root / "environments/staging.yaml").write_text("clusters:\n  - {name: staging-2, region: eu-west-1}\n")
    staleness = fluxplane.check(root)
    assert "platform/clusters/staging-2/kustomization.yaml" in staleness.added
    assert "platform/clusters/staging-1/kustomization.yaml" in staleness.removed
