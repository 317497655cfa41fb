"""Composite resources (XRs) as the API server and Crossplane see them: schema, defaults, Composition.

**Schema.** Crossplane serves an XR through a CRD it derives from the XRD (crossplane-runtime
``pkg/xcrd``, ``ForCompositeResource``; commit 4e7ed23, v2.3.3 identical): of each version's
``openAPIV3Schema`` it keeps ``spec`` (properties, required, ``x-kubernetes-preserve-unknown-fields``,
``oneOf``) and ``status`` (properties, required, ``oneOf``), limits ``metadata.name`` to 63 characters,
and adds its own fields: under ``spec.crossplane`` for a v2 XR (``Namespaced`` or ``Cluster`` scope)
or directly under ``spec`` for a legacy one (``LegacyCluster``, the v1 XRD default):
``compositionRef``, ``compositionSelector``, ``compositionRevisionRef``, ``compositionRevisionSelector``,
``compositionUpdatePolicy`` (defaulted from the XRD's ``defaultCompositionUpdatePolicy``, itself
defaulted to ``Automatic``) and ``resourceRefs`` (without ``namespace`` for a namespaced XR); legacy XRs
also get ``claimRef`` and ``writeConnectionSecretToRef``. ``status.conditions`` is added for all, and
``status.connectionDetails`` and ``status.claimConditionTypes`` for legacy XRs. Anything else at the
top level of the XRD's schema is dropped.

**Defaults.** Structural defaulting as the API server does it: null fields are pruned, then every
missing property with a ``default`` gets a copy of it, recursively (also inside defaults, array items
and ``additionalProperties`` values). XRD documents are defaulted by the XRD CRD's own schema (so a v2
XRD is ``Namespaced`` unless it says otherwise).

**Composition.** Crossplane's selector chain (``internal/controller/apiextensions/composite/api.go`` at
crossplane commit 2d040d2): the XRD's ``enforcedCompositionRef`` replaces any reference; with neither a
``compositionRef`` nor a ``compositionSelector``, the XRD's ``defaultCompositionRef`` is used; failing
that, every Composition whose labels match the selector (all of them without one) and whose
``compositeTypeRef`` is the XR's kind at the XRD's referenceable version is a candidate, and Crossplane
picks one at random, so every candidate is rendered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fluxplane.validate.compose.fieldpath import copy_json
from fluxplane.validate.schemas import CrdCorpus, prune_nulls
from fluxplane.validate.tree import Document

XRD_GROUP = "apiextensions.crossplane.io"
COMPOSITE_LABEL = "crossplane.io/composite"
_MAX_NAME = 63


def apply_defaults(value: Any, schema: Any) -> None:
    """Structural defaulting of ``value`` in place by an ``openAPIV3Schema`` node."""
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key, sub in properties.items():
            if key not in value and isinstance(sub, dict) and "default" in sub:
                value[key] = copy_json(sub["default"])
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key in properties:
                apply_defaults(item, properties[key])
            elif isinstance(extra, dict):
                apply_defaults(item, extra)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                apply_defaults(item, items)


def defaulted(body: dict[str, Any], schema: Any) -> dict[str, Any]:
    """A pruned, defaulted copy of ``body``."""
    out = copy_json(prune_nulls(body))
    apply_defaults(out, schema)
    assert isinstance(out, dict)
    return out


def _string_map() -> dict[str, Any]:
    return {"type": "object", "additionalProperties": {"type": "string"}}


def spec_props(scope: str, update_policy: str | None) -> dict[str, Any]:
    """``CompositeResourceSpecProps``."""
    update: dict[str, Any] = {"type": "string", "enum": ["Automatic", "Manual"]}
    if update_policy is not None:
        update["default"] = update_policy
    ref_props: dict[str, Any] = {
        "apiVersion": {"type": "string"},
        "name": {"type": "string"},
        "kind": {"type": "string"},
    }
    if scope != "Namespaced":
        ref_props["namespace"] = {"type": "string"}
    props: dict[str, Any] = {
        "compositionRef": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
        "compositionSelector": {
            "type": "object",
            "required": ["matchLabels"],
            "properties": {"matchLabels": _string_map()},
        },
        "compositionRevisionRef": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}},
        },
        "compositionRevisionSelector": {
            "type": "object",
            "required": ["matchLabels"],
            "properties": {"matchLabels": _string_map()},
        },
        "compositionUpdatePolicy": update,
        "resourceRefs": {
            "type": "array",
            "items": {"type": "object", "properties": ref_props, "required": ["apiVersion", "kind"]},
            "x-kubernetes-list-type": "atomic",
        },
    }
    if scope == "LegacyCluster":
        props["claimRef"] = {
            "type": "object",
            "required": ["apiVersion", "kind", "namespace", "name"],
            "properties": {key: {"type": "string"} for key in ("apiVersion", "kind", "namespace", "name")},
        }
        props["writeConnectionSecretToRef"] = {
            "type": "object",
            "required": ["name", "namespace"],
            "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}},
        }
        return props
    return {
        "crossplane": {
            "type": "object",
            "description": "Configures how Crossplane will reconcile this composite resource",
            "properties": props,
        }
    }


def status_props(scope: str) -> dict[str, Any]:
    """``CompositeResourceStatusProps``."""
    props: dict[str, Any] = {
        "conditions": {
            "type": "array",
            "x-kubernetes-list-map-keys": ["type"],
            "x-kubernetes-list-type": "map",
            "items": {
                "type": "object",
                "required": ["lastTransitionTime", "reason", "status", "type"],
                "properties": {
                    "lastTransitionTime": {"type": "string", "format": "date-time"},
                    "message": {"type": "string"},
                    "reason": {"type": "string"},
                    "status": {"type": "string"},
                    "type": {"type": "string"},
                    "observedGeneration": {"type": "integer", "format": "int64"},
                },
            },
        }
    }
    if scope == "LegacyCluster":
        props["connectionDetails"] = {
            "type": "object",
            "properties": {"lastPublishedTime": {"type": "string", "format": "date-time"}},
        }
        props["claimConditionTypes"] = {
            "type": "array",
            "x-kubernetes-list-type": "set",
            "items": {"type": "string"},
        }
    return props


def composite_schema(scope: str, update_policy: str | None, schema: Any) -> dict[str, Any]:
    """The ``openAPIV3Schema`` of the CRD Crossplane generates for one XRD version (``genCrdVersion``)."""
    source: dict[str, Any] = schema if isinstance(schema, dict) else {}
    properties = source.get("properties") or {}
    name_limit = _MAX_NAME
    own = ((properties.get("metadata") or {}).get("properties") or {}).get("name") or {}
    if isinstance(own.get("maxLength"), int) and own["maxLength"] < name_limit:
        name_limit = own["maxLength"]
    x_spec: dict[str, Any] = properties.get("spec") or {}
    x_status: dict[str, Any] = properties.get("status") or {}
    spec: dict[str, Any] = {"type": "object", "properties": {}}
    if x_spec.get("required"):
        spec["required"] = list(x_spec["required"])
    if "x-kubernetes-preserve-unknown-fields" in x_spec:
        spec["x-kubernetes-preserve-unknown-fields"] = x_spec["x-kubernetes-preserve-unknown-fields"]
    for key in ("x-kubernetes-validations", "oneOf"):
        if x_spec.get(key):
            spec[key] = list(x_spec[key])
    spec["properties"].update(x_spec.get("properties") or {})
    status: dict[str, Any] = {"type": "object", "properties": {}}
    for key in ("required", "x-kubernetes-validations", "oneOf"):
        if x_status.get(key):
            status[key] = list(x_status[key])
    status["properties"].update(x_status.get("properties") or {})
    spec["properties"].update(spec_props(scope, update_policy))
    status["properties"].update(status_props(scope))
    return {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": name_limit}}},
            "spec": spec,
            "status": status,
        },
    }


@dataclass
class XRD:
    """A CompositeResourceDefinition of the tree, defaulted."""

    document: Document
    spec: dict[str, Any]

    @property
    def group(self) -> str:
        return str(self.spec.get("group", ""))

    @property
    def kind(self) -> str:
        return str((self.spec.get("names") or {}).get("kind", ""))

    @property
    def scope(self) -> str:
        return str(self.spec.get("scope") or "LegacyCluster")

    @property
    def modern(self) -> bool:
        """A Crossplane v2 XR: its machinery under ``spec.crossplane``, no claims, no connection secret."""
        return self.scope != "LegacyCluster"

    @property
    def versions(self) -> dict[str, dict[str, Any]]:
        return {str(v.get("name")): v for v in self.spec.get("versions") or [] if isinstance(v, dict)}

    @property
    def referenceable(self) -> str | None:
        names = [name for name, version in self.versions.items() if version.get("referenceable")]
        return names[0] if len(names) == 1 else None

    @property
    def type_ref(self) -> tuple[str, str] | None:
        """The (apiVersion, kind) Compositions must name in ``compositeTypeRef``."""
        version = self.referenceable
        return (f"{self.group}/{version}", self.kind) if version else None

    def schema(self, version: str) -> dict[str, Any]:
        raw = ((self.versions.get(version) or {}).get("schema") or {}).get("openAPIV3Schema")
        policy = self.spec.get("defaultCompositionUpdatePolicy")
        return composite_schema(self.scope, policy if isinstance(policy, str) else None, raw)

    def composition_ref(self, key: str) -> str | None:
        value = (self.spec.get(key) or {}).get("name")
        return value if isinstance(value, str) and value else None


#: What the XRD CRD defaults when /work/shared/crds (the CRD's own schema) is not at hand.
_FALLBACK_DEFAULTS = {"v1": "LegacyCluster", "v2": "Namespaced"}


def read_xrd(document: Document, corpus: CrdCorpus | None) -> XRD:
    """``document`` (a CompositeResourceDefinition) defaulted by its CRD's schema, or the known defaults."""
    body = document.body
    version = str(body.get("apiVersion", "")).rsplit("/", 1)[-1]
    schema = crd_schema(corpus, XRD_GROUP, version, "CompositeResourceDefinition") if corpus else None
    if schema is not None:
        spec = defaulted(body, schema).get("spec") or {}
    else:
        spec = copy_json(body.get("spec") or {})
        spec.setdefault("scope", _FALLBACK_DEFAULTS.get(version, "LegacyCluster"))
        spec.setdefault("defaultCompositionUpdatePolicy", "Automatic")
    return XRD(document, spec)


