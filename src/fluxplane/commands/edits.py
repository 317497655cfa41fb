"""The commands that change the definition: new-cluster, remove-cluster, onboard-app, offboard-app.

Each command computes new text for the files it touches (see :mod:`fluxplane.config.yamledit`),
validates the whole definition as it would be on a copy of ``environments/``, and only then writes
all the files as one transaction (:mod:`fluxplane.system.transaction`): a failure or a kill leaves all of
them as they were or, once the change is committed, the next command finishes it. Sealed secrets the
change still needs are not an error here: the command lists them with the ``fluxplane seal`` line
that makes each one. One module, though long: the four edits find clusters and apps in the files through
the same readers, and each ends in the same check on a copy and the same transaction.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fluxplane.config import models
from fluxplane.config.apps import APPS_DIR, SEMVER_RANGE
from fluxplane.config.awsdata import facts
from fluxplane.config.hub import cluster_namespace
from fluxplane.config.loader import BASE_FILE, NOT_ENVIRONMENTS, LoadedFleet, check_links, load_fleet
from fluxplane.config.merge import deep_merge
from fluxplane.config.models import DNS_LABEL
from fluxplane.config.problems import show
from fluxplane.config.secrets import SECRETS_DIR
from fluxplane.config.yamledit import YamlText, render_mapping
from fluxplane.config.yamlfile import read_yaml
from fluxplane.errors import ConfigError
from fluxplane.system import transaction

ENVIRONMENTS = "environments"
#: What a bare ``--ref`` is read as when it looks like a release: v1.2.3, 1.2.3, v1.2.3-rc.1.
_RELEASE = re.compile(r"^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]*)?$")
#: Characters only a semver range has.
_RANGE_MARKS = re.compile(r"[<>=~^*|, ]|(^|\.)[xX](\.|$)")
REF_KINDS = ("tag", "semver", "branch")
DEFAULT_BRANCH = "main"


@dataclass
class Edit:
    """What a command changes: new text per file (None deletes it), and what the user should know."""

    root: Path
    #: Path below ``root`` (POSIX) -> new text, or None to delete the file.
    files: dict[str, str | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: The workload clusters it adds: checking the edit says which controllers hold one back from the newest
    #: Kubernetes version EKS offers (FleetPlan.held_back).
    added: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ValidatedEdit:
    """A validated edit: the unified diff, notes, and the sealed secrets still to make."""

    diff: str
    notes: list[str]
    todo: list[str]


# -- helpers ---------------------------------------------------------------------------------------


def _read(root: Path, relative: str) -> str:
    try:
        return (root / relative).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{relative}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{relative}: cannot read: {exc}") from None


def _environment_files(root: Path) -> list[str]:
    folder = root / ENVIRONMENTS
    if not folder.is_dir():
        raise ConfigError(f"{folder}: folder not found; run this in the project folder (or pass --root)")
    return [
        f"{ENVIRONMENTS}/{path.name}"
        for path in sorted(folder.iterdir())
        if path.suffix == ".yaml" and path.name not in NOT_ENVIRONMENTS and not path.name.startswith(".")
    ]


def _scalar_at(document: YamlText, node: yaml.Node | None, key: str) -> str | None:
    """The string under ``key`` when ``node`` is a mapping holding one."""
    if not isinstance(node, yaml.MappingNode):
        return None
    value = document.value(key, node)
    return value.value if isinstance(value, yaml.ScalarNode) and isinstance(value.value, str) else None


def _cluster_names(document: YamlText) -> list[str | None]:
    sequence = document.sequence("clusters")
    return [_scalar_at(document, item, "name") for item in (sequence.value if sequence is not None else ())]


def _find_cluster(root: Path, name: str) -> tuple[str, YamlText, int] | None:
    for relative in _environment_files(root):
        document = YamlText(_read(root, relative), relative)
        names = _cluster_names(document)
        if name in names:
            return relative, document, names.index(name)
    return None


def _all_clusters(root: Path) -> list[str]:
    return sorted(
        name
        for relative in _environment_files(root)
        for name in _cluster_names(YamlText(_read(root, relative), relative))
        if isinstance(name, str)
    )


def _management_name(root: Path) -> str:
    relative = f"{ENVIRONMENTS}/{BASE_FILE}"
    document = YamlText(_read(root, relative), relative)
    return _scalar_at(document, document.value("management"), "name") or "hub"


def _files_below(root: Path, relative: str) -> list[str]:
    """The files below ``relative``, links included (to files or folders), so that deleting them refuses a link."""
    folder = root / relative
    if folder.is_symlink():
        return [relative]
    if not folder.is_dir():
        return []
    return sorted(
        path.relative_to(root).as_posix() for path in folder.rglob("*") if path.is_symlink() or path.is_file()
    )


def _check_label(option: str, value: str) -> None:
    if not re.fullmatch(DNS_LABEL, value) or len(value) > 63:
        raise ConfigError(
            f"{option}: expected a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a "
            f"letter or digit, at most 63), got {show(value)}"
        )


def _loaded(root: Path) -> LoadedFleet:
    """The definition as it is now; a command that needs it refuses to work on a broken one."""
    try:
        return load_fleet(root)
    except ConfigError as exc:
        raise ConfigError(
            [*exc.problems, "the definition has problems (above); fix them before changing it from the command line"]
        ) from None


def parse_ref(value: str) -> tuple[str, str]:
    """``--ref``: ``tag:V``, ``semver:RANGE``, ``branch:NAME``, or bare (a release is a tag, a range a semver)."""
    kind, sep, rest = value.partition(":")
    if sep and kind in REF_KINDS:
        if not rest:
            raise ConfigError(f"--ref: {kind}: needs a value, e.g. {kind}:{_REF_EXAMPLES[kind]}")
        return kind, rest
    if not value:
        raise ConfigError('--ref: expected tag:<tag>, semver:<range>, branch:<name> or a bare tag or branch, got ""')
    if _RELEASE.fullmatch(value):
        return "tag", value
    if _RANGE_MARKS.search(value) and re.fullmatch(SEMVER_RANGE, value):
        return "semver", value
    return "branch", value


_REF_EXAMPLES = {"tag": "v1.4.2", "semver": '">=1.4.0 <2.0.0"', "branch": "main"}


# -- the commands ----------------------------------------------------------------------------------


def new_cluster(
    root: Path,
    name: str,
    environment: str,
    *,
    region: str | None = None,
    kubernetes_version: str | None = None,
    cidr: str | None = None,
    availability_zones: int | None = None,
    hub_access: str | None = None,
) -> Edit:
    """Add workload cluster ``name`` to the end of ``environments/<environment>.yaml``'s clusters."""
    _check_label("NAME", name)
    check_links(root)
    files = _environment_files(root)
    relative = f"{ENVIRONMENTS}/{environment}.yaml"
    if relative not in files:
        known = ", ".join(Path(path).stem for path in files) or "none"
        raise ConfigError(
            f"--env: unknown environment {environment!r} (environments: {known}); "
            f"create {relative} to start a new environment"
        )
    found = _find_cluster(root, name)
    if found is not None or name == _management_name(root):
        where = f"{found[0]}: clusters[{found[2]}]" if found is not None else f"{ENVIRONMENTS}/{BASE_FILE}: management"
        raise ConfigError(f"NAME: cluster {name!r} already exists ({where})")
    entries: list[tuple[str, Any]] = [("name", name)]
    notes: list[str] = []
    if region is not None:
        entries.append(("region", region))
    if kubernetes_version is not None:
        entries.append(("kubernetesVersion", kubernetes_version))
    if hub_access is not None:
        entries.append(("hubAccess", hub_access))
    network: list[tuple[str, Any]] = []
    if cidr is not None:
        network.append(("cidr", cidr))
    if availability_zones is None:
        fitting = _zones_the_region_has(root, relative, region)
        if fitting is not None:
            availability_zones = fitting[1]
            notes.append(
                f"{relative}: {fitting[0]} has {fitting[1]} availability zones, fewer than the environment's "
                f"default; the cluster uses them all (network.availabilityZones: {fitting[1]})"
            )
    if availability_zones is not None:
        network.append(("availabilityZones", availability_zones))
    if network:
        entries.append(("network", network))
    document = YamlText(_read(root, relative), relative)
    document.append_mapping_item("clusters", entries)
    edit = Edit(root, {relative: document.text}, added=[name])
    edit.notes.append(
        f"{relative}: added cluster {name!r}; the hub builds it and bootstraps its Flux when this change merges"
    )
    edit.notes.extend(notes)
    return edit


