"""The input of function-patch-and-transform (``pt.fn.crossplane.io/v1beta1`` ``Resources``), read and checked.

The function decodes its input into Go structs (``input/v1beta1``), which ignores unknown fields: a
misspelled ``toFieldPaht`` is dropped without a word and the patch then writes to its
``fromFieldPath``. So the input is first checked strictly against a schema written from those Go types
(field names and types; enums from ``validate.go``, which accepts more than the generated CRD, e.g. the
``Join`` and ``Replace`` string transforms): an unknown field is a finding the render survives, a
wrong type is fatal (decoding fails). Then ``ValidateResources`` runs as upstream does (:mod:`.ptvalidate`),
first error only, with upstream's messages; it is fatal too ("invalid Function input"). PatchSets are
expanded into the resources' patches as ``ComposedTemplates`` does.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from fluxplane.validate.compose.fastcheck import compile_schema
from fluxplane.validate.compose.fieldpath import Segments, parse
from fluxplane.validate.compose.ptvalidate import CONNECTION_TYPES, READINESS_TYPES, validate_resources
from fluxplane.validate.compose.transforms import (
    CONVERT_FORMATS,
    IO_TYPES,
    MATH_TYPES,
    STRING_CONVERSIONS,
    STRING_TYPES,
    TRANSFORM_TYPES,
)
from fluxplane.validate.schemas import Validator, convert_schema, explain

Location = tuple[str | int, ...]

COMPOSED_PATCH_TYPES = (
    "FromCompositeFieldPath",
    "PatchSet",
    "ToCompositeFieldPath",
    "CombineFromComposite",
    "CombineToComposite",
    "FromEnvironmentFieldPath",
    "ToEnvironmentFieldPath",
    "CombineFromEnvironment",
    "CombineToEnvironment",
)
#: Patches that write the desired composed resource (upstream ``ToComposedResource``).
TO_COMPOSED = frozenset(
    {"FromCompositeFieldPath", "CombineFromComposite", "FromEnvironmentFieldPath", "CombineFromEnvironment"}
)
ENVIRONMENT_PATCH_TYPES = frozenset(
    {"FromEnvironmentFieldPath", "ToEnvironmentFieldPath", "CombineFromEnvironment", "CombineToEnvironment"}
)
TO_FIELD_POLICIES: dict[str, tuple[bool, bool] | None] = {
    "Replace": None,
    "MergeObjects": (True, False),
    "MergeObject": (True, False),
    "MergeObjectsAppendArrays": (True, True),
    "ForceMergeObjects": (False, False),
    "ForceMergeObjectsAppendArrays": (False, True),
    "AppendArray": (False, True),
}

# -- the strict schema, from the Go types of input/v1beta1 -------------------------------------------

_S: dict[str, Any] = {"type": "string"}
_I: dict[str, Any] = {"type": "integer"}
_ANY: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}


def _object(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _enum(values: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


_TRANSFORM = _object(
    {
        "type": _enum(TRANSFORM_TYPES),
        "math": _object(
            {"type": _enum(MATH_TYPES), "multiply": _I, "clampMin": _I, "clampMax": _I},
        ),
        "map": {"type": "object", "additionalProperties": _ANY},
        "match": _object(
            {
                "patterns": _array(
                    _object({"type": _enum(("literal", "regexp")), "literal": _S, "regexp": _S, "result": _ANY})
                ),
                "fallbackValue": _ANY,
                "fallbackTo": _enum(("Value", "Input")),
            }
        ),
        "string": _object(
            {
                "type": _enum(STRING_TYPES),
                "fmt": _S,
                "convert": _enum(STRING_CONVERSIONS),
                "trim": _S,
                "regexp": _object({"match": _S, "group": _I}),
                "join": _object({"separator": _S}),
                "replace": _object({"search": _S, "replace": _S}),
            }
        ),
        "convert": _object({"toType": _enum(IO_TYPES), "format": _enum(CONVERT_FORMATS)}),
    }
)


def _patch(extra: dict[str, Any]) -> dict[str, Any]:
    return _object(
        {
            "type": _enum(COMPOSED_PATCH_TYPES),
            "fromFieldPath": _S,
            "toFieldPath": _S,
            "combine": _object(
                {
                    "variables": _array(_object({"fromFieldPath": _S})),
                    "strategy": _S,
                    "string": _object({"fmt": _S}),
                }
            ),
            "transforms": _array(_TRANSFORM),
            "policy": _object(
                {
                    "fromFieldPath": _enum(("Optional", "Required")),
                    "toFieldPath": _enum(tuple(TO_FIELD_POLICIES)),
                }
            ),
            **extra,
        }
    )


INPUT_SCHEMA: dict[str, Any] = _object(
    {
        "apiVersion": _S,
        "kind": _S,
        "metadata": {"type": "object"},
        "patchSets": _array(_object({"name": _S, "patches": _array(_patch({}))})),
        "environment": _object({"patches": _array(_patch({}))}),
        "resources": _array(
            _object(
                {
                    "name": _S,
                    "base": {"type": "object"},
                    "patches": _array(_patch({"patchSetName": _S})),
                    "connectionDetails": _array(
                        _object(
                            {
                                "name": _S,
                                "type": _enum(CONNECTION_TYPES),
                                "fromConnectionSecretKey": _S,
                                "fromFieldPath": _S,
                                "value": _S,
                            }
                        )
                    ),
                    "readinessChecks": _array(
                        _object(
                            {
                                "type": _enum(READINESS_TYPES),
                                "fieldPath": _S,
                                "matchString": _S,
                                "matchInteger": _I,
                                "matchCondition": _object({"type": _S, "status": _S}),
                            }
                        )
                    ),
                }
            )
        ),
        "writeConnectionSecretToRef": _object({"name": _S, "namespace": _S, "patches": _array(_patch({}))}),
    }
)
_VALIDATOR: Any = Validator(convert_schema(INPUT_SCHEMA))
_VALID = compile_schema(convert_schema(INPUT_SCHEMA))


@dataclass(frozen=True)
class CompositionPatch:
    """One patch as the function applies it, with where it is written in the Composition."""

    type: str
    raw: dict[str, Any]
    location: Location
    #: index among the template's patches after PatchSets are expanded (upstream's "patch at index").
    index: int = 0
    #: the ``type: PatchSet`` entry this patch came through, when it did.
    via: Location | None = None
    patch_set: str | None = None

    @functools.cached_property
    def from_path(self) -> str:
        value = self.raw.get("fromFieldPath")
        return value if isinstance(value, str) else ""

    @functools.cached_property
    def to_path(self) -> str:
        value = self.raw.get("toFieldPath")
        return value if isinstance(value, str) else self.from_path

    @functools.cached_property
    def to_composed(self) -> bool:
        return self.type in TO_COMPOSED

    @functools.cached_property
    def required(self) -> bool:
        return (self.raw.get("policy") or {}).get("fromFieldPath") == "Required"

    @functools.cached_property
    def merge(self) -> tuple[bool, bool] | None:
        return TO_FIELD_POLICIES.get((self.raw.get("policy") or {}).get("toFieldPath") or "Replace")

    @functools.cached_property
    def transforms(self) -> list[dict[str, Any]]:
        return list(self.raw.get("transforms") or [])

    @functools.cached_property
    def combine(self) -> dict[str, Any]:
        value = self.raw.get("combine")
        return value if isinstance(value, dict) else {}

    @functools.cached_property
    def variables(self) -> list[str]:
        return [str(item.get("fromFieldPath", "")) for item in self.combine.get("variables") or []]

    def from_segments(self) -> Segments:
        return parse(self.from_path)

    def to_segments(self) -> Segments:
        return parse(self.to_path)

    @property
    def where(self) -> str:
        """How a message names this patch: ``patch 2`` or ``patch 0 (PatchSet "region")``."""
        if self.via is not None and self.patch_set is not None:
            return f'patch {self.via[-1]} (PatchSet "{self.patch_set}")'
        return f"patch {self.location[-1]}"


@dataclass(frozen=True)
class Template:
    """One entry of ``resources``: a composed resource's base, patches, connection details, readiness."""

    name: str
    base: dict[str, Any] | None
    patches: tuple[CompositionPatch, ...]
    connection_details: tuple[dict[str, Any], ...]
    readiness_checks: tuple[dict[str, Any], ...]
    location: Location

    @functools.cached_property
    def uses_environment(self) -> bool:
        return any(patch.type in ENVIRONMENT_PATCH_TYPES for patch in self.patches)

    @functools.cached_property
    def observed_side(self) -> tuple[CompositionPatch, ...]:
        """The patches from the observed composed resource (to the XR or the environment)."""
        return tuple(patch for patch in self.patches if not patch.to_composed)

    @functools.cached_property
    def status_reads(self) -> tuple[CompositionPatch, ...]:
        """The patches that read the XR's status: the only XR input that changes between render passes."""
        out = []
        for patch in self.patches:
            if patch.type == "FromCompositeFieldPath":
                paths = [patch.from_path]
            elif patch.type == "CombineFromComposite":
                paths = patch.variables
            else:
                continue
            if any(re.split(r"[.\[]", path, maxsplit=1)[0] == "status" for path in paths):
                out.append(patch)
        return tuple(out)


