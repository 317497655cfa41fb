"""new-cluster, remove-cluster, onboard-app, offboard-app: they edit environments/ and print the diff."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from fluxplane.commands import Subcommands
from fluxplane.system import transaction

if TYPE_CHECKING:
    from fluxplane.commands.edits import Edit

NAMES: tuple[str, ...] = ("new-cluster", "remove-cluster", "onboard-app", "offboard-app")
LOCKS_PROJECT = True


def register(commands: Subcommands) -> None:
    """Add the four commands, each with ``--dry-run``, to the CLI."""
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


def stopped(args: argparse.Namespace) -> str | None:
    return None


def run(args: argparse.Namespace) -> int:
    """Compute the edit, validate it, write it unless ``--dry-run``; print its diff, notes and what is left to do."""
    # Imported when the command runs, not when the CLI parses: the edits load the definition's models, and
    # `import fluxplane.cli` stays quick for the other commands and --help.
    from fluxplane.commands import edits

    root: Path = args.root
    transaction.note(transaction.recover(root, write=not args.dry_run))
    outcome = edits.carry_out(_change(root, args), dry_run=args.dry_run)
    print(outcome.diff, end="")
    for note in outcome.notes:
        print(note)
    if outcome.todo:
        print("to do before synth, seal:")
        for line in outcome.todo:
            print(f"  {line}")
    print("dry run: nothing written" if args.dry_run else "next: run 'fluxplane synth' and open a pull request")
    return 0


def _change(root: Path, args: argparse.Namespace) -> Edit:
    """The edit ``args.command`` asks for."""
    from fluxplane.commands import edits

    if args.command == "new-cluster":
        return edits.new_cluster(
            root,
            args.name,
            args.env,
            region=args.region,
            kubernetes_version=args.kubernetes_version,
            cidr=args.cidr,
            availability_zones=args.availability_zones,
            hub_access=args.hub_access,
        )
    if args.command == "remove-cluster":
        return edits.remove_cluster(root, args.name)
    if args.command == "onboard-app":
        app = edits.AppRequest(
            name=args.name,
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
        return edits.onboard_app(root, app)
    return edits.offboard_app(root, args.name, args.cluster)
