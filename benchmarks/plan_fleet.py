"""Review a one-cluster change in generated fleets of 10, 100 and 1,000 clusters: validate --changed, plan and diff,
against a full synth.

For each size (the fleet of ``synth_fleet.py``):

* write the fleet, synthesize it with the cache, commit environments/ and dist/ to a Git repository, and run
  ``fluxplane validate --changed HEAD`` on it once, untimed: the validate cache a pull request's CI run restores
  from its base branch's;
* change one cluster's pack value and synthesize again with the cache (the pull request's commit);
* ``fluxplane validate --changed HEAD`` on that dist/, as a new process;
* ``fluxplane plan --base HEAD`` and ``fluxplane diff --base HEAD`` on the same change, each as a new process (with
  the benchmark's packs, which are not installed: each runs through the library as the command does): the base is
  the committed dist/, the head is rendered from the synth cache, and only what the changed file reaches is built;
* a full synth, without the cache, as a new process (``fluxplane synth --no-cache``): what the review is held to.

At 1,000 clusters the plan must take no longer than validate --changed, and the three reviews of the pull request
together no longer than GATED_SHARE of the full synth (in small fleets all are mostly a process's start); the
benchmark prints each time and what plan and diff read, and fails when the plan finds an AWS resource change or a
destructive Kubernetes change (a pack value changes nothing in AWS) or the diff finds other than the one cluster's
change. The CRD schemas are ``--crds`` (default:
``FLUXPLANE_CRDS``, else ../shared/crds beside the project).

Run: ``make bench-plan`` or ``.venv/bin/python benchmarks/plan_fleet.py [--sizes 10 100 1000]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth_fleet import change_one_cluster, registry, synth_with_cache, write_fleet
from validate_fleet import _git, _validate

#: The fleet size from which the gates below hold.
GATED = 1000
#: validate --changed, plan and diff of a one-cluster change, together, take at most this share of a full synth.
GATED_SHARE = 0.75


def _plan_in_process(root: Path) -> int:
    """What ``fluxplane plan --base HEAD`` does, with the benchmark's packs; prints the plan's text."""
    from fluxplane.review import plan
    from fluxplane.review.plan.report import text
    from fluxplane.system.progress import Progress

    result = plan.run(root, plan.resolve(root, "HEAD"), registry(), Progress("plan", show="lines"))
    sys.stdout.write(text(result))
    gc.freeze()  # as the `fluxplane` program does (fluxplane.cli.entry): the process ends next
    return 1 if result.resources or result.destructive else 0


def _diff_in_process(root: Path) -> int:
    """What ``fluxplane diff --base HEAD`` does, with the benchmark's packs; prints the diff's text."""
    from fluxplane.review import diff
    from fluxplane.review.diff.report import text
    from fluxplane.system.progress import Progress

    report = diff.run(root, diff.resolve(root, "HEAD"), Progress("diff", show="lines"), registry())
    sys.stdout.write(text(report))
    gc.freeze()  # as the `fluxplane` program does (fluxplane.cli.entry): the process ends next
    one = [section.cluster for section in report.sections] == ["dev-0000"] and not report.files
    return 0 if one and not report.risks else 1


def _synth_in_process(root: Path) -> int:
    """What ``fluxplane synth --no-cache`` does, with the benchmark's packs."""
    from fluxplane.synth import Pipeline, paused_gc
    from fluxplane.system.node import start_runtime

    start_runtime()
    with paused_gc():
        pipeline = Pipeline(root, registry=registry())
        pipeline.write(pipeline.render())
    gc.freeze()  # as the `fluxplane` program does (fluxplane.cli.entry): the process ends next
    return 0


def _run(mode: str, root: Path) -> dict[str, Any]:
    """``mode`` (plan, diff, synth) as a new process: its time, its ``read:`` line and its last line."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, f"--{mode}", str(root)], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{mode} exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    lines = done.stdout.splitlines() or [""]
    read = next((line for line in lines if line.startswith("read: ")), "")
    return {"seconds": seconds, "read": read, "summary": lines[-1], "stages": done.stderr.strip().splitlines()}


def measure(clusters: int, workdir: str | None, crds: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        root = Path(tmp)
        write_fleet(root, clusters)
        synth_with_cache(root)
        _git(root, "init", "-q")
        _git(root, "add", "environments", "dist")
        _git(root, "commit", "-qm", "fleet")
        _validate(root, crds, "--changed", "HEAD")
        change_one_cluster(root)
        subprocess.run(
            [sys.executable, str(Path(__file__).parent / "synth_fleet.py"), "--incremental", str(root)], check=True
        )
        changed = _validate(root, crds, "--changed", "HEAD")
        planned = _run("plan", root)
        diffed = _run("diff", root)
        synthesized = _run("synth", root)
    return {"clusters": clusters, "validate": changed, "plan": planned, "diff": diffed, "synth": synthesized}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--workdir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    default_crds = os.environ.get("FLUXPLANE_CRDS") or str(Path(__file__).resolve().parents[2] / "shared" / "crds")
    parser.add_argument("--crds", type=Path, default=Path(default_crds))
    parser.add_argument("--plan", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--diff", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--synth", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    for mode, run in (("plan", _plan_in_process), ("diff", _diff_in_process), ("synth", _synth_in_process)):
        if getattr(args, mode) is not None:
            return run(getattr(args, mode))
    missed = []
    for size in args.sizes:
        result = measure(size, args.workdir, args.crds)
        validate, planned, diffed, synthesized = (result[name] for name in ("validate", "plan", "diff", "synth"))
        review = validate["seconds"] + planned["seconds"] + diffed["seconds"]
        share = review / synthesized["seconds"]
        print(f"{size} clusters, one-cluster change:")
        print(f"  validate --changed HEAD: {validate['seconds']:.1f}s")
        print(f"  plan --base HEAD: {planned['seconds']:.1f}s ({planned['read'].removeprefix('read: ')})")
        print(f"  {planned['summary']}")
        print(f"  diff --base HEAD: {diffed['seconds']:.1f}s ({diffed['read'].removeprefix('read: ')})")
        print(f"  synth, no cache: {synthesized['seconds']:.1f}s")
        print(f"  validate + plan + diff: {review:.1f}s, {share:.2f} x the full synth", flush=True)
        if size >= GATED and planned["seconds"] > validate["seconds"]:
            missed.append(f"plan took longer than validate --changed at {size} clusters")
        if size >= GATED and share > GATED_SHARE:
            missed.append(f"validate, plan and diff took {share:.2f} x the full synth at {size} clusters")
    for line in missed:
        print(line)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
