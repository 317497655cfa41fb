"""The definition's sealed secrets: ``environments/secrets/<cluster>/<namespace>/<name>.yaml``.

Each file holds one SealedSecret (written by ``fluxplane seal``) for the cluster its folder names;
synth carries it into that cluster's entry point in dist/ as it is. Only ciphertext lives here: a file
that is not a SealedSecret, that holds a plaintext ``Secret``, or that carries values in clear beside its
ciphertext (a template's ``data``, a ``stringData``) is refused. Fields the controller's schema does not
have are refused too, since nothing tells what they hold; no problem line ever shows a value.

The same rules guard every object fluxplane publishes (check_plaintext): the files synth writes to dist/, those
it keeps there for another tool, and the plain manifests of the definition, each refused where it comes from.
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fluxplane.config.problems import show
from fluxplane.config.yamlfile import read_yaml
from fluxplane.errors import ConfigError
from fluxplane.system.files import Listed, entries_below, folder_entries

SECRETS_DIR = "secrets"
SEALED_API_VERSION = "bitnami.com/v1alpha1"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@dataclass(frozen=True)
class SealedFile:
    """One sealed secret of one cluster: where it sits and the SealedSecret document."""

    cluster: str
    namespace: str
    name: str
    document: dict[str, Any]

    @property
    def relative_path(self) -> str:
        """Path below the cluster's secrets folder: ``<namespace>/<name>.yaml``."""
        return f"{self.namespace}/{self.name}.yaml"


#: AES-GCM's tag: the least a sealed value carries after its RSA part.
_GCM_TAG_BYTES = 16

#: Per level of a SealedSecret: the fields bitnami.com/v1alpha1's schema gives it that hold no plaintext,
#: and those that hold a Secret's values in clear. ``spec.template.data`` is in the schema, but its values
#: are written out as they are; ``stringData`` and a top-level ``data`` are a Secret's fields, pasted in.
SEALED_LEVELS: tuple[tuple[tuple[str, ...], tuple[str, ...], frozenset[str]], ...] = (
    ((), ("apiVersion", "kind", "metadata", "spec", "status"), frozenset({"data", "stringData"})),
    (("spec",), ("data", "encryptedData", "template"), frozenset({"stringData"})),
    (("spec", "template"), ("immutable", "metadata", "type"), frozenset({"data", "stringData"})),
)
_PLAINTEXT_HELP = "holds plaintext, which must not be committed; delete it and seal the values with 'fluxplane seal'"


def is_sealed(value: Any) -> bool:
    """Base64 of ``len(rsa) (2 bytes) || rsa || AES-GCM``, the Sealed Secrets layout, at least in shape."""
    if not isinstance(value, str) or not value:
        return False
    try:
        data = base64.b64decode(value, validate=True)
    except ValueError:  # binascii.Error, or characters outside ASCII
        return False
    if len(data) < 2:
        return False
    rsa_length = int.from_bytes(data[:2], "big")
    return rsa_length > 0 and len(data) >= 2 + rsa_length + _GCM_TAG_BYTES


def value_kind(value: Any) -> str:
    """What a value is, without showing it: the value may be a secret."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "a mapping" if isinstance(value, dict) else type(value).__name__


def _field_problems(document: dict[str, Any], display: str) -> list[str]:
    """Plaintext, and fields the schema does not have, one line each in the file's order; never a value."""
    problems: list[str] = []
    spec = document.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    for path, allowed, plaintext in SEALED_LEVELS:
        level: Any = document
        for part in path:
            level = level.get(part) if isinstance(level, dict) else None
        if not isinstance(level, dict):
            continue
        prefix = "".join(f"{part}." for part in path)
        for key, value in level.items():
            if key in plaintext:
                if value is not None and value != {}:
                    problems.append(f"{display}: {prefix}{key}: {_PLAINTEXT_HELP}")
            elif key not in allowed:
                problems.append(f"{display}: {prefix}{key}: unknown field; allowed: {', '.join(allowed)}")
    # The controller's deprecated whole-Secret ciphertext, which it ignores beside encryptedData.
    if isinstance(spec, dict) and spec.get("data") is not None and not is_sealed(spec["data"]):
        problems.append(f"{display}: spec.data: not base64 ciphertext")
    if template is not None and not isinstance(template, dict):
        problems.append(
            f"{display}: spec.template: expected a mapping (metadata, type, immutable), got {value_kind(template)}"
        )
    return problems


