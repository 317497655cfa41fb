"""The names an app's resources take, in AWS and on the hub, and what they must not do: break AWS's rules,
outgrow a label, or clash with another app's (or another field's) names."""

from __future__ import annotations

import bisect
import ipaddress
import re
from dataclasses import dataclass

from fluxplane.config.apps.app import App, AppFile, Placement
from fluxplane.config.apps.resources import DB_IDENTIFIER, DB_IDENTIFIER_MAX_LENGTH, Queue
from fluxplane.config.merge import Loc
from fluxplane.config.problems import show

#: S3 bucket names: 3 to 63 lower-case letters, digits, '-' and '.', not an IP, no reserved affixes.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def physical_name(cluster: str, app: str, name: str) -> str:
    """The AWS name of an app's resource: unique per cluster and app, readable in the console."""
    return f"{cluster}-{app}-{name}"


def aws_name_problem(kind: str, aws_name: str) -> str | None:
    """What AWS refuses in ``aws_name``, a resource of ``kind`` (a field of ``aws``), and what to do."""
    rule = _aws_name_rule(kind, aws_name)
    if rule is None:
        return None
    return rule if ":" in rule else f"{rule}: shorten the name"


def _aws_name_rule(kind: str, aws_name: str) -> str | None:
    if kind == "tables":
        if not 3 <= len(aws_name) <= 255 or not re.fullmatch(r"[A-Za-z0-9_.-]+", aws_name):
            return "a DynamoDB table name has 3 to 255 letters, digits, '_', '-' and '.'"
    elif kind == "queues":
        if len(aws_name) > 80 or not re.fullmatch(r"[A-Za-z0-9_-]+(\.fifo)?", aws_name):
            return "an SQS queue name has at most 80 letters, digits, '-' and '_' (with .fifo counted)"
    elif kind == "buckets":
        if not _BUCKET.fullmatch(aws_name) or ".." in aws_name:
            return "an S3 bucket name has 3 to 63 lower-case letters, digits, '-' and '.'"
        try:
            ipaddress.IPv4Address(aws_name)
        except ValueError:
            pass
        else:
            return "an S3 bucket name must not look like an IP address"
        if aws_name.startswith(("xn--", "sthree-")) or aws_name.endswith(("-s3alias", "--ol-s3", ".mrap", "--x-s3")):
            return "an S3 bucket name must not use AWS's reserved prefixes and suffixes"
    elif kind == "databases":
        if len(aws_name) > DB_IDENTIFIER_MAX_LENGTH:
            return f"an RDS DB instance identifier has at most {DB_IDENTIFIER_MAX_LENGTH} characters"
        if not re.fullmatch(DB_IDENTIFIER, aws_name):
            return (
                "an RDS DB instance identifier starts with a letter and has no two hyphens in a row: rename the "
                "database, or the app"
            )
    return None


def queue_name(cluster: str, app: str, queue: Queue) -> str:
    return physical_name(cluster, app, queue.name) + (".fifo" if queue.fifo else "")


def aws_names(cluster: str, app: App) -> list[tuple[str, int, str]]:
    """(kind, index, AWS name) of every resource ``app`` has on ``cluster``."""
    names = [
        ("tables", index, physical_name(cluster, app.name, table.name)) for index, table in enumerate(app.aws.tables)
    ]
    names += [("queues", index, queue_name(cluster, app.name, queue)) for index, queue in enumerate(app.aws.queues)]
    names += [
        ("buckets", index, physical_name(cluster, app.name, bucket.name))
        for index, bucket in enumerate(app.aws.buckets)
    ]
    names += [
        ("databases", index, physical_name(cluster, app.name, database.name))
        for index, database in enumerate(app.aws.databases)
    ]
    return names


# -- the names the hub gives an app's objects ----------------------------------------------------

#: An app's AWS resources: its ``aws`` field, the kind of their composites, the word their names hold.
RESOURCE_KINDS = (
    ("tables", "AppTable", "table"),
    ("queues", "AppQueue", "queue"),
    ("buckets", "AppBucket", "bucket"),
    ("databases", "AppDatabase", "database"),
)
#: Label values hold at most 63 characters, and some names end up in one: Crossplane labels a composite and
#: what it composes with the composite's name (crossplane.io/composite), and Flux labels what a Kustomization
#: applies with the Kustomization's name (kustomize.toolkit.fluxcd.io/name).
MAX_LABELLED_NAME = 63
#: Suffix of the hub objects that apply an app's own requests (``aws.path``): its account and Kustomization
#: ``<app>-cloud`` (fluxplane.kinds.app.REQUEST_ACCOUNT_SUFFIX).
REQUESTS_SUFFIX = "-cloud"
#: App names fluxplane's own files take: every folder that holds an app's folder or file (the cluster's tenants in
#: the workloads repository, its AWS resources in the platform one) has a kustomization.yaml.
RESERVED_APP_NAMES = ("kustomization",)


