"""Synthesize generated fleets of 10, 100 and 1,000 clusters and compare with the YAML floor and naive cdk8s.

For each size, in a fresh process (so peak RSS belongs to that size alone):

* write a fleet definition (environments/) with that many workload clusters over four
  environments, each with its sealed Git credentials; 30 add-on packs, 10 of them with per-cluster
  values (cluster overlays), 4 of those adding an object (overlay resources); a hub that builds and
  bootstraps every cluster with the built-in packs (a chain per cluster);
* run the whole synth without the cache: load and validate, import and build the construct tree, check and render,
  write dist/; peak RSS is the synth process's own (``ru_maxrss``), read right after it;
* in the same process, dump the very same documents with PyYAML's CSafeDumper, file by file
  (``yaml.dump_all``): the floor no YAML generator can beat;
* naive cdk8s: one ``cdk8s.ApiObject`` per object, every field but apiVersion, kind and metadata
  set with a ``JsonPatch``, then ``App.synth()``, measured on a sample of the same documents (at most
  ``--naive-sample``) and extrapolated per document to the whole fleet;
* incremental: synth once with the cache (cold: it stores every cluster) and once more unchanged,
  change one cluster's pack value in its environment file, and synth again with the cache in a new
  process, fluxplane's bytecode compiled as an install has it (interpreter start, imports, load, render,
  guard, write dist/): the time of a one-cluster change.

The fleet and dist/ live in ``--workdir`` (default /dev/shm when it exists): the benchmark measures
fluxplane, not the disk. On a throttled virtual disk, creating 20,000 files alone can take 5 s or
more; pass ``--workdir /tmp`` to include that.

Run: ``make bench`` or ``.venv/bin/python benchmarks/synth_fleet.py [--sizes 10 100 1000]``.
"""

from __future__ import annotations

import argparse
import base64
import compileall
import gc
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

import fluxplane
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


#: The built-in packs with which the hub builds the clusters, and their values.
HUB_PACKS: dict[str, Any] = {
    "crossplane": {},
    "crossplane-providers": {"roleArn": "arn:aws:iam::111122223333:role/crossplane-providers"},
    "crossplane-provider-configs": {},
    "eks-compositions": {},
    "workload-clusters": {},
}
#: Shaped like a sealed value: a 2-byte RSA length (256), that many bytes, then AES-GCM output.
CIPHERTEXT = base64.b64encode(b"\x01\x00" + bytes(256) + bytes(24)).decode()


def registry() -> PackRegistry:
    built_in = [pack for pack in PackRegistry.from_entry_points() if pack.name in HUB_PACKS]
    return PackRegistry([*built_in, *(_pack(index) for index in range(PACKS))])


def _sealed_credentials(root: Path, cluster: str) -> None:
    folder = root / "environments" / "secrets" / cluster / "flux-system"
    folder.mkdir(parents=True)
    document = {
        "apiVersion": "bitnami.com/v1alpha1",
        "kind": "SealedSecret",
        "metadata": {"name": "flux-system", "namespace": "flux-system"},
        "spec": {
            "encryptedData": {"identity": CIPHERTEXT, "known_hosts": CIPHERTEXT},
            "template": {"metadata": {"name": "flux-system", "namespace": "flux-system"}, "type": "Opaque"},
        },
    }
    (folder / "flux-system.yaml").write_text(yaml.safe_dump(document, sort_keys=False))


