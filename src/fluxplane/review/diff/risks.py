"""Changes a reviewer should look at twice: what deletes, widens access, cannot be applied, or stops cleanup.

Each rule reads one object's before and after (None when absent) and returns messages. The rules:
a cluster or its workload-cluster composite removed, a Namespace deleted, RBAC widened, an immutable
field changed, a Helm release reinstalled (its name or namespaces changed), Flux pruning turned off, and
a Crossplane deletion or management policy that now orphans or deletes the cloud resource.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fluxplane.kinds.eks_composed import OBSERVED
from fluxplane.review.diff.fleet import Document
from fluxplane.review.diff.objects import ClusterDiff, ObjectChange
from fluxplane.synth.guard import (
    EXTERNAL_NAME,
    HELM_RELEASE,
    IMMUTABLE,
    applier,
    field,
    immutable_change,
    immutable_fields,
)
from fluxplane.synth.hazards import DELETES, EKS_CLUSTER, management, reinstall

__all__ = ["EXTERNAL_NAME", "IMMUTABLE", "Risk", "immutable_fields", "object_risks", "risks"]

PRUNE_ANNOTATION = "kustomize.toolkit.fluxcd.io/prune"
BROAD_ROLES = frozenset({"cluster-admin", "admin"})


@dataclass(frozen=True)
class Risk:
    """A flagged change: where, what, and why it matters."""

    repository: str
    cluster: str
    subject: str
    message: str


def _ident(change: ObjectChange) -> tuple[str, str]:
    return change.key[0], change.key[1]


def immutable_changes(change: ObjectChange) -> list[str]:
    if change.before is None or change.after is None:
        return []
    messages = []
    for path in immutable_fields(*_ident(change)):
        if immutable_change(change.before, change.after, path) is not None:
            messages.append(
                f"immutable field {'.'.join(path)} changed: the update is refused or the resource is replaced"
            )
    return messages


def release_reinstalled(change: ObjectChange) -> list[str]:
    if change.before is None or change.after is None or _ident(change) != HELM_RELEASE:
        return []
    reason = reinstall(change.before, change.after)
    if reason is None:
        return []
    return [f"{reason}: helm-controller uninstalls the release, deleting what it installed, then installs the new one"]


def _permissions(rules: Any) -> set[tuple[str, str, str, str]]:
    """Each rule spread into (apiGroup, resource or URL, verb, resourceName) grants."""
    grants: set[tuple[str, str, str, str]] = set()
    for rule in rules if isinstance(rules, list) else []:
        if not isinstance(rule, dict):
            continue
        verbs = [str(verb) for verb in rule.get("verbs") or []]
        names = [str(name) for name in rule.get("resourceNames") or []] or ["*"]
        for url in rule.get("nonResourceURLs") or []:
            grants.update(("", f"url:{url}", verb, "*") for verb in verbs)
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                grants.update((str(group), str(resource), verb, name) for verb in verbs for name in names)
    return grants


def _covered(grant: tuple[str, str, str, str], held: set[tuple[str, str, str, str]]) -> bool:
    return any(all(h == "*" or h == g for g, h in zip(grant, other, strict=True)) for other in held)


def _show(grant: tuple[str, str, str, str]) -> str:
    group, resource, verb, name = grant
    where = resource.removeprefix("url:") if resource.startswith("url:") else f"{group or 'core'}/{resource}"
    return f"{verb} {where}" + ("" if name == "*" else f" ({name})")


def rbac_widening(change: ObjectChange) -> list[str]:
    group, kind = _ident(change)
    if group != "rbac.authorization.k8s.io" or change.after is None:
        return []
    messages = []
    if kind in ("Role", "ClusterRole") and change.before is not None:
        before = _permissions(change.before.get("rules"))
        gained = sorted(grant for grant in _permissions(change.after.get("rules")) if not _covered(grant, before))
        if gained:
            wildcard = any("*" in grant[:3] for grant in gained)
            shown = ", ".join(_show(grant) for grant in gained[:6]) + (", ..." if len(gained) > 6 else "")
            messages.append(f"RBAC widened{' with a wildcard' if wildcard else ''}: grants {shown}")
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        role = change.after.get("roleRef") or {}
        was = (change.before or {}).get("roleRef") or {}
        if role.get("kind") == "ClusterRole" and role.get("name") in BROAD_ROLES and role != was:
            messages.append(f"binds ClusterRole {role.get('name')!r}")
        if change.before is not None:
            old = [subject for subject in change.before.get("subjects") or []]
            new = [subject for subject in change.after.get("subjects") or [] if subject not in old]
            if new:
                names = ", ".join(f"{subject.get('kind')} {subject.get('name')}" for subject in new)
                messages.append(f"RBAC widened: binding gains subjects {names}")
    return messages


def prune_disabled(change: ObjectChange) -> list[str]:
    if change.before is None or change.after is None:
        return []
    messages = []
    group, kind = _ident(change)
    pruned = field(change.before, ("spec", "prune")) is True and field(change.after, ("spec", "prune")) is not True
    if group == "kustomize.toolkit.fluxcd.io" and kind == "Kustomization" and pruned:
        messages.append("Flux prune turned off: objects removed from its path stay on the cluster")
    before = field(change.before, ("metadata", "annotations")) or {}
    after = field(change.after, ("metadata", "annotations")) or {}
    if after.get(PRUNE_ANNOTATION) == "disabled" and before.get(PRUNE_ANNOTATION) != "disabled":
        messages.append(f"{PRUNE_ANNOTATION}: disabled added: Flux will no longer delete this object")
    return messages


def _deletes(doc: Document) -> bool:
    """Whether deleting this Crossplane object deletes its cloud resource."""
    policies = field(doc, ("spec", "managementPolicies"))
    if isinstance(policies, list) and not ("*" in policies or "Delete" in policies):
        return False
    return bool(field(doc, ("spec", "deletionPolicy")) != "Orphan")


def deletion_policy(change: ObjectChange) -> list[str]:
    if change.before is None or change.after is None:
        return []
    fields = (("spec", "deletionPolicy"), ("spec", "managementPolicies"))
    if all(field(change.before, path) == field(change.after, path) for path in fields):
        return []
    if all(field(change.before, path) is None and field(change.after, path) is None for path in fields):
        return []
    before, after = _deletes(change.before), _deletes(change.after)
    if before and not after:
        return ["Crossplane now orphans the cloud resource: deleting this object leaves it behind"]
    if after and not before:
        return ["Crossplane now deletes the cloud resource when this object is deleted"]
    return []


def removals(change: ObjectChange) -> list[str]:
    if change.after is not None or change.before is None:
        return []
    ident = _ident(change)
    if ident == ("", "Namespace"):
        return ["Namespace deleted: everything in it is deleted"]
    if ident == EKS_CLUSTER:
        if management(change.before) == OBSERVED:
            return ["workload cluster removed: its AWS resources were only read, and stay as they are"]
        return ["workload cluster removed: Crossplane deletes the EKS cluster and its network"]
    if ident in DELETES:
        return [f"{change.key[1]} removed: Crossplane deletes the cloud resource and its data"]
    return []


def moves(change: ObjectChange) -> list[str]:
    """The Kustomization that applies a hub object changes (fluxplane.synth.guard): the old one may delete it."""
    if change.before is None or change.after is None:
        return []
    old, new = applier(change.before), applier(change.after)
    if old is None or new is None or old == new:
        return []
    return [f"moves from Kustomization {old} to {new}: suspend {old} on the hub first, or Flux deletes it"]


RULES = (removals, rbac_widening, immutable_changes, release_reinstalled, prune_disabled, deletion_policy, moves)


def object_risks(change: ObjectChange) -> list[str]:
    return [message for rule in RULES for message in rule(change)]


def risks(sections: Iterable[ClusterDiff], entry_clusters: Mapping[str, bool]) -> list[Risk]:
    """Every risky change, clusters removed first; ``entry_clusters``: cluster -> still has an entry folder."""
    found = [
        Risk("platform", cluster, "cluster", f"cluster removed: dist/platform/clusters/{cluster}/ is gone")
        for cluster, kept in sorted(entry_clusters.items())
        if not kept
    ]
    for section in sections:
        for change in section.changes:
            found += [
                Risk(section.repository, section.cluster, change.label, message) for message in object_risks(change)
            ]
    return found
