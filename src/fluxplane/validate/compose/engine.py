"""Rendering a Composition's function pipeline for one XR, offline, to the state Crossplane converges to.

One pass is what function-patch-and-transform's ``RunFunction`` (``fn.go``) does with the observed XR
and observed composed resources: environment patches, then every resource template in order: its base
(or the resource a previous step produced), its patches in order, and

- a patch whose source field is absent is skipped; if it is ``Required``, writes the composed resource
  and that resource does not exist yet, the resource is withheld (not added to the desired state);
- a patch from an observed composed resource (``ToCompositeFieldPath``...) runs only once it exists;
- any other error (a type clash on a path, a failing transform) is fatal for the whole XR;
- connection details of existing resources are collected and, for a Crossplane v2 XR (one with
  ``spec.crossplane``), composed into a Secret named by ``writeConnectionSecretToRef`` and its patches.

Crossplane then adds the composed resource metadata (``RenderComposedResourceMetadata``): a
``generateName`` of ``<xr>-`` when there is no name, the XR's namespace, the
``crossplane.io/composition-resource-name`` annotation and the ``crossplane.io/composite`` label.

Offline there is no cluster, so the render is repeated as reconciles would be: what one pass composed
exists in the next one, and what its ``ToCompositeFieldPath`` patches wrote to the XR's status is
observed. Values only the cluster knows (an observed composed resource's status, a generated name) are
:class:`~fluxplane.validate.compose.fieldpath.Unknown` and flow through transforms and combines
unchanged. The passes stop when nothing changes: that fixed point is what Crossplane keeps applying.
Resources still withheld then are the ones the XR's values never enable. A template whose inputs did
not change since the last pass is not patched again.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from fluxplane.validate.compose.fieldpath import (
    FieldPathError,
    NotFound,
    Segments,
    Unknown,
    copy_json,
    expand_wildcards,
    format_segments,
    get,
    merge_value,
    parse,
    to_json,
)
from fluxplane.validate.compose.ptinput import CompositionPatch, Location, Resources, Template
from fluxplane.validate.compose.transforms import TransformError, combine, resolve_all

RESOURCE_NAME_ANNOTATION = "crossplane.io/composition-resource-name"
COMPOSITE_LABEL = "crossplane.io/composite"
CONNECTION_SECRET_TYPE = "connection.crossplane.io/v1alpha1"


@dataclass
class DesiredResource:
    """A desired composed resource and the patches that wrote it (to say which patch a problem comes from)."""

    name: str
    body: dict[str, Any]
    template: Template | None
    applied: list[tuple[CompositionPatch, Segments]] = field(default_factory=list)


@dataclass(frozen=True)
class Withheld:
    """A template not composed because a ``Required`` source is absent."""

    template: Template
    patch: CompositionPatch
    reason: str


@dataclass(frozen=True)
class Failure:
    """A fatal result of the function: nothing is composed for the XR."""

    location: Location
    message: str


@dataclass
class Render:
    composed: dict[str, DesiredResource]
    withheld: dict[str, Withheld]
    #: the observed XR at the fixed point (with the status the composition wrote)
    xr: dict[str, Any]
    failure: Failure | None = None
    passes: int = 0
    converged: bool = True


class _Fatal(Exception):
    def __init__(self, location: Location, message: str) -> None:
        super().__init__(message)
        self.location = location
        self.message = message


@dataclass
class _TemplateResult:
    body: dict[str, Any] | None
    applied: list[tuple[CompositionPatch, Segments]]
    withheld: Withheld | None
    composed: DesiredResource | None = None


_MISSING = object()


def _read(source: Any, segments: Segments, observed: bool) -> Any:
    try:
        return get(source, segments)
    except NotFound:
        if observed:
            return Unknown(f"observed {format_segments(segments)}")
        raise


def _peek(source: Any, path: str) -> Any:
    """A source value for the template cache key: the value, or a marker for absent or unreadable."""
    try:
        return get(source, parse(path))
    except FieldPathError as exc:
        return (_MISSING, type(exc).__name__, str(exc))


def _write(patch: CompositionPatch, target: dict[str, Any], value: Any) -> list[Segments]:
    to_path = patch.to_path
    if "[*]" in to_path:
        # patchFieldValueToMultiple: its errors are not wrapped
        paths = expand_wildcards(target, parse(to_path))
        if not paths:
            raise FieldPathError(f"cannot expand ToFieldPath {to_path}")
        for segments in paths:
            merge_value(target, segments, value, patch.merge)
        return paths
    try:
        segments = parse(to_path)
        merge_value(target, segments, value, patch.merge)
    except NotFound:
        raise
    except FieldPathError as exc:
        raise FieldPathError(f"cannot patch to object: {exc}") from exc
    return [segments]


def _from_field_path(
    patch: CompositionPatch, source: Any, target: dict[str, Any], observed: bool = False
) -> list[Segments]:
    value = _read(source, parse(patch.from_path), observed)
    return _write(patch, target, to_json(resolve_all(patch.transforms, value)))


def _combine(patch: CompositionPatch, source: Any, target: dict[str, Any], observed: bool = False) -> list[Segments]:
    values = [_read(source, parse(path), observed) for path in patch.variables]
    return _write(patch, target, resolve_all(patch.transforms, combine(patch.combine, values)))


def apply_patch(
    patch: CompositionPatch,
    observed: dict[str, Any] | None,
    desired: dict[str, Any],
    xr: dict[str, Any],
    desired_xr: dict[str, Any],
    environment: dict[str, Any],
) -> list[Segments]:
    """``ApplyComposedPatch``: the paths written (of the composed resource, the XR or the environment)."""
    kind = patch.type
    if observed is None and not patch.to_composed:
        return []
    if kind == "FromCompositeFieldPath":
        return _from_field_path(patch, xr, desired)
    if kind == "CombineFromComposite":
        return _combine(patch, xr, desired)
    if kind == "FromEnvironmentFieldPath":
        return _from_field_path(patch, environment, desired)
    if kind == "CombineFromEnvironment":
        return _combine(patch, environment, desired)
    if kind == "ToCompositeFieldPath":
        return _from_field_path(patch, observed, desired_xr, observed=True)
    if kind == "CombineToComposite":
        return _combine(patch, observed, desired_xr, observed=True)
    if kind == "ToEnvironmentFieldPath":
        return _from_field_path(patch, observed, environment, observed=True)
    if kind == "CombineToEnvironment":
        return _combine(patch, observed, environment, observed=True)
    return []


def apply_environment_patch(
    patch: CompositionPatch, environment: dict[str, Any], xr: dict[str, Any], desired_xr: dict[str, Any]
) -> None:
    """``ApplyEnvironmentPatch``: between the observed XR, the environment and the desired XR."""
    kind = patch.type
    if kind in ("FromCompositeFieldPath", "ToEnvironmentFieldPath"):
        _from_field_path(patch, xr, environment)
    elif kind == "CombineFromComposite":
        _combine(patch, xr, environment)
    elif kind in ("ToCompositeFieldPath", "FromEnvironmentFieldPath"):
        _from_field_path(patch, environment, desired_xr)
    elif kind == "CombineToComposite":
        _combine(patch, environment, desired_xr)


def compose_template(
    template: Template,
    base: dict[str, Any],
    observed: dict[str, Any] | None,
    xr: dict[str, Any],
    desired_xr: dict[str, Any],
    environment: dict[str, Any],
    only_observed_side: bool = False,
) -> _TemplateResult:
    """One template's patches in order, as the loop of ``RunFunction`` applies them."""
    desired = copy_json(base) if not only_observed_side else {}
    applied: list[tuple[CompositionPatch, Segments]] = []
    for patch in template.observed_side if only_observed_side else template.patches:
        try:
            written = apply_patch(patch, observed, desired, xr, desired_xr, environment)
        except NotFound as exc:
            if patch.required and patch.to_composed and observed is None:
                return _TemplateResult(None, applied, Withheld(template, patch, str(exc)))
            continue
        except (FieldPathError, TransformError) as exc:
            raise _Fatal(
                patch.location,
                f'cannot render composed resource "{template.name}" "{patch.type}" patch at index {patch.index}: {exc}',
            ) from exc
        if patch.to_composed:
            applied.extend((patch, segments) for segments in written)
    return _TemplateResult(desired, applied, None)


