"""``fluxplane aws-setup``: write the CloudFormation templates of the fleet's AWS accounts; say how to deploy them."""

from __future__ import annotations

import argparse
from pathlib import Path

from fluxplane.commands import Subcommands

NAMES: tuple[str, ...] = ("aws-setup",)
LOCKS_PROJECT = False


def register(commands: Subcommands) -> None:
    """Add ``aws-setup`` and its options to the CLI."""
    setup = commands.add_parser(
        "aws-setup",
        help="write the CloudFormation templates of what the fleet needs in each AWS account, and the deploy commands",
        description="From the definition, write one CloudFormation template per AWS account of the fleet: the "
        "Crossplane providers' role and its trust, the hub's Flux role for keyless access, the role the providers "
        "assume in each account, and the sealing key's secret in each account whose clusters read it (made empty: "
        "'fluxplane sealing-key' fills it). Then print the 'aws cloudformation deploy' commands, in order.",
    )
    setup.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for the templates (default: aws-setup/ in the project, to review with the definition)",
    )


def stopped(args: argparse.Namespace) -> str | None:
    return "the templates written so far are complete files; run it again"


def run(args: argparse.Namespace) -> int:
    """Write the templates, then a line per file, what the hub must already have, and the deploy commands."""
    from fluxplane.synth import aws_setup

    root: Path = args.root
    folder: Path = args.out if args.out is not None else root / aws_setup.DEFAULT_OUT
    setup = aws_setup.aws_setup(root)
    if not setup.stacks:
        print("nothing to set up: the definition needs no role or secret in AWS")
        return 0
    written = aws_setup.write(setup, folder)
    for stack, path in zip(setup.stacks, written.written, strict=True):
        what = "the hub's own account" if stack.account.name is None else f"account {stack.account.name}"
        number = f" ({stack.account.id})" if stack.account.id else ""
        print(f"wrote {path}: {what}{number}, {stack.region}: {'; '.join(stack.holds)}")
    for path in written.stale:
        print(f"note: {path}: a template of a stack the definition no longer has; delete the stack, then the file")
    print("the hub must already have:")
    for line in setup.prerequisites:
        print(f"  {line}")
    print(
        "deploy, in this order (the other accounts' roles trust the hub's providers' role); --profile names each "
        "account's AWS CLI profile: put yours"
    )
    for stack in setup.stacks:
        print(f"  {setup.deploy_command(stack, folder.as_posix())}")
    if any(stack.template["Resources"].get("SealingKeySecret") for stack in setup.stacks):
        print("then: fluxplane sealing-key, which makes the sealing key pair and says how to store it in the secrets")
    return 0