def crd_schema(corpus: CrdCorpus, group: str, version: str, kind: str) -> Any:
    """The raw ``openAPIV3Schema`` of a CRD version in ``corpus``, or None."""
    if not corpus.covers(group):
        return None
    return corpus.schema(group, version, kind, served=False)


@dataclass
class Selection:
    """The Compositions Crossplane may pick for an XR, or why there are none."""

    compositions: list[Document] = field(default_factory=list)
    #: (field path in the XR, message) when the selection fails
    problem: tuple[str, str] | None = None


def select_compositions(xrd: XRD, xr: dict[str, Any], compositions: list[Document]) -> Selection:
    """The candidates of Crossplane's selector chain (see the module docstring)."""
    spec = xr.get("spec") or {}
    machinery = (spec.get("crossplane") or {}) if xrd.modern else spec
    prefix = "spec.crossplane" if xrd.modern else "spec"
    reference = (machinery.get("compositionRef") or {}).get("name")
    selector = machinery.get("compositionSelector")
    reference_path = f"{prefix}.compositionRef.name"
    source = f"{prefix}.compositionRef.name"
    enforced = xrd.composition_ref("enforcedCompositionRef")
    if enforced:
        reference, reference_path, source = enforced, "kind", "the enforcedCompositionRef of its XRD"
    if not reference and selector is None:
        default = xrd.composition_ref("defaultCompositionRef")
        if default:
            reference, reference_path, source = default, "kind", "the defaultCompositionRef of its XRD"
    type_ref = xrd.type_ref
    if reference:
        named = [document for document in compositions if document.name == reference]
        if not named:
            known = ", ".join(sorted({document.name for document in compositions if _composes(document, type_ref)}))
            return Selection(
                problem=(
                    reference_path,
                    f"Composition {reference!r} ({source}) is not in the tree "
                    f"(Compositions of {xrd.kind}: {known or 'none'})",
                )
            )
        chosen = named[0]
        if type_ref is not None and not _composes(chosen, type_ref):
            found = (chosen.body.get("spec") or {}).get("compositeTypeRef") or {}
            return Selection(
                problem=(
                    reference_path,
                    f"Composition {reference!r} ({source}) composes {found.get('apiVersion')} {found.get('kind')}, "
                    f"not {type_ref[0]} {type_ref[1]}",
                )
            )
        return Selection([chosen])
    labels = (selector or {}).get("matchLabels") or {}
    candidates = [
        document
        for document in compositions
        if _composes(document, type_ref)
        and all(((document.body.get("metadata") or {}).get("labels") or {}).get(k) == v for k, v in labels.items())
    ]
    if not candidates:
        wanted = ", ".join(f"{key}={value}" for key, value in sorted(labels.items()))
        return Selection(
            problem=(
                f"{prefix}.compositionSelector" if selector is not None else prefix,
                f"no Composition of {xrd.kind} matches"
                + (f" the labels {wanted}" if wanted else "")
                + " (Crossplane: no compatible Compositions found)",
            )
        )
    return Selection(sorted(candidates, key=lambda document: document.name))


def _composes(document: Document, type_ref: tuple[str, str] | None) -> bool:
    reference = (document.body.get("spec") or {}).get("compositeTypeRef") or {}
    return type_ref is not None and (reference.get("apiVersion"), reference.get("kind")) == type_ref


def observed_xr(body: dict[str, Any], xrd: XRD, composition: str, schema: Any) -> dict[str, Any]:
    """The XR ``body`` as the function sees it when ``composition`` (a name) renders it: Crossplane's composite
    label and composition reference set, defaulted."""
    xr: dict[str, Any] = copy_json(body)
    meta = xr.setdefault("metadata", {})
    labels = meta.setdefault("labels", {})
    labels.setdefault(COMPOSITE_LABEL, meta.get("name", ""))
    spec = xr.setdefault("spec", {})
    machinery = spec.setdefault("crossplane", {}) if xrd.modern else spec
    machinery["compositionRef"] = {"name": composition}
    apply_defaults(xr, schema)
    if xrd.referenceable:
        xr["apiVersion"] = f"{xrd.group}/{xrd.referenceable}"
    return xr