def composite_name(app: str, word: str, name: str) -> str:
    """The name of an app's AppTable, AppQueue or AppBucket (``word`` table, queue or bucket) in the hub
    namespace of each cluster it runs on (fluxplane.charts.cloud)."""
    return f"{app}-{word}-{name}"


def requests_name(app: str) -> str:
    """The hub's account and Kustomization that apply an app's own requests (``aws.path``)."""
    return f"{app}{REQUESTS_SUFFIX}"


def name_length_problems(app: App) -> list[tuple[Loc, str]]:
    """The names derived from the app's that would not fit the label Crossplane or Flux puts them in."""
    found: list[tuple[Loc, str]] = []
    for field, kind, word in RESOURCE_KINDS:
        for index, item in enumerate(getattr(app.aws, field)):
            name = composite_name(app.name, word, item.name)
            if len(name) > MAX_LABELLED_NAME:
                found.append(
                    (
                        ("aws", field, index, "name"),
                        f"the hub names this {word}'s {kind} {show(name)} ({len(name)} characters), and Crossplane "
                        f"labels a composite with its name, which allows {MAX_LABELLED_NAME}: shorten the "
                        f"{word}'s name or the app's",
                    )
                )
    if app.aws.path is not None and len(requests_name(app.name)) > MAX_LABELLED_NAME:
        name = requests_name(app.name)
        found.append(
            (
                ("aws", "path"),
                f"the hub applies the app's requests as Flux Kustomization {show(name)} ({len(name)} characters), "
                f"and Flux labels what it applies with that name, which allows {MAX_LABELLED_NAME}: with aws.path an "
                f"app's name has at most {MAX_LABELLED_NAME - len(REQUESTS_SUFFIX)} characters; rename the file",
            )
        )
    return found


@dataclass(frozen=True)
class _Claim:
    """A generated name taken by one app's field on one cluster."""

    where: str
    app: str
    cluster: str


#: Per field of ``aws``: what AWS calls the resource, and how far its names must be unique.
_AWS_SCOPES = {
    "tables": ("DynamoDB table", "DynamoDB table names are unique per account and region"),
    "queues": ("SQS queue", "SQS queue names are unique per account and region"),
    "buckets": ("S3 bucket", "S3 bucket names are unique across AWS"),
    "databases": ("RDS DB instance", "RDS DB instance identifiers are unique per account and region"),
}


def name_collisions(files: list[AppFile], placements: tuple[Placement, ...]) -> list[str]:
    """Generated names that two apps' fields (or two fields of one app) would both take, each reported once, at
    the later field, naming the earlier one.

    Names are made by joining parts with '-', and the parts may hold '-' themselves: app ``a`` with table
    ``b-table-c`` and app ``a-table-b`` with table ``c`` both make AppTable ``a-table-b-table-c`` in the
    cluster's hub namespace (the second object would replace the first), and app ``a`` with table ``b-c``
    and app ``a-b`` with table ``c`` both make DynamoDB table ``<cluster>-a-b-c`` (both apps would use one table).
    """
    located = {item.app.name: item for item in files}
    #: The first claim on each name.
    taken: dict[tuple[str, ...], _Claim] = {}
    #: A clash of two composites, by its line without the clusters: the clusters it happens on.
    composites: dict[tuple[str, str], list[str]] = {}
    physical: list[str] = []
    for placement in sorted(placements, key=lambda p: (p.app.name, p.cluster)):
        app, cluster, item = placement.app, placement.cluster, located[placement.app.name]
        aws = {(field, index): aws_name for field, index, aws_name in aws_names(cluster, app)}
        for field, kind, word in RESOURCE_KINDS:
            service, unique = _AWS_SCOPES[field]
            for index, resource in enumerate(getattr(app.aws, field)):
                claim = _Claim(item.origins.describe(("aws", field, index, "name")), app.name, cluster)
                name = composite_name(app.name, word, resource.name)
                first = taken.setdefault((cluster, kind, name), claim)
                if first.where != claim.where:
                    head = (
                        f"{claim.where}: the hub would name this {word}'s {kind} {show(name)}, and so would "
                        f"{first.where} (app {first.app!r}), in the hub namespace of"
                    )
                    composites.setdefault((head, f"rename one of the two {word}s"), []).append(cluster)
                aws_name = aws[(field, index)]
                first = taken.setdefault((field, "" if field == "buckets" else placement.region, aws_name), claim)
                if first.where != claim.where:
                    physical.append(
                        f"{claim.where}: on cluster {cluster!r} ({placement.region}) this {word} would be {service} "
                        f"{show(aws_name)}, and so would {first.where} (app {first.app!r} on cluster "
                        f"{first.cluster!r}): {unique}; rename one of the two {word}s"
                    )
    # The same two fields clash on every cluster both apps run on: one line names them all.
    lines = [
        f"{head} {'cluster' if len(clusters) == 1 else 'clusters'} {', '.join(map(repr, clusters))}; {advice}"
        for (head, advice), clusters in composites.items()
    ]
    return lines + physical + _cloud_file_collisions(located, placements)


