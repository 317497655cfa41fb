"""The ``fluxplane`` command. The only place that catches FluxplaneError and picks the exit code.

Exit codes: 0 success; 1 ``synth --check`` found dist/ stale; 2 bad input (every problem printed,
one per line, no traceback, dist/ untouched). Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from fluxplane import transaction
from fluxplane.errors import FluxplaneError
from fluxplane.node import start_runtime, use_project_node
from fluxplane.progress import Progress

EXIT_STALE = 1
EXIT_BAD_INPUT = 2
EDIT_COMMANDS = ("new-cluster", "remove-cluster", "onboard-app", "offboard-app")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fluxplane", description="Synthesize a Flux and Crossplane fleet repository from environments/."
    )
    parser.add_argument(
        "--root", type=Path, default=Path("."), help="project folder holding environments/ (default: .)"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    synth = commands.add_parser("synth", help="write dist/ from the fleet definition")
    synth.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 and list the files if dist/ is stale"
    )
    synth.add_argument(
        "--outdir",
        type=Path,
        default=None,
        help="where to write (default: $CDK8S_OUTDIR when cdk8s runs fluxplane, else <root>/dist)",
    )
    synth.add_argument(
        "--no-cache",
        action="store_true",
        help="render every cluster, ignoring the cache of unchanged clusters in <root>/.fluxplane-cache",
    )
    synth.add_argument(
        "--replace",
        action="append",
        default=[],
        metavar="KIND/NAMESPACE/NAME",
        help="allow a change that replaces this live object (an immutable field: a VPC CIDR, a region, a table's "
        "keys); shell wildcards match several (repeatable)",
    )
    synth.add_argument(
        "--delete",
        action="append",
        default=[],
        metavar="KIND/NAMESPACE/NAME",
        help="allow removing this cluster, table, queue or bucket, which Crossplane then deletes in AWS (repeatable)",
    )
    synth.add_argument(
        "--move",
        action="append",
        default=[],
        metavar="KIND/NAMESPACE/NAME",
        help="allow this object to move to another Flux Kustomization, once the old one is suspended on the hub "
        "(repeatable)",
    )
    commands.add_parser("reference", help="print the fleet definition reference (Markdown)")
    seal = commands.add_parser(
        "seal",
        help="seal a Secret offline into environments/secrets/<cluster>/ (or print it)",
        description="Seal values for the Sealed Secrets controller from its public certificate, without cluster "
        "access. Values that did not change keep their ciphertext.",
    )
    seal.add_argument("--cluster", required=True, help="the cluster the secret is for")
    seal.add_argument("--name", required=True, help="name of the Secret")
    seal.add_argument("--namespace", required=True, help="namespace of the Secret")
    seal.add_argument(
        "--scope",
        choices=("strict", "namespace-wide", "cluster-wide"),
        default="strict",
        help="where it may be unsealed: this name and namespace (default), any name in the namespace, anywhere",
    )
    seal.add_argument(
        "--cert", type=Path, default=None, help=f"PEM certificate of the sealing key (default: {DEFAULT_CERT})"
    )
    seal.add_argument("--type", default="Opaque", help="Secret type (default: Opaque)")
    seal.add_argument("--from-literal", action="append", default=[], metavar="KEY=VALUE", help="a value (repeatable)")
    seal.add_argument(
        "--from-file", action="append", default=[], metavar="[KEY=]PATH", help="a file's content (repeatable)"
    )
    seal.add_argument(
        "--from-env-file", action="append", default=[], metavar="PATH", help="KEY=VALUE lines (repeatable)"
    )
    seal.add_argument("--stdout", action="store_true", help="print the SealedSecret instead of writing it")
    _edit_commands(commands)
    packs = commands.add_parser("packs", help="the installed packs (add-ons): list them, or show one")
    pack_commands = packs.add_subparsers(dest="packs_command", required=True, metavar="SUBCOMMAND")
    pack_commands.add_parser("list", help="name, version, layer, requires and description of every pack")
    show = pack_commands.add_parser("show", help="a pack's config keys, what it emits and an example")
    show.add_argument("name", metavar="NAME", help="the pack")
    _review_commands(commands)
    return parser


def _review_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """validate, schemas, diff, graph: what a pull request's reviewers and CI need to know about dist/."""
    validate = commands.add_parser(
        "validate",
        help="check dist/ against CRD and Kubernetes schemas, kustomize and Flux's reference rules",
        description="Check every document strictly against its schema, build every kustomization with kubectl "
        "kustomize, and check the references Flux and Crossplane resolve only at run time. Prints one finding per "
        "line as FILE:DOCUMENT KIND/NAME: PATH: MESSAGE; exit 1 when there is any.",
    )
    validate.add_argument(
        "dist", nargs="?", type=Path, default=None, metavar="DIST", help="the tree to check (default: <root>/dist)"
    )
    validate.add_argument(
        "--crds",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of CRD YAML (repeatable; default: $FLUXPLANE_CRDS, else the cache 'schemas pull' fills)",
    )
    validate.add_argument("--no-kustomize", action="store_true", help="do not run kubectl kustomize")
    schemas = commands.add_parser("schemas", help="the CRD schemas validate checks against")
    schema_commands = schemas.add_subparsers(dest="schemas_command", required=True, metavar="SUBCOMMAND")
    pull = schema_commands.add_parser(
        "pull",
        help="download the CRDs of every API fluxplane emits into the schema cache",
        description="Fill the schema cache from the pinned upstream release URLs, or from a cluster with kubectl.",
    )
    pull.add_argument(
        "--from-cluster", action="store_true", help="read the CRDs from the current kubectl context instead"
    )
    pull.add_argument("--context", help="kubectl context for --from-cluster (default: the current one)")
    pull.add_argument("--dest", type=Path, default=None, metavar="DIR", help="where to write (default: the cache)")
    diff = commands.add_parser(
        "diff",
        help="what a change does to dist/: objects added, changed and removed per cluster, risky changes flagged",
        description="Synthesize the definition at a base Git ref (in a temporary worktree) and in the working "
        "tree, and report the difference per repository, cluster and object.",
    )
    diff.add_argument("--base", default="HEAD", metavar="REF", help="Git ref to compare with (default: HEAD)")
    diff.add_argument(
        "--format", choices=("text", "markdown"), default="text", help="text, or Markdown for a pull-request comment"
    )
    graph = commands.add_parser(
        "graph",
        help="a cluster's Flux dependency graph (Kustomizations and HelmReleases, health gates marked)",
    )
    graph.add_argument("--cluster", required=True, metavar="NAME", help="the cluster")
    graph.add_argument(
        "--format", choices=("mermaid", "dot", "svg"), default="mermaid", help="mermaid (default), dot, or svg"
    )
    graph.add_argument(
        "--output", "-o", type=Path, default=None, metavar="FILE", help="write here instead of standard output"
    )