def _zones_the_region_has(root: Path, relative: str, region: str | None) -> tuple[str, int] | None:
    """(region, its number of zones) when a new cluster of the environment in ``relative`` would, by the
    defaults, ask its region for more availability zones than the region has: then it asks for them all."""
    fleet = _loaded(root).fleet
    defaults: dict[str, Any] = {}
    for path in (f"{ENVIRONMENTS}/{BASE_FILE}", relative):
        raw = read_yaml(root / path, path)
        found = raw.get("clusterDefaults") if isinstance(raw, dict) else None
        defaults = deep_merge(defaults, found if isinstance(found, dict) else {})
    region = region or defaults.get("region")
    network = defaults.get("network")
    count = models.Network.model_fields["availability_zones"].default
    if isinstance(network, dict) and "availabilityZones" in network:
        count = network["availabilityZones"]
    if not isinstance(region, str) or not isinstance(count, int):
        return None
    zones = facts(fleet.aws_data).zones.get(region, ())
    return (region, len(zones)) if 2 <= len(zones) < count else None


def remove_cluster(root: Path, name: str) -> Edit:
    """Remove workload cluster ``name`` from its environment, with its sealed secrets."""
    _check_label("NAME", name)
    check_links(root)
    hub = _management_name(root)
    if name == hub:
        raise ConfigError(f"NAME: {name!r} is the management cluster; it is not removed from the command line")
    found = _find_cluster(root, name)
    if found is None:
        known = ", ".join(_all_clusters(root)) or "none"
        raise ConfigError(f"NAME: unknown workload cluster {name!r} (clusters: {known})")
    relative, document, index = found
    blocking = []
    for app in _app_files(root):
        app_document = YamlText(_read(root, app), app)
        if name in app_document.names("clusters"):
            blocking.append(
                f"{app}: clusters: app {Path(app).stem!r} runs on cluster {name!r}; move it first "
                f"(fluxplane offboard-app {Path(app).stem} --cluster {name})"
            )
    if blocking:
        raise ConfigError(blocking)
    loaded = _loaded(root)
    leaving = sorted({p.app.name for p in loaded.apps if p.cluster == name})
    document.remove_item("clusters", index)
    edit = Edit(root, {relative: document.text})
    secrets = [
        *_files_below(root, f"{ENVIRONMENTS}/{SECRETS_DIR}/{name}"),
        *_files_below(root, f"{ENVIRONMENTS}/{SECRETS_DIR}/{hub}/{cluster_namespace(name)}"),
    ]
    for path in secrets:
        edit.files[path] = None
    existing = next((cluster.existing for cluster in loaded.fleet.clusters if cluster.name == name), None)
    if existing is None or existing.mode == "managed":
        edit.notes.append(
            f"{relative}: removed cluster {name!r}; when this change merges, Crossplane deletes the cluster, its node "
            f"groups and its VPC in AWS, so synth asks you to confirm it: fluxplane synth --delete '*/{name}/*'"
        )
    else:
        edit.notes.append(
            f"{relative}: removed {existing.mode} cluster {name!r}; its AWS resources stay as they are, but when this "
            "change merges the hub prunes its chain, uninstalling what the hub installed there (its Flux among it, "
            f"which synth asks you to confirm): fluxplane synth --delete '*/{name}/*'"
        )
    if leaving:
        edit.notes.append(
            f"apps that leave with it (placed by environment): {', '.join(leaving)}; Crossplane deletes their "
            "AWS resources on it"
        )
    return edit


