"""Every pin of versions.py is well formed, and renovate.json bumps every one of them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fluxplane.packs import versions
from fluxplane.packs.api import exact_version
from fluxplane.packs.versions import Chart
from tests.conftest import ROOT

VERSIONS_FILE = Path(versions.__file__)
#: A Helm chart's name (lower-case letters, digits, '-', '_' and '.').
CHART_NAME = re.compile(r"[a-z0-9]([a-z0-9._-]*[a-z0-9])?")
#: A host name and a path, as an https:// or oci:// URL has them (no spaces, quotes or trailing slash for oci).
URL = re.compile(r"(https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~/-]*)?|oci://[A-Za-z0-9.-]+(/[A-Za-z0-9._~-]+)+)")
CHARTS = {name: value for name, value in vars(versions).items() if isinstance(value, Chart)}
PACKAGES = ("PROVIDER_AWS", "PROVIDER_KUBERNETES", "FUNCTION_PATCH_AND_TRANSFORM", "FUNCTION_AUTO_READY")


def _manager_patterns() -> list[tuple[dict[str, object], re.Pattern[str]]]:
    """renovate.json's regex managers for versions.py, each with its first match string as a Python regex
    (RE2's ``(?<name>`` is Python's ``(?P<name>``)."""
    config = json.loads((ROOT / "renovate.json").read_text())
    found = []
    for manager in config["customManagers"]:
        assert manager["customType"] == "regex"
        pattern = manager["managerFilePatterns"][0].strip("/")
        if not re.search(pattern, "src/fluxplane/packs/versions.py"):
            continue  # a pin elsewhere (fluxplane.system.node's cdk8s-cli: tests/unit/system/test_node.py)
        for match_string in manager["matchStrings"]:
            found.append((manager, re.compile(match_string.replace("(?<", "(?P<"))))
    return found


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_every_chart_pin_is_well_formed(name: str) -> None:
    chart = CHARTS[name]
    assert URL.fullmatch(chart.repository), chart.repository
    assert CHART_NAME.fullmatch(chart.chart), chart.chart
    assert exact_version(chart.version) == chart.version
    # an oci:// pin names the registry path; the chart's own URL adds the chart
    if chart.repository.startswith("oci://"):
        assert chart.url == f"{chart.repository}/{chart.chart}"
    else:
        assert chart.url == chart.repository


@pytest.mark.parametrize("name", PACKAGES)
def test_every_crossplane_package_pin_is_well_formed(name: str) -> None:
    version = getattr(versions, name)
    assert re.fullmatch(r"v\d+\.\d+\.\d+", version), version
    assert versions.CROSSPLANE_REGISTRY == "xpkg.crossplane.io/crossplane-contrib"


def test_renovate_bumps_every_pin_and_nothing_else() -> None:
    text = VERSIONS_FILE.read_text()
    managers = _manager_patterns()
    # WHEN renovate.json's managers read versions.py
    found: dict[str, tuple[str, str, str]] = {}
    for manager, pattern in managers:
        for match in pattern.finditer(text):
            groups = match.groupdict()
            line = text[: match.start()].count("\n")
            assert line not in found, f"two managers match line {line + 1}"
            datasource = str(manager["datasourceTemplate"])
            package = groups.get("depName") or ""
            if "packageNameTemplate" in manager:
                package = f"{groups['registryPath']}/{groups['depName']}"
            found[str(line)] = (datasource, package, groups["currentValue"])
    # THEN every chart is bumped from its repository, with its version as it is
    for name, chart in CHARTS.items():
        if chart.repository.startswith("oci://"):
            wanted = ("docker", chart.url.removeprefix("oci://"), chart.version)
        else:
            wanted = ("helm", chart.chart, chart.version)
        assert wanted in found.values(), (name, wanted)
    # AND every Crossplane package, by the package its comment names
    for name in PACKAGES:
        package = f"{versions.CROSSPLANE_REGISTRY}/" + name.lower().replace("_", "-").replace(
            "provider-aws", "provider-family-aws"
        )
        assert ("docker", package, getattr(versions, name)) in found.values(), name
    # AND nothing else: one match per pin
    assert len(found) == len(CHARTS) + len(PACKAGES)


def test_the_helm_manager_reads_the_repository_of_each_https_chart() -> None:
    pattern = next(p for m, p in _manager_patterns() if m["datasourceTemplate"] == "helm")
    match = pattern.search('KYVERNO = Chart("https://kyverno.github.io/kyverno/", "kyverno", "3.9.0")')
    assert match is not None
    assert match.groupdict() == {
        "registryUrl": "https://kyverno.github.io/kyverno/",
        "depName": "kyverno",
        "currentValue": "3.9.0",
    }


def test_both_installers_of_a_spokes_flux_install_the_same_flux() -> None:
    # the flux2 chart's Flux, which fluxplane judges, is the minor the Flux Operator's FluxInstance asks for
    assert ".".join(versions.FLUX_DISTRIBUTION.split(".")[:2]) == versions.FLUX2_APP_VERSION
