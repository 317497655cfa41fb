"""How Flux resolves what a Kustomization applies: its source, its path, its variables.

**Sources stand for repositories.** A Flux Kustomization's ``sourceRef`` names a source on its own cluster
(the namespace defaults to the Kustomization's). A GitRepository stands for the Git repository at its
``spec.url`` (on ``spec.ref.branch`` when it names one), an OCIRepository for the artifact at its
``spec.url``. fluxplane writes some repositories (``DistRepository``): the dist/ folder ``key`` holds the
content Flux finds in that repository at ``prefix`` (``dist/platform`` by default, ``deploy`` with
``repositories.platform.path: deploy``). Several dist/ folders may share one repository (platform and
workloads do, unless workloads has a repository of its own).

**Paths resolve against the repository.** A ``spec.path`` into a repository fluxplane writes lies under
one of its prefixes (the longest that matches wins) and names the folder of dist/ at the same place below
``key``. A path into such a repository that lies under none of them is outside what fluxplane writes: Flux
would not find it in the fleet. A source fluxplane does not write (a tenant's own repository) is not
followed.

**postBuild.** A Kustomization with ``postBuild`` replaces ``${VAR}`` in what it applies with its
``substitute`` values and the data of its ``substituteFrom`` ConfigMaps and Secrets (``substitute`` wins),
the way Flux's envsubst does (see ``substitute_text``).
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from fluxplane.core.layout import RepositoryLayout
from fluxplane.core.tree.objects import Document, metadata_of, spec_of

#: The Flux source kinds a Kustomization's sourceRef may name that stand for a repository fluxplane can write.
REPOSITORY_SOURCES = ("GitRepository", "OCIRepository")
#: Flux skips variable substitution for an object carrying this annotation or label with value "disabled".
SUBSTITUTE_SWITCH = "kustomize.toolkit.fluxcd.io/substitute"


@dataclass(frozen=True, order=True)
class DistRepository:
    """A repository fluxplane writes: dist/``key``/ is the content Flux finds at ``prefix`` of the repository at
    ``url`` (``branch``, when known)."""

    key: str
    url: str
    prefix: str
    branch: str | None = None

    def flux_path(self, folder: str) -> str:
        """The Flux ``spec.path`` of ``folder`` (a folder of dist/ below ``key``)."""
        rest = folder[len(self.key) :].lstrip("/")
        joined = posixpath.normpath(posixpath.join(self.prefix, rest))
        return "./" if joined == "." else f"./{joined}"


def repositories_of(layouts: Iterable[RepositoryLayout]) -> tuple[DistRepository, ...]:
    """The repositories synth writes, from their layouts (fluxplane.core.layout: the platform's and the workloads')."""
    return tuple(
        DistRepository(layout.key, layout.repository.url, normal(layout.prefix), layout.repository.branch)
        for layout in layouts
    )


def normal(path: str) -> str:
    """A Flux path as a relative, normalised path ("." for the repository's root)."""
    return posixpath.normpath(path.lstrip("/")) if path.strip("./") else "."


def origin(source: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """(url, branch) of the repository a GitRepository or OCIRepository stands for; None for other sources."""
    if source.get("kind") not in REPOSITORY_SOURCES:
        return None
    spec = spec_of(source)
    url = spec.get("url")
    if not isinstance(url, str):
        return None
    ref = spec.get("ref")
    branch = ref.get("branch") if isinstance(ref, dict) and source.get("kind") == "GitRepository" else None
    return url, branch if isinstance(branch, str) else None


@dataclass(frozen=True)
class Location:
    """Where a Flux path into a repository fluxplane writes leads: ``folder`` of dist/, in ``repository``; both
    None when the path lies outside every folder fluxplane writes in that repository (``written``)."""

    written: tuple[DistRepository, ...]
    repository: DistRepository | None = None
    folder: str | None = None


def locate(repositories: Iterable[DistRepository], url: str, branch: str | None, path: str) -> Location | None:
    """Where ``path`` of the repository at ``url`` (``branch``) is in the tree, among ``repositories`` (in their
    order); None when fluxplane does not write that repository, or when the path is a folder holding some of
    what it writes there and more (the repository's root, say), which is not followed."""
    written = tuple(
        repository
        for repository in repositories
        if repository.url == url and (branch is None or repository.branch is None or repository.branch == branch)
    )
    if not written:
        return None
    wanted = normal(path)
    best: tuple[int, DistRepository, str] | None = None
    for repository in written:
        prefix = repository.prefix
        if prefix == ".":
            rest, rank = wanted, 0
        elif wanted == prefix:
            rest, rank = ".", len(prefix)
        elif wanted.startswith(prefix + "/"):
            rest, rank = wanted[len(prefix) + 1 :], len(prefix)
        else:
            continue
        if best is None or rank > best[0]:
            best = (rank, repository, rest)
    if best is not None:
        return Location(written, best[1], posixpath.normpath(posixpath.join(best[1].key, best[2])))
    if wanted == "." or any(repository.prefix.startswith(wanted + "/") for repository in written):
        return None
    return Location(written)


def access(doc: Mapping[str, Any], namespace: str) -> str | None:
    """The remote cluster access of a Flux object: its namespace and ``spec.kubeConfig``, as one string (None
    for an object that works on its own cluster)."""
    spec = doc.get("spec")
    config = spec.get("kubeConfig") if isinstance(spec, dict) else None
    if not config or not isinstance(config, dict):
        return None
    fields = sorted((key, sorted(value.items()) if isinstance(value, dict) else value) for key, value in config.items())
    return f"{namespace}:{fields!r}"


def kube_config_name(doc: Mapping[str, Any]) -> str:
    """The Secret or ConfigMap a Flux object's ``kubeConfig`` reads the remote cluster's access from."""
    config = spec_of(doc).get("kubeConfig")
    if not isinstance(config, dict):
        return ""
    for field in ("secretRef", "configMapRef"):
        ref = config.get(field)
        if isinstance(ref, dict) and ref.get("name"):
            return str(ref["name"])
    return ""


# -- postBuild -------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\$\$|\$\{([_A-Za-z][_A-Za-z0-9]*)(?:(:?[=-])([^}]*))?\}")


def substitute_text(text: str, variables: Mapping[str, str], *, complete: bool = True) -> str:
    """Flux's postBuild substitution on a manifest's text.

    ``${VAR}`` takes the variable's value; ``${VAR:=default}`` and ``${VAR:-default}`` the default when
    the variable is unset or empty, ``${VAR=default}`` and ``${VAR-default}`` when it is unset;
    ``$$`` is an escape and becomes ``$``, so ``$${...}`` becomes ``${...}``. An unset variable without
    default becomes "", as Flux does, unless ``complete`` is false (a variable source was not found in
    the tree): then it stays as written, which says more in a review than an empty string.
    """

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, operator, default = match.groups()
        value = variables.get(name)
        if operator is not None and (value is None or (operator.startswith(":") and value == "")):
            return default
        if value is None:
            return "" if complete else match.group(0)
        return value

    return _TOKEN.sub(replace, text)


#: libyaml's safe dumper and loader where PyYAML has them: the same text and values as the pure-Python ones, several
#: times faster on the large documents (CRDs, Helm values) a cluster's substitution writes out and reads back.
_DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _has_dollar(value: Any) -> bool:
    """Whether a ``$`` is anywhere in ``value``'s strings, keys included (what substitution could replace)."""
    if isinstance(value, str):
        return "$" in value
    if isinstance(value, dict):
        return any(_has_dollar(key) or _has_dollar(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_dollar(item) for item in value)
    return False


def substitute(doc: Document, variables: Mapping[str, str], *, complete: bool = True) -> Document:
    """``doc`` with its variables replaced (itself when it has none, or switches substitution off).

    A document without a ``$`` is itself without writing it out: most of what a fleet's Kustomizations apply."""
    if not _has_dollar(doc):
        return doc
    metadata = metadata_of(doc)
    for marks in (metadata.get("annotations") or {}, metadata.get("labels") or {}):
        if isinstance(marks, dict) and marks.get(SUBSTITUTE_SWITCH) == "disabled":
            return doc
    text = yaml.dump(doc, Dumper=_DUMPER, sort_keys=False, width=1 << 30)
    if "${" not in text and "$$" not in text:
        return doc
    try:
        replaced = yaml.load(substitute_text(text, variables, complete=complete), Loader=_LOADER)
    except (yaml.YAMLError, ValueError):
        return doc
    return replaced if isinstance(replaced, dict) else doc


def values_of(source: Mapping[str, Any]) -> dict[str, str]:
    """The variables a ConfigMap or Secret defines (a Secret's ``data`` decoded)."""
    if source.get("kind") == "ConfigMap":
        return {str(key): str(value) for key, value in (source.get("data") or {}).items()}
    values: dict[str, str] = {}
    for key, value in (source.get("data") or {}).items():
        try:
            values[str(key)] = base64.b64decode(str(value)).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
    values.update({str(key): str(value) for key, value in (source.get("stringData") or {}).items()})
    return values
