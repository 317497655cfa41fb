"""``fluxplane seal``: seal a Secret offline into environments/secrets/<cluster>/ of each cluster named, or print it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fluxplane.commands import Subcommands
from fluxplane.sealing import DEFAULT_CERT
from fluxplane.system import transaction

NAMES: tuple[str, ...] = ("seal",)
LOCKS_PROJECT = True


def register(commands: Subcommands) -> None:
    """Add ``seal`` and its options to the CLI."""
    seal = commands.add_parser(
        "seal",
        help="seal a Secret offline into environments/secrets/<cluster>/ (or print it)",
        description="Seal values for the Sealed Secrets controller from its public certificate, without cluster "
        "access, into one file per cluster: the clusters given, every cluster of an environment, every cluster an "
        "app runs on. Every file is written, or none. Values that did not change keep their ciphertext.",
    )
    seal.add_argument(
        "--cluster", action="append", default=[], help="a cluster the secret is for (repeatable; or --env, --app)"
    )
    seal.add_argument("--env", action="append", default=[], help="every cluster of this environment (repeatable)")
    seal.add_argument(
        "--app",
        action="append",
        default=[],
        help="every cluster this app runs on, in its namespace unless --namespace (repeatable)",
    )
    seal.add_argument("--name", required=True, help="name of the Secret")
    seal.add_argument("--namespace", help="namespace of the Secret (with --app alone: the app's)")
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


def stopped(args: argparse.Namespace) -> str | None:
    return None


def run(args: argparse.Namespace) -> int:
    """Seal, then print the SealedSecret (``--stdout``) or a line per file naming it and which keys changed."""
    # Imported when the command runs: sealing loads cryptography, which the other commands and --help do without
    from fluxplane.sealing.kubeseal import SealError
    from fluxplane.sealing.project import SealRequest, seal_secrets

    root: Path = args.root
    transaction.note(transaction.recover(root, write=not args.stdout))
    request = SealRequest(
        name=args.name,
        namespace=args.namespace,
        clusters=args.cluster,
        environments=args.env,
        apps=args.app,
        scope=args.scope,
        cert=args.cert,
        secret_type=args.type,
        literals=args.from_literal,
        files=args.from_file,
        env_files=args.from_env_file,
    )
    warnings: list[str] = []
    try:
        sealed = seal_secrets(root, request, write=not args.stdout, warnings=warnings)
    finally:
        # the certificate's warnings come first, whatever refuses the request after them
        for line in warnings:
            print(line, file=sys.stderr)
    if args.stdout:
        if len(sealed) > 1:
            raise SealError(
                f"--stdout: prints one SealedSecret, and this request seals {len(sealed)} "
                f"({', '.join(item.path for item in sealed)}); leave out --stdout to write them"
            )
        print(sealed[0].text, end="")
        return 0
    for item in sealed:
        summary = ", ".join(
            f"{label} {', '.join(keys)}"
            for label, keys in (("sealed", item.sealed), ("unchanged", item.unchanged), ("removed", item.removed))
            if keys
        )
        print(f"{item.path}: {summary}")
    return 0