def _cache_key(reads: tuple[CompositionPatch, ...], xr: dict[str, Any]) -> tuple[Any, ...]:
    """The status values a template reads. Its existence needs no place: a template composed while it did
    not exist composes the same once it does (no Required source was missing), and a withheld one does
    not exist in the next pass either."""
    key: list[Any] = []
    for patch in reads:
        if patch.type == "FromCompositeFieldPath":
            key.append(_peek(xr, patch.from_path))
        else:
            key.append(tuple(_peek(xr, path) for path in patch.variables))
    return tuple(key)


def _connection_details(template: Template, observed: dict[str, Any]) -> dict[str, Any]:
    """``ExtractConnectionDetails`` from an existing composed resource: secret keys are assumed to come."""
    out: dict[str, Any] = {}
    for detail in template.connection_details:
        kind, name = detail.get("type"), str(detail.get("name"))
        if kind == "FromValue":
            out[name] = base64.b64encode(str(detail.get("value", "")).encode()).decode()
        elif kind == "FromConnectionSecretKey":
            out[name] = Unknown(f"connection secret key {detail.get('fromConnectionSecretKey')}")
        elif kind == "FromFieldPath":
            try:
                _read(observed, parse(str(detail.get("fromFieldPath"))), observed=True)
            except FieldPathError:
                continue
            out[name] = Unknown(f"observed {detail.get('fromFieldPath')}")
    return out


