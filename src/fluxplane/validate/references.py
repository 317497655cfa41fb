"""The references Flux and Crossplane resolve only at run time, checked over the whole tree.

**How objects reach a cluster** is fluxplane.core.tree's walk, the one graph and diff use: from every
``platform/clusters/<cluster>/`` entry folder, each Flux Kustomization applying the folder its
``spec.path`` resolves to in a repository fluxplane writes (wherever that repository's content lies:
where each entry folder's Flux bootstrap finds it), on its own cluster or on the one its
``kubeConfig`` reaches. A path into another repository (a tenant's ``./deploy/production``) is followed
no further. What the walk cannot follow is a finding: a ``spec.path`` into a repository fluxplane
writes that names no folder of the tree, and a ``sourceRef`` that names no source on the
Kustomization's cluster.

**What exists in a cluster.** The objects placed there, plus what they produce at run time by a
documented mechanism: a SealedSecret its Secret (``spec.template.metadata.name``), an ExternalSecret
its target Secret (``spec.target.name``), and a Crossplane composite (XR) what its Compositions
compose with function-patch-and-transform: the connection Secret (``writeConnectionSecretToRef``) and
every composed resource whose name is a literal or patched from an XR field without transforms, in
the XR's namespace. The hub's kubeconfig Secrets and keyless-access ConfigMaps of the example fleet
are such composite outputs. References Flux resolves only for credentials a person or ``flux
bootstrap`` creates (a GitRepository's ``secretRef``) are not checked.

**The rules.** Every Kustomization ``sourceRef``, HelmRelease ``chart.spec.sourceRef`` and
``chartRef``, and HelmChart ``sourceRef`` names a source in the same cluster (namespace defaulting to
the object's own); every ``dependsOn`` of a Kustomization or HelmRelease resolves likewise and no
``dependsOn`` cycle exists; every ``healthChecks`` entry is an object the Kustomization itself
applies; every ``kubeConfig`` ``secretRef``/``configMapRef`` and every ``substituteFrom`` (unless
``optional: true``) resolves to something that produces that Secret or ConfigMap; every Composition
``functionRef`` names a Function in the tree; in a Kustomization with ``postBuild``, every ``${VAR}``
(not ``$${VAR}``, and not ``${VAR:=default}``) is defined by ``substitute`` or a ``substituteFrom``
source in the tree (objects annotated ``kustomize.toolkit.fluxcd.io/substitute: disabled`` are
skipped); and no Kustomization applies a CRD or XRD together with custom resources of its kinds
(the server-side dry run of the resources fails before the definition exists); a Kustomization whose
GitRepository has a ``sparseCheckout`` has its ``spec.path`` inside one of its directories (the artifact
holds nothing else); and every ClusterSecretStore names the namespaces it serves (``spec.conditions``): tenants
may write ExternalSecrets in their namespaces, so a store serving all of them hands a tenant whatever its identity
reads (the fleet's sealing key among it).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from typing import Any

from fluxplane.validate.findings import Finding, format_path
from fluxplane.validate.runtime import (
    FLUX_SOURCE,
    PlacedDocument,
    RuntimeApplication,
    RuntimeFleet,
    SourceKeys,
    field_at,
    group_of,
)
from fluxplane.validate.tree import DistTree

FLUX_KUSTOMIZE = "kustomize.toolkit.fluxcd.io"
FLUX_HELM = "helm.toolkit.fluxcd.io"
EXTERNAL_SECRETS = "external-secrets.io"
SUBSTITUTE_ANNOTATION = "kustomize.toolkit.fluxcd.io/substitute"
#: ``${VAR}`` not preceded by another ``$``; group 2 is the default operator when there is one.
VARIABLE = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[-=][^}]*)?\}")

# -- the checks ---------------------------------------------------------------------------------------
SOURCE_GROUPS = {
    "GitRepository": FLUX_SOURCE,
    "OCIRepository": FLUX_SOURCE,
    "Bucket": FLUX_SOURCE,
    "HelmRepository": FLUX_SOURCE,
    "HelmChart": FLUX_SOURCE,
    "ExternalArtifact": FLUX_SOURCE,
}


def _ref_finding(
    placed: PlacedDocument, path: list[str | int], kind: str, namespace: str, name: Any, why: str = ""
) -> Finding:
    where = f"{namespace}/{name}" if namespace else str(name)
    return placed.document.finding(format_path(path), f"{kind} {where!r} not found in cluster {placed.cluster!r}{why}")


def _check_ref(
    fleet: RuntimeFleet,
    placed: PlacedDocument,
    path: list[str | int],
    reference: Any,
    default_kind: str,
    groups: dict[str, str],
) -> Iterator[Finding]:
    if not isinstance(reference, dict):
        return
    kind = reference.get("kind") or default_kind
    name = reference.get("name")
    namespace = reference.get("namespace") or placed.namespace
    group = groups.get(kind)
    if group is None or not isinstance(name, str):
        return
    if not fleet.has(placed.cluster, (group, kind, namespace, name)):
        yield _ref_finding(placed, [*path, "name"], kind, namespace, name)


def _check_produced(
    fleet: RuntimeFleet, placed: PlacedDocument, path: list[str | int], kind: str, name: Any, what: str
) -> Iterator[Finding]:
    if isinstance(name, str) and not fleet.has(placed.cluster, ("", kind, placed.namespace, name)):
        yield placed.document.finding(
            format_path(path),
            f"{kind} {placed.namespace + '/' + name!r} for {what} not found in cluster {placed.cluster!r}: "
            "nothing in the tree produces it (a Secret, SealedSecret, ExternalSecret or composite resource)",
        )


def _check_object(fleet: RuntimeFleet, placed: PlacedDocument) -> Iterator[Finding]:
    body, kind, group = placed.body, placed.document.kind, group_of(placed.body)
    spec: dict[str, Any] = body["spec"] if isinstance(body.get("spec"), dict) else {}
    if group == FLUX_KUSTOMIZE and kind == "Kustomization":
        # its sourceRef: the walk follows it (Walk.problems)
        own = {"Kustomization": FLUX_KUSTOMIZE}
        for index, entry in enumerate(spec.get("dependsOn") or []):
            yield from _check_ref(fleet, placed, ["spec", "dependsOn", index], entry, "Kustomization", own)
        post_build: dict[str, Any] = spec["postBuild"] if isinstance(spec.get("postBuild"), dict) else {}
        for index, source in enumerate(post_build.get("substituteFrom") or []):
            if (
                isinstance(source, dict)
                and not source.get("optional")
                and source.get("kind") in ("ConfigMap", "Secret")
            ):
                yield from _check_produced(
                    fleet,
                    placed,
                    ["spec", "postBuild", "substituteFrom", index, "name"],
                    source["kind"],
                    source.get("name"),
                    "postBuild.substituteFrom",
                )
    elif group == FLUX_HELM and kind == "HelmRelease":
        chart_ref: list[str | int] = ["spec", "chart", "spec", "sourceRef"]
        yield from _check_ref(fleet, placed, chart_ref, field_at(spec, "chart", "spec", "sourceRef"), "", SOURCE_GROUPS)
        yield from _check_ref(fleet, placed, ["spec", "chartRef"], spec.get("chartRef"), "", SOURCE_GROUPS)
        own = {"HelmRelease": FLUX_HELM}
        for index, entry in enumerate(spec.get("dependsOn") or []):
            yield from _check_ref(fleet, placed, ["spec", "dependsOn", index], entry, "HelmRelease", own)
    elif group == FLUX_SOURCE and kind == "HelmChart":
        yield from _check_ref(fleet, placed, ["spec", "sourceRef"], spec.get("sourceRef"), "", SOURCE_GROUPS)
    elif group == EXTERNAL_SECRETS and kind == "ClusterSecretStore" and not spec.get("conditions"):
        yield placed.document.finding(
            "spec.conditions",
            "the store serves every namespace, so a tenant's ExternalSecret can read whatever the store's identity "
            "reads; name the namespaces it serves (conditions: [{namespaces: [...]}])",
        )
    if group in (FLUX_KUSTOMIZE, FLUX_HELM) and isinstance(spec.get("kubeConfig"), dict):
        kube_config = spec["kubeConfig"]
        if isinstance(kube_config.get("secretRef"), dict):
            name = kube_config["secretRef"].get("name")
            yield from _check_produced(
                fleet, placed, ["spec", "kubeConfig", "secretRef", "name"], "Secret", name, "kubeConfig"
            )
        if isinstance(kube_config.get("configMapRef"), dict):
            name = kube_config["configMapRef"].get("name")
            yield from _check_produced(
                fleet, placed, ["spec", "kubeConfig", "configMapRef", "name"], "ConfigMap", name, "kubeConfig"
            )


def _check_application(fleet: RuntimeFleet, application: RuntimeApplication) -> Iterator[Finding]:
    owner = application.kustomization
    if owner is None:
        return
    spec: dict[str, Any] = owner.body["spec"] if isinstance(owner.body.get("spec"), dict) else {}
    label = f"Kustomization {owner.namespace}/{owner.document.name}"
    applied = {(p.key[0], p.key[1], p.key[2], p.key[3]) for p in application.objects}
    for index, check in enumerate(spec.get("healthChecks") or []):
        if not isinstance(check, dict):
            continue
        api = check.get("apiVersion")
        group = api.rsplit("/", 1)[0] if isinstance(api, str) and "/" in api else ""
        key = (group, str(check.get("kind")), str(check.get("namespace") or ""), str(check.get("name")))
        if key not in applied:
            where = f"{key[2]}/{key[3]}" if key[2] else key[3]
            yield owner.document.finding(
                format_path(["spec", "healthChecks", index]),
                f"{key[1]} {where!r} is not among the objects this Kustomization applies",
            )
    yield from _check_definitions(application, label)
    yield from _check_checkout(fleet, owner, spec)
    if isinstance(spec.get("postBuild"), dict):
        yield from _check_variables(fleet, application, spec["postBuild"], label)


def _check_checkout(fleet: RuntimeFleet, owner: PlacedDocument, spec: dict[str, Any]) -> Iterator[Finding]:
    """A path outside its GitRepository's sparse checkout: the artifact does not hold it, the build fails."""
    ref, path = spec.get("sourceRef"), spec.get("path")
    if not isinstance(ref, dict) or ref.get("kind") != "GitRepository" or not isinstance(path, str):
        return
    key = (FLUX_SOURCE, "GitRepository", str(ref.get("namespace") or owner.namespace), str(ref.get("name")))
    source = fleet.sources.get((owner.cluster, *key))
    directories = field_at(source.body, "spec", "sparseCheckout") if source is not None else None
    if not isinstance(directories, list) or not directories:
        return
    wanted = path.removeprefix("./").rstrip("/") + "/"
    if not any(wanted.startswith(str(directory).removeprefix("./").rstrip("/") + "/") for directory in directories):
        yield owner.document.finding(
            "spec.path",
            f"{path!r} is outside the sparse checkout of GitRepository {key[2]}/{key[3]} "
            f"({', '.join(map(str, directories))}): its artifact does not hold it",
        )


