"""The AWS resources of two trees, compared resource by resource.

A cluster's AWS resources are the managed resources placed on it (objects of an AWS service's API group), each
judged as one resource (fluxplane.synth.cloud), and what each composite placed on it composes: its Composition,
among those the cluster meets, rendered for the old tree's composite with the old tree's definitions and for the
new one's with the new ones, compared managed resource by managed resource (fluxplane.synth.composed, which the
replacement guard reads too). A composite is rendered again when it changes or when the definitions of its kind do
(its XRD, a Composition of its kind, any Function). A composite that cannot be rendered on either side is compared
as the composite itself, by its kind's entry in fluxplane.kinds, and a note says why.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from fluxplane.core.layout import cluster_of
from fluxplane.core.tree.objects import Key
from fluxplane.kinds import COMPOSITE_GROUP, PROVIDER_CONFIG_NAME, cloud_kind, is_managed, noun
from fluxplane.review.diff.fleet import RepositoryObject
from fluxplane.review.diff.scope import CLUSTERS, Definitions
from fluxplane.review.plan.accounts import CONFIG_GROUPS, CONFIG_KINDS, IRSA_ROLE, Accounts, is_config
from fluxplane.review.plan.model import DELETE, FORGET, ResourceChange
from fluxplane.synth.cloud import ResourceAction, aws_name, judge, provider_config, region_of
from fluxplane.synth.composed import EVERY_KIND, Texts, compare, group_kind, with_overlays
from fluxplane.synth.hazards import ABSENT, field
from fluxplane.validate.compose.composer import Composer
from fluxplane.validate.tree import Document


def _composite(body: dict[str, Any]) -> bool:
    return str(body.get("apiVersion", "")).startswith(COMPOSITE_GROUP + "/")


class _WorkloadClusters(Mapping[str, str]):
    """Each workload cluster's provider config on the hub, its ``EKSCluster``'s ``providerConfigName``: only the
    files holding an EKSCluster that names the cluster asked for are parsed."""

    def __init__(self, texts: Texts) -> None:
        self.texts = texts
        self._found: dict[str, str | None] = {}

    def _find(self, name: str) -> str | None:
        if name not in self._found:
            self._found[name] = None
            for path in self.texts.holding(("EKSCluster",)):
                if f"name: {name}" not in self.texts.files[path]:
                    continue
                for document in self.texts.documents(path):
                    body = document.body
                    if isinstance(body, dict) and _composite(body) and field(body, ("metadata", "name")) == name:
                        config = field(body, PROVIDER_CONFIG_NAME)
                        self._found[name] = str(config or ABSENT[PROVIDER_CONFIG_NAME])
        return self._found[name]

    def __getitem__(self, name: str) -> str:
        found = self._find(name)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(name for name, found in self._found.items() if found is not None)

    def __len__(self) -> int:
        return sum(1 for found in self._found.values() if found is not None)


def accounts(texts: Texts, hub: str | None = None) -> Accounts:
    """The accounts a tree's provider configs name (fluxplane.review.plan.accounts); ``hub`` is the one cluster whose
    entry folder holds no EKSCluster of its name when not given."""
    found = texts.objects(CONFIG_KINDS, is_config, [f"apiVersion: {group}/" for group in CONFIG_GROUPS])
    configs = with_overlays(texts, found, is_config)
    annotation = ("spec", "serviceAccountTemplate", "metadata", "annotations", IRSA_ROLE)
    roles = [
        str(field(document.body, annotation))
        for document in texts.objects(("DeploymentRuntimeConfig",), lambda body: True, [IRSA_ROLE])
        if cluster_of(document.file) is None and isinstance(field(document.body, annotation), str)
    ]
    clusters = _WorkloadClusters(texts)
    if hub is None:
        entries = sorted(
            {path.split("/")[2] for path in texts.files if path.startswith(CLUSTERS) and path.count("/") >= 3}
        )
        hubs = [entry for entry in entries if clusters.get(entry) is None]
        hub = hubs[0] if len(hubs) == 1 else ""
    return Accounts(configs, roles, clusters, hub)


class Reading:
    """What the comparison reads of one tree besides its walk: its definitions (as diff's scope read them) and its
    accounts, each once."""

    def __init__(self, tree: Definitions, hub: str | None) -> None:
        self.tree = tree
        self.texts = tree.texts
        self.hub = hub

    @property
    def definitions(self) -> list[Document]:
        return self.tree.definitions

    @functools.cached_property
    def accounts(self) -> Accounts:
        return accounts(self.texts, self.hub)


class Side:
    """One tree as the comparison reads it: what its walk placed on each cluster, and what ``reading`` reads of it
    (its definitions, its accounts: each only when a change needs it)."""

    def __init__(self, objects: Mapping[str, Mapping[Key, RepositoryObject]], reading: Reading) -> None:
        self.objects = objects
        self.reading = reading

    @functools.cached_property
    def composer(self) -> Composer:
        return Composer(self.reading.definitions)

    @property
    def accounts(self) -> Accounts:
        return self.reading.accounts


@dataclass(frozen=True)
class _Resource:
    """A managed resource of one side: its body, where it is declared, and the cluster that manages it."""

    cluster: str
    body: Mapping[str, Any]
    source: str
    fallback: str


def _label(key: Key) -> str:
    _, kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


class Comparison:
    """The resource changes between two sides, and the notes on what could not be compared."""

    def __init__(self, before: Side, after: Side, kinds: frozenset[str]) -> None:
        self.before = before
        self.after = after
        self.kinds = kinds
        self.changes: list[ResourceChange] = []
        self.notes: list[str] = []
        self.rendered = 0

    def run(self, changed: Mapping[str, Iterable[Key]]) -> list[ResourceChange]:
        """Compare every cluster's managed resources and composites: the keys in ``changed`` (objects that differ)
        and the composites of kinds whose definitions differ."""
        clusters = sorted(set(self.before.objects) | set(self.after.objects))
        for cluster in clusters:
            old = self.before.objects.get(cluster, {})
            new = self.after.objects.get(cluster, {})
            keys = set(changed.get(cluster, ()))
            if self.kinds:
                keys |= {key for key in (*old, *new) if EVERY_KIND in self.kinds or key[1] in self.kinds}
            for key in sorted(keys):
                was, now = old.get(key), new.get(key)
                self._object(cluster, key, was.doc if was else None, now.doc if now else None)
        return self.changes

    def _composite(self, key: Key, cluster: str) -> bool:
        return any(side.composer.definition(key[0], key[1], cluster) is not None for side in (self.before, self.after))

    def _object(self, cluster: str, key: Key, old: Any, new: Any) -> None:
        if is_managed(key[0]):
            label = _label(key)
            self._compare(
                _Resource(cluster, old, label, key[3]) if old is not None else None,
                _Resource(cluster, new, label, key[3]) if new is not None else None,
            )
        elif self._composite(key, cluster):
            self._composed(cluster, key, old, new)

    def _composed(self, cluster: str, key: Key, old: Any, new: Any) -> None:
        label = _label(key)
        rendering = compare(self.before.composer, self.after.composer, cluster, old, new)
        self.rendered += rendering.rendered
        self.notes.extend(f"{cluster}: {label} not rendered: {reason}" for reason in rendering.reasons)
        if rendering.reasons:
            self._whole(cluster, key, old, new)
            return
        for change in rendering.changes:
            source, fallback = f"{label}: {change.name}", f"{key[3]}/{change.name}"
            self._add(
                change.verdict,
                _Resource(cluster, change.old, source, fallback) if change.old is not None else None,
                _Resource(cluster, change.new, source, fallback) if change.new is not None else None,
            )

    def _compare(self, old: _Resource | None, new: _Resource | None) -> None:
        chosen = new if new is not None else old
        assert chosen is not None
        group, kind = group_kind(chosen.body)
        if not is_managed(group):
            return
        verdict = judge(group, kind, old.body if old else None, new.body if new else None)
        if verdict is not None:
            self._add(verdict, old, new)

    def _add(self, verdict: ResourceAction, old: _Resource | None, new: _Resource | None) -> None:
        # What goes is where it was; what is made or changed is where it will be.
        gone = verdict.action in (DELETE, FORGET)
        chosen = old if gone or new is None else new
        side = self.before if chosen is old else self.after
        assert chosen is not None
        body = chosen.body
        group, kind = group_kind(body)
        entry = cloud_kind(group, kind)
        if group == COMPOSITE_GROUP:
            region = str(field(body, ("spec", "region")) or "global")
            config = str(field(body, PROVIDER_CONFIG_NAME) or ABSENT[PROVIDER_CONFIG_NAME])
        else:
            region, config = region_of(body), provider_config(body)
        name = aws_name(group, kind, body) or chosen.fallback
        self.changes.append(
            ResourceChange(
                action=verdict.action,
                account=side.accounts.account(chosen.cluster, config),
                region=region,
                cluster=chosen.cluster,
                api_version=str(body.get("apiVersion") or ""),
                kind=kind,
                noun=noun(group, kind),
                name=name,
                source=chosen.source,
                fields=verdict.fields,
                reasons=verdict.reasons,
                data=bool(entry and entry.data),
            )
        )

    def _whole(self, cluster: str, key: Key, old: Any, new: Any) -> None:
        """A composite compared as itself (its Composition cannot be rendered)."""
        label = _label(key)
        verdict = judge(key[0], key[1], old, new)
        if verdict is not None:
            self._add(
                verdict,
                _Resource(cluster, old, label, key[3]) if old is not None else None,
                _Resource(cluster, new, label, key[3]) if new is not None else None,
            )
