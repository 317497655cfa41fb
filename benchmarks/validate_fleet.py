"""Validate generated fleets of 10, 100 and 1,000 clusters: the whole tree, then a one-cluster change.

For each size (the fleet of ``synth_fleet.py``: four environments, 30 add-on packs, a hub that builds and
bootstraps every cluster):

* write the fleet, synthesize it, commit dist/ to a Git repository;
* ``fluxplane validate`` on the whole tree, as a new process, with the kustomize builds (or without them,
  ``--no-kustomize``); the time of each stage is what validate's progress lines report;
* change one cluster's pack value, synthesize again, and run ``fluxplane validate --changed HEAD``: the
  check of a pull request that touches one cluster.

Both runs must find nothing: the benchmark fails on a finding. The CRD schemas are ``--crds`` (default: the
``FLUXPLANE_CRDS`` folder, else ../shared/crds beside the project).

Run: ``.venv/bin/python benchmarks/validate_fleet.py [--sizes 10 100 1000] [--no-kustomize]``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth_fleet import change_one_cluster, synth_with_cache, write_fleet

_STAGE = re.compile(r"^validate: (\w+) done in ([\d.]+)s")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _validate(root: Path, crds: Path, *args: str) -> dict[str, Any]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "fluxplane", "validate", str(root / "dist"), "--crds", str(crds), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(
            f"validate {' '.join(args)} exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
        )
    stages = {m.group(1): float(m.group(2)) for line in done.stderr.splitlines() if (m := _STAGE.match(line))}
    lines = done.stdout.splitlines()
    return {"seconds": seconds, "stages": stages, "summary": lines[-1], "narrowed": lines[0] if args else ""}


def measure(clusters: int, workdir: str | None, crds: Path, kustomize: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        root = Path(tmp)
        write_fleet(root, clusters)
        synth_with_cache(root)
        _git(root, "init", "-q")
        _git(root, "add", "dist")
        _git(root, "commit", "-qm", "fleet")
        flags = [] if kustomize else ["--no-kustomize"]
        whole = _validate(root, crds, *flags)
        change_one_cluster(root)
        subprocess.run(
            [sys.executable, str(Path(__file__).parent / "synth_fleet.py"), "--incremental", str(root)], check=True
        )
        changed = _validate(root, crds, "--changed", "HEAD")
    return {"clusters": clusters, "whole": whole, "changed": changed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--workdir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    default_crds = os.environ.get("FLUXPLANE_CRDS") or str(Path(__file__).resolve().parents[2] / "shared" / "crds")
    parser.add_argument("--crds", type=Path, default=Path(default_crds))
    parser.add_argument("--no-kustomize", action="store_true", help="the whole-tree run skips the kustomize builds")
    args = parser.parse_args()
    for size in args.sizes:
        result = measure(size, args.workdir, args.crds, not args.no_kustomize)
        whole, changed = result["whole"], result["changed"]
        stages = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in whole["stages"].items())
        print(f"{size} clusters: {whole['summary']}")
        print(f"  whole tree: {whole['seconds']:.1f}s ({stages})")
        stages = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in changed["stages"].items())
        print(f"  one-cluster change: {changed['seconds']:.1f}s ({stages})")
        print(f"  {changed['narrowed']}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
