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

from fluxplane.errors import FluxplaneError
from fluxplane.node import use_project_node

EXIT_STALE = 1
EXIT_BAD_INPUT = 2


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
    commands.add_parser("reference", help="print the fleet definition reference (Markdown)")
    return parser


def _synth(args: argparse.Namespace) -> int:
    from fluxplane import synth

    root: Path = args.root
    outdir: Path = args.outdir or (
        Path(os.environ["CDK8S_OUTDIR"]) if os.environ.get("CDK8S_OUTDIR") else root / "dist"
    )
    with synth.paused_gc():
        plan = synth.load_plan(root)
    use_project_node(root)
    started = time.perf_counter()
    files = synth.render_plan(plan)
    if args.check:
        staleness = synth.compare_tree(files, outdir)
        if not staleness.stale:
            print(f"{outdir}: up to date ({len(files)} files)")
            return 0
        for label, paths in (
            ("added", staleness.added),
            ("changed", staleness.changed),
            ("removed", staleness.removed),
        ):
            for path in paths:
                print(f"{label}: {outdir / path}")
        print(f"{outdir}: stale; run 'fluxplane synth' (or 'make synth') and commit the result", file=sys.stderr)
        return EXIT_STALE
    synth.write_tree(files, outdir)
    elapsed = time.perf_counter() - started
    print(f"wrote {len(files)} files to {outdir} in {elapsed:.2f}s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "synth":
            return _synth(args)
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
