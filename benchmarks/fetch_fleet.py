"""What each workload cluster fetches per change, at 10, 100 and 1,000 clusters: whole clones, sparse
checkouts, and per-cluster OCI artifacts.

For each size (the fleet of ``synth_fleet.py``: four environments, 30 add-on packs, a hub that builds and
bootstraps every cluster), the fleet is synthesized and committed, then one cluster's pack value changes and
the fleet is synthesized and committed again. For that change:

* **from Git**, every cluster's source-controller sees a new commit and fetches it: a depth-1 clone (measured:
  the pack file ``git clone --depth 1`` receives), and builds an artifact that kustomize-controller downloads
  and unpacks (measured: a gzip tarball of the files, as Flux archives them). Without a sparse checkout the
  artifact holds the whole repository; with fluxplane's (``sparseCheckout``), the cluster's own folder and the
  shared catalogue. source-controller fetches the whole commit either way: Flux does not ask Git for a partial
  clone, so the sparse checkout shrinks the artifact, not the download.
* **per-cluster OCI artifacts** (CI runs ``flux push artifact`` for each cluster's folders and the cluster
  reads an OCIRepository): only clusters whose content changed get a new digest; the others check the tag and
  fetch nothing. Measured: the same tarball as the sparse artifact, for the clusters whose files changed.

Run: ``.venv/bin/python benchmarks/fetch_fleet.py [--sizes 10 100 1000]``.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth_fleet import change_one_cluster, synth_with_cache, write_fleet


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def _commit(root: Path, message: str) -> None:
    _git(root, "add", "-A", "dist", "environments")
    _git(root, "commit", "-qm", message)


def _clone_bytes(root: Path, workdir: Path) -> int:
    """The bytes of the pack a depth-1 clone of HEAD receives (what source-controller fetches per commit)."""
    target = workdir / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--no-checkout", f"file://{root}", str(target)],
        check=True,
        capture_output=True,
    )
    size = sum(path.stat().st_size for path in (target / ".git" / "objects" / "pack").glob("*.pack"))
    subprocess.run(["rm", "-rf", str(target)], check=True)
    return size


def _tarball(root: Path, paths: Iterable[str]) -> int:
    """The size of a gzip tarball of ``paths`` (files below ``root``, sorted, fixed times): an artifact."""
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as compressed,
        tarfile.open(fileobj=compressed, mode="w") as archive,
    ):
        for path in sorted(paths):
            data = (root / path).read_bytes()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return len(buffer.getvalue())


def _tree(root: Path) -> list[str]:
    """Every file of the commit (what a whole checkout holds)."""
    return _git(root, "ls-tree", "-r", "--name-only", "HEAD").split()


def _sparse(root: Path, cluster: str) -> list[str]:
    sync = root / "dist" / "platform" / "clusters" / cluster / "flux-system" / "gotk-sync.yaml"
    (source,) = [doc for doc in yaml.safe_load_all(sync.read_text()) if doc and doc["kind"] == "GitRepository"]
    return list(source["spec"]["sparseCheckout"])


def _within(files: list[str], directories: list[str]) -> list[str]:
    return [path for path in files if any(path.startswith(directory + "/") for directory in directories)]


def measure(clusters: int, workdir: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        root = Path(tmp) / "fleet"
        root.mkdir()
        write_fleet(root, clusters)
        synth_with_cache(root)
        _git(root, "init", "-q")
        _commit(root, "fleet")
        before = {path: (root / path).read_bytes() for path in _tree(root)}
        change_one_cluster(root)
        synth_with_cache(root)
        _commit(root, "one cluster")
        files = _tree(root)
        changed = {path for path in files if before.get(path) != (root / path).read_bytes()}
        names = sorted(
            entry.name
            for entry in (root / "dist" / "platform" / "clusters").iterdir()
            if entry.name != "hub" and entry.is_dir()
        )
        clone = _clone_bytes(root, Path(tmp))
        whole = _tarball(root, files)
        sparse_files: list[int] = []
        sparse_bytes: list[int] = []
        oci_changed = 0
        oci_bytes = 0
        for cluster in names:
            mine = _within(files, _sparse(root, cluster))
            size = _tarball(root, mine)
            sparse_files.append(len(mine))
            sparse_bytes.append(size)
            if changed.intersection(mine):
                oci_changed += 1
                oci_bytes += size
    spokes = len(names)
    return {
        "clusters": spokes,
        "repository_files": len(files),
        "changed_files": len(changed),
        "clone_bytes": clone,
        "whole_artifact": {"files": len(files), "bytes": whole},
        "sparse_artifact": {
            "files": round(sum(sparse_files) / spokes),
            "bytes": round(sum(sparse_bytes) / spokes),
        },
        "per_change": {
            "git_whole": {"clusters": spokes, "bytes": spokes * (clone + whole)},
            "git_sparse": {"clusters": spokes, "bytes": spokes * clone + sum(sparse_bytes)},
            "oci": {"clusters": oci_changed, "bytes": oci_bytes},
        },
    }


def _mib(size: float) -> str:
    return f"{size / 1048576:,.1f} MiB" if size >= 1048576 else f"{size / 1024:,.0f} KiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--workdir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = parser.parse_args()
    results = [measure(size, args.workdir) for size in args.sizes]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(
        "| clusters | repository files | one spoke, from Git: clone + artifact (files) | one spoke, sparse: clone + "
        "artifact (files) | one change, whole fleet: Git / Git sparse / OCI |"
    )
    print("|--:|--:|--:|--:|--:|")
    for result in results:
        whole, sparse, change = result["whole_artifact"], result["sparse_artifact"], result["per_change"]
        print(
            f"| {result['clusters']:,} | {result['repository_files']:,} | {_mib(result['clone_bytes'])} + "
            f"{_mib(whole['bytes'])} ({whole['files']:,}) | {_mib(result['clone_bytes'])} + {_mib(sparse['bytes'])} "
            f"({sparse['files']:,}) | {_mib(change['git_whole']['bytes'])} / {_mib(change['git_sparse']['bytes'])} / "
            f"{_mib(change['oci']['bytes'])} ({change['oci']['clusters']} cluster) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
