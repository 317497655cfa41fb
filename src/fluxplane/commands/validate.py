"""``fluxplane validate`` and ``fluxplane schemas pull``: check dist/ as the controllers will see it, and fill
the schema cache it checks against.

validate prints one finding per line on standard output, then what was checked; exit 1 when there is any
finding, 0 when the tree is clean, 2 for bad input (no tree, no such --crds folder, no kubectl).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fluxplane.commands import Subcommands
from fluxplane.system.progress import Progress

NAMES: tuple[str, ...] = ("validate", "schemas")
LOCKS_PROJECT = False
#: validate found something.
EXIT_FINDINGS = 1


def register(commands: Subcommands) -> None:
    """Add ``validate`` and ``schemas pull`` to the CLI."""
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
        help="a folder of CRD YAML (repeatable; default: $FLUXPLANE_CRDS, else the cache 'schemas pull' filled, "
        "else the CRDs fluxplane ships)",
    )
    validate.add_argument("--no-kustomize", action="store_true", help="do not run kubectl kustomize")
    validate.add_argument(
        "--changed",
        metavar="BASE",
        default=None,
        help="check only what changed in DIST since the Git ref BASE (references still across the whole tree)",
    )
    validate.add_argument(
        "--no-cache",
        action="store_true",
        help="read and check every file without the validate cache (.fluxplane-cache/validate/), and leave it alone",
    )
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


def stopped(args: argparse.Namespace) -> str | None:
    return None if args.command == "schemas" else "nothing written"


def run(args: argparse.Namespace) -> int:
    """``validate``: the findings, what was checked, and a summary; ``schemas pull``: the files written."""
    if args.command == "schemas":
        return _pull(args)
    # Imported when the command runs, not when the CLI parses: the schema checker is heavy, and
    # `import fluxplane.cli` stays quick for the other commands and --help.
    from fluxplane import validate

    dist: Path = args.dist if args.dist is not None else args.root / "dist"
    # The cache lies in the project folder holding the tree, as the synth cache does.
    cache = None if args.no_cache else validate.ValidateCache.for_root(dist.resolve().parent)
    result = validate.run(
        dist,
        args.crds,
        kustomize=not args.no_kustomize,
        changed=args.changed,
        progress=Progress("validate"),
        cache=cache,
    )
    for line in result.warnings:
        print(line, file=sys.stderr)
    for finding in result.findings:
        print(finding.line())
    if result.coverage.narrowed:
        print(result.coverage.narrowed)
    print(result.coverage.line())
    summary = f"{dist}: {result.documents} documents in {result.files} files, {result.kustomizations} kustomizations"
    if result.findings:
        noun = "finding" if len(result.findings) == 1 else "findings"
        print(f"{summary}: {len(result.findings)} {noun}")
        return EXIT_FINDINGS
    print(f"{summary}: valid")
    return 0


def _pull(args: argparse.Namespace) -> int:
    # Imported when the command runs, not when the CLI parses: see run.
    from fluxplane.validate.pull import pull

    pulled = pull(args.dest, from_cluster=args.from_cluster, context=args.context)
    for path in pulled.written:
        print(path)
    print(f"{pulled.dest}: {len(pulled.written)} CRDs")
    return 0
