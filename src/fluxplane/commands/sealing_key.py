"""``fluxplane sealing-key``: make the fleet's sealing key pair; the certificate into the project, the key never."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fluxplane.commands import Subcommands
from fluxplane.system import transaction

if TYPE_CHECKING:
    from fluxplane.sealing.project import NewSealingKey

NAMES: tuple[str, ...] = ("sealing-key",)
LOCKS_PROJECT = True
#: The here-document's delimiter in the printed commands: a line the key pair's one-line JSON never is.
_END = "FLUXPLANE_SEALING_KEY"


def register(commands: Subcommands) -> None:
    """Add ``sealing-key`` and its options to the CLI."""
    key = commands.add_parser(
        "sealing-key",
        help="make the fleet's Sealed Secrets key pair: the certificate into the project, the private key outside it",
        description="Make an RSA-4096 key pair for the Sealed Secrets controllers of every spoke, and its self-signed "
        "certificate, which goes to environments/sealing-cert.pem, where 'fluxplane seal' reads it. The private key "
        "never goes into the project: to --private-key-out FILE outside it, or else onto standard output once, as "
        "the commands that store it in the Secrets Manager secret the spokes read (run them: "
        "'fluxplane sealing-key | sh').",
    )
    key.add_argument(
        "--private-key-out",
        type=Path,
        metavar="FILE",
        help="write the private key (PEM) to FILE, a new file outside the project, readable by you alone",
    )
    key.add_argument(
        "--force",
        action="store_true",
        help="replace the certificate there is: every secret must then be sealed again with the new one",
    )


def stopped(args: argparse.Namespace) -> str | None:
    return None


def run(args: argparse.Namespace) -> int:
    """Make the key pair; say what was written and how the key pair reaches Secrets Manager."""
    # Imported when the command runs: making the key loads cryptography, which the other commands and --help do without
    from fluxplane.sealing.project import make_sealing_key

    root: Path = args.root
    transaction.note(transaction.recover(root))
    made = make_sealing_key(root, private_key_out=args.private_key_out, force=args.force)
    pair = made.key_pair
    certificate = root / made.certificate
    about = (
        f"wrote {certificate}: the sealing key's certificate (RSA, sha256 {pair.fingerprint[:16]}, valid until "
        f"{pair.not_after:%Y-%m-%d}), where 'fluxplane seal' reads it; commit it"
    )
    replaced = (
        "note: a new sealing key: seal every secret of environments/secrets/ again with it, and store it in Secrets "
        "Manager before they reach the spokes, whose controllers then unseal with it alone"
        if made.replaced
        else None
    )
    if made.private_key is None:
        # standard output carries the key pair and nothing else: it may be piped into sh
        print(about, file=sys.stderr)
        if replaced:
            print(replaced, file=sys.stderr)
        print(
            f"the private key is on standard output, once, in the commands that store the key pair in the secret "
            f"{made.secret_name} of each account: pipe it into sh ('fluxplane sealing-key | sh') or paste them, and "
            "keep no copy",
            file=sys.stderr,
        )
        print(f"# The fleet's sealing key pair, into the secret {made.secret_name} of each account whose clusters")
        print("# read it. It unseals every secret of the fleet: keep no copy of this text.")
        for name in made.profiles:
            print(f"{_put(made, name, 'file:///dev/stdin')} <<'{_END}'")
            print(pair.secret_value())
            print(_END)
        return 0
    print(about)
    print(f"wrote {made.private_key}: the private key, readable by you alone")
    if replaced:
        print(replaced)
    print(f"store the key pair in the secret {made.secret_name} of each account whose clusters read it:")
    value = (
        f'"$(jq -n --rawfile crt {shlex.quote(str(certificate))} --rawfile key {shlex.quote(str(made.private_key))} '
        '\'{"tls.crt": $crt, "tls.key": $key}\')"'
    )
    for name in made.profiles:
        print(f"  {_put(made, name, value)}")
    print(
        f"then delete the private key (shred -u {shlex.quote(str(made.private_key))}), or keep it offline: it "
        "unseals every secret of the fleet"
    )
    return 0


def _put(made: NewSealingKey, name: str, value: str) -> str:
    """The command that stores the key pair in the secret of the account whose AWS CLI profile is ``name``."""
    return (
        f"aws secretsmanager put-secret-value --secret-id {shlex.quote(made.secret_name)} --region {made.region} "
        f"--profile {name} --secret-string {value}"
    )
