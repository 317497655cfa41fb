"""The Kubernetes changes a plan lists: what a cluster installs or upgrades, and what destroys something on it; not
every object that changes (``fluxplane diff`` shows those).

* a HelmRelease or a Crossplane package (Provider, Function, Configuration) added is installed, one that changes
  is upgraded in place: what a pack's version or values do to the clusters that run it;
* a HelmRelease whose release target or chart name changes is reinstalled: helm-controller uninstalls it, deleting
  what it installed, then installs the new one (fluxplane.synth.hazards.reinstall); a HelmRelease removed is
  uninstalled, a Crossplane package removed deletes its CRDs and what they hold;
* a Namespace removed deletes everything in it; a CustomResourceDefinition removed deletes every object of its
  kind;
* a Flux Kustomization removed that prunes deletes everything it applied;
* a field the API server treats as immutable that changes (fluxplane.synth.hazards.IMMUTABLE, its Kubernetes
  kinds): the update is refused and the object has to be made anew.

Composites and AWS managed resources are not listed here: what they do in AWS is the plan's resources.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

from fluxplane.review.diff.objects import REMOVED, ClusterDiff, ObjectChange
from fluxplane.review.plan.model import CREATE, DELETE, REINSTALL, REPLACE, UPDATE, KubernetesChange
from fluxplane.synth.hazards import (
    CLOUD_GROUPS,
    HELM_RELEASE,
    field,
    immutable_change,
    immutable_fields,
    reinstall,
    release_target,
    release_text,
)

CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
NAMESPACE = ("", "Namespace")
FLUX_KUSTOMIZATION = ("kustomize.toolkit.fluxcd.io", "Kustomization")
#: Crossplane's packages: a change installs another version of the provider, function or configuration.
PACKAGES = frozenset(("pkg.crossplane.io", kind) for kind in ("Provider", "Function", "Configuration"))


def _installed_as(document: Mapping[str, Any]) -> tuple[str, str]:
    """What a HelmRelease or a package installs, and its version ("" when it says none)."""
    chart = field(document, ("spec", "chart", "spec"))
    if isinstance(chart, dict):
        return f"chart {chart.get('chart')}", str(chart.get("version") or "")
    reference = field(document, ("spec", "chartRef", "name"))
    if reference:
        return f"chart {reference}", ""
    package = str(field(document, ("spec", "package")) or "")
    name, colon, tag = package.rpartition(":")
    return (name, tag) if colon and "/" not in tag else (package, "")


def installs(document: Mapping[str, Any]) -> str:
    """What a HelmRelease or a package installs: its chart and version, its chart reference, or its package."""
    what, version = _installed_as(document)
    return f"{what} {version}" if version else what


def _upgrade(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    (old, was), (new, now) = _installed_as(before), _installed_as(after)
    if (old, was) == (new, now):
        return "its values or settings change"
    if old == new:
        return f"upgrades {new} from {was or 'its latest'} to {now or 'its latest'}"
    return f"installs {installs(after)} instead of {installs(before)}"


def _installed(ident: tuple[str, str], before: Any, after: Any) -> tuple[str, str] | None:
    if before is None:
        if ident == HELM_RELEASE:
            # The release's identity, to hold against `helm ls -A`: one running under it is taken over in place.
            target = release_text(release_target(after))
            return CREATE, f"installs {installs(after)} as release {target}, or takes over the one running there"
        return CREATE, f"installs {installs(after)}"
    if after is None:
        if ident == HELM_RELEASE:
            target = release_text(release_target(before))
            return DELETE, f"helm-controller uninstalls release {target}, deleting what it installed"
        return DELETE, f"Crossplane removes {installs(before)}, its CRDs and every object of theirs"
    if ident == HELM_RELEASE:
        reason = reinstall(before, after)
        if reason is not None:
            return REINSTALL, (
                f"{reason}: helm-controller uninstalls it, deleting what it installed, then installs the new one"
            )
    return UPDATE, _upgrade(before, after)


def _verdict(change: ObjectChange) -> tuple[str, str] | None:
    ident = (change.key[0], change.key[1])
    before, after = change.before, change.after
    if ident == HELM_RELEASE or ident in PACKAGES:
        return _installed(ident, before, after)
    if before is not None and after is None:
        if ident == NAMESPACE:
            return DELETE, "deletes everything in the namespace"
        if ident == CRD:
            kind = field(before, ("spec", "names", "kind"))
            return DELETE, f"deletes every {kind or 'object of its kind'} on the cluster"
        if ident == FLUX_KUSTOMIZATION and field(before, ("spec", "prune")) is True:
            return DELETE, "Flux prunes everything it applied"
        return None
    if before is None or after is None:
        return None
    if any(fnmatch.fnmatchcase(ident[0], group) for group in CLOUD_GROUPS):
        return None
    fields = [path for path in immutable_fields(*ident) if immutable_change(before, after, path) is not None]
    if fields:
        shown = ", ".join(".".join(path) for path in fields)
        return REPLACE, f"{shown} changed, which the API server refuses: the object has to be made anew"
    return None


def kubernetes_changes(sections: Iterable[ClusterDiff]) -> list[KubernetesChange]:
    """The Kubernetes changes among ``sections`` a plan lists (module docstring), cluster by cluster; a cluster that
    goes is one line, not one per object."""
    found = []
    for section in sections:
        if section.status == REMOVED:
            found.append(
                KubernetesChange(
                    DELETE,
                    section.cluster,
                    section.repository,
                    "",
                    "cluster",
                    "",
                    section.cluster,
                    f"the cluster goes, and the {len(section.changes)} objects {section.repository}/ gives it with it",
                )
            )
            continue
        for change in section.changes:
            verdict = _verdict(change)
            if verdict is None:
                continue
            doc = change.after if change.after is not None else change.before
            assert doc is not None
            _, kind, namespace, name = change.key
            found.append(
                KubernetesChange(
                    verdict[0],
                    section.cluster,
                    section.repository,
                    str(doc.get("apiVersion") or ""),
                    kind,
                    namespace,
                    name,
                    verdict[1],
                )
            )
    return found