def write_fleet(root: Path, clusters: int) -> None:
    env_dir = root / "environments"
    env_dir.mkdir(parents=True)
    base = {
        "repositories": {"platform": {"url": "ssh://git@example.com/org/fleet.git"}},
        "management": {"name": "hub", "region": "us-west-2", "packs": HUB_PACKS},
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
        _sealed_credentials(root, f"{env}-{number:04d}")
    for env, entries in per_env.items():
        data = {"packs": {"addon-29": {"replicas": 3}}, "clusters": entries}
        (env_dir / f"{env}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def naive_cdk8s(per_file: list[list[dict[str, Any]]], limit: int, outdir: Path) -> tuple[int, float]:
    """Seconds to synthesize up to ``limit`` of the documents the naive way: (documents, seconds)."""
    import cdk8s

    started = time.perf_counter()
    app = cdk8s.App(outdir=str(outdir))
    count = 0
    for index, documents in enumerate(per_file):
        if count >= limit:
            break
        chart = cdk8s.Chart(app, f"file-{index}")
        for number, document in enumerate(documents):
            api_object = cdk8s.ApiObject(
                chart,
                f"object-{number}",
                api_version=document["apiVersion"],
                kind=document["kind"],
                metadata=document.get("metadata"),
            )
            for key, value in document.items():
                if key not in ("apiVersion", "kind", "metadata"):
                    api_object.add_json_patch(cdk8s.JsonPatch.add(f"/{key}", value))
            count += 1
    app.synth()
    return count, time.perf_counter() - started


def change_one_cluster(root: Path, replicas: int = 99) -> None:
    """The first cluster of the first environment gets another replica count (``replicas``)."""
    path = root / "environments" / f"{ENVIRONMENTS[0]}.yaml"
    data = yaml.safe_load(path.read_text())
    data["clusters"][0]["packs"]["addon-00"]["replicas"] = replicas
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def synth_with_cache(root: Path) -> None:
    """What `fluxplane synth` does, with the benchmark's packs: load, render with the cache, guard the
    change against the dist/ it replaces, write dist/."""
    from fluxplane.synth import Pipeline, paused_gc

    # the fleet has no cdk8s charts of its own (charts/): `fluxplane synth` starts no JavaScript runtime for it
    with paused_gc():
        pipeline = Pipeline(root, registry=registry(), cache=True)
        pipeline.expect_write()
        pipeline.write(pipeline.render(deferred=True))
    # as the `fluxplane` program does (fluxplane.cli.entry): the process ends next, spare the collector's final pass
    gc.freeze()


def full_synth(root: Path, packs: PackRegistry) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """The stages of `fluxplane synth --no-cache` (the pipeline's load, build and render, write), timed apart, then
    the floor: the same documents dumped by CSafeDumper, file by file. Returns the figures and those documents."""
    from fluxplane.synth import Pipeline, paused_gc

    pipeline = Pipeline(root, registry=packs)
    with paused_gc():
        started = time.perf_counter()
        pipeline.expect_write()
        plan = pipeline.load()
        planned = time.perf_counter()
        from fluxplane.synth.render import render_app
        from fluxplane.synth.tree import FleetTree

        imported = time.perf_counter()
        app = FleetTree(plan)
        built = time.perf_counter()
        files = render_app(app)
        rendered = time.perf_counter()
        pipeline.write(pipeline.complete(plan, files))
        written = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    # every file synth dumped: the clusters' and the catalogue's, the hub's chains, tenants and identities
    charts = [
        *app.clusters.values(),
        *app.catalogue.values(),
        *app.tenants.values(),
        *(chart for chart in (app.spokes, app.cloud, app.addon_identities) if chart is not None),
    ]
    per_file = [manifest.documents() for chart in charts for manifest in chart.files]
    # The floor under the same conditions as synth: collector paused too.
    with paused_gc():
        floor_started = time.perf_counter()
        for documents in per_file:
            yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False)
        floor = time.perf_counter() - floor_started
    total = written - started
    figures = {
        "load_plan_s": planned - started,
        "import_s": imported - planned,
        "build_s": built - imported,
        "render_s": rendered - built,
        "write_s": written - rendered,
        "total_s": total,
        "floor_s": floor,
        "ratio": total / floor,
        "peak_rss_mib": peak,
    }
    return figures, per_file


def measure(clusters: int, workdir: str | None, naive_sample: int) -> dict[str, Any]:
    from fluxplane.synth import Pipeline, paused_gc

    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        root = Path(tmp)
        write_fleet(root, clusters)
        packs = registry()
        figures, per_file = full_synth(root, packs)

        # Incremental: fill the cache, change one cluster, synth again (what `fluxplane synth` does).
        cold_started = time.perf_counter()
        with paused_gc():
            cached = Pipeline(root, registry=packs, cache=True)
            cached.expect_write()
            cached.write(cached.render(deferred=True))
        cold = time.perf_counter() - cold_started
        # Once more, unchanged: from now on dist/ and the spare beside it were both written by synth, as
        # in an edit-synth loop (the first synths after a clone write every file).
        with paused_gc():
            cached = Pipeline(root, registry=packs, cache=True)
            cached.expect_write()
            cached.write(cached.render(deferred=True))
        change_one_cluster(root)
        # Bytecode as an installed fluxplane has it (pip compiles on install; an interpreter run with
        # PYTHONDONTWRITEBYTECODE, as some CI machines are, would compile every module on every start).
        compileall.compile_dir(Path(fluxplane.__file__).parent, quiet=1)
        # A fresh process, as `fluxplane synth` would be: interpreter, imports, load, render, guard, write.
        incremental_started = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--incremental", str(root)], check=True)
        incremental = time.perf_counter() - incremental_started
        # Last: the naive app's JavaScript heap would slow the measurements after it.
        naive_documents, naive_seconds = naive_cdk8s(per_file, naive_sample, root / "naive")

        changed = {p.relative_to(root / "dist").as_posix() for p in (root / "dist").rglob("*") if p.is_file()}

    documents = sum(len(documents) for documents in per_file)
    naive = naive_seconds / naive_documents * documents
    return {
        "clusters": clusters,
        "files": len(changed),
        "documents": documents,
        **figures,
        "naive_documents": naive_documents,
        "naive_s": naive,
        "speedup": naive / figures["total_s"],
        "cold_cache_s": cold,
        "incremental_s": incremental,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument(
        "--workdir",
        default="/dev/shm" if os.path.isdir("/dev/shm") else None,
        help="where fleets are written",
    )
    parser.add_argument(
        "--naive-sample", type=int, default=2000, help="documents the naive cdk8s baseline synthesizes (default 2000)"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--incremental", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.incremental is not None:
        synth_with_cache(args.incremental)
        return 0
    if args.one is not None:
        print(json.dumps(measure(args.one, args.workdir, args.naive_sample)))
        return 0
    print(f"workdir: {args.workdir or tempfile.gettempdir()}; cores: {len(os.sched_getaffinity(0))}")
    header = (
        f"{'clusters':>8} {'files':>6} {'docs':>7} {'load':>5} {'imp':>5} {'build':>6} {'render':>7} "
        f"{'write':>6} {'total s':>8} {'floor s':>8} {'x floor':>7} {'naive s':>8} {'speedup':>8} "
        f"{'peak MiB':>9} {'cold s':>7} {'1-change s':>10}"
    )
    print(header)
    naive_note = ""
    for size in args.sizes:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                str(size),
                "--workdir",
                args.workdir or tempfile.gettempdir(),
                "--naive-sample",
                str(args.naive_sample),
            ],
            check=True,
            capture_output=True,
            text=True,
            env=os.environ,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{r['clusters']:>8} {r['files']:>6} {r['documents']:>7} {r['load_plan_s']:>5.2f} {r['import_s']:>5.2f} "
            f"{r['build_s']:>6.2f} {r['render_s']:>7.2f} {r['write_s']:>6.2f} {r['total_s']:>8.2f} "
            f"{r['floor_s']:>8.2f} {r['ratio']:>7.2f} {r['naive_s']:>8.1f} {r['speedup']:>7.1f}x "
            f"{r['peak_rss_mib']:>9.0f} {r['cold_cache_s']:>7.2f} {r['incremental_s']:>10.2f}"
        )
        naive_note = f"naive s: measured on {r['naive_documents']} documents, extrapolated per document"
    print(
        "total: full synth without the cache; x floor: total / CSafeDumper dump_all of the same documents; "
        f"{naive_note}; speedup: naive / total; peak: RSS of the synth process after the full synth; "
        "cold: synth filling an empty cache; 1-change: a new process's synth with the cache after one cluster's value "
        "changed, dist/ and its spare written by earlier synths (interpreter start to dist/ written)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
