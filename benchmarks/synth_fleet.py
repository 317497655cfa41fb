"""Synthesize generated fleets of 10, 100 and 1,000 clusters and compare with the YAML floor.

For each size, in a fresh process (so peak RSS belongs to that size alone):

* write a fleet definition (environments/) with that many workload clusters over four
  environments; 30 add-on packs, 10 of them with per-cluster values (cluster overlays), 4 of those
  adding an object (overlay resources);
* run the whole synth: load and validate, build the cdk8s app, check and render, write dist/;
* in the same process, dump the very same documents with PyYAML's CSafeDumper, file by file
  (``yaml.dump_all``): the floor no YAML generator can beat;
* print documents, seconds per stage, peak RSS and the ratio total / floor.

The fleet and dist/ live in ``--workdir`` (default /dev/shm when it exists): the benchmark measures
fluxplane, not the disk. On a throttled virtual disk, creating 20,000 files alone can take 5 s or
more; pass ``--workdir /tmp`` to include that.

Run: ``make bench`` or ``.venv/bin/python benchmarks/synth_fleet.py [--sizes 10 100 1000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from fluxplane.constructs.config_map import ConfigMap
from fluxplane.constructs.helm_release import HelmRelease
from fluxplane.constructs.helm_repository import HelmRepository
from fluxplane.constructs.namespace import Namespace
from fluxplane.packs.api import Layer, Pack, PackConfig, PackContext
from fluxplane.packs.registry import PackRegistry

PACKS = 30
CUSTOMIZED = 10
WITH_EXTRA_OBJECT = 4
ENVIRONMENTS = ("dev", "staging", "production", "sandbox")


class SyntheticConfig(PackConfig):
    replicas: int = Field(1, ge=1)
    extra: bool = False


def _pack(index: int) -> Pack:
    name = f"addon-{index:02d}"
    layer: Layer = ("controllers", "configs", "apps")[index % 3]

    def bind(ctx: PackContext, config: SyntheticConfig) -> None:
        Namespace(ctx.scope, "namespace", {"name": name})
        repository = HelmRepository(
            ctx.scope, "repository", {"name": name, "url": f"https://charts.example.com/{name}"}
        )
        release = HelmRelease(
            ctx.scope,
            "release",
            {
                "name": name,
                "targetNamespace": name,
                "chart": {
                    "spec": {
                        "chart": name,
                        "version": "1.2.3",
                        "sourceRef": {"kind": "HelmRepository", "name": repository.name},
                    }
                },
                "values": {
                    "replicaCount": config.replicas,
                    "cluster": "${cluster_name}",
                    "resources": {"requests": {"cpu": "100m"}},
                },
            },
        )
        if config.extra:
            ConfigMap(
                ctx.scope,
                "extra",
                {"name": f"{name}-extra", "namespace": name, "data": {"cluster": "${cluster_name}"}},
            )
        ctx.add_health_check(release)

    return Pack(
        name=name,
        version="1.0.0",
        description="synthetic add-on",
        config=SyntheticConfig,
        layer=layer,
        bind=bind,
    )


def registry() -> PackRegistry:
    return PackRegistry(_pack(index) for index in range(PACKS))


def write_fleet(root: Path, clusters: int) -> None:
    env_dir = root / "environments"
    env_dir.mkdir(parents=True)
    base = {
        "repositories": {"platform": {"url": "ssh://git@example.com/org/fleet.git"}},
        "management": {"name": "hub", "region": "us-west-2"},
        "clusterNetwork": {"pool": "10.0.0.0/8", "prefixLength": 20},
        "packs": {f"addon-{index:02d}": {} for index in range(PACKS)},
    }
    (env_dir / "base.yaml").write_text(yaml.safe_dump(base, sort_keys=False))
    per_env: dict[str, list[dict[str, Any]]] = {env: [] for env in ENVIRONMENTS}
    for number in range(clusters):
        env = ENVIRONMENTS[number % len(ENVIRONMENTS)]
        packs: dict[str, Any] = {}
        for index in range(CUSTOMIZED):
            packs[f"addon-{index:02d}"] = {"replicas": 2 + (number % 5), "extra": index < WITH_EXTRA_OBJECT}
        per_env[env].append({"name": f"{env}-{number:04d}", "region": "eu-west-1", "packs": packs})
    for env, entries in per_env.items():
        data = {"packs": {"addon-29": {"replicas": 3}}, "clusters": entries}
        (env_dir / f"{env}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def measure(clusters: int, workdir: str | None) -> dict[str, Any]:
    from fluxplane.synth import load_plan, paused_gc
    from fluxplane.synth.writer import write_tree

    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        root = Path(tmp)
        write_fleet(root, clusters)
        packs = registry()
        # The stages of `fluxplane synth` (load_plan, then render_plan, then write_tree), timed apart.
        with paused_gc():
            started = time.perf_counter()
            plan = load_plan(root, packs)
            planned = time.perf_counter()
            from fluxplane.synth.app import FleetApp
            from fluxplane.synth.render import render_app

            imported = time.perf_counter()
            app = FleetApp(plan, outdir=root / "dist")
            built = time.perf_counter()
            files = render_app(app)
            rendered = time.perf_counter()
            write_tree(files, root / "dist")
            written = time.perf_counter()

        charts = [*app.clusters.values(), *app.catalogue.values()]
        per_file = [manifest.documents() for chart in charts for manifest in chart.files]
        # The floor under the same conditions as synth: collector paused too.
        with paused_gc():
            floor_started = time.perf_counter()
            for documents in per_file:
                yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False)
            floor = time.perf_counter() - floor_started

    total = written - started
    return {
        "clusters": clusters,
        "files": len(files),
        "documents": sum(len(documents) for documents in per_file),
        "load_plan_s": planned - started,
        "start_js_s": imported - planned,
        "build_s": built - imported,
        "render_s": rendered - built,
        "write_s": written - rendered,
        "total_s": total,
        "floor_s": floor,
        "ratio": total / floor,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument(
        "--workdir",
        default="/dev/shm" if os.path.isdir("/dev/shm") else None,
        help="where fleets are written",
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.one, args.workdir)))
        return 0
    print(f"workdir: {args.workdir or tempfile.gettempdir()}; cores: {len(os.sched_getaffinity(0))}")
    header = (
        f"{'clusters':>8} {'files':>6} {'docs':>7} {'load':>6} {'js':>5} {'build':>6} {'render':>7} "
        f"{'write':>6} {'total s':>8} {'floor s':>8} {'ratio':>6} {'peak MiB':>9}"
    )
    print(header)
    for size in args.sizes:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                str(size),
                "--workdir",
                args.workdir or tempfile.gettempdir(),
            ],
            check=True,
            capture_output=True,
            text=True,
            env=os.environ,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{r['clusters']:>8} {r['files']:>6} {r['documents']:>7} {r['load_plan_s']:>6.2f} {r['start_js_s']:>5.2f} "
            f"{r['build_s']:>6.2f} {r['render_s']:>7.2f} {r['write_s']:>6.2f} {r['total_s']:>8.2f} "
            f"{r['floor_s']:>8.2f} {r['ratio']:>6.2f} {r['peak_rss_mib']:>9.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