def _edit_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """new-cluster, remove-cluster, onboard-app, offboard-app: they edit environments/ and print the diff."""
    dry_run = argparse.ArgumentParser(add_help=False)
    dry_run.add_argument("--dry-run", action="store_true", help="print the change, write nothing")
    new = commands.add_parser(
        "new-cluster",
        parents=[dry_run],
        help="add a workload cluster to an environment",
        description="Add a workload cluster to environments/ENV.yaml. What you leave out comes from clusterDefaults.",
    )
    new.add_argument("name", metavar="NAME", help="cluster name, unique in the fleet")
    new.add_argument("--env", required=True, help="the environment (environments/ENV.yaml)")
    new.add_argument("--region", help="AWS region, e.g. us-east-2")
    new.add_argument("--kubernetes-version", help='Kubernetes minor version, e.g. "1.33"')
    new.add_argument("--cidr", help="VPC address range (default: allocated from clusterNetwork.pool)")
    new.add_argument("--availability-zones", type=int, help="zones to spread subnets and nodes over (2 to 6)")
    new.add_argument("--hub-access", choices=("kubeconfig", "keyless"), help="how the hub's Flux reaches the cluster")
    remove = commands.add_parser(
        "remove-cluster",
        parents=[dry_run],
        help="remove a workload cluster and its sealed secrets",
        description="Remove a workload cluster from its environment, with its sealed secrets. Refused while an app "
        "lists the cluster by name.",
    )
    remove.add_argument("name", metavar="NAME", help="the cluster")
    onboard = commands.add_parser(
        "onboard-app",
        parents=[dry_run],
        help="onboard an app (environments/apps/NAME.yaml), or add clusters to it",
        description="Write environments/apps/NAME.yaml. For an app that exists, add the clusters and environments "
        "given.",
    )
    onboard.add_argument("name", metavar="NAME", help="the app's name; its namespace unless --namespace")
    onboard.add_argument("--cluster", action="append", default=[], help="a cluster to run on (repeatable)")
    onboard.add_argument("--env", action="append", default=[], help="an environment to run on (repeatable)")
    onboard.add_argument("--repo", help="the app's Git repository, ssh:// or https://")
    onboard.add_argument("--path", help="folder of its kustomize overlays in the repository")
    onboard.add_argument(
        "--ref",
        help="tag:V, semver:RANGE or branch:NAME; bare, 1.2.3 or v1.2.3 is a tag, a range a semver, else a branch "
        "(default: branch:main)",
    )
    onboard.add_argument("--namespace", help="namespace on the clusters (default: NAME)")
    onboard.add_argument("--team", help="code owner of the app's folders, e.g. @example-org/payments")
    onboard.add_argument("--secret-ref", help="Secret with the repository's credentials (seal it per cluster)")
    onboard.add_argument(
        "--overlay", choices=("environment", "cluster", "none"), help="deploy PATH/<env>, PATH/<cluster> or PATH"
    )
    offboard = commands.add_parser(
        "offboard-app",
        parents=[dry_run],
        help="take an app off some clusters, or off the fleet",
        description="Take an app off the clusters given, or off every cluster (deleting its file), with its sealed "
        "secrets there.",
    )
    offboard.add_argument("name", metavar="NAME", help="the app")
    offboard.add_argument("--cluster", action="append", default=[], help="a cluster to leave (repeatable)")