#: The kinds whose documents check_plaintext looks into (besides lists of objects).
SECRET_KINDS = frozenset({"Secret", "SealedSecret"})


def check_plaintext(document: dict[str, Any], where: str, path: str | None = None) -> list[str]:
    """Plaintext in Git is a leaked secret: a Secret with data, or values in clear in a SealedSecret.

    One line per SealedSecret field, naming ``where``, the object, ``path`` (its file in dist/, when ``where``
    does not say it) and the field; never a value. The items of a list (``kind: List``) are checked as the
    documents they are, each named by its place in the list (``items[0]``); a list is read once, so one that
    holds itself through a YAML alias ends.
    """
    problems: list[str] = []
    within = f" in {path}" if path is not None else ""
    pending: list[tuple[dict[str, Any], str]] = [(document, where)]
    lists: set[int] = set()
    while pending:
        current, at = pending.pop()
        kind, api_version = current.get("kind"), current.get("apiVersion")
        items = current.get("items")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
            if id(current) not in lists:
                lists.add(id(current))
                pending.extend(
                    (item, f"{at}: items[{index}]")
                    for index, item in reversed(list(enumerate(items)))
                    if isinstance(item, dict)
                )
        elif kind == "SealedSecret" and isinstance(api_version, str) and api_version.startswith("bitnami.com/"):
            problems.extend(
                f"{at}: SealedSecret {_name_of(current)!r}{within}: {problem}" for problem in _sealed_problems(current)
            )
        elif kind == "Secret" and api_version == "v1" and (current.get("data") or current.get("stringData")):
            problems.append(
                f"{at}: Secret {_name_of(current)!r}{within} holds plaintext data or stringData; seal it with "
                "'fluxplane seal' (a SealedSecret) or fetch it with an ExternalSecret"
            )
    return problems


def _name_of(document: dict[str, Any]) -> str:
    metadata = document.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    return f"{metadata.get('namespace', '')}/{metadata.get('name', '')}".lstrip("/")


def _sealed_problems(document: dict[str, Any]) -> list[str]:
    """``field: problem`` for each field of a SealedSecret that holds (or may hold) values in clear: the rules of
    a sealed file of environments/secrets/ (SEALED_LEVELS), any other field refused too."""
    problems: list[str] = []
    for level_path, allowed, plaintext in SEALED_LEVELS:
        level: Any = document
        for part in level_path:
            level = level.get(part) if isinstance(level, dict) else None
        prefix = "".join(f"{part}." for part in level_path)
        if level is not None and not isinstance(level, dict):
            problems.append(f"{prefix.rstrip('.')}: expected a mapping ({', '.join(allowed)}), got {value_kind(level)}")
            continue
        for key, value in (level or {}).items():
            if key in plaintext:
                if value is not None and value != {}:
                    problems.append(
                        f"{prefix}{key}: holds plaintext, which must not be committed; seal the values with "
                        "'fluxplane seal' (spec.encryptedData)"
                    )
            elif key not in allowed:
                problems.append(
                    f"{prefix}{key}: unknown field, which may hold plaintext; allowed: {', '.join(allowed)}"
                )
    spec = document.get("spec")
    if isinstance(spec, dict):
        encrypted = spec.get("encryptedData")
        if isinstance(encrypted, dict):
            problems.extend(
                f"spec.encryptedData.{key}: not base64 ciphertext; seal the value with 'fluxplane seal'"
                for key, value in encrypted.items()
                if not is_sealed(value)
            )
        elif encrypted is not None:
            problems.append(
                f"spec.encryptedData: expected a mapping of keys to sealed values, got {value_kind(encrypted)}"
            )
        if spec.get("data") is not None and not is_sealed(spec["data"]):
            problems.append("spec.data: not base64 ciphertext; seal the values with 'fluxplane seal'")
    return problems


def secret_path(root: Path, cluster: str, namespace: str, name: str) -> Path:
    return root / "environments" / SECRETS_DIR / cluster / namespace / f"{name}.yaml"