def _app_files(root: Path) -> list[str]:
    folder = root / ENVIRONMENTS / APPS_DIR
    if not folder.is_dir():
        return []
    return [
        f"{ENVIRONMENTS}/{APPS_DIR}/{path.name}"
        for path in sorted(folder.iterdir())
        if path.suffix == ".yaml" and not path.name.startswith(".")
    ]


@dataclass(frozen=True)
class AppRequest:
    """What ``onboard-app`` is asked for: the app, where it runs, and for a new app where its manifests come from.

    The options stay None when not given: a new app needs ``repo`` and ``path``, and an app that exists takes
    only more clusters and environments, so the request says what was given, not what it defaults to.
    """

    name: str
    clusters: Sequence[str] = ()
    environments: Sequence[str] = ()
    repo: str | None = None
    path: str | None = None
    #: tag:V, semver:RANGE or branch:NAME, or a bare value parse_ref reads (None: branch:main).
    ref: str | None = None
    namespace: str | None = None
    team: str | None = None
    secret_ref: str | None = None
    overlay: str | None = None


def onboard_app(root: Path, app: AppRequest) -> Edit:
    """Write ``environments/apps/<name>.yaml``, or add clusters and environments to an app that has one."""
    _check_label("NAME", app.name)
    check_links(root)
    if not app.clusters and not app.environments:
        raise ConfigError("--cluster or --env: name at least one cluster or environment the app runs on")
    relative = f"{ENVIRONMENTS}/{APPS_DIR}/{app.name}.yaml"
    if (root / relative).exists():
        given = {
            "--repo": app.repo,
            "--path": app.path,
            "--ref": app.ref,
            "--namespace": app.namespace,
            "--team": app.team,
            "--secret-ref": app.secret_ref,
            "--overlay": app.overlay,
        }
        options = [option for option, value in given.items() if value is not None]
        if options:
            raise ConfigError(
                f"{', '.join(options)}: app {app.name!r} exists ({relative}); onboard-app only adds --cluster and "
                "--env to it. Edit the file to change the rest"
            )
        return _add_placements(root, relative, app.name, app.clusters, app.environments)
    missing = [option for option, value in (("--repo", app.repo), ("--path", app.path)) if value is None]
    if missing:
        raise ConfigError(f"{' and '.join(missing)}: required for a new app ({relative} does not exist)")
    kind, value = parse_ref(app.ref) if app.ref is not None else ("branch", DEFAULT_BRANCH)
    repository: list[tuple[str, Any]] = [("url", app.repo), ("ref", [(kind, value)])]
    if app.secret_ref is not None:
        repository.append(("secretRef", app.secret_ref))
    entries: list[tuple[str, Any]] = []
    if app.team is not None:
        entries.append(("team", app.team))
    entries += [("repository", repository), ("path", app.path)]
    if app.overlay is not None:
        entries.append(("overlay", app.overlay))
    if app.namespace is not None:
        entries.append(("namespace", app.namespace))
    if app.clusters:
        entries.append(("clusters", list(dict.fromkeys(app.clusters))))
    if app.environments:
        entries.append(("environments", list(dict.fromkeys(app.environments))))
    edit = Edit(root, {relative: "".join(render_mapping(entries, 0))})
    edit.notes.append(f"{relative}: onboarded app {app.name!r} ({kind} {value})")
    return edit


