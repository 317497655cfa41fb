"""Upstream's ``ValidateResources`` (function-patch-and-transform ``validate.go``) for a ``Resources`` input:
the first error only, worded as upstream words it (a Kubernetes ``field.Error``).

It runs after the strict schema check of :mod:`.ptinput`, on input whose types are right, and what it
refuses is fatal to the function ("invalid Function input").
"""

from __future__ import annotations

from typing import Any

from fluxplane.validate.compose.transforms import (
    CONVERT_FORMATS,
    IO_TYPES,
    TRANSFORM_TYPES,
    TransformError,
    go_regexp,
)

#: The readiness check and connection detail types validate.go accepts.
READINESS_TYPES = ("NonEmpty", "MatchString", "MatchInteger", "MatchTrue", "MatchFalse", "MatchCondition", "None")
CONNECTION_TYPES = ("FromConnectionSecretKey", "FromFieldPath", "FromValue")


def _field_error(path: list[str | int], kind: str, detail: str, value: Any = None) -> str:
    """A Kubernetes field.Error as a string: ``resources[0].name: Required value: name is required``."""
    where = ""
    for part in path:
        where += f"[{part}]" if isinstance(part, int) else ("." if where else "") + part
    if kind == "Required":
        return f"{where}: Required value: {detail}"
    shown = f'"{value}"' if isinstance(value, str) else str(value)
    return f"{where}: Invalid value: {shown}: {detail}"


def _validate_transform(transform: dict[str, Any], path: list[str | int]) -> str | None:
    kind = transform.get("type")
    config = transform.get(kind) if isinstance(kind, str) else None
    if kind not in TRANSFORM_TYPES:
        return _field_error([*path, "type"], "Invalid", "unknown transform type", kind)
    if not isinstance(config, dict):
        return _field_error([*path, kind], "Required", f"given transform type {kind} requires configuration")
    here = [*path, kind]
    if kind == "math":
        math_type = config.get("type", "")
        if math_type == "":
            return _field_error([*here, "type"], "Required", "math transform type is required")
        wanted = {"Multiply": "multiply", "ClampMin": "clampMin", "ClampMax": "clampMax"}.get(math_type)
        if wanted is None:
            return _field_error([*here, "type"], "Invalid", "unknown math transform type", math_type)
        if config.get(wanted) is None:
            label = {"multiply": "multiply", "clampMin": "clamp min", "clampMax": "clamp max"}[wanted]
            return _field_error(
                [*here, wanted], "Required", f"must specify a value if a {label} math transform is specified"
            )
    elif kind == "map":
        if not config:
            return _field_error(
                [*here, "pairs"], "Required", "at least one pair must be specified if a map transform is specified"
            )
    elif kind == "match":
        patterns = config.get("patterns") or []
        if not patterns:
            return _field_error(
                [*here, "patterns"],
                "Required",
                "at least one pattern must be specified if a match transform is specified",
            )
        for index, pattern in enumerate(patterns):
            at = [*here, "patterns", index]
            pattern_type = pattern.get("type", "")
            if pattern_type in ("literal", ""):
                if pattern.get("literal") is None:
                    return _field_error([*at, "literal"], "Required", "literal pattern type requires a literal")
            elif pattern_type == "regexp":
                if pattern.get("regexp") is None:
                    return _field_error([*at, "regexp"], "Required", "regexp pattern type requires a regexp")
                try:
                    go_regexp(str(pattern["regexp"]))
                except TransformError:
                    return _field_error([*at, "regexp"], "Invalid", "invalid regexp", pattern["regexp"])
            else:
                return _field_error([*at, "type"], "Invalid", "unknown pattern type", pattern_type)
    elif kind == "string":
        return _validate_string(config, here)
    elif kind == "convert":
        form = config.get("format") or "none"
        if form not in CONVERT_FORMATS:
            return _field_error([*here, "format"], "Invalid", "invalid format", form)
        if config.get("toType") not in IO_TYPES:
            return _field_error([*here, "toType"], "Invalid", "invalid type", config.get("toType"))
    return None