def _check_definitions(application: RuntimeApplication, label: str) -> Iterator[Finding]:
    defined: dict[tuple[str, str], str] = {}
    for placed in application.objects:
        if placed.document.kind in ("CustomResourceDefinition", "CompositeResourceDefinition"):
            group, kind = field_at(placed.body, "spec", "group"), field_at(placed.body, "spec", "names", "kind")
            if isinstance(group, str) and isinstance(kind, str):
                defined[(group, kind)] = f"{placed.document.kind} {placed.document.name!r}"
    for placed in application.objects:
        definition = defined.get((group_of(placed.body), placed.document.kind))
        if definition:
            yield placed.document.finding(
                "kind",
                f"applied by {label} together with its {definition}: the dry run fails until the definition "
                "exists; apply the definition from a Kustomization this one dependsOn",
            )


def defined_source(kind: str, body: dict[str, Any], name: str) -> tuple[str, str, set[str] | None] | None:
    """The ConfigMap or Secret an object of ``kind`` (``name`` its own name) defines or produces: that kind, its name
    and the keys it holds (None when they cannot be known: an ExternalSecret with ``dataFrom`` brings whatever its
    store holds); None for an object that defines none."""
    if kind == "ConfigMap":
        return "ConfigMap", name, {*(body.get("data") or {}), *(body.get("binaryData") or {})}
    if kind == "Secret":
        return "Secret", name, {*(body.get("data") or {}), *(body.get("stringData") or {})}
    if kind == "SealedSecret":
        produced = field_at(body, "spec", "template", "metadata", "name") or name
        return "Secret", str(produced), set(field_at(body, "spec", "encryptedData") or {})
    if kind == "ExternalSecret":
        produced = field_at(body, "spec", "target", "name") or name
        if field_at(body, "spec", "dataFrom"):
            return "Secret", str(produced), None
        entries = field_at(body, "spec", "data") or []
        return "Secret", str(produced), {str(e.get("secretKey")) for e in entries if isinstance(e, dict)}
    return None