def _add_placements(root: Path, relative: str, name: str, clusters: Sequence[str], environments: Sequence[str]) -> Edit:
    document = YamlText(_read(root, relative), relative)
    added = []
    for key, wanted in (("clusters", clusters), ("environments", environments)):
        names = document.names(key)
        new = [item for item in dict.fromkeys(wanted) if item not in names]
        if new:
            document.set_names(key, names + new, after="environments" if key == "clusters" else "clusters")
            added += new
    if not added:
        raise ConfigError(f"{relative}: app {name!r} already runs on {', '.join([*clusters, *environments])}")
    edit = Edit(root, {relative: document.text})
    edit.notes.append(f"{relative}: app {name!r} now also runs on {', '.join(added)}")
    return edit


def offboard_app(root: Path, name: str, clusters: Sequence[str] = ()) -> Edit:
    """Take app ``name`` off ``clusters`` (default: everywhere, deleting its file), with its sealed secrets."""
    _check_label("NAME", name)
    check_links(root)
    relative = f"{ENVIRONMENTS}/{APPS_DIR}/{name}.yaml"
    if not (root / relative).exists():
        known = ", ".join(Path(path).stem for path in _app_files(root)) or "none"
        raise ConfigError(f"NAME: unknown app {name!r} (apps: {known})")
    loaded = _loaded(root)
    placements = [p for p in loaded.apps if p.app.name == name]
    running = [p.cluster for p in placements]
    unknown = [cluster for cluster in clusters if cluster not in running]
    if unknown:
        raise ConfigError(
            f"--cluster: app {name!r} does not run on {', '.join(map(repr, unknown))} "
            f"(it runs on: {', '.join(running) or 'none'})"
        )
    leaving = list(dict.fromkeys(clusters)) if clusters else running
    edit = Edit(root)
    document = YamlText(_read(root, relative), relative)
    listed, by_env = document.names("clusters"), document.names("environments")
    members = {env.name: [cluster.name for cluster in env.clusters] for env in loaded.fleet.environments}
    for environment in list(by_env):
        if not set(members.get(environment, ())) & set(leaving):
            continue
        by_env.remove(environment)
        # the environment's clusters the app runs on: not one it is left off (a registered cluster, for a database)
        kept = [
            cluster
            for cluster in members[environment]
            if cluster in running and cluster not in leaving and cluster not in listed
        ]
        listed += kept
        if kept:
            edit.notes.append(
                f"{relative}: app {name!r} no longer follows environment {environment!r}; it lists its clusters "
                f"there instead ({', '.join(kept)}), so new clusters of {environment!r} do not get it"
            )
    listed = [cluster for cluster in listed if cluster not in leaving]
    if not listed and not by_env:
        edit.files[relative] = None
        edit.notes.append(f"{relative}: deleted; app {name!r} runs nowhere")
    else:
        document.set_names("clusters", listed, after="environments")
        document.set_names("environments", by_env, after="clusters")
        edit.files[relative] = document.text
        edit.notes.append(f"{relative}: app {name!r} leaves {', '.join(leaving)}")
    app = placements[0].app
    hub = loaded.fleet.management.name
    staying = [p for p in loaded.apps if not (p.app.name == name and p.cluster in leaving)]
    for cluster in leaving:
        for path in _files_below(root, f"{ENVIRONMENTS}/{SECRETS_DIR}/{cluster}/{app.target_namespace}"):
            edit.files[path] = None
        secret = app.repository.secret_ref
        shared = any(p.cluster == cluster and p.app.aws.path and p.app.repository.secret_ref == secret for p in staying)
        if app.aws.path and secret is not None and not shared:
            hub_copy = f"{ENVIRONMENTS}/{SECRETS_DIR}/{hub}/{cluster_namespace(cluster)}/{secret}.yaml"
            if (root / hub_copy).exists():
                edit.files[hub_copy] = None
    if not app.aws.empty:
        confirm = " ".join(f"--delete '*/{cluster_namespace(cluster)}/{name}-*'" for cluster in leaving)
        edit.notes.append(
            f"when this change merges, Flux prunes namespace {app.target_namespace!r} on {', '.join(leaving)} and "
            f"Crossplane deletes the app's AWS resources there, so synth asks you to confirm it: fluxplane synth "
            f"{confirm}"
        )
    else:
        edit.notes.append(
            f"when this change merges, Flux prunes namespace {app.target_namespace!r} on {', '.join(leaving)}"
        )
    return edit