#: Where ``fluxplane seal`` looks for the sealing key's certificate, relative to the project.
DEFAULT_CERT = "environments/sealing-cert.pem"


def _seal(args: argparse.Namespace) -> int:
    from fluxplane import sealing
    from fluxplane.config.loader import load_fleet
    from fluxplane.config.secrets import secret_path
    from fluxplane.config.yamlfile import read_yaml
    from fluxplane.constructs.render import dump_documents

    root: Path = args.root
    transaction.note(transaction.recover(root, write=not args.stdout))
    fleet = load_fleet(root).fleet
    clusters = {fleet.management.name, *(cluster.name for cluster in fleet.clusters)}
    if args.cluster not in clusters:
        raise sealing.SealError(
            f"--cluster: unknown cluster {args.cluster!r} (clusters: {', '.join(sorted(clusters))})"
        )
    certificate = sealing.load_certificate(args.cert or root / DEFAULT_CERT)
    for warning in certificate.warnings:
        print(warning, file=sys.stderr)
    values: dict[str, bytes] = {}
    items = [sealing.from_literal(item, position) for position, item in enumerate(args.from_literal, start=1)]
    items += [sealing.from_file(item) for item in args.from_file]
    items += [pair for path in args.from_env_file for pair in sealing.from_env_file(path)]
    for key, value in items:
        if key in values:
            raise sealing.SealError(f"key {key!r} is given twice")
        values[key] = value
    sealing.check_names(args.name, args.namespace, args.scope)
    target = secret_path(root, args.cluster, args.namespace, args.name)
    previous = read_yaml(target, str(target.relative_to(root))) if target.exists() else None
    if previous is not None:
        sealing.check_previous(previous, target.relative_to(root).as_posix(), args.scope)
    cache = sealing.SealCache.default()
    document = sealing.seal(
        certificate=certificate,
        name=args.name,
        namespace=args.namespace,
        scope=args.scope,
        values=values,
        secret_type=args.type,
        previous=previous,
        cache=cache,
    )
    text = dump_documents([document])
    cache.save()
    if args.stdout:
        print(text, end="")
        return 0
    kept = sorted(
        key
        for key, value in document["spec"]["encryptedData"].items()
        if previous is not None and (previous.get("spec") or {}).get("encryptedData", {}).get(key) == value
    )
    changed = sorted(set(values) - set(kept))
    dropped = sorted(set(((previous or {}).get("spec") or {}).get("encryptedData") or {}) - set(values))
    display = target.relative_to(root).as_posix()
    try:
        transaction.commit(root, {display: text})
    except OSError as exc:
        raise sealing.SealError(f"{display}: cannot write ({exc.strerror or exc}); nothing was written") from None
    summary = ", ".join(
        f"{label} {', '.join(keys)}"
        for label, keys in (("sealed", changed), ("unchanged", kept), ("removed", dropped))
        if keys
    )
    print(f"{display}: {summary}")
    return 0


