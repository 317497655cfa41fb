"""The review of a pull request in generated fleets of 100 and 1,000 clusters, every figure against a full synth of
the same fleet in the same run.

For each size (the fleet of ``synth_fleet.py``), each command a new process, in this order:

* write the fleet, synthesize it with the cache and commit environments/ and dist/ (the base branch);
* ``validate_cold``: ``fluxplane validate`` of the whole tree with an empty validate cache;
* three rounds, each of:

  * ``full``: the whole synth in stages, then the floor (the same documents dumped by CSafeDumper), as
    ``synth_fleet.py`` measures them: F, the figure the others are divided by, and ``x_floor``;
  * ``incremental``: one cluster's pack value changed against the base commit (another value each round), and
    synth, a new process with the synth cache (interpreter start to dist/ written);
  * ``pr_path``: ``validate --changed HEAD``, ``plan --base HEAD`` and ``diff --base HEAD`` of that change,
    together, each round from the validate cache the base commit's validate left;

* ``validate_warm``: the whole-tree validate after the last round's change, with the cache the base commit's
  validate left (what CI restores from the base branch);
* every process finds fluxplane's bytecode compiled, as an installed fluxplane has it;
* ``peak_mib``: the largest peak RSS of any of these processes (the kubectl processes validate starts aside).

Each figure of the rounds is the median of the three, and each ratio of the incremental synth and of the review
path the median of the three rounds' own ratios to that round's F: one run of a few seconds, or of twenty, moves by
a quarter with the load of a shared machine, and a figure and the F it is divided by, taken a minute apart, see
about the same load. The whole-tree validate runs once (a cold run takes minutes, and a second one with the base's
cache would find its own), against the median F.

The gates, at 1,000 clusters: pr_path <= 0.75 F, validate_cold <= 25 F, validate_warm <= 2 F, incremental <= 0.1 F,
x_floor <= 1.5, peak <= 1 GiB. Each size ends with one JSON line of its figures. The benchmark exits 1 when a
command finds something (validate a problem, plan an AWS or destructive change, diff more than the one
cluster's change) or a gate is missed. The CRD schemas are ``--crds`` (default ``FLUXPLANE_CRDS``, else
../shared/crds beside the project).

Run: ``make bench-pr`` or ``.venv/bin/python benchmarks/pr_fleet.py [--sizes 100 1000]``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth_fleet import change_one_cluster, full_synth, registry, write_fleet
from validate_fleet import _git

#: The fleet size from which the gates hold.
GATED = 1000
#: Each figure's largest share of F, the full synth of the same fleet in the same run.
SHARES = {"pr_path_s": 0.75, "validate_cold_s": 25.0, "validate_warm_s": 2.0, "incremental_s": 0.1}
#: The replica counts of the one-cluster change of each round (one cluster's value against the base commit).
INCREMENTAL_REPLICAS = (97, 98, 99)
MAX_X_FLOOR = 1.5
MAX_PEAK_MIB = 1024
HERE = Path(__file__).resolve().parent


@dataclass
class Run:
    """A command's time, peak RSS, exit code and output."""

    seconds: float
    peak_mib: float
    code: int
    stdout: str
    stderr: str


def _run(*args: str, cwd: Path | None = None) -> Run:
    """``args`` as a new process, with its own peak RSS (from wait4, not the children it starts in turn)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen(args, stdout=out, stderr=err, cwd=cwd, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(seconds, usage.ru_maxrss / 1024, process.returncode, out.read(), err.read())


def _fluxplane(*args: str) -> tuple[str, ...]:
    return (sys.executable, "-m", "fluxplane", *args)


def _script(name: str, *args: str) -> tuple[str, ...]:
    return (sys.executable, str(HERE / name), *args)


@dataclass
class Round:
    """One round: the full synth's figures, the incremental synth and the review commands."""

    figures: dict[str, Any]
    incremental: Run
    review: dict[str, Run]

    @property
    def full_s(self) -> float:
        return float(self.figures["total_s"])

    @property
    def pr_path_s(self) -> float:
        return sum(run.seconds for run in self.review.values())

    @property
    def incremental_share(self) -> float:
        return self.incremental.seconds / self.full_s


