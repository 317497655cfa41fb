"""Field paths against the schema they point into, and where a Crossplane reference selector points.

A patch's ``toFieldPath`` is checked against the schema of what it writes (the managed resource's CRD,
or the XR's generated schema for ``ToCompositeFieldPath``) and its ``fromFieldPath`` against what it
reads, whatever the XR's values: a misspelled segment is found even when no XR sets the source.
``metadata`` is ObjectMeta; a node with ``x-kubernetes-preserve-unknown-fields``, an untyped object or
a map (``additionalProperties``) admits any key below it.

Upbound providers describe every reference selector as "Selector for a <Kind> in <group> to populate
<field>." (a list reference: "Selector for a list of <Kind> ..."); the group is the short API group, in
the family of the referencing resource (``ec2`` from ``iam.aws.m.upbound.io`` is
``ec2.aws.m.upbound.io``). Without that text a small table of the selectors fluxplane composes is used.
"""

from __future__ import annotations

import re
from typing import Any

from fluxplane.validate.compose.fieldpath import WILDCARD, Segments
from fluxplane.validate.findings import format_path
from fluxplane.validate.schemas import object_meta_schema, unknown_field

_META: dict[str, Any] = object_meta_schema()
_JUNCTORS = ("allOf", "anyOf", "oneOf")
_SCALARS = ("string", "integer", "number", "boolean")


def _branches(node: dict[str, Any]) -> list[dict[str, Any]]:
    out = [node]
    for key in _JUNCTORS:
        out.extend(branch for branch in node.get(key) or [] if isinstance(branch, dict))
    return out


def _type(node: dict[str, Any]) -> str | None:
    if node.get("x-kubernetes-int-or-string"):
        return "integer or string"
    kind = node.get("type")
    return kind if isinstance(kind, str) else None


def check_path(schema: Any, segments: Segments) -> str | None:
    """Why ``segments`` cannot exist in an object of ``schema`` (``field: problem``), or None."""
    node: Any = schema
    for depth, segment in enumerate(segments):
        if depth == 0 and segment == "metadata":
            node = _META
            continue
        if not isinstance(node, dict):
            return None
        branches = _branches(node)
        if any(branch.get("x-kubernetes-preserve-unknown-fields") for branch in branches) and not any(
            isinstance(segment, str) and segment in (branch.get("properties") or {}) for branch in branches
        ):
            return None
        here = format_path(list(segments[:depth])) if depth else "(root)"
        if isinstance(segment, int) or segment == WILDCARD:
            items = [branch["items"] for branch in branches if isinstance(branch.get("items"), dict)]
            extra = [
                branch["additionalProperties"]
                for branch in branches
                if isinstance(branch.get("additionalProperties"), dict)
            ]
            if items:
                node = items[0]
                continue
            if segment == WILDCARD and extra:
                node = extra[0]
                continue
            kinds = {_type(branch) for branch in branches} - {None}
            if not kinds or "array" in kinds:
                return None
            return f"{here}: expected {' or '.join(sorted(str(kind) for kind in kinds))}, not an array"
        found: Any = None
        known: list[str] = []
        for branch in branches:
            properties = branch.get("properties") or {}
            known.extend(properties)
            if segment in properties:
                found = properties[segment]
                break
        if found is None:
            for branch in branches:
                values = branch.get("additionalProperties")
                if isinstance(values, dict):
                    found = values
                    break
                if values is True:
                    return None
        if found is None and node.get("x-kubernetes-embedded-resource") and segment in ("apiVersion", "kind"):
            return None
        if found is None and node.get("x-kubernetes-embedded-resource") and segment == "metadata":
            found = _META
        if found is None:
            if known:
                return f"{format_path([*segments[:depth], segment])}: {unknown_field(segment, sorted(set(known)))}"
            kinds = {_type(branch) for branch in branches} - {None}
            if kinds & set(_SCALARS) or "integer or string" in kinds:
                return f"{here}: is {' or '.join(sorted(str(kind) for kind in kinds))}, it has no field {segment!r}"
            if "array" in kinds:
                return f"{here}: is an array, {segment!r} is not an index"
            return None
        node = found
    return None


# -- reference selectors ----------------------------------------------------------------------------

_SELECTOR_TEXT = re.compile(r"Selector for an? (?:list of )?([A-Za-z0-9]+) in ([a-z0-9]+) to populate")
#: The selectors fluxplane's Compositions use, for CRDs that do not describe them: (short group, kind).
KNOWN_SELECTORS: dict[str, tuple[str, str]] = {
    "vpcIdSelector": ("ec2", "VPC"),
    "subnetIdSelector": ("ec2", "Subnet"),
    "gatewayIdSelector": ("ec2", "InternetGateway"),
    "routeTableIdSelector": ("ec2", "RouteTable"),
    "natGatewayIdSelector": ("ec2", "NATGateway"),
    "allocationIdSelector": ("ec2", "EIP"),
    "securityGroupIdSelector": ("ec2", "SecurityGroup"),
    "roleSelector": ("iam", "Role"),
    "roleArnSelector": ("iam", "Role"),
    "nodeRoleArnSelector": ("iam", "Role"),
    "policyArnSelector": ("iam", "Policy"),
    "clusterNameSelector": ("eks", "Cluster"),
    "bucketSelector": ("s3", "Bucket"),
    "queueUrlSelector": ("sqs", "Queue"),
}


def raw_node(schema: Any, parts: list[str | int]) -> Any:
    """The raw schema node at ``parts`` (properties and items only), or None."""
    node = schema
    for part in parts:
        if not isinstance(node, dict):
            return None
        node = node.get("items") if isinstance(part, int) else (node.get("properties") or {}).get(part)
    return node


def selector_target(group: str, field: str, schema_node: Any) -> tuple[str, str] | None:
    """The (group, kind) a ``*Selector`` field selects, from its CRD description or the known table."""
    description = schema_node.get("description") if isinstance(schema_node, dict) else None
    found = _SELECTOR_TEXT.search(" ".join(str(description).split())) if description else None
    short, kind = (found.group(2), found.group(1)) if found else KNOWN_SELECTORS.get(field, ("", ""))
    if not kind:
        return None
    family = group.split(".", 1)[1] if "." in group else ""
    return (f"{short}.{family}" if family else short, kind)