def _edit(args: argparse.Namespace) -> int:
    from fluxplane import edit

    root: Path = args.root
    transaction.note(transaction.recover(root, write=not args.dry_run))
    if args.command == "new-cluster":
        change = edit.new_cluster(
            root,
            args.name,
            args.env,
            region=args.region,
            kubernetes_version=args.kubernetes_version,
            cidr=args.cidr,
            availability_zones=args.availability_zones,
            hub_access=args.hub_access,
        )
    elif args.command == "remove-cluster":
        change = edit.remove_cluster(root, args.name)
    elif args.command == "onboard-app":
        change = edit.onboard_app(
            root,
            args.name,
            clusters=args.cluster,
            environments=args.env,
            repo=args.repo,
            path=args.path,
            ref=args.ref,
            namespace=args.namespace,
            team=args.team,
            secret_ref=args.secret_ref,
            overlay=args.overlay,
        )
    else:
        change = edit.offboard_app(root, args.name, args.cluster)
    outcome = edit.carry_out(change, dry_run=args.dry_run)
    print(outcome.diff, end="")
    for note in outcome.notes:
        print(note)
    if outcome.todo:
        print("to do before synth, seal:")
        for line in outcome.todo:
            print(f"  {line}")
    print("dry run: nothing written" if args.dry_run else "next: run 'fluxplane synth' and open a pull request")
    return 0


def _packs(args: argparse.Namespace) -> int:
    from fluxplane.packs.describe import list_packs, show_pack
    from fluxplane.packs.registry import PackRegistry

    registry = PackRegistry.from_entry_points()
    if args.packs_command == "list":
        print(list_packs(registry), end="")
    else:
        print(show_pack(registry.get(args.name)), end="")
    return 0


def _synth(args: argparse.Namespace) -> int:
    import gc

    from fluxplane import synth
    from fluxplane.errors import ConfigError
    from fluxplane.synth import allocations
    from fluxplane.synth.guard import guard

    root: Path = args.root
    outdir: Path = args.outdir or (
        Path(os.environ["CDK8S_OUTDIR"]) if os.environ.get("CDK8S_OUTDIR") else root / "dist"
    )
    synth.check_outdir(outdir, root)
    transaction.note(transaction.recover(root, write=not args.check))
    progress = Progress("synth")
    use_project_node(root)
    start_runtime()
    with progress.stage("load"), synth.paused_gc():
        plan = synth.load_plan(root)
    for note in plan.notes:
        print(f"note: {note}", file=sys.stderr)
    started = time.perf_counter()
    with progress.stage("render") as stage:
        cache = None if args.no_cache else synth.SynthCache.for_root(root, read_only=args.check)
        files = synth.render_plan(plan, cache)
        stage.note(f"{len(files)} files")
    if args.check:
        with progress.stage("compare"):
            staleness = synth.compare_tree(files, outdir)
            recorded_stale = allocations.stale(root, plan)
        if not staleness.stale and not recorded_stale:
            print(f"{outdir}: up to date ({len(files)} files)")
            return 0
        if recorded_stale:
            print(f"changed: {root / allocations.ALLOCATIONS}")
        for label, paths in (
            ("added", staleness.added),
            ("changed", staleness.changed),
            ("removed", staleness.removed),
        ):
            for path in paths:
                print(f"{label}: {outdir / path}")
        print(f"{outdir}: stale; run 'fluxplane synth' (or 'make synth') and commit the result", file=sys.stderr)
        return EXIT_STALE
    with progress.stage("guard"):
        refused = guard(
            files,
            outdir,
            hub=plan.fleet.management.name,
            replace=args.replace,
            delete=args.delete,
            move=args.move,
        )
    if refused:
        raise ConfigError([*refused, f"{outdir}: nothing written"])
    with progress.stage("write"):
        # The allocations first: a synth stopped in between writes the same ranges next time.
        allocations.write(root, plan)
        synth.write_tree(files, outdir)
    # The process ends next: spare the collector's final pass over everything synth built.
    gc.freeze()
    elapsed = time.perf_counter() - started
    print(f"wrote {len(files)} files to {outdir} in {elapsed:.2f}s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command in ("synth", "seal", *EDIT_COMMANDS):
            from fluxplane.lock import project_lock

            with project_lock(args.root):
                if args.command == "synth":
                    return _synth(args)
                if args.command == "seal":
                    return _seal(args)
                return _edit(args)
        if args.command == "packs":
            return _packs(args)
        if args.command in ("validate", "schemas"):
            from fluxplane.validate import command as validate_command

            return validate_command(args)
        if args.command == "diff":
            from fluxplane.diff import command as diff_command

            return diff_command(args)
        if args.command == "graph":
            from fluxplane.graph import command as graph_command

            return graph_command(args)
        if args.command == "reference":
            from fluxplane.config.reference import markdown

            print(markdown(), end="")
            return 0
    except FluxplaneError as exc:
        for line in exc.problems:
            print(line, file=sys.stderr)
        return EXIT_BAD_INPUT
    raise AssertionError(f"unhandled command {args.command!r}")


if __name__ == "__main__":
    sys.exit(main())