def _full_in_process(root: Path) -> int:
    """The full synth's stages and the floor, as JSON on stdout."""
    figures, _ = full_synth(root, registry())
    print(json.dumps(figures))
    return 0


class Findings:
    """What the commands found, and the gates missed: any makes the benchmark fail."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def expect(self, run: Run, what: str) -> Run:
        if run.code != 0:
            tail = (run.stdout[-2000:] + run.stderr[-2000:]).strip()
            self.lines.append(f"{what} exited {run.code}: {tail}")
        return run


def measure(clusters: int, workdir: str | None, crds: Path, findings: Findings) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        root = Path(tmp)
        dist = str(root / "dist")
        write_fleet(root, clusters)
        runs: dict[str, Run] = {}
        runs["base"] = findings.expect(_run(*_script("synth_fleet.py", "--incremental", str(root))), "synth")
        _git(root, "init", "-q")
        _git(root, "add", "environments", "dist")
        _git(root, "commit", "-qm", "fleet")

        cache = root / ".fluxplane-cache" / "validate"
        shutil.rmtree(cache, ignore_errors=True)
        runs["validate_cold"] = findings.expect(_run(*_fluxplane("validate", dist, "--crds", str(crds))), "validate")
        base_cache = root / ".validate-cache-of-the-base"
        shutil.copytree(cache, base_cache, symlinks=True)

        rounds: list[Round] = []
        for index, replicas in enumerate(INCREMENTAL_REPLICAS):
            full = runs[f"full_{index}"] = findings.expect(_run(*_script("pr_fleet.py", "--full", str(root))), "full")
            figures = json.loads(full.stdout.splitlines()[-1]) if full.code == 0 else {"total_s": full.seconds}
            change_one_cluster(root, replicas)
            incremental = runs[f"incremental_{index}"] = findings.expect(
                _run(*_script("synth_fleet.py", "--incremental", str(root))), "incremental synth"
            )
            shutil.rmtree(cache)
            shutil.copytree(base_cache, cache, symlinks=True)
            review = {
                "validate_changed": _run(*_fluxplane("validate", dist, "--crds", str(crds), "--changed", "HEAD")),
                "plan": _run(*_script("plan_fleet.py", "--plan", str(root))),
                "diff": _run(*_script("plan_fleet.py", "--diff", str(root))),
            }
            for name, run in review.items():
                runs[f"{name}_{index}"] = findings.expect(run, name.replace("_", " --"))
            rounds.append(Round(figures, incremental, review))

        shutil.rmtree(cache)
        shutil.copytree(base_cache, cache, symlinks=True)
        runs["validate_warm"] = findings.expect(
            _run(*_fluxplane("validate", dist, "--crds", str(crds))), "validate with the base's cache"
        )

    full_s = statistics.median(round_.full_s for round_ in rounds)
    # the round whose review path is the median gives the three commands' own figures
    paths = [round_.pr_path_s for round_ in rounds]
    middle = rounds[paths.index(statistics.median_low(paths))]
    return {
        "clusters": clusters,
        "full_s": round(full_s, 2),
        "x_floor": round(statistics.median(round_.figures.get("ratio", 0.0) for round_ in rounds), 2),
        "pr_path_s": round(statistics.median(paths), 2),
        "validate_cold_s": round(runs["validate_cold"].seconds, 2),
        "validate_warm_s": round(runs["validate_warm"].seconds, 2),
        "incremental_s": round(statistics.median(round_.incremental.seconds for round_ in rounds), 2),
        "peak_mib": round(max(run.peak_mib for run in runs.values())),
        "validate_changed_s": round(middle.review["validate_changed"].seconds, 2),
        "plan_s": round(middle.review["plan"].seconds, 2),
        "diff_s": round(middle.review["diff"].seconds, 2),
        "ratios": {
            "pr_path_s": round(statistics.median(round_.pr_path_s / round_.full_s for round_ in rounds), 3),
            "validate_cold_s": round(runs["validate_cold"].seconds / full_s, 3),
            "validate_warm_s": round(runs["validate_warm"].seconds / full_s, 3),
            "incremental_s": round(statistics.median(round_.incremental_share for round_ in rounds), 3),
        },
        "full_runs_s": [round(round_.full_s, 2) for round_ in rounds],
        "x_floor_runs": [round(round_.figures.get("ratio", 0.0), 2) for round_ in rounds],
        "pr_path_runs_s": [round(seconds, 2) for seconds in paths],
        "incremental_runs_s": [round(round_.incremental.seconds, 2) for round_ in rounds],
    }


def gates(result: dict[str, Any]) -> list[str]:
    """The targets ``result`` misses (none below GATED clusters)."""
    if result["clusters"] < GATED:
        return []
    missed = [
        f"{name.removesuffix('_s')} took {result['ratios'][name]:.2f} x the full synth (at most {share})"
        for name, share in SHARES.items()
        if result["ratios"][name] > share
    ]
    if result["x_floor"] > MAX_X_FLOOR:
        missed.append(f"the full synth took {result['x_floor']:.2f} x the YAML floor (at most {MAX_X_FLOOR})")
    if result["peak_mib"] > MAX_PEAK_MIB:
        missed.append(f"a command's peak RSS was {result['peak_mib']} MiB (at most {MAX_PEAK_MIB})")
    return [f"{result['clusters']} clusters: {line}" for line in missed]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--workdir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    default_crds = os.environ.get("FLUXPLANE_CRDS") or str(HERE.parents[1] / "shared" / "crds")
    parser.add_argument("--crds", type=Path, default=Path(default_crds))
    parser.add_argument("--full", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.full is not None:
        return _full_in_process(args.full)
    # Bytecode as an installed fluxplane has it (pip compiles on install; an interpreter run with
    # PYTHONDONTWRITEBYTECODE, as some CI machines are, would compile every changed module in every process).
    import fluxplane

    compileall.compile_dir(Path(fluxplane.__file__).parent, quiet=1)
    findings = Findings()
    for size in args.sizes:
        load = os.getloadavg()[0]
        result = measure(size, args.workdir, args.crds, findings)
        full = result["full_s"]
        print(f"{size} clusters, one-cluster change (load average {load:.1f} at the start):")
        print(f"  full synth (F): {full:.1f}s, {result['x_floor']:.2f} x the YAML floor")
        for name, label in (
            ("pr_path_s", "validate --changed + plan + diff"),
            ("validate_changed_s", "  validate --changed HEAD"),
            ("plan_s", "  plan --base HEAD"),
            ("diff_s", "  diff --base HEAD"),
            ("validate_cold_s", "whole-tree validate, cold cache"),
            ("validate_warm_s", "whole-tree validate, the base's cache"),
            ("incremental_s", "incremental synth"),
        ):
            ratio = result["ratios"].get(name, result[name] / full)
            print(f"  {label}: {result[name]:.1f}s, {ratio:.2f} F")
        print("  each round's full synth, x the floor, review path and incremental synth:")
        for index, full_s in enumerate(result["full_runs_s"]):
            pr_path_s, incremental_s = result["pr_path_runs_s"][index], result["incremental_runs_s"][index]
            x_floor = result["x_floor_runs"][index]
            print(
                f"    {full_s:.1f}s, {x_floor:.2f}, {pr_path_s:.1f}s = {pr_path_s / full_s:.2f} F, "
                f"{incremental_s:.1f}s = {incremental_s / full_s:.3f} F"
            )
        print(f"  peak RSS: {result['peak_mib']} MiB")
        findings.lines.extend(gates(result))
        print(json.dumps(result), flush=True)
    for line in findings.lines:
        print(line)
    return 1 if findings.lines else 0


if __name__ == "__main__":
    raise SystemExit(main())
