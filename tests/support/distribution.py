"""fluxplane's installed distribution as pip leaves it, faked: its metadata and PEP 610's direct_url.json."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import fluxplane


def installed_from(
    monkeypatch: pytest.MonkeyPatch, folder: Path, direct_url: dict[str, Any] | None, version: str = "1.2.3"
) -> None:
    """Make ``importlib.metadata`` find fluxplane ``version`` installed from ``direct_url`` (None: from a package
    index, which pip records nothing for), and ``fluxplane.__version__`` say so; its dist-info folder goes in
    ``folder``."""
    info = folder / f"fluxplane-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.4\nName: fluxplane\nVersion: {version}\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    # fluxplane keeps the version it read first: read the real one before the fake is there, so that it comes back
    # once the test is over
    monkeypatch.setattr(fluxplane, "__version__", version)
    real = metadata.distribution
    monkeypatch.setattr(
        metadata, "distribution", lambda name: metadata.PathDistribution(info) if name == "fluxplane" else real(name)
    )
