"""The AWS facts a definition is checked against: EC2 instance types, regions with their availability
zones, and the EKS Kubernetes release calendar.

A typo in an instance type, a region or a version passes every schema, and fails only when Crossplane
asks AWS for the cluster, long after the pull request merged. fluxplane ships the facts as data files
(``config/data/``, each naming its source and date) instead of asking AWS, so that checking needs no
credentials or network and gives the same answer on any machine and any day. ``awsData`` in
``environments/base.yaml`` (:class:`~fluxplane.config.models.AwsData`) adds what is newer than the
files, and an account's own zone names.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from importlib import resources
from typing import Any

import yaml

from fluxplane.config import models
from fluxplane.config.problems import closest

#: Where a definition adds facts newer than fluxplane's data.
OVERRIDE = "environments/base.yaml"
#: The partitions whose regions fluxplane knows: commercial, China and GovCloud (US).
PARTITIONS = ("aws", "aws-cn", "aws-us-gov")

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Release:
    """One Kubernetes minor version on EKS: when EKS released it and when its support ends."""

    version: str
    release: date
    end_of_standard_support: date
    end_of_extended_support: date


def partition(region: str) -> str:
    """The ARN partition of ``region``: ``aws-cn`` for China, ``aws-us-gov`` for GovCloud (US), else ``aws``."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def minor(version: str) -> int:
    """The minor number of a ``1.NN`` version, for ordering (1.9 sorts before 1.10)."""
    return int(version.split(".")[1])


def upgrade_refusal(running: str, wanted: str) -> str | None:
    """Why EKS refuses moving a cluster from Kubernetes ``running`` to ``wanted``; None when it does not."""
    step = minor(wanted) - minor(running)
    if step in (0, 1):
        return None
    return "EKS cannot downgrade a cluster" if step < 0 else "EKS upgrades a cluster one minor version at a time"


@dataclass(frozen=True)
class AwsFacts:
    """What fluxplane accepts: the shipped data, plus a definition's ``awsData``."""

    instance_types: frozenset[str]
    #: Zone names of every region, in the order clusters use them.
    zones: Mapping[str, tuple[str, ...]]
    releases: Mapping[str, Release]
    #: The day the calendar was read: versions whose extended support ended by then are refused.
    as_of: date
    #: Versions ``awsData`` adds to the calendar.
    added_versions: frozenset[str] = field(default_factory=frozenset)

    def with_override(self, data: models.AwsData) -> AwsFacts:
        """These facts with ``data`` added; a region in ``data`` replaces that region's zone list."""
        return AwsFacts(
            instance_types=self.instance_types | frozenset(data.instance_types),
            zones={**self.zones, **{region: tuple(zones) for region, zones in data.regions.items()}},
            releases=self.releases,
            as_of=self.as_of,
            added_versions=self.added_versions | frozenset(data.kubernetes_versions),
        )

    # -- instance types --------------------------------------------------------------------------

    def instance_type_problem(self, value: str) -> str | None:
        """Why ``value`` is not an EC2 instance type, or None."""
        if value in self.instance_types:
            return None
        return (
            f"unknown EC2 instance type {_quote(value)}{_suggestion(value, self.instance_types, 'm7i.large')} "
            f"(a type newer than fluxplane's data: add it to awsData.instanceTypes in {OVERRIDE})"
        )

    # -- regions and zones ---------------------------------------------------------------------

    def region_problem(self, value: str) -> str | None:
        """Why ``value`` is not an AWS region, or None."""
        if value in self.zones:
            return None
        return (
            f"unknown AWS region {_quote(value)}{_suggestion(value, self.zones, 'us-west-2')} "
            f"(a region newer than fluxplane's data: add it with its availability zones to awsData.regions "
            f"in {OVERRIDE})"
        )

    def zone_count_problem(self, region: str, count: int) -> str | None:
        """Why ``region`` cannot hold ``count`` zones, or None (also for a region it does not know)."""
        zones = self.zones.get(region)
        if zones is None or count <= len(zones):
            return None
        return (
            f"{region} has {len(zones)} availability zones ({', '.join(zones)}), got {count}; use at most "
            f"{len(zones)}, or list your account's zones there under awsData.regions in {OVERRIDE}"
        )

    def zone_names(self, region: str, count: int) -> tuple[str, ...]:
        """The first ``count`` zones of ``region``: the zones a cluster's subnets go to."""
        zones = self.zones.get(region, ())
        if count > len(zones):
            raise ValueError(f"{region!r} has {len(zones)} known availability zones, not {count}")
        return zones[:count]

    # -- Kubernetes versions ---------------------------------------------------------------------

    @functools.cached_property
    def supported_versions(self) -> tuple[str, ...]:
        """Versions a new cluster may use, oldest first: extended support not ended, or added and not ended. Worked
        out once: each cluster's version is checked against them."""
        return tuple(sorted((set(self.releases) | self.added_versions) - self._ended(), key=minor))

    def _ended(self) -> set[str]:
        return {version for version, release in self.releases.items() if release.end_of_extended_support <= self.as_of}

    def version_problem(self, value: str) -> str | None:
        """Why EKS does not offer Kubernetes ``value``, or None."""
        if value in self.supported_versions:
            return None
        supported = _ranges(self.supported_versions)
        expected = f"expected a Kubernetes version EKS supports ({supported}), got {_quote(value)}"
        release = self.releases.get(value)
        if release is not None:
            return f"{expected}: its extended support ended on {release.end_of_extended_support.isoformat()}"
        if self.releases and minor(value) < min(minor(version) for version in self.releases):
            return f"{expected}: EKS support for it has ended"
        return f"{expected} (a version newer than fluxplane's data: add it to awsData.kubernetesVersions in {OVERRIDE})"

    def added_version_problem(self, value: str) -> str | None:
        """Why ``awsData`` may not add ``value``: the calendar says EKS no longer offers it."""
        release = self.releases.get(value)
        if release is None or value not in self._ended():
            return None
        return (
            f"EKS ended extended support for Kubernetes {value} on {release.end_of_extended_support.isoformat()}, "
            f"so it cannot be added; use {_ranges(self.supported_versions)}"
        )