def load_sealed_secrets(
    root: Path, clusters: set[str], listed: Listed | None = None
) -> tuple[dict[str, tuple[SealedFile, ...]], list[str]]:
    """The sealed secrets per cluster, and problem lines (unknown clusters, malformed files); ``listed`` holds the
    definition's folders check_links listed, which are not listed again."""
    base = root / "environments" / SECRETS_DIR
    found: dict[str, list[SealedFile]] = {}
    problems: list[str] = []
    if not base.is_dir():
        return {}, []
    for cluster_entry in sorted(folder_entries(os.fspath(base), listed), key=lambda entry: entry.name):
        cluster = cluster_entry.name
        display_cluster = f"environments/{SECRETS_DIR}/{cluster}"
        if not cluster_entry.is_dir():
            problems.append(f"{display_cluster}: expected a folder per cluster, found a file")
            continue
        if cluster not in clusters:
            problems.append(f"{display_cluster}: unknown cluster {cluster!r} (clusters: {', '.join(sorted(clusters))})")
            continue
        for parts, path in _files_below(cluster_entry.path, listed):
            # Editors' and the seal command's temporary files, Finder's .DS_Store: not secrets.
            if parts[-1].startswith("."):
                continue
            display = f"{display_cluster}/{'/'.join(parts)}"
            stem, suffix = os.path.splitext(parts[-1])
            if len(parts) != 2 or suffix != ".yaml":
                problems.append(f"{display}: expected <namespace>/<name>.yaml (written by 'fluxplane seal')")
                continue
            sealed = _read(path, display, cluster, parts[0], stem, problems)
            if sealed is not None:
                found.setdefault(cluster, []).append(sealed)
    return {cluster: tuple(files) for cluster, files in found.items()}, problems


def _files_below(folder: str, listed: Listed | None) -> list[tuple[tuple[str, ...], str]]:
    """Everything below ``folder`` that is not a folder (nor a link to one), as its path's parts below ``folder``
    and its path, in path order (fluxplane.system.files.entries_below, from the folders ``listed`` holds). Paths stay
    strings: a fleet has a thousand sealed secrets."""
    below = entries_below(folder, listed=listed)
    files = [(tuple(relative.split("/")), entry.path) for relative, entry in below if not entry.is_dir()]
    files.sort(key=lambda file: file[0])
    return files


def _read(path: str, display: str, cluster: str, namespace: str, name: str, problems: list[str]) -> SealedFile | None:
    try:
        document = read_yaml(path, display)
    except ConfigError as exc:
        problems.extend(exc.problems)
        return None
    if not isinstance(document, dict):
        problems.append(f"{display}: expected a SealedSecret, got {show(document)}")
        return None
    if document.get("kind") == "Secret":
        problems.append(
            f"{display}: a plaintext Secret must not be committed; seal it with 'fluxplane seal' and delete this file"
        )
        return None
    if (document.get("apiVersion"), document.get("kind")) != (SEALED_API_VERSION, "SealedSecret"):
        problems.append(
            f"{display}: expected apiVersion {SEALED_API_VERSION} and kind SealedSecret, got "
            f"{show(document.get('apiVersion'))} {show(document.get('kind'))}"
        )
        return None
    fields = _field_problems(document, display)
    problems.extend(fields)
    metadata = document.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    if not _DNS_LABEL.fullmatch(namespace) or not _DNS_SUBDOMAIN.fullmatch(name):
        problems.append(f"{display}: the folder must be a namespace and the file a Secret name (DNS-1123)")
        return None
    if (metadata.get("namespace"), metadata.get("name")) != (namespace, name):
        problems.append(
            f"{display}: metadata says {metadata.get('namespace')}/{metadata.get('name')}, the path says "
            f"{namespace}/{name}; the path must match the object"
        )
        return None
    spec = document.get("spec")
    encrypted = spec.get("encryptedData") if isinstance(spec, dict) else None
    if not isinstance(encrypted, dict) or not encrypted:
        problems.append(f"{display}: spec.encryptedData must map keys to sealed values")
        return None
    for key, value in encrypted.items():
        if not is_sealed(value):
            problems.append(f"{display}: spec.encryptedData.{key}: not base64 ciphertext")
            return None
    if fields:
        return None
    return SealedFile(cluster=cluster, namespace=namespace, name=name, document=document)