def _source_index(fleet: RuntimeFleet) -> SourceKeys:
    """The keys each ConfigMap and Secret defines in the tree, and those a SealedSecret or ExternalSecret
    produces (None for an ExternalSecret with ``dataFrom``: it brings whatever its store holds)."""
    index: SourceKeys = {}
    for placed in fleet.placed.values():
        defined = defined_source(placed.document.kind, placed.body, str(placed.document.name))
        if defined is None:
            continue
        kind, name, keys = defined
        key = (placed.cluster, placed.namespace, kind, name)
        known = index.get(key, set())
        index[key] = None if keys is None or known is None else known | keys
    return index


def _source_keys(fleet: RuntimeFleet, cluster: str, kind: str, namespace: str, name: Any) -> set[str] | None:
    """The keys the ConfigMap or Secret ``name`` defines in the tree (empty when nothing does); None when they
    cannot be known."""
    if fleet.source_keys is None:
        fleet.source_keys = _source_index(fleet)
    return fleet.source_keys.get((cluster, namespace, kind, str(name)), set())


def _strings(value: Any, path: list[str | int]) -> Iterator[tuple[list[str | int], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, [*path, str(key)])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, [*path, index])


def _check_variables(
    fleet: RuntimeFleet, application: RuntimeApplication, post_build: dict[str, Any], label: str
) -> Iterator[Finding]:
    owner = application.kustomization
    assert owner is not None
    defined: set[str] = set(post_build.get("substitute") or {})
    for source in post_build.get("substituteFrom") or []:
        if isinstance(source, dict):
            keys = _source_keys(fleet, owner.cluster, str(source.get("kind")), owner.namespace, source.get("name"))
            if keys is None:
                return
            defined |= keys
    documents = [p.document for p in application.objects] + application.build_files
    seen: set[tuple[str, int]] = set()
    for document in documents:
        if (document.file, document.index) in seen or not isinstance(document.body, dict):
            continue
        seen.add((document.file, document.index))
        if field_at(document.body, "metadata", "annotations", SUBSTITUTE_ANNOTATION) == "disabled":
            continue
        for path, text in _strings(document.body, []):
            for match in VARIABLE.finditer(text):
                if match.group(2) is None and match.group(1) not in defined:
                    yield document.finding(
                        format_path(path),
                        f"variable ${{{match.group(1)}}} is not defined by the postBuild of {label} "
                        f"(defined: {', '.join(sorted(defined)) or 'none'})",
                    )


