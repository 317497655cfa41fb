"""Object by object: what a cluster gains, loses and sees change, and the unified diff of each change."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import yaml

from fluxplane.core.tree.objects import Key
from fluxplane.review.diff.fleet import Document, RepositoryObject

ADDED = "added"
CHANGED = "changed"
REMOVED = "removed"


class _Dumper(yaml.SafeDumper):
    """Block style, keys in the order kustomize wrote them, multi-line strings as literal blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def to_yaml(doc: Document) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1 << 30)


def label(doc: Document) -> str:
    """``apiVersion kind namespace/name`` (``apiVersion kind name`` when cluster-scoped)."""
    metadata = doc.get("metadata") or {}
    name = str(metadata.get("name") or "")
    namespace = metadata.get("namespace")
    return f"{doc.get('apiVersion', '')} {doc.get('kind', '')} {f'{namespace}/{name}' if namespace else name}"


@dataclass(frozen=True)
class ObjectChange:
    """One object of one cluster that is added, changed or removed."""

    repository: str
    cluster: str
    key: Key
    before: Document | None
    after: Document | None

    @property
    def status(self) -> str:
        if self.before is None:
            return ADDED
        return REMOVED if self.after is None else CHANGED

    @property
    def label(self) -> str:
        doc = self.after if self.after is not None else self.before
        assert doc is not None
        return label(doc)

    def diff(self, base: str, head: str) -> str:
        """Unified diff of the object's YAML ("" unless changed)."""
        if self.before is None or self.after is None:
            return ""
        lines = difflib.unified_diff(
            to_yaml(self.before).splitlines(keepends=True),
            to_yaml(self.after).splitlines(keepends=True),
            fromfile=f"{base}: {label(self.before)}",
            tofile=f"{head}: {label(self.after)}",
        )
        return "".join(lines)


def _order(key: Key) -> tuple[str, str, str, str]:
    group, kind, namespace, name = key
    return (kind, namespace, name, group)


@dataclass
class ClusterDiff:
    """The changes one repository makes to one cluster."""

    repository: str
    cluster: str
    #: "added" or "removed" when the whole cluster appears or goes, else "".
    status: str = ""
    changes: list[ObjectChange] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for change in self.changes if change.status == status)


def compare_cluster(
    cluster: str,
    before: Mapping[Key, RepositoryObject] | None,
    after: Mapping[Key, RepositoryObject] | None,
) -> list[ClusterDiff]:
    """The changes on one cluster, one ClusterDiff per repository that has any (sorted by repository)."""
    old = before or {}
    new = after or {}
    status = ADDED if before is None else REMOVED if after is None else ""
    by_repository: dict[str, ClusterDiff] = {}
    for key in sorted(set(old) | set(new), key=_order):
        was = old.get(key)
        now = new.get(key)
        if was is not None and now is not None and was.doc == now.doc:
            continue
        repository = (now or was).repository  # type: ignore[union-attr]
        section = by_repository.setdefault(repository, ClusterDiff(repository, cluster, status))
        section.changes.append(
            ObjectChange(repository, cluster, key, was.doc if was else None, now.doc if now else None)
        )
    return [by_repository[name] for name in sorted(by_repository)]


def compare_clusters(
    before: Mapping[str, Mapping[Key, RepositoryObject]],
    after: Mapping[str, Mapping[Key, RepositoryObject]],
) -> list[ClusterDiff]:
    """Every cluster's changes, sorted by repository then cluster."""
    sections = [
        section
        for cluster in sorted(set(before) | set(after))
        for section in compare_cluster(cluster, before.get(cluster), after.get(cluster))
    ]
    return sorted(sections, key=lambda section: (section.repository, section.cluster))


@dataclass(frozen=True)
class FileChange:
    """A dist/ file no cluster applies (CODEOWNERS, README.md, an unused catalogue file) that changed."""

    path: str
    before: str | None
    after: str | None

    @property
    def repository(self) -> str:
        return self.path.split("/")[0] if "/" in self.path else "."

    @property
    def status(self) -> str:
        if self.before is None:
            return ADDED
        return REMOVED if self.after is None else CHANGED

    def diff(self, base: str, head: str) -> str:
        if self.before is None or self.after is None:
            return ""
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=f"{base}: dist/{self.path}",
            tofile=f"{head}: dist/{self.path}",
        )
        return "".join(lines)


def compare_files(
    before: Mapping[str, str], after: Mapping[str, str], applied: set[str], changed: Iterable[str] | None = None
) -> list[FileChange]:
    """Changes to the files outside every cluster (``applied``: files some build read, in either tree); ``changed``,
    when known, holds every path whose text differs (the others are not compared again)."""
    changes = []
    paths = set(before) | set(after) if changed is None else set(changed)
    for path in sorted(paths - applied):
        old = before.get(path)
        new = after.get(path)
        if old != new:
            changes.append(FileChange(path, old, new))
    return changes
