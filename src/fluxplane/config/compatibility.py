"""The Kubernetes versions each controller supports, as its project publishes them (config/data/
kubernetes-compatibility.yaml): the platform's own (Flux, Crossplane, External Secrets, Sealed Secrets) and the
add-on packs.

Two readers: planning starts a new cluster on the newest version EKS offers that every controller on it supports
(fluxplane.synth.plan), and ``fluxplane versions`` blocks an upgrade past a controller's range
(fluxplane.review.versions).
A controller is given by name (its table's) and version (the pack's, a chart version, or the platform's pin); one
whose version no row covers is not judged.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from fluxplane.config.awsdata import minor

#: A range of Kubernetes minor numbers: the lowest, and the highest or None when the project names no upper bound.
Span = tuple[int, int | None]


@dataclass(frozen=True)
class Compatibility:
    """The Kubernetes versions one controller supports, as its project publishes them."""

    source: str
    #: Controller minor version to the Kubernetes minor numbers it supports.
    rows: Mapping[str, Span]
    #: Chart minor version to the controller minor version it installs, where the two differ.
    app: Mapping[str, str]

    def supported(self, version: str) -> Span | None:
        """The Kubernetes minor numbers ``version`` (the controller's, or its chart's) supports; None: not published."""
        number = ".".join(version.lstrip("v").split(".")[:2])
        return self.rows.get(self.app.get(number, number))


@functools.cache
def compatibility() -> dict[str, Compatibility]:
    """The published compatibility tables, by controller name (a pack's is the pack's name)."""
    text = (resources.files("fluxplane.config") / "data" / "kubernetes-compatibility.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    tables = {}
    for name, entry in data["controllers"].items():
        rows = {}
        for version, span in entry["rows"].items():
            low, dash, high = span.partition("-")
            rows[version] = (minor(low), minor(high) if high else None if dash else minor(low))
        tables[name] = Compatibility(entry["source"], rows, dict(entry.get("app") or {}))
    return tables


def _spans(running: Mapping[str, str]) -> list[tuple[str, str, Span, str]]:
    """(name, version, span, source) of each controller of ``running`` whose version has a published range."""
    found = []
    for name, version in running.items():
        table = compatibility().get(name)
        span = table.supported(version) if table is not None else None
        if table is not None and span is not None:
            found.append((name, version, span, table.source))
    return found


def _supports(name: str, version: str, span: Span, source: str) -> str:
    low, high = span
    shown = f"1.{low}" if high == low else f"1.{low} to 1.{high}" if high is not None else f"1.{low} and later"
    return f"{name} {version} supports Kubernetes {shown} ({source})"


def published(running: Mapping[str, str]) -> list[str]:
    """What each controller of ``running`` whose version has a published range supports."""
    return [_supports(*found) for found in _spans(running)]


def unsupported(kubernetes: str, running: Mapping[str, str]) -> list[tuple[str, str]]:
    """(name, what it supports) for each controller of ``running`` whose published range leaves out ``kubernetes``."""
    wanted = minor(kubernetes)
    return [
        (name, _supports(name, version, span, source))
        for name, version, span, source in _spans(running)
        if wanted < span[0] or (span[1] is not None and wanted > span[1])
    ]


def outgrown(kubernetes: str, running: Mapping[str, str]) -> list[tuple[str, str]]:
    """(name, what it supports) for each controller of ``running`` whose published range ends below ``kubernetes``:
    what an upgrade to it leaves behind. One whose range starts above it runs outside its range already, and an
    upgrade brings it closer."""
    wanted = minor(kubernetes)
    return [
        (name, _supports(name, version, span, source))
        for name, version, span, source in _spans(running)
        if span[1] is not None and wanted > span[1]
    ]


def newest_supported(offered: Iterable[str], running: Mapping[str, str]) -> str | None:
    """The newest of ``offered`` every controller of ``running`` supports; None when none is."""
    fitting = [version for version in offered if not unsupported(version, running)]
    return max(fitting, key=minor) if fitting else None


def ceilings(kubernetes: str, running: Mapping[str, str]) -> str:
    """What keeps the controllers of ``running`` off ``kubernetes``: ``flux 2.9 and external-secrets 2.9.0 support
    up to 1.36``, by highest version supported."""
    wanted = minor(kubernetes)
    below: dict[int, list[str]] = {}
    for name, version, (_, high), _ in _spans(running):
        if high is not None and high < wanted:
            below.setdefault(high, []).append(f"{name} {version}")
    parts = []
    for high, names in sorted(below.items()):
        names.sort()
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        parts.append(f"{listed} {'supports' if len(names) == 1 else 'support'} up to 1.{high}")
    return "; ".join(parts)