def _check_functions(tree: DistTree) -> Iterator[Finding]:
    functions = {
        d.name
        for d in tree.documents
        if isinstance(d.body, dict) and d.kind == "Function" and group_of(d.body) == "pkg.crossplane.io"
    }
    for document in tree.documents:
        if not isinstance(document.body, dict) or document.kind != "Composition":
            continue
        for index, step in enumerate(field_at(document.body, "spec", "pipeline") or []):
            name = field_at(step, "functionRef", "name")
            if isinstance(name, str) and name not in functions:
                yield document.finding(
                    format_path(["spec", "pipeline", index, "functionRef", "name"]),
                    f"Function {name!r} is not in the tree (functions: {', '.join(sorted(functions)) or 'none'})",
                )


def _check_cycles(fleet: RuntimeFleet) -> Iterator[tuple[str, Finding]]:
    nodes: dict[tuple[str, str, str, str], PlacedDocument] = {}
    for placed in fleet.placed.values():
        group = group_of(placed.body)
        if (group, placed.document.kind) in ((FLUX_KUSTOMIZE, "Kustomization"), (FLUX_HELM, "HelmRelease")):
            nodes[(placed.cluster, placed.document.kind, placed.namespace, placed.document.name)] = placed
    edges: dict[tuple[str, str, str, str], list[tuple[str, str, str, str]]] = {}
    for node, placed in nodes.items():
        for entry in field_at(placed.body, "spec", "dependsOn") or []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                target = (node[0], node[1], entry.get("namespace") or node[2], entry["name"])
                if target in nodes:
                    edges.setdefault(node, []).append(target)
    reported: set[tuple[tuple[str, str, str, str], ...]] = set()
    state: dict[tuple[str, str, str, str], int] = {}
    stack: list[tuple[str, str, str, str]] = []

    def visit(node: tuple[str, str, str, str]) -> Iterator[tuple[str, Finding]]:
        state[node] = 1
        stack.append(node)
        for target in edges.get(node, []):
            if state.get(target) == 1:
                cycle = stack[stack.index(target) :]
                start = cycle.index(min(cycle))
                canonical = tuple(cycle[start:] + cycle[:start])
                if canonical not in reported:
                    reported.add(canonical)
                    first = nodes[canonical[0]]
                    names = " -> ".join(f"{n[2]}/{n[3]}" for n in (*canonical, canonical[0]))
                    index = [
                        i
                        for i, e in enumerate(field_at(first.body, "spec", "dependsOn") or [])
                        if isinstance(e, dict) and e.get("name") == canonical[1 % len(canonical)][3]
                    ]
                    path = format_path(["spec", "dependsOn", index[0]]) if index else "spec.dependsOn"
                    yield first.cluster, first.document.finding(path, f"dependsOn cycle: {first.document.kind} {names}")
            elif target not in state:
                yield from visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(nodes):
        if node not in state:
            yield from visit(node)


