"""``fluxplane synth``: write dist/ from the fleet definition, or with ``--check`` say whether it is stale."""

from __future__ import annotations

import argparse
import os
import posixpath
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from fluxplane.commands import Subcommands, prepare_node
from fluxplane.system import transaction
from fluxplane.system.files import CDK8S_OUTDIR, output_dir
from fluxplane.system.progress import Progress

NAMES: tuple[str, ...] = ("synth",)
LOCKS_PROJECT = True
#: ``synth --check``: dist/ is not what synth would write.
EXIT_STALE = 1


def register(commands: Subcommands) -> None:
    """Add ``synth`` and its options to the CLI."""
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
        "--cdk8s",
        action="store_true",
        help="run as cdk8s.yaml's app: $CDK8S_OUTDIR inside the project is cdk8s-cli's scratch folder (dist/ is "
        "written, and a copy of it there for cdk8s-cli to list); outside it (cdk8s synth --stdout) only it is written",
    )
    synth.add_argument(
        "--no-cache",
        action="store_true",
        help="render every cluster and parse every definition file, ignoring the caches of unchanged clusters and "
        "parsed files in <root>/.fluxplane-cache",
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
    synth.add_argument(
        "--manage",
        action="append",
        default=[],
        metavar="KIND/NAMESPACE/NAME",
        help="allow this EKSCluster to start managing the AWS resources it imported (an existing cluster moved to "
        "existing.mode: managed), which Crossplane may then update and delete (repeatable)",
    )
    synth.add_argument(
        "--auto-mode",
        action="append",
        default=[],
        metavar="KIND/NAMESPACE/NAME",
        help="allow this EKSCluster to switch into or out of EKS Auto Mode (autoMode.enabled), which deletes its "
        "managed node groups and hands its nodes to EKS, or the other way round (repeatable)",
    )


def stopped(args: argparse.Namespace) -> str | None:
    if args.check:
        return "nothing written"
    # synth.write_tree swaps the finished tree in at once and puts the old one back on any exception
    return f"{outdir(args)} holds a whole tree: the one it held, or the new one if writing had finished"


def cdk8s_folder(args: argparse.Namespace) -> tuple[Path | None, bool]:
    """With ``--cdk8s``: the folder cdk8s-cli reads the manifests from ($CDK8S_OUTDIR), and whether it is the
    only output (outside the project: ``cdk8s synth --stdout``'s temporary folder, or ``--output`` elsewhere)."""
    value = os.environ.get(CDK8S_OUTDIR) if args.cdk8s else None
    if not value:
        return None, False
    folder = Path(value) if Path(value).is_absolute() else Path.cwd() / value
    project = Path(os.path.abspath(args.root))
    inside = Path(os.path.abspath(folder)) == project or project in Path(os.path.abspath(folder)).parents
    return folder, not inside


def outdir(args: argparse.Namespace) -> Path:
    """Where synth writes: --outdir, else $CDK8S_OUTDIR (as ``cdk8s synth`` sets it; with --cdk8s only when it
    lies outside the project), else dist/."""
    if args.outdir is None and args.cdk8s:
        folder, only = cdk8s_folder(args)
        return folder if folder is not None and only else args.root / "dist"
    return output_dir(args.root, args.outdir)


def run(args: argparse.Namespace) -> int:
    """Render the definition under ``--root``; compare with, or write, the output folder."""
    # Imported when the command runs, not when the CLI parses: synth and the AWS facts are heavy, and
    # `import fluxplane.cli` stays quick for the other commands and --help.
    from fluxplane import synth
    from fluxplane.config.awsdata import fleet_support_warnings

    root: Path = args.root
    target = outdir(args)
    pipeline = synth.Pipeline(
        root,
        target,
        cache=not args.no_cache,
        read_only=args.check,
        allow=synth.Allowances.of(args.replace, args.delete, args.move, args.manage, args.auto_mode),
    )
    pipeline.check_outdir()
    transaction.note(transaction.recover(root, write=not args.check))
    if not args.check and not cdk8s_folder(args)[1]:
        pipeline.expect_write()
    progress = Progress("synth")
    prepare_node(root, start=True)
    with progress.stage("load"), synth.paused_gc():
        plan = pipeline.load()
    for note in plan.notes:
        print(f"note: {note}", file=sys.stderr)
    # said once synth has done its work: after any refusal, never before it
    support = [f"note: {line}" for line in plan.held_back.values()]
    support += [f"warning: {line}" for line in fleet_support_warnings(plan.fleet, datetime.now(UTC).date())]
    started = time.perf_counter()
    scratch, only = cdk8s_folder(args)
    copied = only or (scratch is not None and os.path.abspath(scratch) != os.path.abspath(target))
    with progress.stage("render") as stage:
        # a write reads the texts of the clusters taken from the cache only where dist/ differs; a comparison, or a
        # copy for cdk8s-cli, reads every one
        tree = pipeline.render(plan, deferred=not args.check and not copied)
        files = tree.files
        stage.note(f"{len(files)} files")
    for folder, owner in synth.kept_owners(plan).items():
        if not any(path.startswith(folder) for path in files):
            entry = posixpath.dirname(folder.rstrip("/"))
            path = f"<the repository's path to {target.name}>/{entry}"
            setting = "management.bootstrap" if posixpath.basename(entry) == plan.fleet.management.name else "bootstrap"
            writer = (
                f"`flux bootstrap` writes it ({setting}: flux), with --path={path}"
                if owner == "flux"
                else f"your FluxInstance goes there ({setting}: flux-operator), with sync.path: {path}"
            )
            print(f"note: {target / folder}/ is empty: {writer}", file=sys.stderr)
    if args.check:
        for line in support:
            print(line, file=sys.stderr)
        with progress.stage("compare"):
            staleness = pipeline.staleness(tree)
        if not staleness.stale:
            print(f"{target}: up to date ({len(files)} files)")
            return 0
        for path in staleness.recorded:
            print(f"changed: {root / path}")
        for label, paths in (
            ("added", staleness.added),
            ("changed", staleness.changed),
            ("removed", staleness.removed),
        ):
            for path in paths:
                print(f"{label}: {target / path}")
        print(f"{target}: stale; run 'fluxplane synth' (or 'make synth') and commit the result", file=sys.stderr)
        return EXIT_STALE
    if only:
        # cdk8s synth --stdout: the manifests are printed, the project is left alone
        with progress.stage("write"):
            synth.copy_tree(files, target)
    else:
        with progress.stage("write"):
            pipeline.write(tree)
            if copied and scratch is not None:
                synth.copy_tree(files, scratch)
    for line in support:
        print(line, file=sys.stderr)
    elapsed = time.perf_counter() - started
    print(f"wrote {len(files)} files to {target} in {elapsed:.2f}s")
    return 0