def _connection_secret(resources: Resources, xr: dict[str, Any], details: dict[str, Any]) -> dict[str, Any]:
    """``composeConnectionSecret`` with the reference ``getConnectionSecretRef`` works out."""
    meta = xr.get("metadata") or {}
    spec = xr.get("spec") or {}
    reference = resources.connection_ref or {}
    own = spec.get("writeConnectionSecretToRef")
    if isinstance(own, dict):
        ref: dict[str, Any] = {"name": own.get("name", ""), "namespace": own.get("namespace", "")}
    elif reference.get("name") or reference.get("namespace"):
        ref = {"name": reference.get("name", ""), "namespace": reference.get("namespace", "")}
    else:
        ref = {"name": f"{meta.get('name', '')}-connection", "namespace": meta.get("namespace", "")}
    target: dict[str, Any] = {"apiVersion": "v1", "kind": "SecretReference", **ref}
    for patch in resources.connection_patches:
        try:
            if patch.type == "FromCompositeFieldPath":
                try:
                    _from_field_path(patch, xr, target)
                except (FieldPathError, TransformError):
                    if not patch.required:
                        continue
                    raise
            elif patch.type == "CombineFromComposite":
                _combine(patch, xr, target)
            else:
                raise FieldPathError(f"unsupported patch type {patch.type} at index {patch.index}")
        except (FieldPathError, TransformError) as exc:
            raise _Fatal(
                patch.location,
                "cannot compose connection secret: cannot generate connection secret reference: cannot apply "
                f"connection secret patches: cannot apply patch type {patch.type} at index {patch.index}: {exc}",
            ) from exc
    name = target.get("name") if isinstance(target.get("name"), str | Unknown) else ref["name"]
    namespace = target.get("namespace") if isinstance(target.get("namespace"), str | Unknown) else ref["namespace"]
    metadata: dict[str, Any] = {}
    if name:
        metadata["name"] = name
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Secret", "metadata": metadata, "data": details, "type": CONNECTION_SECRET_TYPE}


@dataclass
class FunctionPipeline:
    """The steps of a Composition this engine runs: P&T inputs, and None for readiness-only functions."""

    steps: list[Resources | None]

    @property
    def templates(self) -> list[Template]:
        return [template for step in self.steps if step is not None for template in step.templates]


class _Renderer:
    """One XR's passes: a template is patched again only when the XR status it reads or its existence changed.

    Between passes only the XR's status changes (what ``ToCompositeFieldPath`` patches wrote), so a
    template's cache key is the status values it reads.
    """

    def __init__(self, pipeline: FunctionPipeline) -> None:
        self.pipeline = pipeline
        self.cache: dict[tuple[int, str], tuple[tuple[Any, ...], _TemplateResult]] = {}

    def run_once(
        self, xr: dict[str, Any], observed: dict[str, dict[str, Any]]
    ) -> tuple[dict[str, DesiredResource], dict[str, Withheld], dict[str, Any]]:
        desired: dict[str, DesiredResource] = {}
        withheld: dict[str, Withheld] = {}
        desired_xr: dict[str, Any] = {"apiVersion": xr.get("apiVersion"), "kind": xr.get("kind")}
        environment: dict[str, Any] = {"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment"}
        for number, step in enumerate(self.pipeline.steps):
            if step is not None:
                self._patch_and_transform(number, step, xr, observed, desired, withheld, desired_xr, environment)
        return desired, withheld, desired_xr

    def _patch_and_transform(
        self,
        number: int,
        step: Resources,
        xr: dict[str, Any],
        observed: dict[str, dict[str, Any]],
        desired: dict[str, DesiredResource],
        withheld: dict[str, Withheld],
        desired_xr: dict[str, Any],
        environment: dict[str, Any],
    ) -> None:
        for patch in step.environment_patches:
            try:
                apply_environment_patch(patch, environment, xr, desired_xr)
            except NotFound as exc:
                if not patch.required:
                    continue
                raise _Fatal(
                    patch.location, f'cannot apply the "{patch.type}" environment patch at index {patch.index}: {exc}'
                ) from exc
            except (FieldPathError, TransformError) as exc:
                raise _Fatal(
                    patch.location, f'cannot apply the "{patch.type}" environment patch at index {patch.index}: {exc}'
                ) from exc
        details: dict[str, Any] = {}
        for template in step.templates:
            current = observed.get(template.name)
            if template.base is None:
                previous = desired.get(template.name)
                if previous is None:
                    raise _Fatal(
                        template.location,
                        f'composed resource "{template.name}" has no base template, and was not produced by a '
                        "previous Function in the pipeline",
                    )
                base = previous.body
            else:
                base = template.base
                if not isinstance(base.get("kind"), str) or not base.get("kind"):
                    raise _Fatal(
                        (*template.location, "base"),
                        f'cannot parse base template of composed resource "{template.name}": '
                        "Object 'Kind' is missing",
                    )
            if current is not None:
                details.update(_connection_details(template, current))
            cacheable = template.base is not None and not template.uses_environment
            result: _TemplateResult | None = None
            key: tuple[Any, ...] = ()
            if cacheable:
                key = _cache_key(template.status_reads, xr) if template.status_reads else ()
                hit = self.cache.get((number, template.name))
                if hit is not None and hit[0] == key:
                    result = hit[1]
                    if current is not None:
                        compose_template(template, base, current, xr, desired_xr, environment, only_observed_side=True)
            if result is None:
                result = compose_template(template, base, current, xr, desired_xr, environment)
                if cacheable:
                    self.cache[(number, template.name)] = (key, result)
            if result.withheld is not None:
                # upstream leaves what an earlier step produced under this name
                withheld[template.name] = result.withheld
                continue
            withheld.pop(template.name, None)
            assert result.body is not None
            if result.composed is None:
                result.composed = DesiredResource(template.name, result.body, template, result.applied)
            desired[template.name] = result.composed
        spec = xr.get("spec")
        modern = isinstance(spec, dict) and "crossplane" in spec
        if modern and details:
            name = f"{(xr.get('metadata') or {}).get('name', '')}-connection-secret"
            desired[name] = DesiredResource(name, _connection_secret(step, xr, details), None)


