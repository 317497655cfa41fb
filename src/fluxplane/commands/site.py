"""``fluxplane site [FOLDER]``: a static site of the fleet, from the definition and its dist/, with the change
against ``--base`` when given."""

from __future__ import annotations

import argparse
from datetime import UTC, date, datetime
from pathlib import Path

from fluxplane.commands import Subcommands, prepare_node
from fluxplane.system.progress import Progress

NAMES: tuple[str, ...] = ("site",)
LOCKS_PROJECT = False
#: The default folder, below ``--root`` (fluxplane.review.site.DEFAULT_FOLDER; repeated to keep ``--help`` quick).
DEFAULT_FOLDER = "site/fleet"


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date as YYYY-MM-DD, got {value!r}") from None


def register(commands: Subcommands) -> None:
    """Add ``site`` and its options to the CLI."""
    site = commands.add_parser(
        "site",
        help="a static site of the fleet: clusters, EKS support, add-ons, Flux graphs, apps, and a change",
        description="Write HTML pages of the fleet from environments/ and the dist/ synth wrote: environments, "
        "accounts and regions; each cluster's Kubernetes version, EKS support and readiness for the next version; "
        "the add-on matrix; each cluster's Flux dependency graph, Kustomizations, add-ons and apps; the apps and "
        "their AWS resources. With --base, the change as `fluxplane plan` and `fluxplane diff` report it. The pages "
        "need nothing from a network; the same input gives the same bytes.",
    )
    site.add_argument(
        "folder",
        nargs="?",
        type=Path,
        default=None,
        metavar="FOLDER",
        help=f"where to write the pages (default: {DEFAULT_FOLDER} below --root)",
    )
    site.add_argument(
        "--base", default=None, metavar="REF", help="also write change.html: the plan and diff against this Git ref"
    )
    site.add_argument(
        "--as-of",
        type=_day,
        default=None,
        metavar="YYYY-MM-DD",
        help="the day EKS support is judged on (default: today, UTC)",
    )


def stopped(args: argparse.Namespace) -> str | None:
    return "the site folder may hold some pages of this run and some of the last"


def run(args: argparse.Namespace) -> int:
    """Write the site and say where."""
    # Imported when the command runs: the site loads the definition, and --base synthesizes.
    from fluxplane.review import site

    root: Path = args.root
    folder: Path = args.folder if args.folder is not None else root / DEFAULT_FOLDER
    today: date = args.as_of or datetime.now(UTC).date()
    if args.base is not None:
        prepare_node(root)
    written = site.build(root, folder, today, args.base, Progress("site"))
    print(f"wrote {len(written)} files to {folder}; open {folder / 'index.html'}")
    return 0
