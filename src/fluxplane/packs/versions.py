"""Every pinned chart and artifact version of the built-in packs, in one place.

Upgrading an add-on fleet-wide is a one-line change here, reviewed as a diff of dist/.
"""

from __future__ import annotations

from typing import NamedTuple


class Chart(NamedTuple):
    repository: str
    chart: str
    version: str


METRICS_SERVER = Chart("https://kubernetes-sigs.github.io/metrics-server/", "metrics-server", "3.12.2")
PODINFO = Chart("oci://ghcr.io/stefanprodan/charts/podinfo", "podinfo", "6.7.1")