def _validate_string(config: dict[str, Any], here: list[str | int]) -> str | None:
    kind = config.get("type", "")
    if kind == "":
        return _field_error([*here, "type"], "Required", "string transform type is required")
    needs = {
        "Format": ("fmt", "format transform requires a format"),
        "Convert": ("convert", "convert transform requires a conversion type"),
        "TrimPrefix": ("trim", "trim transform requires a trim value"),
        "TrimSuffix": ("trim", "trim transform requires a trim value"),
        "Regexp": ("regexp", "regexp transform requires a regexp"),
        "Join": ("join", "join transform requires a join"),
        "Replace": ("replace", "replace transform requires a replace"),
    }
    if kind not in needs:
        return _field_error([*here, "type"], "Invalid", "unknown string transform type", kind)
    key, message = needs[kind]
    if config.get(key) is None:
        return _field_error([*here, key], "Required", message)
    if kind == "Regexp":
        match = config["regexp"].get("match", "")
        if match == "":
            return _field_error([*here, "regexp", "match"], "Required", "regexp transform requires a match")
        try:
            go_regexp(str(match))
        except TransformError:
            return _field_error([*here, "regexp", "match"], "Invalid", "invalid regexp", match)
    if kind == "Replace" and config["replace"].get("search", "") == "":
        return _field_error([*here, "replace", "search"], "Required", "replace transform requires a search")
    return None


def _validate_patch(patch: dict[str, Any], path: list[str | int], allow_patch_set: bool) -> str | None:
    """``ValidatePatch``."""
    kind = patch.get("type") or "FromCompositeFieldPath"
    if kind in ("FromCompositeFieldPath", "ToCompositeFieldPath", "FromEnvironmentFieldPath", "ToEnvironmentFieldPath"):
        if not patch.get("fromFieldPath"):
            return _field_error(
                [*path, "fromFieldPath"], "Required", f"fromFieldPath must be set for patch type {kind}"
            )
    elif kind == "PatchSet":
        if not allow_patch_set:
            return _field_error(
                [*path, "type"],
                "Invalid",
                "patch type *v1beta1.PatchSetPatch does not support patch of type PatchSet",
                kind,
            )
        if not patch.get("patchSetName"):
            return _field_error([*path, "patchSetName"], "Required", f"patchSetName must be set for patch type {kind}")
    elif kind in ("CombineFromComposite", "CombineToComposite", "CombineFromEnvironment", "CombineToEnvironment"):
        combine = patch.get("combine")
        if not isinstance(combine, dict):
            return _field_error([*path, "combine"], "Required", f"combine must be set for patch type {kind}")
        to_path = patch.get("toFieldPath")
        if not (to_path if isinstance(to_path, str) else patch.get("fromFieldPath")):
            return _field_error([*path, "toFieldPath"], "Required", f"toFieldPath must be set for patch type {kind}")
        strategy = combine.get("strategy", "")
        at = [*path, "combine"]
        if strategy == "string":
            if combine.get("string") is None:
                return _field_error([*at, "string"], "Required", "string must be set for combine strategy string")
        elif strategy == "":
            return _field_error([*at, "strategy"], "Required", "a combine strategy must be provided")
        else:
            return _field_error([*at, "strategy"], "Invalid", "unknown strategy type", strategy)
        variables = combine.get("variables") or []
        if not variables:
            return _field_error([*at, "variables"], "Required", "at least one variable must be provided")
        for index, variable in enumerate(variables):
            if not variable.get("fromFieldPath"):
                return _field_error(
                    [*at, "variables", index, "fromFieldPath"],
                    "Required",
                    "fromFieldPath must be set for each combine variable",
                )
        return None
    else:
        return _field_error([*path, "type"], "Invalid", "unknown patch type", kind)
    for index, transform in enumerate(patch.get("transforms") or []):
        error = _validate_transform(transform, [*path, "transforms", index])
        if error:
            return error
    return None