def _with_metadata(composed: DesiredResource, xr: dict[str, Any]) -> DesiredResource:
    """Crossplane's ``RenderComposedResourceMetadata`` on a copy of the top level and of metadata."""
    xr_meta = xr.get("metadata") or {}
    label = (xr_meta.get("labels") or {}).get(COMPOSITE_LABEL) or xr_meta.get("name", "")
    body = dict(composed.body)
    meta = dict(body.get("metadata") or {})
    if not meta.get("name") and not meta.get("generateName"):
        meta["generateName"] = f"{label}-"
    if xr_meta.get("namespace"):
        meta["namespace"] = xr_meta["namespace"]
    meta["annotations"] = {**(meta.get("annotations") or {}), RESOURCE_NAME_ANNOTATION: composed.name}
    meta["labels"] = {**(meta.get("labels") or {}), COMPOSITE_LABEL: label}
    body["metadata"] = meta
    return DesiredResource(composed.name, body, composed.template, composed.applied)


def _merge_status(base: Any, written: Any) -> Any:
    if isinstance(base, dict) and isinstance(written, dict):
        out = dict(base)
        for key, value in written.items():
            out[key] = _merge_status(base.get(key), value)
        return out
    return written


def render(pipeline: FunctionPipeline, xr: dict[str, Any], max_passes: int | None = None) -> Render:
    """The desired composed resources for ``xr`` (as the function sees it) once reconciles settle."""
    renderer = _Renderer(pipeline)
    limit = max_passes or len(pipeline.templates) + 3
    original_status = xr.get("status")
    observed_xr = xr
    observed: dict[str, dict[str, Any]] = {}
    desired: dict[str, DesiredResource] = {}
    withheld: dict[str, Withheld] = {}
    dressed: dict[int, tuple[DesiredResource, DesiredResource]] = {}

    def dress(item: DesiredResource) -> DesiredResource:
        # a template not patched again gives the same object: reuse the metadata rendered for it
        hit = dressed.get(id(item))
        if hit is not None and hit[0] is item:
            return hit[1]
        out = _with_metadata(item, observed_xr)
        dressed[id(item)] = (item, out)
        return out

    for number in range(1, limit + 1):
        try:
            raw, withheld, desired_xr = renderer.run_once(observed_xr, observed)
        except _Fatal as fatal:
            return Render({}, {}, observed_xr, Failure(fatal.location, fatal.message), number, False)
        desired = {name: dress(item) for name, item in raw.items()}
        next_observed = {name: item.body for name, item in desired.items()}
        status = desired_xr.get("status")
        next_xr = observed_xr
        if status is not None:
            next_xr = {**xr, "status": _merge_status(original_status or {}, status)}
        if next_observed == observed and next_xr == observed_xr:
            return Render(desired, withheld, observed_xr, None, number, True)
        observed, observed_xr = next_observed, next_xr
    return Render(desired, withheld, observed_xr, None, limit, False)