# -- validating and writing ------------------------------------------------------------------------


def _diff(root: Path, edit: Edit) -> str:
    chunks = []
    for relative, text in edit.files.items():
        path = root / relative
        before = path.read_text(encoding="utf-8") if path.exists() else None
        if text is None:
            chunks.append(f"deleted {relative}\n")
            continue
        chunks.extend(
            difflib.unified_diff(
                (before or "").splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"a/{relative}" if before is not None else "/dev/null",
                tofile=f"b/{relative}",
            )
        )
    return "".join(chunks)


def validate(edit: Edit) -> tuple[list[str], list[str]]:
    """Check the definition as ``edit`` leaves it, on a copy; return the sealed secrets it still needs, and the
    notes on the Kubernetes version each cluster it adds starts on, when held back."""
    # Imported here, as the commands import synth: fluxplane.commands.edit imports this module when the CLI
    # parses, and `import fluxplane.cli` stays quick for the other commands and --help.
    from fluxplane.synth import project_registry
    from fluxplane.synth.plan import missing_secrets, plan_fleet

    check_links(edit.root)
    problems = transaction.check_targets(edit.root, list(edit.files))
    if problems:
        raise ConfigError(problems)
    # the installed packs and the project's own Helm charts (environments/charts/), as synth has them
    registry = project_registry(edit.root)

    def check_packs(sections: dict[str, Any], origins: Any) -> list[str]:
        return registry.configure(sections, origins)[1]

    with tempfile.TemporaryDirectory(prefix="fluxplane-edit-") as scratch:
        copy = Path(scratch)
        _copy_definition(edit.root / ENVIRONMENTS, copy / ENVIRONMENTS)
        try:
            _apply_to_copy(copy, edit.files)
        except OSError as exc:
            raise ConfigError(_cannot_write(exc, copy)) from None
        loaded = load_fleet(copy, check_packs, project=edit.root)
        plan = plan_fleet(loaded, registry, require_secrets=False)
        held_back = [plan.held_back[name] for name in edit.added if name in plan.held_back]
        return missing_secrets(loaded, plan.hub, registry), held_back