def by_cluster(fleet: RuntimeFleet, clusters: Collection[str] | None = None) -> dict[str, set[Finding]]:
    """The findings of every rule of the module docstring but the tree's Functions, by the cluster each is found on
    (the one a Kustomization applies on, for what it applies): what that cluster's walk, and the walks of the
    clusters applying to it, read (fluxplane.validate.cache keeps them per cluster). With ``clusters``, only the
    findings on those are looked for."""
    found: dict[str, set[Finding]] = {}

    def wanted(cluster: str) -> bool:
        return clusters is None or cluster in clusters

    for cluster, finding in fleet.problems:
        if wanted(cluster):
            found.setdefault(cluster, set()).add(finding)
    for placed in fleet.placed.values():
        if wanted(placed.cluster):
            found.setdefault(placed.cluster, set()).update(_check_object(fleet, placed))
    for application in fleet.applications:
        if wanted(application.cluster):
            found.setdefault(application.cluster, set()).update(_check_application(fleet, application))
    for cluster, finding in _check_cycles(fleet):
        if wanted(cluster):
            found.setdefault(cluster, set()).add(finding)
    return found


def check_functions(tree: DistTree) -> list[Finding]:
    """The rule that reads the whole tree: every Composition's ``functionRef`` names a Function in it."""
    return sorted(set(_check_functions(tree)))


def check_references(tree: DistTree) -> list[Finding]:
    """Every reference rule of the module docstring, over the whole tree; sorted, without repeats."""
    findings: set[Finding] = set(_check_functions(tree))
    for each in by_cluster(RuntimeFleet(tree)).values():
        findings |= each
    return sorted(findings)