def _cloud_file_collisions(located: dict[str, AppFile], placements: tuple[Placement, ...]) -> list[str]:
    """The hub's folder of a cluster's app resources holds ``<app>.yaml`` for each app that needs AWS and, for an
    app with ``aws.path`` and Git credentials, the hub's copy of them as ``<secretRef>.yaml`` (apps that name the
    same secret share it), next to its ``kustomization.yaml``."""
    files: dict[str, set[str]] = {placement.cluster: set() for placement in placements}
    for placement in placements:
        if not placement.app.aws.empty:
            files[placement.cluster].add(placement.app.name)
    problems: dict[tuple[str, str], list[str]] = {}
    for placement in sorted(placements, key=lambda p: (p.app.name, p.cluster)):
        app, cluster = placement.app, placement.cluster
        secret = app.repository.secret_ref
        if app.aws.path is None or secret is None:
            continue
        if secret == "kustomization":
            holder = "the folder's own list of files"
        elif secret == app.name:
            holder = "the file of this app's own AWS resources"
        elif secret in files[cluster]:
            holder = f"the file of the AWS resources of {located[secret].display} (app {secret!r})"
        else:
            continue
        head = (
            f"{located[app.name].origins.describe(('repository', 'secretRef'))}: with aws.path the hub keeps its copy "
            f"of these credentials as {secret}.yaml in its folder of the app resources of"
        )
        problems.setdefault((head, holder), []).append(cluster)
    return [
        f"{head} {'cluster' if len(clusters) == 1 else 'clusters'} {', '.join(map(repr, clusters))}, which is "
        f"{holder}; seal the credentials under another name"
        for (head, holder), clusters in problems.items()
    ]


def prefix_overlaps(
    files: list[AppFile], placements: tuple[Placement, ...], spokes: frozenset[str] = frozenset()
) -> list[str]:
    """Apps whose resources are theirs by name alone, and whose names would take in another's.

    An app that asks for resources from its own repository (``aws.path``), or runs on a cluster that makes its
    apps' resources (``appResources: spoke``, where its role may use every resource named after it), owns the
    AWS names that begin ``<cluster>-<app>-``. Names join parts with '-', which the parts may hold: app ``a`` on
    ``c`` owns ``c-a-b-...``, the names of app ``a-b`` on ``c`` (and of app ``b`` on a cluster ``c-a``). So no
    other app's names may begin with an owner's prefix. A cluster that makes its apps' resources owns every name
    ``<cluster>-...`` through its Crossplane's roles, so no other cluster's name may begin ``<cluster>-``.
    """
    located = {item.app.name: item for item in files}
    problems: list[str] = []
    clusters = sorted({placement.cluster for placement in placements} | spokes)
    for spoke in sorted(spokes):
        for cluster in clusters:
            if cluster.startswith(f"{spoke}-"):
                problems.append(
                    f"cluster {cluster!r}: its AWS names begin {spoke + '-'!r}, which cluster {spoke!r} owns "
                    f"(appResources: spoke: its Crossplane may manage every resource named {spoke}-...); rename "
                    f"cluster {cluster!r}"
                )
    named = sorted(
        ((f"{p.cluster}-{p.app.name}-", p) for p in placements if not p.app.aws.empty),
        key=lambda pair: (pair[0], pair[1].app.name),
    )
    prefixes = [prefix for prefix, _ in named]
    for prefix, owner in named:
        if owner.app.aws.path is None and owner.cluster not in spokes:
            continue
        # The prefixes that begin with this one sit right after it in sorted order.
        start = bisect.bisect_right(prefixes, prefix)
        for other_prefix, other in named[start : bisect.bisect_left(prefixes, prefix + "\U0010ffff", start)]:
            if other_prefix != prefix:
                problems.append(
                    f"{located[other.app.name].display}: on cluster {other.cluster!r} the AWS names of app "
                    f"{other.app.name!r} begin {other_prefix!r}, inside those app {owner.app.name!r} owns on cluster "
                    f"{owner.cluster!r} ({prefix}..., {located[owner.app.name].display}), which could then take or "
                    f"use them; rename one of the two apps"
                )
    return problems
