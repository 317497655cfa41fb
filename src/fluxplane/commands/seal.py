"""``fluxplane seal``: seal a Secret offline into environments/secrets/<cluster>/, or print it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fluxplane import transaction
from fluxplane.commands import Subcommands
from fluxplane.seal_secret import DEFAULT_CERT, SealRequest, seal_secret

NAMES: tuple[str, ...] = ("seal",)
LOCKS_PROJECT = True


def register(commands: Subcommands) -> None:
    """Add ``seal`` and its options to the CLI."""
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


def stopped(args: argparse.Namespace) -> str | None:
    return None


def run(args: argparse.Namespace) -> int:
    """Seal, then print the SealedSecret (``--stdout``) or a line naming the file and which keys changed."""
    root: Path = args.root
    transaction.note(transaction.recover(root, write=not args.stdout))
    request = SealRequest(
        cluster=args.cluster,
        name=args.name,
        namespace=args.namespace,
        scope=args.scope,
        cert=args.cert,
        secret_type=args.type,
        literals=args.from_literal,
        files=args.from_file,
        env_files=args.from_env_file,
    )
    warnings: list[str] = []
    try:
        sealed = seal_secret(root, request, write=not args.stdout, warnings=warnings)
    finally:
        # the certificate's warnings come first, whatever refuses the request after them
        for line in warnings:
            print(line, file=sys.stderr)
    if not sealed.written:
        print(sealed.text, end="")
        return 0
    summary = ", ".join(
        f"{label} {', '.join(keys)}"
        for label, keys in (("sealed", sealed.sealed), ("unchanged", sealed.unchanged), ("removed", sealed.removed))
        if keys
    )
    print(f"{sealed.path}: {summary}")
    return 0
