"""Plan a one-cluster change in generated fleets of 10, 100 and 1,000 clusters, against validate --changed.

For each size (the fleet of ``synth_fleet.py``):

* write the fleet, synthesize it with the cache, commit environments/ and dist/ to a Git repository;
* change one cluster's pack value and synthesize again with the cache (the pull request's commit);
* ``fluxplane validate --changed HEAD`` on that dist/, as a new process;
* ``fluxplane plan --base HEAD`` on the same change, as a new process (with the benchmark's packs, which are not
  installed: the plan runs through the library as the command does): the base is the committed dist/, the
  head is rendered from the synth cache, and only what the changed file reaches is built.

At 1,000 clusters the plan must take no longer than validate --changed (in small fleets both are mostly a
process's start, the plan's with cdk8s's JavaScript runtime); the benchmark prints both and what the plan read,
and fails when the plan finds an AWS resource change or a destructive Kubernetes change (a pack value changes
nothing in AWS). The CRD schemas are ``--crds`` (default: ``FLUXPLANE_CRDS``, else ../shared/crds beside the project).

Run: ``.venv/bin/python benchmarks/plan_fleet.py [--sizes 10 100 1000]``.
"""

from __future__ import annotations

import argparse
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

#: The fleet size from which the plan must be no slower than validate --changed.
GATED = 1000


def _plan_in_process(root: Path) -> int:
    """What ``fluxplane plan --base HEAD`` does, with the benchmark's packs; prints the plan's text."""
    from fluxplane import plan
    from fluxplane.node import start_runtime
    from fluxplane.plan.report import text
    from fluxplane.progress import Progress

    start_runtime()
    result = plan.run(root, plan.resolve(root, "HEAD"), registry(), Progress("plan", show="lines"))
    sys.stdout.write(text(result))
    return 1 if result.resources or result.destructive else 0


def _plan(root: Path) -> dict[str, Any]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--plan", str(root)], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"plan exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    lines = done.stdout.splitlines()
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
        change_one_cluster(root)
        subprocess.run(
            [sys.executable, str(Path(__file__).parent / "synth_fleet.py"), "--incremental", str(root)], check=True
        )
        changed = _validate(root, crds, "--changed", "HEAD")
        planned = _plan(root)
    return {"clusters": clusters, "validate": changed, "plan": planned}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--workdir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    default_crds = os.environ.get("FLUXPLANE_CRDS") or str(Path(__file__).resolve().parents[2] / "shared" / "crds")
    parser.add_argument("--crds", type=Path, default=Path(default_crds))
    parser.add_argument("--plan", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.plan is not None:
        return _plan_in_process(args.plan)
    slower = []
    for size in args.sizes:
        result = measure(size, args.workdir, args.crds)
        validate, planned = result["validate"], result["plan"]
        print(f"{size} clusters, one-cluster change:")
        print(f"  validate --changed HEAD: {validate['seconds']:.1f}s")
        print(f"  plan --base HEAD: {planned['seconds']:.1f}s ({planned['read'].removeprefix('read: ')})")
        print(f"  {planned['summary']}", flush=True)
        if size >= GATED and planned["seconds"] > validate["seconds"]:
            slower.append(size)
    if slower:
        print(f"plan took longer than validate --changed at {', '.join(map(str, slower))} clusters")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