def _copy_definition(source: Path, copy: Path) -> None:
    """Copy the definition at ``source`` to ``copy``, each symbolic link as a link to the same place in the copy.

    A link copied as it is could lead out of the copy, and the edit applied to the copy would then change
    what it leads to: an absolute link leads back into the project, a relative one that climbs out of
    environments/ to wherever that climb leads from the scratch folder. check_links has made sure that every
    link leads into the definition, so each has its place in the copy.
    """
    shutil.copytree(source, copy, symlinks=True)
    real = Path(os.path.realpath(source))
    for folder, folders, files in os.walk(copy):
        for name in (*folders, *files):
            link = Path(folder, name)
            if not link.is_symlink():
                continue
            relative = link.relative_to(copy)
            target = Path(os.path.realpath(source / relative))
            if not target.is_relative_to(real):
                raise ConfigError(
                    f"{ENVIRONMENTS}/{relative.as_posix()}: a symbolic link out of {ENVIRONMENTS}/; fluxplane reads "
                    "only the definition's own files"
                )
            link.unlink()
            link.symlink_to(copy / target.relative_to(real))


def _apply_to_copy(copy: Path, files: dict[str, str | None]) -> None:
    """Write new texts into the scratch copy of the definition, then delete files and the folders they empty."""
    stop = copy / ENVIRONMENTS
    for relative, text in files.items():
        target = copy / relative
        if text is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            continue
        target.unlink(missing_ok=True)
        folder = target.parent
        while folder != stop and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent


def carry_out(edit: Edit, *, dry_run: bool = False) -> ValidatedEdit:
    """Validate ``edit`` and, unless ``dry_run``, write it as one transaction (see :mod:`fluxplane.system.transaction`);
    raise ConfigError and write nothing when invalid."""
    todo, held_back = validate(edit)
    outcome = ValidatedEdit(diff=_diff(edit.root, edit), notes=[*edit.notes, *held_back], todo=todo)
    if not dry_run:
        try:
            transaction.commit(edit.root, edit.files)
        except OSError as exc:
            raise ConfigError(_cannot_write(exc, edit.root)) from None
    return outcome


def _cannot_write(exc: OSError, root: Path) -> str:
    """One line for a failed write below ``root``, naming the path below it (the copy's as the original's)."""
    path = Path(exc.filename) if exc.filename else root
    where = path.relative_to(root).as_posix() if path.is_relative_to(root) and path != root else str(root)
    return f"{where}: cannot write: {exc.strerror or exc}"
