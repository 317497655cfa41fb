"""The compose checks over a whole tree: XRs against their XRDs, Compositions rendered, what they compose checked.

One module because the four steps below are one pass of ``_Checker``: each step reads what the steps before it
cached (XRDs, validators, schemas, the patches a render applied), and a problem is attributed to a patch only
with all of them at hand; rendering, XRs and Compositions are the modules beside it.

1. **XRs.** Every document whose kind an XRD of the tree defines is defaulted and checked strictly
   against the schema Crossplane generates for that XRD version (see :mod:`.xr`), as the API server
   would; an XR it would refuse is not rendered.
2. **Render.** The XR's Compositions are selected as Crossplane selects them and rendered offline (see
   :mod:`.engine`); a Composition with a function other than function-patch-and-transform and
   function-auto-ready is *not rendered* (counted, and listed by :meth:`ComposeReport.warning_lines`).
   A fatal result of the function is a finding. What a Composition gets wrong whatever the XRs
   (paths against schemas, input fields the function ignores) is found once (see :mod:`.composition`).
3. **Composed resources** are checked strictly against their CRD (``CrdCorpus``), core kinds against
   Kubernetes' schemas when ``core`` is given, XR kinds against their XRD, and by ``extra`` when given.
   A problem is reported on the Composition at the patch that wrote the field (or the base field that
   holds it), naming the resource, the patch and the XRs it was rendered for: the same problem for
   several XRs is one finding. A namespaced XR composing a cluster-scoped kind is a finding (Crossplane
   refuses to apply it).
4. **Selectors** of composed resources must select something that will exist (see :mod:`.selectors`).

Not evaluated: CEL rules (``x-kubernetes-validations``, unless ``extra`` runs them), ``format``, nested
XRs (a composed XR is checked against its XRD but not rendered), CompositionRevisions,
EnvironmentConfigs (the environment starts empty).
"""

from __future__ import annotations

import gc
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fluxplane.core.layout import cluster_of
from fluxplane.validate.compose.composition import CompositionModel, read_composition, split_api
from fluxplane.validate.compose.engine import DesiredResource, Render, render
from fluxplane.validate.compose.fastcheck import Check, compile_schema
from fluxplane.validate.compose.fieldpath import Unknown
from fluxplane.validate.compose.overlays import overlay_definitions
from fluxplane.validate.compose.ptinput import CompositionPatch, Location
from fluxplane.validate.compose.selectors import RenderedResource, selector_problems
from fluxplane.validate.compose.xr import (
    XRD,
    XRD_GROUP,
    crd_schema,
    defaulted,
    observed_xr,
    read_xrd,
    select_compositions,
)
from fluxplane.validate.findings import Finding, format_path
from fluxplane.validate.schemas import CoreSchemas, CrdCorpus, Validator, document_schema, run_validator
from fluxplane.validate.tree import Document

