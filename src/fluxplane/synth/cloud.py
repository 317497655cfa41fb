"""What happens to one AWS managed resource between two trees: created, updated in place, replaced, deleted or
left in AWS, the fields that change, and why.

A resource is read from its managed-resource object (in the tree, or composed from a composite): its region
(``forProvider.region``), its AWS name (the external name, else the field fluxplane.kinds says names it)
and its provider config, which names the account (fluxplane.review.plan.accounts). It is replaced when a field AWS
cannot change in place changes (fluxplane.kinds.replacing_fields; a field set for the first time replaces
nothing, as the guard reads it: fluxplane.synth.hazards.immutable_change), updated when anything else below
``spec`` or its external name changes. A deletion says what it destroys, unless the object's deletion or
management policy leaves the resource in AWS (``forget``). A resource whose management policies only observe it
(an existing cluster's, imported) is read, never made, changed or deleted (``import``); one whose policies come
to write it is one Crossplane starts to manage (``manage``), and the other way round one it stops managing. An
update that switches a mode of the resource on or off in place (an EKS cluster's Auto Mode, fluxplane.kinds)
says what that does.
Values only the cluster knows (a composed resource's generated name, an observed status) compare equal to each
other and read ``(known after apply)``.

Plan lists these verdicts (fluxplane.review.plan); the replacement guard refuses a replacement or a deletion of what a
composite composes (fluxplane.synth.composed, fluxplane.synth.guard): both judge a resource here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fluxplane.kinds import (
    EXTERNAL_NAME,
    PROVIDER_CONFIG_REF,
    REGION,
    FieldPath,
    cloud_kind,
    replacing_fields,
)
from fluxplane.synth.hazards import ABSENT, field, immutable_change, left_on, switched
from fluxplane.validate.compose import Unknown

CREATE = "create"
UPDATE = "update"
REPLACE = "replace"
DELETE = "delete"
#: Crossplane stops managing the resource and leaves it in AWS (its deletion policy orphans it).
FORGET = "forget"
#: Crossplane starts to manage a resource it only read (an existing cluster's, imported: its management policies
#: gain Create, Update or Delete).
MANAGE = "manage"
#: Crossplane reads a resource that exists and changes nothing in AWS (management policies of Observe only).
IMPORT = "import"

#: How a value only the cluster knows reads.
UNKNOWN = "(known after apply)"
#: Why a resource Crossplane only observes changes nothing in AWS.
READ_ONLY = "its management policies only observe it: nothing is made, changed or deleted in AWS"
_SCALARS = (str, int, float, bool)
_KNOWN_OR_NOT = (*_SCALARS, Unknown)


def show(value: Any) -> str:
    """A value as a plan line shows it: scalars as they are, structures by what they are."""
    if isinstance(value, Unknown):
        return UNKNOWN
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _SCALARS):
        return str(value)
    return "a list" if isinstance(value, list) else "an object"


def dotted(path: FieldPath) -> str:
    """A field path as a plan names it: below ``spec.forProvider`` (``engine``) or else ``spec``
    (``providerConfigRef.name``), the external name by its name."""
    if path == EXTERNAL_NAME:
        return "external name"
    for prefix in (("spec", "forProvider"), ("spec",)):
        if path[: len(prefix)] == prefix and len(path) > len(prefix):
            return ".".join(path[len(prefix) :])
    return ".".join(path)


def _differences(old: Any, new: Any, path: FieldPath, found: list[FieldPath]) -> None:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(key for key in new if key not in old)]:
            _differences(old.get(key), new.get(key), (*path, str(key)), found)
        return
    found.append(path)


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldPath]:
    """The fields below ``spec``, and the external name, whose values differ (a list or a value that changes type
    is one field)."""
    found: list[FieldPath] = []
    _differences(old.get("spec"), new.get("spec"), ("spec",), found)
    if field(old, EXTERNAL_NAME) != field(new, EXTERNAL_NAME):
        found.insert(0, EXTERNAL_NAME)
    return found


def writes(document: Mapping[str, Any]) -> bool:
    """Whether Crossplane may write this managed resource in AWS: its management policies (all, by default) hold
    more than Observe and LateInitialize (an existing cluster's imported resources, observed, hold only Observe)."""
    policies = field(document, ("spec", "managementPolicies"))
    return not isinstance(policies, list) or bool(set(policies) - {"Observe", "LateInitialize"})


def keeps_resource(document: Mapping[str, Any]) -> bool:
    """Whether deleting this managed resource leaves the AWS resource in place (deletion policy ``Orphan``, or
    management policies without ``Delete``)."""
    policies = field(document, ("spec", "managementPolicies"))
    if isinstance(policies, list) and not ("*" in policies or "Delete" in policies):
        return True
    return bool(field(document, ("spec", "deletionPolicy")) == "Orphan")


def _change_text(path: FieldPath, old: Any, new: Any) -> str:
    if path in ABSENT:
        old = ABSENT[path] if old is None else old
        new = ABSENT[path] if new is None else new
    if isinstance(old, _KNOWN_OR_NOT) and isinstance(new, _KNOWN_OR_NOT):
        return f"{dotted(path)} changed from {show(old)} to {show(new)}"
    return f"{dotted(path)} changed"


def aws_name(group: str, kind: str, document: Mapping[str, Any]) -> str | None:
    """The resource's name in AWS when the object says it: its external name, else its kind's name field."""
    for path in (EXTERNAL_NAME, getattr(cloud_kind(group, kind), "name", None)):
        value = field(document, path) if path is not None else None
        if isinstance(value, str) and value:
            return value
    return None


def region_of(document: Mapping[str, Any]) -> str:
    value = field(document, REGION)
    return value if isinstance(value, str) and value else "global"


def provider_config(document: Mapping[str, Any]) -> str:
    """The provider config a managed resource names (``default`` when it names none, as Crossplane reads it)."""
    value = field(document, PROVIDER_CONFIG_REF)
    return value if isinstance(value, str) and value else ABSENT[PROVIDER_CONFIG_REF]


@dataclass(frozen=True)
class ResourceAction:
    """What happens to one resource: the action, the fields that change, and why."""

    action: str
    fields: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()


def judge(group: str, kind: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> ResourceAction | None:
    """The verdict on a managed resource of ``group`` and ``kind`` that was ``old`` and becomes ``new`` (None for
    absent); None when nothing changes."""
    entry = cloud_kind(group, kind)
    if old is None and new is None:
        return None
    if old is None:
        assert new is not None
        if not writes(new):
            return ResourceAction(IMPORT, reasons=(READ_ONLY,))
        return ResourceAction(CREATE)
    if new is None:
        if keeps_resource(old):
            return ResourceAction(FORGET, reasons=("its deletion policy leaves it in AWS, unmanaged",))
        destroyed = entry.deletes if entry is not None and entry.deletes else ""
        return ResourceAction(DELETE, reasons=(f"destroys {destroyed}",) if destroyed else ())
    fields = changed_fields(old, new)
    if not fields:
        return None
    if not writes(new):
        # what changes is which resource is read, or that it is no longer written
        return ResourceAction(FORGET if writes(old) else IMPORT, reasons=(READ_ONLY,))
    if not writes(old):
        shown = tuple(dict.fromkeys(dotted(path) for path in fields))
        return ResourceAction(MANAGE, shown, ("Crossplane may now update it to the definition, and delete it",))
    reasons: list[str] = []
    for path in replacing_fields(group, kind):
        values = immutable_change(old, new, path)
        if values is None or all(isinstance(value, Unknown) for value in values):
            continue
        text = _change_text(path, *values)
        if path == PROVIDER_CONFIG_REF:
            text += " (another account: made anew there, the old one is left unmanaged)"
        reasons.append(text)
    shown = tuple(dict.fromkeys(dotted(path) for path in fields))
    if reasons:
        return ResourceAction(REPLACE, shown, tuple(reasons))
    return ResourceAction(UPDATE, shown, tuple(switch_reasons(group, kind, old, new)))


def switch_reasons(group: str, kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What the modes an update switches on or off do (fluxplane.kinds.Switch), and those it leaves on."""
    reasons = [
        f"switches {switch.mode} {'on' if on else 'off'} in place: {switch.on if on else switch.off}"
        for switch, on in switched(group, kind, old, new)
    ]
    reasons += [
        f"{dotted(switch.path)} goes while {switch.mode} is on, which leaves it on"
        for switch in left_on(group, kind, old, new)
    ]
    return reasons