@dataclass
class Problem:
    """Something wrong with the input: ``fatal`` ones stop the function for every XR."""

    location: Location
    message: str
    fatal: bool


@dataclass
class Resources:
    """A parsed ``Resources`` input; ``problems`` holds what the strict check and ValidateResources found."""

    location: Location
    templates: list[Template] = field(default_factory=list)
    environment_patches: list[CompositionPatch] = field(default_factory=list)
    connection_ref: dict[str, Any] | None = None
    connection_patches: list[CompositionPatch] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def fatal(self) -> Problem | None:
        return next((problem for problem in self.problems if problem.fatal), None)


_UNKNOWN_FIELD = re.compile(r'^unknown field "')


def read_resources(data: Any, location: Location) -> Resources:
    """Parse and check one step's input; ``location`` is the input's path in the Composition."""
    out = Resources(location)
    if not isinstance(data, dict):
        out.problems.append(Problem(location, "cannot get Function input: expected an object", True))
        return out
    errors = [] if _VALID is not None and _VALID(data) else list(_VALIDATOR.iter_errors(data))
    for error in sorted(errors, key=lambda error: [str(part) for part in error.absolute_path]):
        for parts, message in explain(error):
            if _UNKNOWN_FIELD.match(message):
                out.problems.append(Problem((*location, *parts), f"{message}: the function ignores it", False))
            elif parts and parts[-1] == "fallbackTo":
                text = f"{message}: the function treats it as Value"
                out.problems.append(Problem((*location, *parts), text, False))
            elif error.validator == "type":
                out.problems.append(Problem((*location, *parts), f"cannot get Function input: {message}", True))
            else:
                out.problems.append(Problem((*location, *parts), f"invalid Function input: {message}", True))
    if out.fatal:
        return out
    invalid = validate_resources(data)
    if invalid:
        out.problems.append(Problem(location, f"invalid Function input: {invalid}", True))
        return out
    patch_sets: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    set_index: dict[str, int] = {}
    for index, patch_set in enumerate(data.get("patchSets") or []):
        patch_sets[patch_set["name"]] = list(enumerate(patch_set.get("patches") or []))
        set_index[patch_set["name"]] = index
    for index, resource in enumerate(data.get("resources") or []):
        at: Location = (*location, "resources", index)
        patches: list[CompositionPatch] = []
        for number, patch in enumerate(resource.get("patches") or []):
            kind = patch.get("type") or "FromCompositeFieldPath"
            if kind != "PatchSet":
                patches.append(CompositionPatch(kind, patch, (*at, "patches", number), len(patches)))
                continue
            name = patch["patchSetName"]
            if name not in patch_sets:
                out.problems.append(
                    Problem(
                        (*at, "patches", number, "patchSetName"),
                        f"cannot resolve PatchSets: cannot find PatchSet by name {name}",
                        True,
                    )
                )
                return out
            for inner, member in patch_sets[name]:
                member_location: Location = (*location, "patchSets", set_index[name], "patches", inner)
                member_kind = member.get("type") or "FromCompositeFieldPath"
                patches.append(
                    CompositionPatch(member_kind, member, member_location, len(patches), (*at, "patches", number), name)
                )
        base = resource.get("base")
        out.templates.append(
            Template(
                name=resource["name"],
                base=base if isinstance(base, dict) else None,
                patches=tuple(patches),
                connection_details=tuple(resource.get("connectionDetails") or []),
                readiness_checks=tuple(resource.get("readinessChecks") or []),
                location=at,
            )
        )
    environment = data.get("environment") or {}
    for index, patch in enumerate(environment.get("patches") or []):
        kind = patch.get("type") or "FromCompositeFieldPath"
        out.environment_patches.append(
            CompositionPatch(kind, patch, (*location, "environment", "patches", index), index)
        )
    reference = data.get("writeConnectionSecretToRef")
    if isinstance(reference, dict):
        out.connection_ref = reference
        for index, patch in enumerate(reference.get("patches") or []):
            kind = patch.get("type") or "FromCompositeFieldPath"
            out.connection_patches.append(
                CompositionPatch(kind, patch, (*location, "writeConnectionSecretToRef", "patches", index), index)
            )
    return out
