"""A Composition as the compose checks run it: its pipeline, and what is wrong with it whatever the XRs.

**Pipeline.** A step is identified by its Function's package (``spec.package`` of the Function the
``functionRef`` names, else the reference itself): function-patch-and-transform steps are read (see
:mod:`.ptinput`), function-auto-ready steps only set readiness and change nothing a check sees; any
other function makes the Composition *not rendered* (with the reason).

**Static checks.** Every patch path is checked against the schema it points into (see :mod:`.paths`):
``fromFieldPath`` and combine variables of patches from the XR against the XR's generated schema, those
of patches from a composed resource against its CRD, ``toFieldPath`` of patches to the XR against the
XR's schema (and it must be under ``status``: Crossplane applies only the status of the XR a function
returns), ``toFieldPath`` of patches to a composed resource against its CRD (reported only when no
render wrote the patch: a render reports the problem with the XRs it was rendered for), connection
details and readiness checks against the composed resource's CRD. A read of the XR's status that no
``ToCompositeFieldPath``/``CombineToComposite`` patch writes is a finding (a Required one means the
resource is never composed). So are a repeated resource name (the later template replaces the earlier
one), a base without apiVersion or kind, a connection secret patch to anything but name or namespace,
and a ``compositeTypeRef`` that names no XRD of the tree or not its referenceable version.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fluxplane.validate.compose.engine import FunctionPipeline
from fluxplane.validate.compose.fieldpath import FieldPathError, Segments, parse
from fluxplane.validate.compose.paths import check_path
from fluxplane.validate.compose.ptinput import CompositionPatch, Location, Resources, Template, read_resources
from fluxplane.validate.compose.xr import XRD
from fluxplane.validate.findings import Finding, format_path
from fluxplane.validate.tree import Document

PATCH_AND_TRANSFORM = "function-patch-and-transform"
AUTO_READY = "function-auto-ready"

#: (group, version, kind) -> the raw ``openAPIV3Schema`` of a composed kind, or None
SchemaOf = Callable[[str, str, str], Any]


def split_api(api: Any) -> tuple[str, str]:
    """``group/version`` (or ``version``) as (group, version)."""
    text = api if isinstance(api, str) else ""
    return (text.rsplit("/", 1)[0], text.rsplit("/", 1)[1]) if "/" in text else ("", text)


def function_identity(reference: str) -> str:
    """``xpkg.crossplane.io/crossplane-contrib/function-auto-ready:v0.7.0`` -> ``function-auto-ready``."""
    last = reference.rsplit("/", 1)[-1]
    return last.split("@", 1)[0].split(":", 1)[0]


@dataclass
class CompositionModel:
    """A Composition of the tree, read once."""

    document: Document
    pipeline: FunctionPipeline | None = None
    #: why it cannot be rendered (a function this check does not run)
    reason: str | None = None
    #: a fatal input problem was reported: every render would fail the same way
    fatal: bool = False
    xrd: XRD | None = None
    xr_schema: dict[str, Any] | None = None

    def finding(self, location: Location, message: str) -> Finding:
        document = self.document
        return Finding(
            document.file, document.index, document.kind, document.name, format_path(list(location)), message
        )


@dataclass
class StaticProblems:
    findings: list[Finding] = field(default_factory=list)
    #: toFieldPath problems of patches to composed resources, by (patch location, template location):
    #: reported only when no render wrote that patch
    unless_rendered: dict[tuple[Location, Location], list[Finding]] = field(default_factory=dict)


def read_composition(
    document: Document, functions: dict[str, str], xrds: dict[tuple[str, str], XRD], schema_of: SchemaOf
) -> tuple[CompositionModel, StaticProblems]:
    """The Composition's model and the problems it has whatever the XRs (see the module docstring)."""
    model = CompositionModel(document)
    problems = StaticProblems()
    spec = document.body.get("spec") or {}
    reference = spec.get("compositeTypeRef") or {}
    group, version = split_api(reference.get("apiVersion"))
    model.xrd = xrds.get((group, str(reference.get("kind"))))
    where: Location = ("spec", "compositeTypeRef", "apiVersion")
    if model.xrd is None:
        problems.findings.append(
            model.finding(
                ("spec", "compositeTypeRef"),
                f"no CompositeResourceDefinition of the tree defines {reference.get('apiVersion')} "
                f"{reference.get('kind')}",
            )
        )
    elif version not in model.xrd.versions:
        problems.findings.append(model.finding(where, f"XRD {model.xrd.document.name!r} has no version {version!r}"))
    else:
        model.xr_schema = model.xrd.schema(version)
        if model.xrd.referenceable not in (None, version):
            problems.findings.append(
                model.finding(
                    where,
                    f"{reference.get('apiVersion')} is not the referenceable version of {model.xrd.kind} "
                    f"({model.xrd.group}/{model.xrd.referenceable}): Crossplane selects Compositions by it",
                )
            )
    mode = spec.get("mode", "Pipeline")
    if mode != "Pipeline":
        model.reason = f"mode {mode!r} (Crossplane v2 runs only Pipeline Compositions)"
        return model, problems
    steps: list[Resources | None] = []
    for number, step in enumerate(spec.get("pipeline") or []):
        name = str((step.get("functionRef") or {}).get("name", ""))
        identity = function_identity(functions.get(name, name))
        if identity == PATCH_AND_TRANSFORM:
            resources = read_resources(step.get("input"), ("spec", "pipeline", number, "input"))
            problems.findings.extend(model.finding(item.location, item.message) for item in resources.problems)
            model.fatal = model.fatal or resources.fatal is not None
            steps.append(resources)
        elif identity == AUTO_READY:
            steps.append(None)
        else:
            model.reason = (
                f"pipeline step {step.get('step')!r} runs function {name!r}, which this check does not render"
            )
            return model, problems
    model.pipeline = FunctionPipeline(steps)
    if not model.fatal:
        _Static(model, problems, schema_of).run()
    return model, problems