#: A value only the cluster knows, as validation sees it: a Flux-style placeholder passes scalar checks.
OBSERVED = "${observed}"
_SHOWN_XRS = 3
#: Kubernetes' own cluster-scoped kinds (everything else a core group serves is namespaced).
CLUSTER_SCOPED_CORE = frozenset(
    {
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("storage.k8s.io", "CSINode"),
        ("storage.k8s.io", "VolumeAttachment"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("node.k8s.io", "RuntimeClass"),
        ("networking.k8s.io", "IngressClass"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiregistration.k8s.io", "APIService"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    }
)


@dataclass(frozen=True)
class NotRendered:
    """A Composition not rendered for an XR, and why (a function this check cannot run)."""

    composition: str
    xr: str
    reason: str


@dataclass
class ComposeReport:
    """What :func:`render_compositions` found, and how much it covered."""

    findings: list[Finding] = field(default_factory=list)
    #: XR documents checked against their XRD
    xrs_checked: int = 0
    #: (XR, Composition) pairs rendered
    compositions_rendered: int = 0
    #: composed resources checked against a schema
    composed_resources_checked: int = 0
    #: (XR, Composition) pairs not rendered, with the reasons in ``skipped``
    not_rendered: int = 0
    skipped: list[NotRendered] = field(default_factory=list)
    #: (apiVersion, kind) of composed resources no schema covers -> how many
    unchecked: dict[tuple[str, str], int] = field(default_factory=dict)
    #: renders that did not settle within their pass limit
    unsettled: list[str] = field(default_factory=list)

    def warning_lines(self) -> list[str]:
        """One line per Composition not rendered, kind without a schema, and render that did not settle."""
        lines = [f"Composition {item.composition!r} not rendered for {item.xr}: {item.reason}" for item in self.skipped]
        for (api, kind), count in sorted(self.unchecked.items()):
            noun = "resource" if count == 1 else "resources"
            lines.append(f"no schema for composed {api} {kind} ({count} {noun}): not checked")
        lines.extend(f"render of {item} did not settle" for item in self.unsettled)
        return lines


def _for_validation(value: Any) -> Any:
    """``value`` as validation sees it: unknown values read ``${observed}``, null fields pruned."""
    if isinstance(value, Unknown):
        return OBSERVED
    if isinstance(value, dict):
        return {key: _for_validation(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_for_validation(item) for item in value]
    return value


_PATH_TOKEN = re.compile(r'\.?([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]')


def unformat_path(text: str) -> list[str | int]:
    """The parts of a path :func:`~fluxplane.validate.findings.format_path` printed."""
    if text == "(root)":
        return []
    parts: list[str | int] = []
    position = 0
    while position < len(text):
        found = _PATH_TOKEN.match(text, position)
        if found is None:
            return [text]
        if found.group(1) is not None:
            parts.append(found.group(1))
        elif found.group(2) is not None:
            parts.append(int(found.group(2)))
        else:
            parts.append(found.group(3).replace('\\"', '"'))
        position = found.end()
    return parts


Extra = Callable[[Document], list[Finding]]


class _Checker:
    def __init__(
        self,
        documents: list[Document],
        corpus: CrdCorpus | None,
        core: CoreSchemas | None,
        extra: Extra | None = None,
    ) -> None:
        self.documents = [document for document in documents if isinstance(document.body, dict)]
        self.corpus = corpus
        self.core = core
        self.extra = extra
        self.report = ComposeReport()
        self.findings: set[Finding] = set()
        #: (file, doc, kind, name, path, prefix, suffix) -> XRs the problem was rendered for
        self.rendered: dict[tuple[str, int, str, str, str, str, str], set[str]] = defaultdict(set)
        #: static toFieldPath findings of composed-side patches, reported unless a render wrote the patch
        self.static: dict[tuple[Location, Location], list[Finding]] = {}
        self.applied: set[tuple[Location, Location]] = set()
        self.placed: list[RenderedResource] = []
        #: Namespaces where a composite's render failed: selectors across composites there are not judged.
        self.incomplete: set[str] = set()
        self.xrds: dict[tuple[str, str], XRD] = {}
        #: The XRDs a cluster's own overlay defines (fluxplane.validate.compose.overlays), by (cluster, group, kind).
        self.cluster_xrds: dict[tuple[str | None, str, str], XRD] = {}
        self.compositions: list[Document] = []
        self.functions: dict[str, str] = {}
        self.crd_scopes: dict[tuple[str, str], str] = {}
        self.models: dict[tuple[str, int], CompositionModel] = {}
        self.validators: dict[tuple[str, str, str], Any] = {}
        self.scopes: dict[tuple[str, str], str | None] = {}
        self.schemas: dict[tuple[str, str, str], Any] = {}
        self.fast: dict[tuple[str, str, str], Check | None] = {}
        for document in self.documents:
            group = split_api(document.body.get("apiVersion"))[0]
            if document.kind == "CompositeResourceDefinition" and group == XRD_GROUP:
                xrd = read_xrd(document, corpus)
                owner = cluster_of(document.file)
                if owner is None:
                    self.xrds.setdefault((xrd.group, xrd.kind), xrd)
                self.cluster_xrds.setdefault((owner, xrd.group, xrd.kind), xrd)
            elif document.kind == "Composition" and group == XRD_GROUP:
                self.compositions.append(document)
            elif document.kind == "CustomResourceDefinition" and group == "apiextensions.k8s.io":
                spec = document.body.get("spec") or {}
                names = spec.get("names") or {}
                if isinstance(spec.get("scope"), str):
                    self.crd_scopes[(str(spec.get("group")), str(names.get("kind")))] = spec["scope"]
            elif document.kind == "Function" and group == "pkg.crossplane.io":
                package = (document.body.get("spec") or {}).get("package")
                self.functions[document.name] = package if isinstance(package, str) else document.name

    # -- schemas -----------------------------------------------------------------------------------
    def raw_schema(self, group: str, version: str, kind: str) -> Any:
        """The raw schema of a composed kind: its CRD in the corpus, or its XRD in the tree."""
        key = (group, version, kind)
        if key not in self.schemas:
            xrd = self.xrds.get((group, kind))
            if xrd is not None and version in xrd.versions:
                self.schemas[key] = xrd.schema(version)
            elif self.corpus is not None:
                self.schemas[key] = crd_schema(self.corpus, group, version, kind)
            else:
                self.schemas[key] = None
        return self.schemas[key]

    def scope(self, group: str, kind: str) -> str | None:
        """``Namespaced`` or ``Cluster`` for a kind whose scope is known here, else None."""
        key = (group, kind)
        if key in self.scopes:
            return self.scopes[key]
        found: str | None = None
        xrd = self.xrds.get(key)
        if xrd is not None:
            found = "Namespaced" if xrd.scope == "Namespaced" else "Cluster"
        elif self.corpus is not None and self.corpus.covers(group):
            found = self.corpus.scope(group, kind)
        elif key in self.crd_scopes:
            found = self.crd_scopes[key]
        elif "." not in group or group.endswith(".k8s.io"):
            found = "Cluster" if key in CLUSTER_SCOPED_CORE else "Namespaced"
        self.scopes[key] = found
        return found

    def fast_check(self, group: str, version: str, kind: str) -> Check | None:
        """The yes/no pre-check of a served kind's strict schema, when it compiles."""
        key = (group, version, kind)
        if key not in self.fast:
            xrd = self.xrds.get((group, kind))
            schema: Any = None
            if xrd is not None and version in xrd.versions and xrd.versions[version].get("served"):
                schema = xrd.schema(version)
            elif xrd is None and self.corpus is not None and self.corpus.covers(group):
                schema = self.corpus.schema(group, version, kind)
            self.fast[key] = compile_schema(document_schema(group, version, kind, schema)) if schema else None
        return self.fast[key]

    def strict(
        self, validate: Callable[[Document], list[Finding]], document: Document, key: tuple[str, str, str]
    ) -> list[Finding]:
        """``validate(document)``, skipped when the pre-check finds the document valid."""
        check = self.fast_check(*key)
        body = document.body
        meta = body.get("metadata") if isinstance(body, dict) else None
        if (
            check is not None
            and isinstance(meta, dict)
            and (meta.get("name") or meta.get("generateName"))
            and check(body)
        ):
            return []
        return validate(document)

    def xr_validator(self, xrd: XRD, version: str) -> Any:
        key = (xrd.group, version, xrd.kind)
        if key not in self.validators:
            self.validators[key] = Validator(document_schema(xrd.group, version, xrd.kind, xrd.schema(version)))
        return self.validators[key]

    # -- findings ----------------------------------------------------------------------------------
    def add(self, finding: Finding) -> None:
        self.findings.add(finding)

    def rendered_problem(self, model: CompositionModel, location: Location, prefix: str, suffix: str, xr: str) -> None:
        document = model.document
        key = (document.file, document.index, document.kind, document.name, format_path(list(location)), prefix, suffix)
        self.rendered[key].add(xr)

    # -- Compositions ------------------------------------------------------------------------------
    def model(self, document: Document) -> CompositionModel:
        key = (document.file, document.index)
        if key not in self.models:
            model, problems = read_composition(document, self.functions, self.xrds, self.raw_schema)
            self.findings.update(problems.findings)
            for slot, findings in problems.unless_rendered.items():
                self.static.setdefault(slot, []).extend(findings)
            self.models[key] = model
        return self.models[key]

    # -- XRs -----------------------------------------------------------------------------------------
    def run(self) -> ComposeReport:
        for document in self.compositions:
            self.model(document)
        for document in self.documents:
            group, version = split_api(document.body.get("apiVersion"))
            xrd = self.cluster_xrds.get((cluster_of(document.file), group, document.kind)) or self.xrds.get(
                (group, document.kind)
            )
            if xrd is None and self.cluster_xrds:
                xrd = next((x for (_, g, k), x in self.cluster_xrds.items() if (g, k) == (group, document.kind)), None)
            if xrd is not None:
                self._xr(document, xrd, version)
        self._selectors()
        return self._finish()

    def _xr(self, document: Document, xrd: XRD, version: str) -> None:
        self.report.xrs_checked += 1
        entry = xrd.versions.get(version)
        if entry is None or not entry.get("served"):
            served = ", ".join(sorted(name for name, item in xrd.versions.items() if item.get("served")))
            self.add(
                document.finding(
                    "apiVersion",
                    f"{xrd.group}/{version} {xrd.kind} is not served by its XRD {xrd.document.name!r} "
                    f"(served versions: {served or 'none'})",
                )
            )
            return
        schema = xrd.schema(version)
        body = defaulted(document.body, schema)
        validator = self.xr_validator(xrd, version)
        problems = self.strict(
            lambda item: run_validator(validator, item),
            Document(document.file, document.index, body),
            (xrd.group, version, xrd.kind),
        )
        if problems:
            self.findings.update(problems)
            return
        selection = select_compositions(xrd, body, same_cluster(cluster_of(document.file), self.compositions))
        if selection.problem is not None:
            self.add(document.finding(*selection.problem))
            return
        meta = body.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        xr = f"{xrd.kind} {namespace}/{document.name}" if namespace else f"{xrd.kind} {document.name}"
        for composition in selection.compositions:
            model = self.model(composition)
            if model.reason is not None:
                self.report.not_rendered += 1
                self.report.skipped.append(NotRendered(composition.name, xr, model.reason))
                continue
            if model.fatal or model.pipeline is None:
                self.incomplete.add(namespace)
                continue
            observed = observed_xr(body, xrd, composition.name, schema)
            result = render(model.pipeline, observed)
            self.report.compositions_rendered += 1
            self._check_render(model, result, xr, namespace, xrd)

    # -- a render's output -----------------------------------------------------------------------------
    def _check_render(self, model: CompositionModel, result: Render, xr: str, namespace: str, xrd: XRD) -> None:
        if result.failure is not None:
            self.rendered_problem(model, result.failure.location, "", result.failure.message, xr)
            self.incomplete.add(namespace)
            return
        if not result.converged:
            self.report.unsettled.append(f"Composition {model.document.name!r} for {xr}")
        render_id = len(self.placed) + 1
        for composed in result.composed.values():
            template = composed.template
            if template is not None:
                for patch, _ in composed.applied:
                    self.applied.add((patch.location, template.location))
            body = composed.body
            api = body.get("apiVersion")
            kind = str(body.get("kind", ""))
            group, version = split_api(api)
            where = self._template_location(model, composed)
            described = f"{api} {kind}"
            if namespace and xrd.scope == "Namespaced" and self.scope(group, kind) == "Cluster":
                self.rendered_problem(
                    model,
                    where,
                    f'resource "{composed.name}" ({described})',
                    "cannot apply a cluster scoped composed resource for a namespaced composite resource",
                    xr,
                )
            checked, problems = self._validate(model, body, group, version, kind)
            if checked:
                self.report.composed_resources_checked += 1
            else:
                self.report.unchecked[(str(api), kind)] = self.report.unchecked.get((str(api), kind), 0) + 1
            for parts, message in problems:
                location, writer = self._attribute(model, composed, parts)
                shown = f" {writer.where}" if writer is not None else ""
                self.rendered_problem(
                    model,
                    location,
                    f'resource "{composed.name}"{shown} ({described})',
                    f"{format_path(parts)}: {message}",
                    xr,
                )
            meta = body.get("metadata") or {}
            self.placed.append(
                RenderedResource(render_id, xr, model, composed, group, version, kind, str(meta.get("namespace") or ""))
            )

    def _template_location(self, model: CompositionModel, composed: DesiredResource) -> Location:
        if composed.template is not None:
            return composed.template.location
        assert model.pipeline is not None
        step = next(step for step in model.pipeline.steps if step is not None)
        return (*step.location, "writeConnectionSecretToRef")

    def _validate(
        self, model: CompositionModel, body: dict[str, Any], group: str, version: str, kind: str
    ) -> tuple[bool, list[tuple[list[str | int], str]]]:
        """Whether a schema checked the composed resource, and (field path, message) of every problem."""
        document = Document(model.document.file, model.document.index, _for_validation(body))
        xrd = self.xrds.get((group, kind))
        key = (group, version, kind)
        found: list[Finding] = []
        checked = True
        if xrd is not None and version in xrd.versions:
            validator = self.xr_validator(xrd, version)
            found = self.strict(lambda item: run_validator(validator, item), document, key)
        elif self.corpus is not None and self.corpus.covers(group):
            corpus = self.corpus
            # a kind the corpus does not hold in a group it holds only in part is not checked
            partial = group in corpus.partial_groups
            if partial and crd_schema(corpus, group, version, kind) is None and not corpus.kinds.get((group, kind)):
                checked = False
            else:
                found = self.strict(lambda item: corpus.check(item, group, version, kind), document, key)
        elif self.core is not None and self.core.covers(group):
            found = self.core.check(document, group, version, kind)
        else:
            checked = False
        if self.extra is not None:
            found = [*found, *self.extra(document)]
        return checked, [(unformat_path(finding.path), finding.message) for finding in found]

    def _attribute(
        self, model: CompositionModel, composed: DesiredResource, parts: list[str | int]
    ) -> tuple[Location, CompositionPatch | None]:
        """The patch that wrote ``parts`` (the last one), else the base field that holds it."""
        best: CompositionPatch | None = None
        for patch, segments in composed.applied:
            if list(segments) == parts[: len(segments)]:
                best = patch
        if best is not None:
            return best.location, best
        template = composed.template
        if template is None:
            return self._template_location(model, composed), None
        if template.base is None:
            return template.location, None
        node: Any = template.base
        depth = 0
        for part in parts:
            inside = (isinstance(node, dict) and isinstance(part, str) and part in node) or (
                isinstance(node, list) and isinstance(part, int) and part < len(node)
            )
            if not inside:
                break
            node = node[part]
            depth += 1
        return (*template.location, "base", *parts[:depth]), None

    # -- selectors -------------------------------------------------------------------------------------
    def _selectors(self) -> None:
        for problem in selector_problems(
            self.placed, self.documents, self.raw_schema, self.scope, frozenset(self.incomplete)
        ):
            placed = problem.placed
            location, patch = self._attribute(placed.model, placed.composed, problem.parts)
            shown = f" {patch.where}" if patch is not None else ""
            api = placed.composed.body.get("apiVersion")
            prefix = f'resource "{placed.composed.name}"{shown} ({api} {placed.kind})'
            self.rendered_problem(placed.model, location, prefix, problem.message, placed.xr)

    # -- the report ----------------------------------------------------------------------------------
    def _finish(self) -> ComposeReport:
        for key, findings in self.static.items():
            if key not in self.applied:
                self.findings.update(findings)
        for (file, index, kind, name, path, prefix, suffix), xrs in self.rendered.items():
            ordered = sorted(xrs)
            shown = ", ".join(ordered[:_SHOWN_XRS])
            if len(ordered) > _SHOWN_XRS:
                shown += f" and {len(ordered) - _SHOWN_XRS} more"
            lead = f"{prefix} rendered for {shown}" if prefix else f"rendered for {shown}"
            self.findings.add(Finding(file, index, kind, name, path, f"{lead}: {suffix}"))
        self.report.findings = sorted(self.findings)
        return self.report


def same_cluster(cluster: str | None, compositions: list[Document]) -> list[Document]:
    """The Compositions a composite of ``cluster`` (None: one no cluster's path claims) can meet: where clusters
    define Compositions of one name differently (the hub's and a cluster's own, which makes its apps' resources),
    those of the composite's cluster, or else the ones no cluster's path claims (the catalogue's, which the hub
    applies)."""
    by_name: dict[str, list[Document]] = {}
    for composition in compositions:
        by_name.setdefault(composition.name, []).append(composition)
    kept: list[Document] = []
    for named in by_name.values():
        if len(named) == 1:
            kept.extend(named)
            continue
        own = [c for c in named if cluster_of(c.file) == cluster]
        kept.extend(own or [c for c in named if cluster_of(c.file) is None] or named)
    return kept


def render_compositions(
    documents: list[Document],
    corpus: CrdCorpus | None,
    core: CoreSchemas | None = None,
    extra: Extra | None = None,
    overlays: list[Document] | None = None,
) -> ComposeReport:
    """Check the XRs of ``documents`` against their XRDs, render their Compositions, check what they compose.

    ``overlays`` are the definitions clusters' own overlays make (fluxplane.validate.compose.overlays), read from
    ``documents`` when not given; a cluster's composites are rendered with its own.

    ``corpus`` holds the provider CRDs (None: composed managed resources are not checked against a
    schema, everything else is); ``core`` checks composed core kinds (ConfigMap, Secret) when given;
    ``extra`` is one more check of each composed resource that has a schema (e.g. ``CelRules.check``),
    handed a Document located at the Composition whose values only the cluster knows read
    ``${observed}``; its findings are attributed to patches like the schema's. See the module
    docstring for the checks.
    """
    # A render of many XRs allocates millions of small objects and creates no reference cycles; the
    # cyclic collector's passes over the growing heap would cost a third of the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        if overlays is None:
            overlays = list(overlay_definitions(documents))
        return _Checker([*documents, *overlays], corpus, core, extra).run()
    finally:
        if collecting:
            gc.enable()