#: How long before the end of a version's standard support its clusters are warned about.
SUPPORT_WARNING_DAYS = 90


def support_warnings(versions: Mapping[str, str], releases: Mapping[str, Release], today: date) -> list[str]:
    """One line per Kubernetes version whose EKS standard support has ended by ``today`` or ends within
    SUPPORT_WARNING_DAYS, naming its clusters (``versions``: cluster name to version), oldest version first.

    Past standard support a cluster runs on EKS extended support, billed per cluster hour, until EKS upgrades it
    at the end of that. A version the calendar does not hold (added in awsData) is not judged.
    """
    by_version: dict[str, list[str]] = {}
    for cluster, version in versions.items():
        by_version.setdefault(version, []).append(cluster)
    lines = []
    for version in sorted(by_version, key=minor):
        release = releases.get(version)
        if release is None:
            continue
        clusters = sorted(by_version[version])
        named = ", ".join(clusters[:5]) + (f" and {len(clusters) - 5} more" if len(clusters) > 5 else "")
        upgrade = f"upgrade to 1.{minor(version) + 1} (kubernetesVersion)"
        ended, extended = release.end_of_standard_support, release.end_of_extended_support.isoformat()
        if ended <= today:
            lines.append(
                f"Kubernetes {version} left EKS standard support on {ended.isoformat()}: {named} "
                f"{'runs' if len(clusters) == 1 else 'run'} on paid extended support until {extended}, when EKS "
                f"upgrades {'it' if len(clusters) == 1 else 'them'}; {upgrade}"
            )
        elif (ended - today).days <= SUPPORT_WARNING_DAYS:
            lines.append(
                f"Kubernetes {version} leaves EKS standard support on {ended.isoformat()}, in {(ended - today).days} "
                f"days: {named}; {upgrade}"
            )
    return lines


def fleet_support_warnings(fleet: models.Fleet, today: date) -> list[str]:
    """support_warnings for every cluster of ``fleet``, the hub's included."""
    versions = {cluster.name: cluster.kubernetes_version for cluster in (fleet.management, *fleet.clusters)}
    return support_warnings(versions, shipped().releases, today)


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _suggestion(value: str, known: Iterable[str], example: str) -> str:
    """``; did you mean "x"?`` for the closest known name, or an example when none is close."""
    guess = closest(value, known)
    return f"; did you mean {_quote(guess)}?" if guess else f"; use one AWS offers, such as {example}"


def _ranges(versions: Iterable[str]) -> str:
    """Versions as runs of consecutive minors: ``1.31 to 1.37, 1.40``."""
    runs: list[list[int]] = []
    for number in sorted({minor(version) for version in versions}):
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(f"1.{run[0]}" if len(run) == 1 else f"1.{run[0]} to 1.{run[-1]}" for run in runs) or "none"


def _data(name: str) -> str:
    return (resources.files("fluxplane.config") / "data" / name).read_text(encoding="utf-8")


def read_instance_types(text: str) -> tuple[str, ...]:
    """The types of an instance type list: one a line, ``#`` comments and blank lines skipped."""
    return tuple(line for line in (raw.strip() for raw in text.splitlines()) if line and not line.startswith("#"))


def read_regions(text: str) -> dict[str, dict[str, tuple[str, ...]]]:
    """Zone names by region, by partition."""
    data: dict[str, dict[str, list[str]]] = yaml.load(text, Loader=_Loader)
    return {
        partition: {region: tuple(zones) for region, zones in regions.items()} for partition, regions in data.items()
    }


def read_calendar(text: str) -> tuple[date, dict[str, Release]]:
    """The calendar's ``asOf`` day and its releases by version."""
    data: dict[str, Any] = yaml.load(text, Loader=_Loader)
    releases = {
        version: Release(
            version=version,
            release=date.fromisoformat(dates["release"]),
            end_of_standard_support=date.fromisoformat(dates["endOfStandardSupport"]),
            end_of_extended_support=date.fromisoformat(dates["endOfExtendedSupport"]),
        )
        for version, dates in data["versions"].items()
    }
    return date.fromisoformat(data["asOf"]), releases


@functools.cache
def shipped() -> AwsFacts:
    """The facts fluxplane ships, read once per process."""
    as_of, releases = read_calendar(_data("eks-kubernetes-versions.yaml"))
    by_partition = read_regions(_data("aws-regions.yaml"))
    return AwsFacts(
        instance_types=frozenset(read_instance_types(_data("ec2-instance-types.txt"))),
        zones={region: zones for partition in PARTITIONS for region, zones in by_partition[partition].items()},
        releases=releases,
        as_of=as_of,
    )


def facts(data: models.AwsData) -> AwsFacts:
    """The shipped facts with a definition's ``awsData`` added (made once per distinct ``awsData``)."""
    key = data.model_dump_json()
    found = _FACTS.get(key)
    if found is None:
        found = _FACTS[key] = shipped().with_override(data)
    return found


#: The facts of each ``awsData`` seen, by its JSON: every cluster of a fleet asks for them.
_FACTS: dict[str, AwsFacts] = {}