def _validate_readiness(check: dict[str, Any], path: list[str | int]) -> str | None:
    kind = check.get("type")
    if kind not in READINESS_TYPES:
        return _field_error([*path, "type"], "Invalid", "unknown readiness check type", kind)
    if kind == "None":
        return None
    if kind == "MatchString" and check.get("matchString") is None:
        return _field_error([*path, "matchString"], "Required", "cannot be nil for type MatchString")
    if kind == "MatchInteger" and check.get("matchInteger") is None:
        return _field_error([*path, "matchInteger"], "Required", "cannot be nil for type MatchInteger")
    if kind == "MatchCondition":
        condition = check.get("matchCondition")
        if isinstance(condition, dict):
            if not condition.get("type"):
                return _field_error(
                    [*path, "matchCondition", "type"], "Required", "cannot be empty for type MatchCondition"
                )
            if not condition.get("status"):
                return _field_error(
                    [*path, "matchCondition", "status"], "Required", "cannot be empty for type MatchCondition"
                )
        return None
    if check.get("fieldPath") is None:
        return _field_error([*path, "fieldPath"], "Required", "cannot be empty")
    return None


def _validate_connection_detail(detail: dict[str, Any], path: list[str | int]) -> str | None:
    kind = detail.get("type", "")
    if kind == "":
        return _field_error([*path, "type"], "Required", "connection detail type is required")
    if kind not in CONNECTION_TYPES:
        return _field_error([*path, "type"], "Invalid", "unknown connection detail type", kind)
    if not detail.get("name"):
        return _field_error([*path, "name"], "Required", "name is required")
    needed = {
        "FromValue": ("value", "value connection detail requires a value"),
        "FromConnectionSecretKey": (
            "fromConnectionSecretKey",
            "from connection secret key connection detail requires a key",
        ),
        "FromFieldPath": ("fromFieldPath", "from field path connection detail requires a field path"),
    }[kind]
    if detail.get(needed[0]) is None:
        return _field_error([*path, needed[0]], "Required", needed[1])
    return None


def validate_resources(data: dict[str, Any]) -> str | None:
    """``ValidateResources``: the first problem, as upstream reports it, or None."""
    for patch_set in data.get("patchSets") or []:
        if not patch_set.get("name"):
            return _field_error(["name"], "Required", "name is required")
        for index, patch in enumerate(patch_set.get("patches") or []):
            error = _validate_patch(patch, ["patches", index], allow_patch_set=False)
            if error:
                return error
    environment = data.get("environment") or {}
    if not data.get("resources") and not environment.get("patches"):
        return _field_error(["resources"], "Required", "resources or environment patches are required")
    for index, resource in enumerate(data.get("resources") or []):
        path: list[str | int] = ["resources", index]
        if not resource.get("name"):
            return _field_error([*path, "name"], "Required", "name is required")
        for number, patch in enumerate(resource.get("patches") or []):
            error = _validate_patch(patch, [*path, "patches", number], allow_patch_set=True)
            if error:
                return error
        for number, detail in enumerate(resource.get("connectionDetails") or []):
            error = _validate_connection_detail(detail, [*path, "connectionDetails", number])
            if error:
                return error
        for number, check in enumerate(resource.get("readinessChecks") or []):
            error = _validate_readiness(check, [*path, "readinessChecks", number])
            if error:
                return error
    for index, patch in enumerate(environment.get("patches") or []):
        kind = patch.get("type") or "FromCompositeFieldPath"
        if kind not in (
            "FromCompositeFieldPath",
            "ToCompositeFieldPath",
            "CombineFromComposite",
            "CombineToComposite",
            "FromEnvironmentFieldPath",
            "ToEnvironmentFieldPath",
        ):
            return _field_error(
                ["environment", "patches", index, "type"], "Invalid", "invalid environment patch type", kind
            )
        error = _validate_patch(patch, ["environment", "patches", index], allow_patch_set=False)
        if error:
            return error
    return None