def _path_problem(schema: Any, path: str) -> str | None:
    try:
        segments = parse(path)
    except FieldPathError as exc:
        return str(exc)
    return check_path(schema, segments) if schema is not None else None


def _reads(patch: CompositionPatch) -> list[tuple[int | None, str]]:
    if patch.type.startswith("Combine"):
        return list(enumerate(patch.variables))
    return [(None, patch.from_path)]


def _read_location(patch: CompositionPatch, number: int | None) -> Location:
    if number is None:
        return (*patch.location, "fromFieldPath")
    return (*patch.location, "combine", "variables", number, "fromFieldPath")


_FROM_XR = ("FromCompositeFieldPath", "CombineFromComposite")
_FROM_COMPOSED = ("ToCompositeFieldPath", "CombineToComposite", "ToEnvironmentFieldPath", "CombineToEnvironment")
_TO_XR = ("ToCompositeFieldPath", "CombineToComposite")


class _Static:
    def __init__(self, model: CompositionModel, problems: StaticProblems, schema_of: SchemaOf) -> None:
        self.model = model
        self.problems = problems
        self.schema_of = schema_of
        self.writers: list[Segments] = []
        xrd = model.xrd
        self.xr_kind = f"{xrd.kind} ({xrd.group})" if xrd else "the XR"

    def add(self, location: Location, message: str) -> None:
        self.problems.findings.append(self.model.finding(location, message))

    def run(self) -> None:
        assert self.model.pipeline is not None
        steps = [step for step in self.model.pipeline.steps if step is not None]
        templates = self.model.pipeline.templates
        seen: dict[str, Template] = {}
        for template in templates:
            earlier = seen.get(template.name)
            if earlier is not None and template.base is not None and earlier.base is not None:
                self.add(
                    (*template.location, "name"),
                    f'resource name "{template.name}" repeats {format_path(list(earlier.location[4:]))}: the later '
                    "template replaces the earlier one in the desired state",
                )
            seen[template.name] = template
            self._writers(patch for patch in template.patches if patch.type in _TO_XR)
        for step in steps:
            self._writers(
                patch
                for patch in step.environment_patches
                if patch.type in ("ToCompositeFieldPath", "FromEnvironmentFieldPath", "CombineToComposite")
            )
        for template in templates:
            self._template(template)
        for step in steps:
            for patch in step.connection_patches:
                if patch.to_path not in ("name", "namespace"):
                    self.add(
                        (*patch.location, "toFieldPath"),
                        f"connection secret patch writes {patch.to_path!r}: only name and namespace are used",
                    )
                for number, path in _reads(patch):
                    self._read_xr(patch, number, path, "the connection secret")

    def _writers(self, patches: Any) -> None:
        for patch in patches:
            with contextlib.suppress(FieldPathError):
                self.writers.append(patch.to_segments())

    def _read_xr(self, patch: CompositionPatch, number: int | None, path: str, label: str) -> None:
        """A path the patch reads from the XR: it must exist in the XR's schema, and status be written."""
        where = _read_location(patch, number)
        problem = _path_problem(self.model.xr_schema, path)
        if problem:
            self.add(where, f"{label} {patch.where}: fromFieldPath of {self.xr_kind}: {problem}")
            return
        with contextlib.suppress(FieldPathError):
            segments = parse(path)
            status = segments[:1] == ("status",) and segments[1:2] != ("conditions",)
            written = any(
                segments[: len(writer)] == writer or writer[: len(segments)] == segments for writer in self.writers
            )
            if status and not written:
                never = ": the resource is never composed" if patch.required and patch.to_composed else ""
                self.add(
                    where,
                    f"{label} {patch.where}: reads {path} of the XR, which no ToCompositeFieldPath or "
                    f"CombineToComposite patch of this Composition writes{never}",
                )

    def _template(self, template: Template) -> None:
        label = f'resource "{template.name}"'
        schema: Any = None
        described = "the composed resource"
        if template.base is not None:
            api, kind = template.base.get("apiVersion"), template.base.get("kind")
            if not isinstance(api, str) or not api or not isinstance(kind, str) or not kind:
                self.add((*template.location, "base"), f"{label}: base needs an apiVersion and a kind")
            else:
                schema = self.schema_of(*split_api(api), kind)
                described = f"{kind} ({api})"
        for patch in template.patches:
            if patch.type in _FROM_XR:
                for number, path in _reads(patch):
                    self._read_xr(patch, number, path, label)
            elif patch.type in _FROM_COMPOSED:
                for number, path in _reads(patch):
                    problem = _path_problem(schema, path)
                    if problem:
                        self.add(
                            _read_location(patch, number),
                            f"{label} {patch.where}: fromFieldPath of {described}: {problem}",
                        )
            if patch.type in _TO_XR:
                problem = _path_problem(self.model.xr_schema, patch.to_path)
                where: Location = (*patch.location, "toFieldPath")
                if problem:
                    self.add(where, f"{label} {patch.where}: toFieldPath of {self.xr_kind}: {problem}")
                elif not patch.to_path.startswith("status"):
                    self.add(
                        where,
                        f"{label} {patch.where}: writes {patch.to_path} of the XR, but Crossplane applies only the "
                        "status of the XR a function returns",
                    )
            if patch.to_composed:
                problem = _path_problem(schema, patch.to_path)
                if problem:
                    found = self.model.finding(
                        (*patch.location, "toFieldPath"),
                        f"{label} {patch.where}: toFieldPath of {described}: {problem}",
                    )
                    self.problems.unless_rendered.setdefault((patch.location, template.location), []).append(found)
        for number, detail in enumerate(template.connection_details):
            if detail.get("type") == "FromFieldPath":
                problem = _path_problem(schema, str(detail.get("fromFieldPath", "")))
                if problem:
                    self.add(
                        (*template.location, "connectionDetails", number, "fromFieldPath"),
                        f"{label}: connection detail of {described}: {problem}",
                    )
        for number, check in enumerate(template.readiness_checks):
            if isinstance(check.get("fieldPath"), str) and check.get("type") != "None":
                problem = _path_problem(schema, check["fieldPath"])
                if problem:
                    self.add(
                        (*template.location, "readinessChecks", number, "fieldPath"),
                        f"{label}: readiness check of {described}: {problem}",
                    )
