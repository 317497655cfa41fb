"""``fluxplane schemas pull``: fill the schema cache validate reads, from upstream or from a cluster.

Every CRD found is written as ``<group>/<plural>.yaml`` (one CRD per file, grouped by API group), atomically
(a temporary file renamed into place); :func:`pull` returns the files written, and says which fluxplane pulled
them in ``pulled-by.txt`` (validate prefers the cache to the CRDs fluxplane ships only when this fluxplane
pulled it). A download that fails is bad input naming the URL; nothing is half-written.
"""

from __future__ import annotations

import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fluxplane.system.files import write_atomic
from fluxplane.validate.kustomize import find_kubectl
from fluxplane.validate.schemas import PULLED_BY, cache_dir, pulled_by
from fluxplane.validate.tree import ManifestLoader, ValidateError
from fluxplane.validate.upstream import URLS

Fetch = Callable[[str], bytes]


def fetch_url(url: str) -> bytes:
    """The body at ``url`` (http(s) or file://), or bad input naming it."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            body: bytes = response.read()
            return body
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ValidateError(f"cannot download {url}: {reason}") from exc


def split_crds(text: str, origin: str) -> list[tuple[str, dict[str, Any]]]:
    """(``group/plural.yaml``, CRD) for every CustomResourceDefinition in ``text`` (a List's items too)."""
    try:
        documents = list(yaml.load_all(text, Loader=ManifestLoader))
    except yaml.YAMLError as exc:
        raise ValidateError(f"{origin}: cannot parse YAML: {' '.join(str(exc).split())}") from exc
    out: list[tuple[str, dict[str, Any]]] = []
    for document in documents:
        items = document.get("items") if isinstance(document, dict) and document.get("kind") == "List" else [document]
        for item in items or []:
            if isinstance(item, dict) and item.get("kind") == "CustomResourceDefinition":
                spec = item.get("spec") or {}
                group, plural = spec.get("group"), (spec.get("names") or {}).get("plural")
                if isinstance(group, str) and isinstance(plural, str):
                    out.append((f"{group}/{plural}.yaml", item))
    return out


def write_crds(crds: Iterable[tuple[str, dict[str, Any]]], dest: Path) -> list[Path]:
    """Write each CRD atomically under ``dest``; the files written."""
    written: list[Path] = []
    for relative, crd in crds:
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, yaml.safe_dump(crd, sort_keys=False).encode("utf-8"))
        written.append(target)
    return written


def pull_upstream(dest: Path, urls: Iterable[str] = URLS, fetch: Fetch = fetch_url) -> list[Path]:
    """Download every URL first, then write: a failure leaves the cache as it was."""
    crds: list[tuple[str, dict[str, Any]]] = []
    for url in urls:
        body = fetch(url)
        found = split_crds(body.decode("utf-8", errors="replace"), url)
        if not found:
            raise ValidateError(f"{url}: no CustomResourceDefinition in it")
        crds.extend(found)
    return write_crds(crds, dest)


def pull_cluster(dest: Path, context: str | None = None) -> list[Path]:
    """The CRDs a cluster serves, through ``kubectl get crd -o yaml``."""
    command = [find_kubectl(), "get", "crd", "-o", "yaml"]
    if context:
        command[1:1] = ["--context", context]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        error = " ".join(result.stderr.split()) or f"exit status {result.returncode}"
        raise ValidateError(f"kubectl get crd failed: {error}")
    return write_crds(split_crds(result.stdout, "kubectl get crd"), dest)


@dataclass(frozen=True)
class Pulled:
    """Where a pull wrote, and the CRD files it wrote there."""

    dest: Path
    written: list[Path]


def pull(
    dest: Path | None = None, *, from_cluster: bool = False, context: str | None = None, fetch: Fetch = fetch_url
) -> Pulled:
    """Fill ``dest`` (default: the schema cache) from the pinned upstream URLs (read with ``fetch``), or with
    ``from_cluster`` from the kubectl ``context`` (default: the current one)."""
    folder = dest or cache_dir()
    written = pull_cluster(folder, context) if from_cluster else pull_upstream(folder, fetch=fetch)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / PULLED_BY, pulled_by().encode("utf-8"))
    return Pulled(folder, written)
