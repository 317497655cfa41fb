"""Reading ``environments/apps/`` and placing each app on the fleet's clusters, with every problem at once."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fluxplane.config.apps.app import App, AppFile, Placement
from fluxplane.config.apps.names import (
    RESERVED_APP_NAMES,
    aws_name_problem,
    aws_names,
    name_collisions,
    name_length_problems,
    prefix_overlaps,
)
from fluxplane.config.merge import Layer, Origins
from fluxplane.config.models import DNS_LABEL
from fluxplane.config.problems import ProblemList, read_mapping, show

APPS_DIR = "apps"


def apps_dir(root: Path) -> Path:
    return root / "environments" / APPS_DIR


def app_path(root: Path, name: str) -> Path:
    return apps_dir(root) / f"{name}.yaml"


def read_app_files(root: Path, display: Any) -> tuple[list[AppFile], list[str]]:
    """Validate every ``environments/apps/*.yaml`` on its own (no fleet needed); return apps and problems.

    ``display`` turns a path into the name messages use.
    """
    folder = apps_dir(root)
    if not folder.is_dir():
        return [], []
    problems = ProblemList()
    found: list[AppFile] = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        shown = display(path)
        if path.is_dir() or path.suffix not in (".yaml", ".yml"):
            problems.lines.append(f"{shown}: not an app file; environments/apps/ holds one <app>.yaml per app")
            continue
        if path.suffix == ".yml":
            problems.lines.append(f"{shown}: use the .yaml extension")
            continue
        if not re.fullmatch(DNS_LABEL, path.stem) or len(path.stem) > 63:
            length = f" of at most 63 characters (it has {len(path.stem)})" if len(path.stem) > 63 else ""
            problems.lines.append(
                f"{shown}: app name {show(path.stem)} must be a DNS-1123 label{length} "
                "(lower-case letters, digits and '-'); rename the file"
            )
            continue
        if path.stem in RESERVED_APP_NAMES:
            problems.lines.append(
                f"{shown}: app name {show(path.stem)} is taken: the folders that hold each app's tenant folder "
                "(workloads repository) and its AWS resources (platform repository) have a kustomization.yaml of "
                "their own; rename the file"
            )
            continue
        raw = read_mapping(path, shown, problems)
        if raw is None:
            continue
        if "name" in raw:
            problems.lines.append(f"{shown}: name: not allowed here; the file name is the app's name")
            continue
        origins = Origins([Layer(shown, raw)])
        app = problems.validate(App, {**raw, "name": path.stem}, origins)
        if app is not None:
            problems.lines.extend(f"{origins.describe(loc)}: {problem}" for loc, problem in name_length_problems(app))
            found.append(AppFile(app=app, display=shown, origins=origins))
    return found, problems.lines


#: The folder of a workloads repository's cluster folder with the resources its apps' files name, on a cluster
#: that makes them itself (``appResources: spoke``), next to the tenants' folders: no app there may take its name.
SPOKE_RESOURCES_DIR = "app-resources"


def place_apps(
    files: list[AppFile],
    environments: dict[str, list[tuple[str, str]]],
    spokes: frozenset[str] = frozenset(),
    registered: frozenset[str] = frozenset(),
    notes: list[str] | None = None,
) -> tuple[tuple[Placement, ...], list[str]]:
    """Resolve each app's clusters and environments against the fleet; report what does not resolve.

    ``environments`` maps each environment to its clusters as (name, region), in definition order; ``spokes`` are
    the clusters that make their apps' resources themselves; ``registered`` those whose subnets the hub does not
    know (an existing cluster, registered), where an app's database cannot go: an app with one that names such a
    cluster is refused, one that runs on its environment leaves it out, said in ``notes``.
    """
    problems: list[str] = []
    region_of = {name: (env, region) for env, clusters in environments.items() for name, region in clusters}
    placements: list[Placement] = []
    #: (cluster, namespace) -> the app that claimed it first.
    claimed: dict[tuple[str, str], str] = {}
    for item in sorted(files, key=lambda item: item.app.name):
        app, shown = item.app, item.display
        targets: dict[str, None] = {}
        for index, cluster in enumerate(app.clusters):
            if cluster not in region_of:
                known = ", ".join(sorted(region_of)) or "none"
                problems.append(f"{shown}: clusters[{index}]: unknown workload cluster {cluster!r} (clusters: {known})")
                continue
            if cluster in registered and app.aws.databases:
                problems.append(
                    f"{shown}: clusters[{index}]: app {app.name!r} has a database, which cannot go on cluster "
                    f"{cluster!r}: it is registered, and the hub knows nothing of its subnets; import the cluster "
                    "(existing.mode: observed), or take it off the app's clusters"
                )
                continue
            targets[cluster] = None
        for index, environment in enumerate(app.environments):
            if environment not in environments:
                known = ", ".join(sorted(environments)) or "none"
                problems.append(
                    f"{shown}: environments[{index}]: unknown environment {environment!r} (environments: {known})"
                )
                continue
            for cluster, _ in environments[environment]:
                if cluster in registered and app.aws.databases and cluster not in targets:
                    if notes is not None:
                        notes.append(
                            f"{shown}: environments[{index}]: app {app.name!r} is left off cluster {cluster!r} of "
                            f"environment {environment!r}: it has a database, and the cluster is registered, so the "
                            "hub knows nothing of its subnets"
                        )
                    continue
                targets[cluster] = None
        for cluster in targets:
            environment, region = region_of[cluster]
            key = (cluster, app.target_namespace)
            if key in claimed:
                problems.append(
                    f"{shown}: namespace: app {app.name!r} and app {claimed[key]!r} both claim namespace "
                    f"{app.target_namespace!r} on cluster {cluster!r}; give one of them its own namespace"
                )
                continue
            claimed[key] = app.name
            if cluster in spokes and app.name == SPOKE_RESOURCES_DIR:
                problems.append(
                    f"{shown}: app {app.name!r} on cluster {cluster!r}: its tenant folder would be the folder of the "
                    f"cluster's own app resources (appResources: spoke, clusters/{cluster}/{SPOKE_RESOURCES_DIR}/); "
                    "rename the app"
                )
                continue
            for kind, index, aws_name in aws_names(cluster, app):
                rule = aws_name_problem(kind, aws_name)
                if rule is not None:
                    problems.append(
                        f"{shown}: aws.{kind}[{index}].name: on cluster {cluster!r} the AWS name would be "
                        f"{show(aws_name)}; {rule}"
                    )
            placements.append(Placement(app=app, cluster=cluster, environment=environment, region=region))
    problems.extend(name_collisions(files, tuple(placements)))
    problems.extend(prefix_overlaps(files, tuple(placements), spokes))
    return tuple(placements), list(dict.fromkeys(problems))
